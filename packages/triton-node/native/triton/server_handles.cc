#include "triton/server_handles.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "triton/api.h"
#include "triton/errors.h"
#include "triton/owners.h"

namespace triton_node {
namespace {

struct RunningServer {
  TRITONSERVER_Server* server;
  std::string repository;
};

// Process-wide (worker threads share the library); never freed, so that an
// exit handler may still use it.
struct Registry {
  // Held across ServerNew and ServerDelete: a server created while a
  // parked one is deleted would lose its managers.
  std::mutex mu;
  std::vector<RunningServer> running;
  std::vector<TRITONSERVER_Server*> parked;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

// A server that sets Triton's memory managers up again and does nothing
// else: no model is loaded, and its failures do not delete it (which would
// tear the managers down once more). Null when even that fails.
TRITONSERVER_Server* NewStandInServer(const std::string& repository) {
  const TritonApi& api = Api();
  TRITONSERVER_ServerOptions* raw = nullptr;
  if (api.TRITONSERVER_ServerOptionsNew(&raw) != nullptr) return nullptr;
  ServerOptionsOwner options(raw);
  TRITONSERVER_Error* err =
      api.TRITONSERVER_ServerOptionsSetModelRepositoryPath(raw,
                                                           repository.c_str());
  if (err == nullptr) {
    err = api.TRITONSERVER_ServerOptionsSetModelControlMode(
        raw, TRITONSERVER_MODEL_CONTROL_EXPLICIT);
  }
  if (err == nullptr) {
    // Left unset, the library reads an uninitialised retry count.
    err = api.TRITONSERVER_ServerOptionsSetModelLoadRetryCount(raw, 0);
  }
  if (err == nullptr)
    err = api.TRITONSERVER_ServerOptionsSetExitOnError(raw, false);
  if (err == nullptr)
    err = api.TRITONSERVER_ServerOptionsSetMetrics(raw, false);
  if (err != nullptr) {
    DropError(err);
    return nullptr;
  }
  TRITONSERVER_Server* server = nullptr;
  DropError(api.TRITONSERVER_ServerNew(&server, raw));
  return server;
}

// Caller holds registry.mu and no server runs any more.
void DeleteParked(Registry* registry) {
  std::vector<TRITONSERVER_Server*> parked;
  parked.swap(registry->parked);
  for (TRITONSERVER_Server* server : parked) {
    DropError(Api().TRITONSERVER_ServerDelete(server));
  }
}

}  // namespace

TRITONSERVER_Error* CreateServer(TRITONSERVER_ServerOptions* options,
                                 const std::string& repository,
                                 TRITONSERVER_Server** server) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  *server = nullptr;
  TRITONSERVER_Error* err = Api().TRITONSERVER_ServerNew(server, options);
  if (err == nullptr) {
    registry.running.push_back({*server, repository});
    return nullptr;
  }
  // Triton deleted the server it could not start, and the managers with it.
  if (!registry.running.empty()) {
    TRITONSERVER_Server* stand_in =
        NewStandInServer(registry.running.front().repository);
    if (stand_in != nullptr) {
      DropError(Api().TRITONSERVER_ServerStop(stand_in));
      registry.parked.push_back(stand_in);
    }
  }
  return err;
}

TRITONSERVER_Error* ReleaseServer(TRITONSERVER_Server* server) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  auto& running = registry.running;
  running.erase(std::remove_if(running.begin(), running.end(),
                               [server](const RunningServer& r) {
                                 return r.server == server;
                               }),
                running.end());
  if (!running.empty()) {
    registry.parked.push_back(server);
    return nullptr;
  }
  TRITONSERVER_Error* err = Api().TRITONSERVER_ServerDelete(server);
  DeleteParked(&registry);
  return err;
}

int ParkedServerCount() {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  return static_cast<int>(registry.parked.size());
}

}  // namespace triton_node
