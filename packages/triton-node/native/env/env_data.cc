#include "env/env_data.h"

#include <algorithm>

namespace triton_node {
namespace {

// The instance data: the cleanup hook holds the same data, so that it can
// run whichever of the two Node runs first.
struct Holder {
  std::shared_ptr<EnvData> data;
};

void FinalizeHolder(Napi::Env, Holder* holder) {
  holder->data->ForgetReferences();
  delete holder;
}

}  // namespace

void EnvData::RemoveServer(const EnvServer* server) {
  servers.erase(std::remove_if(servers.begin(), servers.end(),
                               [server](const std::shared_ptr<EnvServer>& p) {
                                 return p.get() == server;
                               }),
                servers.end());
}

void EnvData::ForgetReferences() {
  server_ctor.SuppressDestruct();
  host_buffer_ctor.SuppressDestruct();
  cuda_buffer_ctor.SuppressDestruct();
  metric_family_ctor.SuppressDestruct();
  metric_ctor.SuppressDestruct();
  event_decoder_factory.SuppressDestruct();
}

EnvData* InstallEnvData(Napi::Env env) {
  auto* holder = new Holder{std::make_shared<EnvData>()};
  std::shared_ptr<EnvData> data = holder->data;
  env.SetInstanceData<Holder, FinalizeHolder>(holder);
  // Runs before the environment's instance data goes away: stop what the
  // program left running, without calling into JS.
  env.AddCleanupHook([data] {
    data->tearing_down = true;
    std::vector<std::shared_ptr<EnvServer>> servers;
    servers.swap(data->servers);
    for (auto& server : servers) server->Teardown(true);
  });
  return data.get();
}

EnvData* GetEnvData(Napi::Env env) {
  return env.GetInstanceData<Holder>()->data.get();
}

}  // namespace triton_node
