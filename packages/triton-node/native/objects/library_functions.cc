#include "objects/library_functions.h"

#include <string>
#include <vector>

#include "server/exit_registry.h"
#include "triton/api.h"
#include "triton/errors.h"
#include "triton/log_settings.h"

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

Napi::Object LogSettingsObject(Napi::Env env, const LogSettings& s) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("file", Napi::String::New(env, s.file));
  out.Set("info", Napi::Boolean::New(env, s.info));
  out.Set("warn", Napi::Boolean::New(env, s.warn));
  out.Set("error", Napi::Boolean::New(env, s.error));
  out.Set("verbose", Napi::Number::New(env, s.verbose));
  out.Set("format", Napi::Number::New(env, s.format));
  return out;
}

const TritonApi& LoadedOrThrow(Napi::Env env) {
  const TritonApi* api = LoadedApi();
  if (api == nullptr) {
    throw MakeError(env, "UNAVAILABLE", "the Triton library is not loaded");
  }
  return *api;
}

}  // namespace

Napi::Value LogSettingsOf(const Napi::CallbackInfo& info) {
  LoadedOrThrow(info.Env());
  return LogSettingsObject(info.Env(), CurrentLogSettings());
}

Napi::Value UpdateLogSettings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadedOrThrow(env);
  if (info.Length() < 1 || !info[0].IsObject()) {
    ThrowTypeError(env, "updateLogSettings(update) expects an object");
  }
  Napi::Object o = info[0].As<Napi::Object>();
  LogUpdate u;
  auto flag = [&o](const char* name, std::optional<bool>* out) {
    Napi::Value v = o.Get(name);
    if (v.IsBoolean()) *out = v.As<Napi::Boolean>().Value();
  };
  flag("info", &u.info);
  flag("warn", &u.warn);
  flag("error", &u.error);
  if (o.Get("verbose").IsNumber()) {
    u.verbose = o.Get("verbose").As<Napi::Number>().Int32Value();
  }
  if (o.Get("format").IsNumber()) {
    u.format = o.Get("format").As<Napi::Number>().Int32Value();
  }
  TRITONSERVER_Error* err = ApplyLogUpdate(nullptr, u);
  if (err != nullptr) throw MakeError(env, TakeError(err));
  return LogSettingsObject(env, CurrentLogSettings());
}

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

Napi::Value NoteExitCode(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && info[0].IsNumber()) {
    NoteExitCode(info[0].As<Napi::Number>().Int32Value());
  }
  return info.Env().Undefined();
}

}  // namespace triton_node
