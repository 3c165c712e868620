#include "triton/errors.h"

#include "triton/api.h"

namespace triton_node {

namespace {

// Indexed by code (checked below).
constexpr struct {
  TRITONSERVER_Error_Code code;
  const char* name;
} kErrorCodes[] = {
    {TRITONSERVER_ERROR_UNKNOWN, "UNKNOWN"},
    {TRITONSERVER_ERROR_INTERNAL, "INTERNAL"},
    {TRITONSERVER_ERROR_NOT_FOUND, "NOT_FOUND"},
    {TRITONSERVER_ERROR_INVALID_ARG, "INVALID_ARG"},
    {TRITONSERVER_ERROR_UNAVAILABLE, "UNAVAILABLE"},
    {TRITONSERVER_ERROR_UNSUPPORTED, "UNSUPPORTED"},
    {TRITONSERVER_ERROR_ALREADY_EXISTS, "ALREADY_EXISTS"},
    {TRITONSERVER_ERROR_CANCELLED, "CANCELLED"},
};
constexpr int kErrorCodeCount = sizeof(kErrorCodes) / sizeof(kErrorCodes[0]);

constexpr bool ErrorCodesIndexed() {
  for (int i = 0; i < kErrorCodeCount; ++i) {
    if (static_cast<int>(kErrorCodes[i].code) != i) return false;
  }
  return true;
}
static_assert(ErrorCodesIndexed(), "kErrorCodes must be in code order");
static_assert(kErrorCodeCount == TRITONSERVER_ERROR_CANCELLED + 1,
              "kErrorCodes must cover every code");

}  // namespace

const char* ErrorCodeName(int code) {
  if (code < 0 || code >= kErrorCodeCount) return "UNKNOWN";
  return kErrorCodes[code].name;
}

int ErrorCodeCount() { return kErrorCodeCount; }

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

std::string Subject::str() const {
  std::string text(kind_);
  if (name_ != nullptr) {
    text += " '";
    text += name_;
    text += "'";
  }
  text += suffix_;
  return text;
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

void ThrowLibraryLacks(Napi::Env env, const std::string& what) {
  throw MakeError(env, "UNSUPPORTED",
                  "this Triton library lacks " + what + " (API " +
                      std::to_string(Api().api_major) + "." +
                      std::to_string(Api().api_minor) + ")");
}

}  // namespace triton_node
