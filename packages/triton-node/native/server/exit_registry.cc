#include "server/exit_registry.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "server/core.h"

namespace triton_node {
namespace {

std::mutex g_cores_mu;
std::vector<std::weak_ptr<ServerCore>>* g_cores =
    new std::vector<std::weak_ptr<ServerCore>>();  // never freed (exit path)

// -1 until the JS 'exit' event reported a code.
std::atomic<int> g_exit_code{-1};

// Set once a server is left undeleted (its core may be gone by exit).
std::atomic<bool> g_server_left{false};

// Set by the first run of the exit handler: it is registered several times
// (RenewExitHandler) and only the first run, the latest registered, works.
std::atomic<bool> g_exit_ran{false};

// Registrations made by RenewExitHandler; bounded, as each one stays in
// libc's list until exit.
std::atomic<int> g_renewals{0};
constexpr int kMaxRenewals = 4096;

// Returns true when a server could not be deleted (a stop that timed out
// with requests still in a backend): Triton's threads may then still run.
bool TeardownAllCores() {
  std::vector<std::shared_ptr<ServerCore>> cores;
  {
    std::lock_guard<std::mutex> lock(g_cores_mu);
    for (auto& w : *g_cores) {
      if (auto p = w.lock()) cores.push_back(p);
    }
  }
  for (auto& core : cores) core->Teardown(false);
  // Keep the cores alive: static destruction must not run their
  // destructors (they would touch Node-API).
  bool triton_running = false;
  for (auto& core : cores) {
    new std::shared_ptr<ServerCore>(core);
    if (!core->ServerDeleted()) triton_running = true;
  }
  return triton_running;
}

// Runs in exit(), before the Triton library's static destructors and before
// the exit handlers Triton and its backends registered when a server started
// or a model loaded (libc runs the latest registered first; see
// RenewExitHandler). A server
// that could not be deleted (now, or earlier when its stop timed out) leaves
// Triton's threads running, and Triton's static objects (its pinned memory
// manager, its logger) would be destroyed under them: SIGSEGV, and the
// process loses its exit code. Then the process ends here, with its code.
void AtProcessExit() {
  if (g_exit_ran.exchange(true)) return;
  const bool triton_running = TeardownAllCores();
  if (!triton_running && !g_server_left.load()) return;
  int code = g_exit_code.load();
  std::fflush(nullptr);
  std::_Exit(code >= 0 ? code : 1);
}

}  // namespace

void RegisterCore(const std::shared_ptr<ServerCore>& core) {
  std::lock_guard<std::mutex> lock(g_cores_mu);
  g_cores->push_back(core);
}

void UnregisterCore(ServerCore* core) {
  std::lock_guard<std::mutex> lock(g_cores_mu);
  auto& v = *g_cores;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [core](const std::weak_ptr<ServerCore>& w) {
                           auto p = w.lock();
                           return !p || p.get() == core;
                         }),
          v.end());
}

void InstallExitHandler() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(AtProcessExit); });
}

void RenewExitHandler() {
  if (g_exit_ran.load()) return;
  if (g_renewals.fetch_add(1) >= kMaxRenewals) return;
  std::atexit(AtProcessExit);
}

void NoteServerLeftUndeleted() { g_server_left.store(true); }

void NoteExitCode(int code) { g_exit_code.store(code); }

}  // namespace triton_node
