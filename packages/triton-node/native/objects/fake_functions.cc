#include "objects/fake_functions.h"

#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

// Fake engine live-object kinds, in TRITONFAKE_LiveObjects order.
constexpr const char* kLiveObjectKinds[TRITONFAKE_LIVE_OBJECT_KINDS] = {
    "requests",      "responses", "errors",     "messages", "allocators",
    "outputBuffers", "metrics",   "parameters", "traces",   "servers"};

}  // namespace

const char* LiveObjectKindName(unsigned index) {
  return index < TRITONFAKE_LIVE_OBJECT_KINDS ? kLiveObjectKinds[index] : "";
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

Napi::Value FakeSetStandIns(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    ThrowTypeError(env, "fakeSetStandIns(spec) expects a string");
  }
  const TritonApi* api = LoadedApi();
  if (api == nullptr || api->TRITONFAKE_SetStandIns == nullptr) {
    return Napi::Boolean::New(env, false);
  }
  std::string spec = info[0].As<Napi::String>().Utf8Value();
  ThrowIfError(env, api->TRITONFAKE_SetStandIns(spec.c_str()));
  return Napi::Boolean::New(env, true);
}

Napi::Value FakeHoldModelLoads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    ThrowTypeError(env, "fakeHoldModelLoads(mode) expects -1, 0 or 1");
  }
  const int32_t mode = info[0].As<Napi::Number>().Int32Value();
  if (mode < -1 || mode > 1) {
    ThrowTypeError(env, "fakeHoldModelLoads(mode) expects -1, 0 or 1");
  }
  const TritonApi* api = LoadedApi();
  if (api == nullptr || api->TRITONFAKE_HoldModelLoads == nullptr) {
    return env.Null();
  }
  return Napi::Number::New(env, api->TRITONFAKE_HoldModelLoads(mode));
}

Napi::Value FakeRelease(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !(info[0].IsString() || info[0].IsNull())) {
    ThrowTypeError(env, "fakeRelease(name) expects a string or null");
  }
  const TritonApi* api = LoadedApi();
  if (api == nullptr || api->TRITONFAKE_SetRelease == nullptr) {
    return env.Null();
  }
  if (info[0].IsNull()) {
    return Napi::String::New(env, api->TRITONFAKE_SetRelease(nullptr));
  }
  const std::string name = info[0].As<Napi::String>().Utf8Value();
  const std::string now = api->TRITONFAKE_SetRelease(name.c_str());
  if (now != name) {
    ThrowTypeError(env,
                   "Expected 'r25.07' or 'r26.06' for the fake engine's "
                   "release but received '" +
                       name + "'");
  }
  return Napi::String::New(env, now);
}

}  // namespace triton_node
