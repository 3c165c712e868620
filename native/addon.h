// Per-environment state of the addon (one per main thread / worker).
#ifndef TRITON_NODE_ADDON_H_
#define TRITON_NODE_ADDON_H_

#include <napi.h>

#include <memory>
#include <vector>

namespace triton_node {

class ServerCore;

// Lives as long as its environment. Touched only on that environment's JS
// thread, except where noted.
struct EnvData {
  Napi::FunctionReference server_ctor;
  Napi::FunctionReference host_buffer_ctor;
  Napi::FunctionReference cuda_buffer_ctor;
  Napi::FunctionReference metric_family_ctor;
  Napi::FunctionReference metric_ctor;
  // TRITON_NODE_COPY_OUTPUTS=1 or setCopyOutputs(true).
  bool copy_outputs_forced = false;
  // The runtime refused an external ArrayBuffer once (Electron): copy from
  // then on.
  bool external_refused = false;
  // Set by the cleanup hook: the environment is going away.
  bool tearing_down = false;
  // Servers of this environment that have not finished stopping; the
  // cleanup hook stops whatever is left.
  std::vector<std::shared_ptr<ServerCore>> servers;

  bool CopyOutputs() const { return copy_outputs_forced || external_refused; }
};

EnvData* GetEnvData(Napi::Env env);

}  // namespace triton_node

#endif  // TRITON_NODE_ADDON_H_
