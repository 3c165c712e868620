// The thread-safe function that wakes a server's JS thread: for inference
// events and for finished operations alike.
#ifndef TRITON_NODE_SERVER_JS_WAKER_H_
#define TRITON_NODE_SERVER_JS_WAKER_H_

#include <napi.h>

#include <memory>

namespace triton_node {

class JsWaker {
 public:
  // JS thread: runs in a wake-up. It may throw a Napi::Error, which becomes
  // an uncaught exception where JS can still run.
  using WakeFn = void (*)(Napi::Env env, void* context);

  // JS thread, once. `owner` stays alive until the function is finalized.
  // Starts unreferenced: it does not keep the event loop alive.
  void Init(Napi::Env env, std::shared_ptr<void> owner, WakeFn fn,
            void* context);
  // Any thread, until released.
  void Wake();
  // JS thread: whether the event loop waits for this server.
  void KeepLoopAlive(napi_env env, bool want);
  // JS thread: no more wake-ups (the queue is closed).
  void Release(napi_env env);
  // Cleanup hook: the environment goes; queued wake-ups are dropped.
  void Abort();
  bool released() const { return released_; }

 private:
  napi_threadsafe_function tsfn_ = nullptr;
  bool refed_ = false;
  bool released_ = false;
};

}  // namespace triton_node

#endif  // TRITON_NODE_SERVER_JS_WAKER_H_
