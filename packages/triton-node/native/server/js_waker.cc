#include "server/js_waker.h"

#include "triton/errors.h"

namespace triton_node {
namespace {

struct WakeTarget {
  std::shared_ptr<void> owner;
  JsWaker::WakeFn fn;
  void* context;
};

void CallWake(napi_env env, void* data) {
  // Null while the function is finalized: the queued calls carry no data;
  // the queue's items are the cleanup hook's (Teardown).
  if (env == nullptr) return;
  auto* target = static_cast<WakeTarget*>(data);
  // No C++ exception may leave this callback (std::terminate). The wake
  // function frees every drained item's native resources before it throws;
  // the JS error becomes an uncaught exception where JS can still run, and
  // is dropped while the environment terminates (napi_throw fails).
  napi_value error = nullptr;
  try {
    target->fn(Napi::Env(env), target->context);
  } catch (const Napi::Error& e) {
    try {
      error = e.Value();
    } catch (...) {
    }
  } catch (...) {
  }
  if (error != nullptr) napi_throw(env, error);
}

}  // namespace

void JsWaker::Init(Napi::Env env, std::shared_ptr<void> owner, WakeFn fn,
                   void* context) {
  auto* target = new WakeTarget{std::move(owner), fn, context};
  napi_value name;
  napi_create_string_utf8(env, "triton-node server", NAPI_AUTO_LENGTH, &name);
  napi_status status = napi_create_threadsafe_function(
      env, nullptr, nullptr, name, 0, 1, target,
      [](napi_env, void* data, void*) {
        delete static_cast<WakeTarget*>(data);
      },
      target,
      [](napi_env env, napi_value, void* context, void*) {
        CallWake(env, context);
      },
      &tsfn_);
  if (status != napi_ok) {
    delete target;
    throw MakeError(env, "INTERNAL", "cannot create a thread-safe function");
  }
  napi_unref_threadsafe_function(env, tsfn_);
}

void JsWaker::Wake() {
  napi_call_threadsafe_function(tsfn_, nullptr, napi_tsfn_nonblocking);
}

void JsWaker::KeepLoopAlive(napi_env env, bool want) {
  if (released_) return;
  if (want && !refed_) {
    napi_ref_threadsafe_function(env, tsfn_);
    refed_ = true;
  } else if (!want && refed_) {
    napi_unref_threadsafe_function(env, tsfn_);
    refed_ = false;
  }
}

void JsWaker::Release(napi_env env) {
  if (released_) return;
  if (refed_) napi_unref_threadsafe_function(env, tsfn_);
  refed_ = false;
  released_ = true;
  napi_release_threadsafe_function(tsfn_, napi_tsfn_release);
}

void JsWaker::Abort() {
  if (released_) return;
  released_ = true;
  napi_release_threadsafe_function(tsfn_, napi_tsfn_abort);
}

}  // namespace triton_node
