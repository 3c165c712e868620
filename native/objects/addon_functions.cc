#include "objects/addon_functions.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "env/env_data.h"
#include "memory/buffer_pool.h"
#include "memory/external_outputs.h"
#include "memory/mem_kind.h"
#include "request/ledger.h"
#include "request/submit_layout.h"
#include "server/exit_registry.h"
#include "triton/api.h"
#include "triton/datatypes.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

// Fake engine live-object kinds, in TRITONFAKE_LiveObjects order.
constexpr const char* kLiveObjectKinds[TRITONFAKE_LIVE_OBJECT_KINDS] = {
    "requests",      "responses", "errors",     "messages", "allocators",
    "outputBuffers", "metrics",   "parameters", "traces",   "servers"};

Napi::Object LibraryInfoObject(Napi::Env env, const TritonApi& api) {
  Napi::Object info = Napi::Object::New(env);
  info.Set("path", Napi::String::New(env, api.path));
  info.Set("apiMajor", Napi::Number::New(env, api.api_major));
  info.Set("apiMinor", Napi::Number::New(env, api.api_minor));
  info.Set("isFake",
           Napi::Boolean::New(env, api.TRITONFAKE_LiveObjects != nullptr));
  Napi::Object optional = Napi::Object::New(env);
  for (const auto& entry : api.optional) {
    optional.Set(entry.first, Napi::Boolean::New(env, entry.second));
  }
  info.Set("optional", optional);
  return info;
}

std::vector<std::string> ReadCandidates(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) {
    ThrowTypeError(env, "loadLibrary(candidates) expects an array of paths");
  }
  Napi::Array arr = info[0].As<Napi::Array>();
  std::vector<std::string> candidates;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value v = arr.Get(i);
    if (!v.IsString()) {
      ThrowTypeError(env,
                     "candidates[" + std::to_string(i) + "] must be a string");
    }
    candidates.push_back(v.As<Napi::String>());
  }
  return candidates;
}

Napi::Error LoadError(Napi::Env env, const LoadResult& result) {
  Napi::Error error = MakeError(env, result.error_code, result.error_message);
  Napi::Array attempts = Napi::Array::New(env, result.attempts.size());
  for (size_t i = 0; i < result.attempts.size(); ++i) {
    Napi::Object a = Napi::Object::New(env);
    a.Set("path", result.attempts[i].path);
    a.Set("outcome", result.attempts[i].outcome);
    a.Set("detail", result.attempts[i].detail);
    attempts.Set(static_cast<uint32_t>(i), a);
  }
  error.Set("attempts", attempts);
  return error;
}

Napi::Object NumberTable(
    Napi::Env env, std::initializer_list<std::pair<const char*, int>> kv) {
  Napi::Object o = Napi::Object::New(env);
  for (const auto& e : kv) o.Set(e.first, Napi::Number::New(env, e.second));
  return o;
}

}  // namespace

Napi::Value LoadLibrary(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<std::string> candidates = ReadCandidates(info);
  bool was_loaded = LoadedApi() != nullptr;
  LoadResult result = LoadTritonLibrary(candidates);
  if (result.api == nullptr) throw LoadError(env, result);
  if (!was_loaded) InstallExitHandler();
  return LibraryInfoObject(env, *result.api);
}

Napi::Value LibraryInfo(const Napi::CallbackInfo& info) {
  const TritonApi* api = LoadedApi();
  if (api == nullptr) return info.Env().Null();
  return LibraryInfoObject(info.Env(), *api);
}

Napi::Value FakeLiveObjects(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const TritonApi* api = LoadedApi();
  if (api == nullptr || api->TRITONFAKE_LiveObjects == nullptr) {
    return env.Null();
  }
  uint64_t counts[TRITONFAKE_LIVE_OBJECT_KINDS] = {0};
  uint32_t n =
      api->TRITONFAKE_LiveObjects(counts, TRITONFAKE_LIVE_OBJECT_KINDS);
  Napi::Object out = Napi::Object::New(env);
  for (uint32_t i = 0; i < TRITONFAKE_LIVE_OBJECT_KINDS; ++i) {
    out.Set(kLiveObjectKinds[i],
            Napi::Number::New(env, i < n ? static_cast<double>(counts[i]) : 0));
  }
  return out;
}

Napi::Value FakeSetSyncCallbacks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsBoolean()) {
    ThrowTypeError(env, "fakeSetSyncCallbacks(enabled) expects a boolean");
  }
  const TritonApi* api = LoadedApi();
  if (api == nullptr || api->TRITONFAKE_SetSyncCallbacks == nullptr) {
    return Napi::Boolean::New(env, false);
  }
  api->TRITONFAKE_SetSyncCallbacks(info[0].As<Napi::Boolean>());
  return Napi::Boolean::New(env, true);
}

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

// Called from the 'exit' event of the main thread (lib/native.ts).
Napi::Value NoteExitCode(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && info[0].IsNumber()) {
    NoteExitCode(info[0].As<Napi::Number>().Int32Value());
  }
  return info.Env().Undefined();
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
  return out;
}

Napi::Value ReleaseOutput(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) {
    ThrowTypeError(env, "releaseOutput(arrayBuffer) expects an ArrayBuffer");
  }
  return Napi::Boolean::New(env, ReleaseSharedArrayBuffer(env, info[0]));
}

Napi::Object ConstantsObject(Napi::Env env) {
  Napi::Object c = Napi::Object::New(env);
  c.Set("submitSlots",
        NumberTable(env, {{"version", kSlotVersion},
                          {"priority", kSlotPriority},
                          {"timeoutMicroseconds", kSlotTimeout},
                          {"flags", kSlotFlags},
                          {"outputMemory", kSlotOutputMemory},
                          {"outputDevice", kSlotOutputDevice},
                          {"timing", kSlotTiming},
                          {"inputCount", kSlotInputCount},
                          {"outputCount", kSlotOutputCount},
                          {"parameterCount", kSlotParameterCount},
                          {"header", kSubmitHeader}}));
  Napi::Object memory = Napi::Object::New(env);
  for (int k = 0; k < kMemKindCount; ++k) {
    memory.Set(MemKindName(k), Napi::Number::New(env, k));
  }
  c.Set("memoryCodes", memory);
  c.Set("parameterCodes", NumberTable(env, {{"string", kParamString},
                                            {"int", kParamInt},
                                            {"double", kParamDouble},
                                            {"bool", kParamBool}}));
  Napi::Object datatypes = Napi::Object::New(env);
  for (int t = 1; t <= kLastDataType; ++t) {
    datatypes.Set(DataTypeName(static_cast<TRITONSERVER_DataType>(t)),
                  Napi::Number::New(env, t));
  }
  c.Set("datatypeCodes", datatypes);
  Napi::Object errors = Napi::Object::New(env);
  for (int code = 0; code < ErrorCodeCount(); ++code) {
    errors.Set(ErrorCodeName(code), Napi::Number::New(env, code));
  }
  c.Set("errorCodes", errors);
  Napi::Array kinds = Napi::Array::New(env, TRITONFAKE_LIVE_OBJECT_KINDS);
  for (uint32_t i = 0; i < TRITONFAKE_LIVE_OBJECT_KINDS; ++i) {
    kinds.Set(i, Napi::String::New(env, kLiveObjectKinds[i]));
  }
  c.Set("liveObjectKinds", kinds);
  return c;
}

}  // namespace triton_node
