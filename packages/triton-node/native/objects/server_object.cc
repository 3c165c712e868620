#include "objects/server_object.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "env/env_data.h"
#include "memory/mem_view.h"
#include "objects/metric_family.h"
#include "server/exit_registry.h"
#include "server/operations.h"
#include "server/options.h"
#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

std::string GetString(Napi::Env env, Napi::Value v, const std::string& what) {
  if (!v.IsString()) ThrowTypeError(env, what + " must be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  // Triton takes C strings: a NUL would silently cut the name.
  if (s.find('\0') != std::string::npos) {
    ThrowTypeError(env, what + " must not contain a NUL character");
  }
  return s;
}

// (name, version?) of the model queries.
ModelRef GetModelRef(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ModelRef ref{GetString(env, info[0], "model name"), -1};
  if (info.Length() < 2) return ref;
  if (!info[1].IsNumber()) ThrowTypeError(env, "version must be a number");
  double d = info[1].As<Napi::Number>().DoubleValue();
  if (d != static_cast<double>(static_cast<int64_t>(d)) || d < -1) {
    ThrowRangeError(env, "version must be -1 or a non-negative integer");
  }
  ref.version = static_cast<int64_t>(d);
  return ref;
}

// files: [path, Uint8Array][], copied (the load runs on another thread).
void GetFiles(Napi::Env env, Napi::Value value, LoadRequest* request) {
  if (!value.IsArray()) {
    ThrowTypeError(env, "files must be an array of [path, Uint8Array]");
  }
  Napi::Array arr = value.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value entry = arr.Get(i);
    if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 2) {
      ThrowTypeError(
          env, "files[" + std::to_string(i) + "] must be [path, Uint8Array]");
    }
    Napi::Array pair = entry.As<Napi::Array>();
    std::string path = GetString(env, pair.Get(0u), "file path");
    MemView view;
    if (!ResolveMemView(env, pair.Get(1u), "file '" + path + "'", &view) ||
        view.kind != kMemCpu) {
      ThrowTypeError(env, "file '" + path + "' must be a Uint8Array");
    }
    request->files.emplace_back(
        path, std::vector<uint8_t>(view.ptr, view.ptr + view.size));
  }
}

bool OptionalFlag(const Napi::CallbackInfo& info, size_t index) {
  return info.Length() > index && info[index].IsBoolean() &&
         info[index].As<Napi::Boolean>().Value();
}

// Creates the server; its result is the NativeServer object.
class CreateServerOp : public Operation {
 public:
  CreateServerOp(std::shared_ptr<ServerCore> core, ServerOptionsData options)
      : core_(std::move(core)), options_(std::move(options)) {}
  // ServerNew loads the startup models (all of them without model control).
  ModelEffect effect() const override { return ModelEffect::kLoads; }
  void Execute(TRITONSERVER_Server*) override {
    ErrorInfo error;
    // In POLL mode Triton loads and unloads models on its own: a kept
    // request could hold a version it is unloading. TRITON_NODE_KEEP_REQUESTS=0
    // turns keeping off (a Python model that loads and unloads models by
    // BLS changes them behind the addon's back too).
    const char* keep = std::getenv("TRITON_NODE_KEEP_REQUESTS");
    core_->SetKeepRequests(options_.control_mode !=
                               TRITONSERVER_MODEL_CONTROL_POLL &&
                           !(keep != nullptr && std::strcmp(keep, "0") == 0));
    TRITONSERVER_Server* server = NewTritonServer(options_, &error);
    core_->MarkCreated(server);
    if (server == nullptr) Fail(error);
  }
  Napi::Value Result(Napi::Env env) override {
    return GetEnvData(env)->server_ctor.New(
        {Napi::External<std::shared_ptr<ServerCore>>::New(env, &core_)});
  }

 private:
  std::shared_ptr<ServerCore> core_;
  ServerOptionsData options_;
};

}  // namespace

