#include "objects/output_functions.h"

#include "env/env_data.h"
#include "memory/buffer_pool.h"
#include "memory/external_outputs.h"
#include "request/ledger.h"
#include "request/kept_requests.h"
#include "triton/errors.h"
#include "triton/server_handles.h"

namespace triton_node {

Napi::Value CopyOutputs(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), GetEnvData(info.Env())->CopyOutputs());
}

Napi::Value SetCopyOutputs(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsBoolean()) {
    ThrowTypeError(info.Env(), "setCopyOutputs(enabled) expects a boolean");
  }
  GetEnvData(info.Env())->copy_outputs_forced = info[0].As<Napi::Boolean>();
  return info.Env().Undefined();
}

Napi::Value ReleaseOutput(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) {
    ThrowTypeError(env, "releaseOutput(arrayBuffer) expects an ArrayBuffer");
  }
  return Napi::Boolean::New(env, ReleaseSharedArrayBuffer(env, info[0]));
}

Napi::Value AddonStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto number = [env](int64_t n) {
    return Napi::Number::New(env, static_cast<double>(n));
  };
  Napi::Object out = Napi::Object::New(env);
  out.Set("liveOutputBuffers", number(BufferPool::live_js_buffers.load()));
  out.Set("pooledBytes", number(BufferPool::PooledBytes()));
  out.Set("pendingRequests", number(InflightLedger::PendingRequests()));
  // Requests of this environment's running servers that Triton has not
  // finished with (released, FINAL and, when traced, the trace released):
  // a decoupled backend may answer long after it released the request.
  int64_t inflight = 0;
  for (const auto& server : GetEnvData(env)->servers) {
    inflight += server->Inflight();
  }
  out.Set("inflightRequests", number(inflight));
  // Released Triton requests kept for reuse (request/kept_requests.h), all
  // environments: Triton objects that are alive by design.
  out.Set("keptRequests", number(KeptRequests()));
  // Stopped servers not yet deleted (triton/server_handles.h), all
  // environments.
  out.Set("parkedServers", number(ParkedServerCount()));
  return out;
}

}  // namespace triton_node
