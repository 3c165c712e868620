// Triton's process-wide state (process_state.h).
#include "process_state.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace fake {

namespace {
// Triton's pinned memory manager: a process-wide singleton that the
// initialisation of a server creates when there is none, and that the
// destruction of any server (a deleted one, or one that failed to start)
// destroys, whatever other servers still use it (r25.07, server.cc).
std::atomic<bool> g_host_memory_manager{false};
}  // namespace

bool HostMemoryManagerExists() { return g_host_memory_manager.load(); }
void SetHostMemoryManager(bool exists) { g_host_memory_manager.store(exists); }

// ---- exit order: the singletons of a started server and of a backend ------
// Triton makes process-wide singletons when a server starts, and a backend
// library registers its static objects' destructors when it is first loaded
// (the Python backend: at its first model); libc destroys them at exit()
// latest first, so before any exit handler registered earlier (the addon's,
// registered when the library was loaded). A stop or delete called after
// them runs on a half-destroyed Triton (issue 29: SIGSEGV or SIGABRT
// "malloc_consolidate(): unaligned fastbin chunk"). The fake registers a
// handler at the same points that marks them destroyed, and such a stop
// aborts with a clear message.
namespace {
std::atomic<bool> g_exit_singletons_destroyed{false};
std::mutex g_exit_singletons_mu;
std::set<std::string>* g_exit_singletons =
    new std::set<std::string>();  // never freed (exit path)
void DestroyExitSingletons() { g_exit_singletons_destroyed.store(true); }
}  // namespace

void RegisterExitSingletons(const std::string& owner) {
  std::lock_guard<std::mutex> lock(g_exit_singletons_mu);
  if (!g_exit_singletons->insert(owner).second) return;
  std::atexit(DestroyExitSingletons);
}

void CheckExitSingletons(const char* call) {
  if (!g_exit_singletons_destroyed.load()) return;
  std::fprintf(stderr,
               "triton-node-fake-engine: %s was called during exit() after "
               "the exit handlers of Triton's singletons and backends ran "
               "(they were registered when the server started or a model "
               "loaded, after the caller's exit handler, and libc runs the "
               "latest first); the real library crashes here (SIGSEGV or "
               "SIGABRT, issue 29)\n",
               call);
  std::fflush(stderr);
  std::abort();
}

// ---- backend work at exit ---------------------------------------------------
namespace {

// Backend work running on Triton's threads (executions, stream threads).
std::atomic<int> g_backend_work{0};

// Real Triton has static objects (its pinned memory manager among them) whose
// destructors run in exit(); a backend thread still running then crashes the
// process (SIGSEGV, r25.07 CPU build: a stop that timed out with a decoupled
// request in its backend, then exit). The fake fails as loudly.
struct ExitGuard {
  ~ExitGuard() {
    int n = g_backend_work.load();
    if (n == 0) return;
    std::fprintf(stderr,
                 "triton fake: exit() destroys the library's static objects "
                 "while %d backend thread(s) still run; real Triton crashes "
                 "here (SIGSEGV in its pinned memory manager's destructor)\n",
                 n);
    std::abort();
  }
} g_exit_guard;

}  // namespace

void BackendWorkBegin() { g_backend_work.fetch_add(1); }
void BackendWorkEnd() { g_backend_work.fetch_sub(1); }

}  // namespace fake