Napi::Function ServerWrap::Init(Napi::Env env) {
  Napi::Function ctor = DefineClass(
      env, "NativeServer",
      {InstanceMethod<&ServerWrap::IsLive>("isLive"),
       InstanceMethod<&ServerWrap::IsReady>("isReady"),
       InstanceMethod<&ServerWrap::Metadata>("metadata"),
       InstanceMethod<&ServerWrap::LoadModel>("loadModel"),
       InstanceMethod<&ServerWrap::UnloadModel>("unloadModel"),
       InstanceMethod<&ServerWrap::ModelIndex>("modelIndex"),
       InstanceMethod<&ServerWrap::ModelIsReady>("modelIsReady"),
       InstanceMethod<&ServerWrap::ModelProperties>("modelProperties"),
       InstanceMethod<&ServerWrap::ModelMetadata>("modelMetadata"),
       InstanceMethod<&ServerWrap::ModelConfig>("modelConfig"),
       InstanceMethod<&ServerWrap::ModelStatistics>("modelStatistics"),
       InstanceMethod<&ServerWrap::Metrics>("metrics"),
       InstanceMethod<&ServerWrap::Submit>("submit"),
       InstanceMethod<&ServerWrap::Cancel>("cancel"),
       InstanceMethod<&ServerWrap::Inflight>("inflight"),
       InstanceMethod<&ServerWrap::Stop>("stop"),
       InstanceMethod<&ServerWrap::Share>("share"),
       InstanceMethod<&ServerWrap::Attached>("attached"),
       InstanceMethod<&ServerWrap::SetPins>("setPins"),
       InstanceMethod<&ServerWrap::Pins>("pins"),
       InstanceMethod<&ServerWrap::CreateMetricFamily>("createMetricFamily")});
  GetEnvData(env)->server_ctor = Napi::Persistent(ctor);
  return ctor;
}

ServerWrap::ServerWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<ServerWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(),
                   "NativeServer cannot be constructed directly; use "
                   "createServer()");
  }
  core_ = *info[0].As<Napi::External<std::shared_ptr<ServerCore>>>().Data();
  // submit() is an own function of each server that carries its core: no
  // napi_unwrap of `this` per request (the prototype's method, which
  // unwraps, stays for a caller that took it from there).
  Napi::Env env = info.Env();
  auto* holder = new std::shared_ptr<ServerCore>(core_);
  Napi::Function submit;
  try {
    submit = Napi::Function::New(env, SubmitDirect, "submit", holder);
    submit.AddFinalizer(
        [](Napi::Env, std::shared_ptr<ServerCore>* p) { delete p; }, holder);
  } catch (...) {
    delete holder;
    throw;
  }
  info.This().As<Napi::Object>().DefineProperty(
      Napi::PropertyDescriptor::Value("submit", submit, napi_default));
}

Napi::Value ServerWrap::SubmitDirect(const Napi::CallbackInfo& info) {
  auto* core = static_cast<std::shared_ptr<ServerCore>*>(info.Data());
  uint64_t token = (*core)->Submit(info);
  return Napi::Number::New(info.Env(), static_cast<double>(token));
}

ServerWrap::~ServerWrap() {
  // Collected without stop(): stop in the background (no promise).
  if (core_ && !core_->IsStopped()) {
    try {
      core_->Stop(Env(), nullptr);
    } catch (...) {
    }
  }
}

Napi::Value ServerWrap::SetEventDecoder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) {
    ThrowTypeError(env, "setEventDecoder(create) expects a function");
  }
  GetEnvData(env)->event_decoder_factory =
      Napi::Persistent(info[0].As<Napi::Function>());
  return env.Undefined();
}

Napi::Value ServerWrap::CreateServer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (LoadedApi() == nullptr) {
    throw MakeError(env, "UNAVAILABLE",
                    "the Triton library is not loaded; call loadLibrary() "
                    "first");
  }
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    ThrowTypeError(env,
                   "createServer(options, onEvents) expects an options "
                   "object and a function");
  }
  ServerOptionsData options = ReadServerOptions(info[0].As<Napi::Object>());
  auto core = std::make_shared<ServerCore>(env, info[1].As<Napi::Function>());
  ThrowIfError(env, core->allocator().Create(), "response allocator");
  core->Init(env);
  GetEnvData(env)->servers.push_back(core);
  RegisterCore(core);
  return core->Run(
      env, std::make_unique<CreateServerOp>(core, std::move(options)), true);
}

