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

#endif  // TRITON_NODE_FAKE_TEST_HARNESS_H_
