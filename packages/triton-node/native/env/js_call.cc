#include "env/js_call.h"

namespace triton_node {

napi_value CallJs(napi_env env, napi_value fn, size_t argc,
                  const napi_value* argv) {
  napi_value undefined = nullptr;
  napi_get_undefined(env, &undefined);
  napi_value result = nullptr;
  if (napi_call_function(env, undefined, fn, argc, argv, &result) == napi_ok) {
    return result;
  }
  // Not Napi::Error::New(env): a JS run cut short by termination leaves a
  // non-object exception pending, which it would wrap through a JS call
  // that fails, a fatal error.
  napi_value exception = nullptr;
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
    napi_get_and_clear_last_exception(env, &exception);
  }
  napi_valuetype type = napi_undefined;
  if (exception != nullptr) napi_typeof(env, exception, &type);
  if (type == napi_object || type == napi_function) {
    throw Napi::Error(env, exception);
  }
  throw JsUnavailable();
}

}  // namespace triton_node
