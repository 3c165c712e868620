// Calling into JS from native code that must survive a terminating
// environment.
#ifndef TRITON_NODE_ENV_JS_CALL_H_
#define TRITON_NODE_ENV_JS_CALL_H_

#include <napi.h>

#include <exception>

namespace triton_node {

// Thrown instead of a Napi::Error when a call into JS failed without an
// exception object: JS cannot run (the environment is terminating).
struct JsUnavailable : std::exception {
  const char* what() const noexcept override { return "JS cannot run"; }
};

// JS thread: calls `fn` with undefined as `this` and returns its result.
// Throws Napi::Error for a JS exception, JsUnavailable when JS cannot run;
// never a fatal error.
napi_value CallJs(napi_env env, napi_value fn, size_t argc,
                  const napi_value* argv);

}  // namespace triton_node

#endif  // TRITON_NODE_ENV_JS_CALL_H_
