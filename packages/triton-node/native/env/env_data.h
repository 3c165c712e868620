// Per-environment data of the addon (one per main thread or worker thread).
#ifndef TRITON_NODE_ENV_ENV_DATA_H_
#define TRITON_NODE_ENV_ENV_DATA_H_

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "triton/errors.h"

namespace triton_node {

struct MemView;

// A server of this environment, as the environment's cleanup sees it.
class EnvServer {
 public:
  virtual ~EnvServer() = default;
  // Stops and deletes the server without calling into JS.
  virtual void Teardown(bool env_alive) = 0;
  // Requests submitted and not yet settled.
  virtual int64_t Inflight() = 0;
};

// Fills `view` from a HostBuffer or CudaBuffer object of the matching class
// (set by the class; see memory/buffer_objects.h).
using BufferViewFn = void (*)(Napi::Object object, const Subject& what,
                              MemView* view);

// Lives as long as its environment. Touched only on that environment's JS
// thread.
struct EnvData {
  Napi::FunctionReference server_ctor;
  Napi::FunctionReference host_buffer_ctor;
  Napi::FunctionReference cuda_buffer_ctor;
  Napi::FunctionReference metric_family_ctor;
  Napi::FunctionReference metric_ctor;
  // setEventDecoder(): makes each server's event decoder
  // (request/event_encoder.h).
  Napi::FunctionReference event_decoder_factory;
  BufferViewFn host_buffer_view = nullptr;
  BufferViewFn cuda_buffer_view = nullptr;
  // TRITON_NODE_COPY_OUTPUTS=1 or setCopyOutputs(true).
  bool copy_outputs_forced = false;
  // The runtime refused an external ArrayBuffer once (Electron): copy from
  // then on.
  bool external_refused = false;
  // Set by the cleanup hook: the environment is going away.
  bool tearing_down = false;
  // Servers that have not finished stopping; the cleanup hook stops whatever
  // is left.
  std::vector<std::shared_ptr<EnvServer>> servers;

  bool CopyOutputs() const { return copy_outputs_forced || external_refused; }
  void RemoveServer(const EnvServer* server);
  // The environment is being torn down: its references die with it.
  void ForgetReferences();
};

// Creates the environment's data, with a cleanup hook that tears down the
// servers left running. Once per environment, at module load.
EnvData* InstallEnvData(Napi::Env env);
EnvData* GetEnvData(Napi::Env env);

}  // namespace triton_node

#endif  // TRITON_NODE_ENV_ENV_DATA_H_
