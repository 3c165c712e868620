// Module entry: per-environment instance data, the JS-visible functions of
// NativeAddon, and the cleanup that stops servers left running.
#include "addon.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "allocator.h"
#include "cuda.h"
#include "errors.h"
#include "metrics.h"
#include "request.h"
#include "server_wrap.h"
#include "tensor.h"
#include "triton_api.h"

namespace triton_node {
namespace {

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

// The exit code the process is ending with, as the JS 'exit' event saw it
// (lib/native.ts); -1 until then.
std::atomic<int> g_exit_code{-1};

// Runs in exit(), before the Triton library's static destructors. A server
// that could not be deleted (its stop timed out with a request still in a
// backend) leaves backend threads running, and Triton's static objects (its
// pinned memory manager) would be destroyed under them: SIGSEGV, and the
// process loses its exit code. Then the process ends here, with its code.
void AtProcessExit() {
  if (!TeardownAllCoresAtExit()) return;
  int code = g_exit_code.load();
  std::fflush(nullptr);
  std::_Exit(code >= 0 ? code : 1);
}

// The numbers lib/binding.ts shares with this addon (submit()'s layout and
// codes), from the C++ definitions: test/contract.test.ts compares them with
// the TypeScript ones, so neither side can drift alone.
Napi::Object ConstantsObject(Napi::Env env) {
  auto table = [env](std::initializer_list<std::pair<const char*, int>> kv) {
    Napi::Object o = Napi::Object::New(env);
    for (const auto& e : kv) o.Set(e.first, Napi::Number::New(env, e.second));
    return o;
  };
  Napi::Object c = Napi::Object::New(env);
  c.Set("submitSlots", table({{"version", kSlotVersion},
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
  c.Set("memoryCodes",
        table({{"cpu", kMemCpu}, {"pinned", kMemPinned}, {"gpu", kMemGpu}}));
  c.Set("parameterCodes", table({{"string", kParamString},
                                 {"int", kParamInt},
                                 {"double", kParamDouble},
                                 {"bool", kParamBool}}));
  c.Set("datatypeCodes", table({{"BOOL", TRITONSERVER_TYPE_BOOL},
                                {"UINT8", TRITONSERVER_TYPE_UINT8},
                                {"UINT16", TRITONSERVER_TYPE_UINT16},
                                {"UINT32", TRITONSERVER_TYPE_UINT32},
                                {"UINT64", TRITONSERVER_TYPE_UINT64},
                                {"INT8", TRITONSERVER_TYPE_INT8},
                                {"INT16", TRITONSERVER_TYPE_INT16},
                                {"INT32", TRITONSERVER_TYPE_INT32},
                                {"INT64", TRITONSERVER_TYPE_INT64},
                                {"FP16", TRITONSERVER_TYPE_FP16},
                                {"FP32", TRITONSERVER_TYPE_FP32},
                                {"FP64", TRITONSERVER_TYPE_FP64},
                                {"BYTES", TRITONSERVER_TYPE_BYTES},
                                {"BF16", TRITONSERVER_TYPE_BF16}}));
  return c;
}

class TritonNodeAddon : public Napi::Addon<TritonNodeAddon> {
 public:
  TritonNodeAddon(Napi::Env env, Napi::Object exports)
      : data_(std::make_shared<EnvData>()) {
    data_->server_ctor = Napi::Persistent(ServerWrap::Init(env));
    data_->host_buffer_ctor = Napi::Persistent(HostBufferWrap::Init(env));
    data_->cuda_buffer_ctor = Napi::Persistent(CudaBufferWrap::Init(env));
    data_->metric_family_ctor = Napi::Persistent(MetricFamilyWrap::Init(env));
    data_->metric_ctor = Napi::Persistent(MetricWrap::Init(env));
    const char* copy = std::getenv("TRITON_NODE_COPY_OUTPUTS");
    data_->copy_outputs_forced = copy != nullptr && std::strcmp(copy, "1") == 0;
    DefineAddon(
        exports,
        {InstanceMethod<&TritonNodeAddon::LoadLibrary>("loadLibrary"),
         InstanceMethod<&TritonNodeAddon::LibraryInfo>("libraryInfo"),
         InstanceMethod<&TritonNodeAddon::CreateServer>("createServer"),
         InstanceMethod<&TritonNodeAddon::FakeLiveObjects>("fakeLiveObjects"),
         InstanceMethod<&TritonNodeAddon::FakeSetSyncCallbacks>(
             "fakeSetSyncCallbacks"),
         InstanceMethod<&TritonNodeAddon::CopyOutputs>("copyOutputs"),
         InstanceMethod<&TritonNodeAddon::SetCopyOutputs>("setCopyOutputs"),
         InstanceMethod<&TritonNodeAddon::AddonStats>("addonStats"),
         InstanceMethod<&TritonNodeAddon::NoteExitCode>("noteExitCode"),
         InstanceValue("releaseOutput",
                       Napi::Function::New(env, ReleaseOutput, "releaseOutput"),
                       napi_enumerable),
         InstanceValue("cuda", CreateCudaObject(env), napi_enumerable),
         InstanceValue("constants", ConstantsObject(env), napi_enumerable)});
    // Runs before the environment's instance data goes away: stop what the
    // program left running, without calling into JS.
    std::shared_ptr<EnvData> data = data_;
    env.AddCleanupHook([data] {
      data->tearing_down = true;
      std::vector<std::shared_ptr<ServerCore>> servers;
      servers.swap(data->servers);
      for (auto& core : servers) core->Teardown(true);
    });
  }

  ~TritonNodeAddon() {
    // The environment is being torn down: its references die with it.
    data_->server_ctor.SuppressDestruct();
    data_->host_buffer_ctor.SuppressDestruct();
    data_->cuda_buffer_ctor.SuppressDestruct();
    data_->metric_family_ctor.SuppressDestruct();
    data_->metric_ctor.SuppressDestruct();
  }

  EnvData* data() const { return data_.get(); }

 private:
  Napi::Value LoadLibrary(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsArray()) {
      ThrowTypeError(env, "loadLibrary(candidates) expects an array of paths");
    }
    Napi::Array arr = info[0].As<Napi::Array>();
    std::vector<std::string> candidates;
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value v = arr.Get(i);
      if (!v.IsString()) {
        ThrowTypeError(
            env, "candidates[" + std::to_string(i) + "] must be a string");
      }
      candidates.push_back(v.As<Napi::String>());
    }
    bool was_loaded = LoadedApi() != nullptr;
    LoadResult result = LoadTritonLibrary(candidates);
    if (result.api == nullptr) {
      Napi::Error error =
          MakeError(env, result.error_code, result.error_message);
      Napi::Array attempts = Napi::Array::New(env, result.attempts.size());
      for (size_t i = 0; i < result.attempts.size(); ++i) {
        Napi::Object a = Napi::Object::New(env);
        a.Set("path", result.attempts[i].path);
        a.Set("outcome", result.attempts[i].outcome);
        a.Set("detail", result.attempts[i].detail);
        attempts.Set(static_cast<uint32_t>(i), a);
      }
      error.Set("attempts", attempts);
      throw error;
    }
    if (!was_loaded) {
      static std::once_flag once;
      // Registered after the library's own static objects, so it runs
      // before their destructors at exit().
      std::call_once(once, [] { std::atexit(AtProcessExit); });
    }
    return LibraryInfoObject(env, *result.api);
  }

  Napi::Value LibraryInfo(const Napi::CallbackInfo& info) {
    const TritonApi* api = LoadedApi();
    if (api == nullptr) return info.Env().Null();
    return LibraryInfoObject(info.Env(), *api);
  }

  Napi::Value CreateServer(const Napi::CallbackInfo& info) {
    return ServerWrap::CreateServer(info);
  }

  Napi::Value FakeLiveObjects(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const TritonApi* api = LoadedApi();
    if (api == nullptr || api->TRITONFAKE_LiveObjects == nullptr) {
      return env.Null();
    }
    static const char* const kNames[TRITONFAKE_LIVE_OBJECT_KINDS] = {
        "requests",      "responses", "errors",     "messages", "allocators",
        "outputBuffers", "metrics",   "parameters", "traces",   "servers"};
    uint64_t counts[TRITONFAKE_LIVE_OBJECT_KINDS] = {0};
    uint32_t n =
        api->TRITONFAKE_LiveObjects(counts, TRITONFAKE_LIVE_OBJECT_KINDS);
    Napi::Object out = Napi::Object::New(env);
    for (uint32_t i = 0; i < TRITONFAKE_LIVE_OBJECT_KINDS; ++i) {
      out.Set(kNames[i], Napi::Number::New(
                             env, i < n ? static_cast<double>(counts[i]) : 0));
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
    return Napi::Boolean::New(info.Env(), data_->CopyOutputs());
  }

  void SetCopyOutputs(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsBoolean()) {
      ThrowTypeError(info.Env(), "setCopyOutputs(enabled) expects a boolean");
    }
    data_->copy_outputs_forced = info[0].As<Napi::Boolean>();
  }

  // Called from the 'exit' event of the main thread (lib/native.ts).
  void NoteExitCode(const Napi::CallbackInfo& info) {
    if (info.Length() > 0 && info[0].IsNumber()) {
      g_exit_code.store(info[0].As<Napi::Number>().Int32Value());
    }
  }

  Napi::Value AddonStats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object out = Napi::Object::New(env);
    out.Set("liveOutputBuffers",
            Napi::Number::New(
                env, static_cast<double>(BufferPool::live_js_buffers.load())));
    out.Set(
        "pooledBytes",
        Napi::Number::New(env, static_cast<double>(BufferPool::PooledBytes())));
    out.Set(
        "pendingRequests",
        Napi::Number::New(env, static_cast<double>(g_pending_requests.load())));
    // Requests of this environment's running servers that Triton has not
    // finished with (released, FINAL and, when traced, the trace released):
    // a decoupled backend may answer long after it released the request.
    int64_t inflight = 0;
    for (const auto& core : data_->servers) inflight += core->Inflight();
    out.Set("inflightRequests",
            Napi::Number::New(env, static_cast<double>(inflight)));
    return out;
  }

  std::shared_ptr<EnvData> data_;
};

}  // namespace

EnvData* GetEnvData(Napi::Env env) {
  return env.GetInstanceData<TritonNodeAddon>()->data();
}

}  // namespace triton_node

// cmake-js builds do not define the node-gyp module name.
#ifndef NODE_GYP_MODULE_NAME
#define NODE_GYP_MODULE_NAME triton_node
#endif
using TritonNodeAddon = triton_node::TritonNodeAddon;
NODE_API_ADDON(TritonNodeAddon)
