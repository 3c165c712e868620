#include "errors.h"

#include "triton_api.h"

namespace triton_node {

const char* ErrorCodeName(int code) {
  switch (code) {
    case TRITONSERVER_ERROR_UNKNOWN:
      return "UNKNOWN";
    case TRITONSERVER_ERROR_INTERNAL:
      return "INTERNAL";
    case TRITONSERVER_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case TRITONSERVER_ERROR_INVALID_ARG:
      return "INVALID_ARG";
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return "UNAVAILABLE";
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return "UNSUPPORTED";
    case TRITONSERVER_ERROR_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case TRITONSERVER_ERROR_CANCELLED:
      return "CANCELLED";
    default:
      return "UNKNOWN";
  }
}

void DropError(TRITONSERVER_Error* err) {
  if (err != nullptr) Api().TRITONSERVER_ErrorDelete(err);
}

ErrorInfo PeekError(TRITONSERVER_Error* err) {
  ErrorInfo info;
  const TritonApi& api = Api();
  info.code = static_cast<int>(api.TRITONSERVER_ErrorCode(err));
  const char* msg = api.TRITONSERVER_ErrorMessage(err);
  if (msg != nullptr) info.message = msg;
  return info;
}

ErrorInfo TakeError(TRITONSERVER_Error* err) {
  ErrorInfo info = PeekError(err);
  Api().TRITONSERVER_ErrorDelete(err);
  return info;
}

Napi::Error MakeError(Napi::Env env, const char* code,
                      const std::string& message) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  return error;
}

Napi::Error MakeError(Napi::Env env, const ErrorInfo& info) {
  return MakeError(env, ErrorCodeName(info.code), info.message);
}

Napi::Object MakeErrorInfoObject(Napi::Env env, const ErrorInfo& info) {
  Napi::Object obj = Napi::Object::New(env);
  obj.Set("code", Napi::String::New(env, ErrorCodeName(info.code)));
  obj.Set("message", Napi::String::New(env, info.message));
  return obj;
}

void ThrowIfError(Napi::Env env, TRITONSERVER_Error* err,
                  const std::string& context) {
  if (err == nullptr) return;
  ErrorInfo info = TakeError(err);
  if (!context.empty()) info.message = context + ": " + info.message;
  throw MakeError(env, info);
}

void ThrowTypeError(Napi::Env env, const std::string& message) {
  Napi::TypeError error = Napi::TypeError::New(env, message);
  error.Set("code", Napi::String::New(env, "INVALID_ARG"));
  throw error;
}

void ThrowRangeError(Napi::Env env, const std::string& message) {
  Napi::RangeError error = Napi::RangeError::New(env, message);
  error.Set("code", Napi::String::New(env, "INVALID_ARG"));
  throw error;
}

}  // namespace triton_node