Napi::Value ServerWrap::AttachServer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (LoadedApi() == nullptr) {
    throw MakeError(env, "UNAVAILABLE",
                    "the Triton library is not loaded; call loadLibrary() "
                    "first");
  }
  if (info.Length() < 2 || !info[1].IsFunction()) {
    ThrowTypeError(env,
                   "attachServer(id, onEvents) expects an id and a function");
  }
  std::string id = GetString(env, info[0], "shared server id");
  std::shared_ptr<ServerCore> core =
      ServerCore::Attach(env, id, info[1].As<Napi::Function>());
  return GetEnvData(env)->server_ctor.New(
      {Napi::External<std::shared_ptr<ServerCore>>::New(env, &core)});
}

Napi::Value ServerWrap::IsLive(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(), std::make_unique<ServerLiveOp>());
}

Napi::Value ServerWrap::IsReady(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(), std::make_unique<ServerReadyOp>());
}

Napi::Value ServerWrap::Metadata(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(), std::make_unique<ServerMetadataOp>());
}

Napi::Value ServerWrap::LoadModel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadRequest request;
  request.name = GetString(env, info[0], "model name");
  request.has_config =
      info.Length() > 1 && !info[1].IsUndefined() && !info[1].IsNull();
  if (request.has_config) request.config = GetString(env, info[1], "config");
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    GetFiles(env, info[2], &request);
  }
  return core_->Run(env, std::make_unique<LoadModelOp>(std::move(request)));
}

Napi::Value ServerWrap::UnloadModel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = GetString(env, info[0], "model name");
  return core_->Run(env, std::make_unique<UnloadModelOp>(
                             std::move(name), OptionalFlag(info, 1)));
}

Napi::Value ServerWrap::ModelIndex(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(),
                    std::make_unique<ModelIndexOp>(OptionalFlag(info, 0)));
}

Napi::Value ServerWrap::ModelIsReady(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(),
                    std::make_unique<ModelReadyOp>(GetModelRef(info)));
}

Napi::Value ServerWrap::ModelProperties(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(),
                    std::make_unique<ModelPropertiesOp>(GetModelRef(info)));
}

Napi::Value ServerWrap::ModelMetadata(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(),
                    std::make_unique<ModelMetadataOp>(GetModelRef(info)));
}

Napi::Value ServerWrap::ModelConfig(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(),
                    std::make_unique<ModelConfigOp>(GetModelRef(info)));
}

Napi::Value ServerWrap::ModelStatistics(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(),
                    std::make_unique<ModelStatisticsOp>(GetModelRef(info)));
}

Napi::Value ServerWrap::Metrics(const Napi::CallbackInfo& info) {
  return core_->Run(info.Env(), std::make_unique<MetricsOp>());
}

Napi::Value ServerWrap::Submit(const Napi::CallbackInfo& info) {
  // The arguments are read by the request builder (request/submit_layout.h).
  uint64_t token = core_->Submit(info);
  return Napi::Number::New(info.Env(), static_cast<double>(token));
}

void ServerWrap::Cancel(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) {
    ThrowTypeError(info.Env(), "cancel(token) expects a number");
  }
  double d = info[0].As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > 9007199254740991.0) return;
  core_->Cancel(static_cast<uint64_t>(d));
}

Napi::Value ServerWrap::Inflight(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(core_->Inflight()));
}

Napi::Value ServerWrap::Stop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  core_->Stop(env, &deferred);
  return deferred.Promise();
}

Napi::Value ServerWrap::Share(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), core_->Share(info.Env()));
}

Napi::Value ServerWrap::Attached(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), core_->attached());
}

Napi::Value ServerWrap::SetPins(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string pins = GetString(env, info[0], "pins");
  return Napi::Number::New(
      env, static_cast<double>(core_->SetPins(env, std::move(pins))));
}

Napi::Value ServerWrap::Pins(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::pair<uint64_t, std::string> pins = core_->Pins();
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, static_cast<double>(pins.first)));
  out.Set(1u, Napi::String::New(env, pins.second));
  return out;
}

Napi::Value ServerWrap::CreateMetricFamily(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (core_->IsStopped()) core_->ThrowStopped(env);
  return CreateMetricFamilyObject(info);
}

}  // namespace triton_node
