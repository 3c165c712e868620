// Runs the fake engine's own tests (see harness.h). Usage:
//   fake_engine_tests [name-filter]
// Engine tests dlopen the library named by TRITON_FAKE_LIB (default
// build/fake/libtritonserver.so relative to the working directory).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

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

bool DiesWith(const std::function<void()>& fn, const std::string& expect,
              std::string* output) {
  int fds[2];
  if (::pipe(fds) != 0) {
    *output = "pipe() failed";
    return false;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    *output = "fork() failed";
    return false;
  }
  if (pid == 0) {
    // Child: stderr into the pipe, no core file, run, and exit quietly if
    // it returns (the parent then reports the missing abort).
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    struct rlimit none = {0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    fn();
    std::_Exit(0);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  std::string text;
  int status = 0;
  bool done = false;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (true) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) text.append(buf, n);
    if (done) break;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      done = true;  // one more read drains what is left
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      text += "\n(killed after 20 s)";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::close(fds[0]);
  const bool aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  *output =
      text + (aborted ? " [aborted]"
              : WIFSIGNALED(status)
                  ? " [signal " + std::to_string(WTERMSIG(status)) + "]"
                  : " [exit " + std::to_string(WEXITSTATUS(status)) + "]");
  return aborted && text.find(expect) != std::string::npos;
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
