// A minimal test harness for the fake engine's own C++ tests: TEST()
// registers a function, CHECK*() record failures without aborting, and
// fake_engine_tests.cc's main() runs every test (or those whose name
// contains argv[1]) and exits non-zero on any failure.
#ifndef TRITON_NODE_FAKE_TEST_HARNESS_H_
#define TRITON_NODE_FAKE_TEST_HARNESS_H_

#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace fake_test {

struct TestCase {
  const char* name;
  std::function<void()> fn;
};

std::vector<TestCase>& Registry();
void RecordFailure(const char* file, int line, const std::string& what);

// Runs `fn` in a forked child process. True when the child was killed by
// SIGABRT and wrote `expect` to stderr; `output` gets what it wrote and how
// it ended. The child is killed (and the check fails) after 20 seconds.
bool DiesWith(const std::function<void()>& fn, const std::string& expect,
              std::string* output);

struct Registrar {
  Registrar(const char* name, std::function<void()> fn) {
    Registry().push_back({name, std::move(fn)});
  }
};

}  // namespace fake_test

#define FAKE_TEST_CONCAT2(a, b) a##b
#define FAKE_TEST_CONCAT(a, b) FAKE_TEST_CONCAT2(a, b)
#define TEST(name)                                                         \
  static void name();                                                      \
  static ::fake_test::Registrar FAKE_TEST_CONCAT(registrar_, name)(#name,  \
                                                                   &name); \
  static void name()

#define CHECK(cond)                                             \
  do {                                                          \
    if (!(cond)) {                                              \
      ::fake_test::RecordFailure(__FILE__, __LINE__, "" #cond); \
    }                                                           \
  } while (0)

#define CHECK_EQ(a, b)                                                    \
  do {                                                                    \
    auto&& fake_test_a = (a);                                             \
    auto&& fake_test_b = (b);                                             \
    if (!(fake_test_a == fake_test_b)) {                                  \
      std::ostringstream fake_test_os;                                    \
      fake_test_os << #a " == " #b " (" << fake_test_a << " vs "          \
                   << fake_test_b << ")";                                 \
      ::fake_test::RecordFailure(__FILE__, __LINE__, fake_test_os.str()); \
    }                                                                     \
  } while (0)

// CHECK and CHECK_EQ for one case of a table: the failure message starts
// with the case's label, `[label]` (anything std::ostream can print).
#define CHECK_CASE(label, cond)                                           \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::ostringstream fake_test_os;                                    \
      fake_test_os << "[" << (label) << "] " #cond;                       \
      ::fake_test::RecordFailure(__FILE__, __LINE__, fake_test_os.str()); \
    }                                                                     \
  } while (0)

#define CHECK_EQ_CASE(label, a, b)                                            \
  do {                                                                        \
    auto&& fake_test_a = (a);                                                 \
    auto&& fake_test_b = (b);                                                 \
    if (!(fake_test_a == fake_test_b)) {                                      \
      std::ostringstream fake_test_os;                                        \
      fake_test_os << "[" << (label) << "] " #a " == " #b " (" << fake_test_a \
                   << " vs " << fake_test_b << ")";                           \
      ::fake_test::RecordFailure(__FILE__, __LINE__, fake_test_os.str());     \
    }                                                                         \
  } while (0)

// The statement must abort the process (in a forked child) with `expect`
// in its message: the fake's check of a precondition whose violation
// crashes real Triton.
#define CHECK_DEATH(stmt, expect)                                        \
  do {                                                                   \
    std::string fake_test_out;                                           \
    if (!::fake_test::DiesWith([&] { stmt; }, (expect), &fake_test_out)) \
      ::fake_test::RecordFailure(                                        \
          __FILE__, __LINE__,                                            \
          std::string("expected an abort with \"") + (expect) +          \
              "\" from: " #stmt "\n      child said: " + fake_test_out); \
  } while (0)

#endif  // TRITON_NODE_FAKE_TEST_HARNESS_H_
