// Runs the fake engine's own tests (see harness.h). Usage:
//   fake_engine_tests [name-filter]
// Engine tests dlopen the library named by TRITON_FAKE_LIB (default
// build/fake/libtritonserver.so relative to the working directory).
#include <cstdlib>
#include <cstring>

#include "harness.h"

namespace fake_test {

namespace {
int g_failures = 0;
}

std::vector<TestCase>& Registry() {
  static std::vector<TestCase> registry;
  return registry;
}

void RecordFailure(const char* file, int line, const std::string& what) {
  ++g_failures;
  std::cerr << "    FAILED " << file << ":" << line << ": " << what << "\n";
}

}  // namespace fake_test

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  int run = 0;
  int failed_tests = 0;
  for (const auto& test : fake_test::Registry()) {
    if (filter != nullptr && std::strstr(test.name, filter) == nullptr) {
      continue;
    }
    const int before = fake_test::g_failures;
    std::cout << "[ RUN  ] " << test.name << std::endl;
    test.fn();
    ++run;
    if (fake_test::g_failures != before) {
      ++failed_tests;
      std::cout << "[ FAIL ] " << test.name << std::endl;
    } else {
      std::cout << "[  OK  ] " << test.name << std::endl;
    }
  }
  std::cout << run << " tests, " << failed_tests << " failed" << std::endl;
  return failed_tests == 0 && run > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
