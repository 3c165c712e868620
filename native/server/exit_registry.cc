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

// Runs in exit(), before the Triton library's static destructors. A server
// that could not be deleted (now, or earlier when its stop timed out) leaves
// Triton's threads running, and Triton's static objects (its pinned memory
// manager, its logger) would be destroyed under them: SIGSEGV, and the
// process loses its exit code. Then the process ends here, with its code.
void AtProcessExit() {
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

void NoteServerLeftUndeleted() { g_server_left.store(true); }

void NoteExitCode(int code) { g_exit_code.store(code); }

}  // namespace triton_node
