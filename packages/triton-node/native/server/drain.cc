// ServerCore's drain: on the JS thread, everything queued for the server
// becomes NativeEvents (request/delivery.h says how), handed to onEvents in
// one call; a request whose every ending reached JS is recycled.
#include <exception>
#include <vector>

#include "request/delivery.h"
#include "request/event_encoder.h"
#include "server/core.h"

namespace triton_node {

void ServerCore::Drain(Napi::Env env) {
  // No handle scope of its own: the caller's (HandleWake's, or that of the
  // JS call that stops the server) holds one drain's handles.
  encoder_.BeginDrain();
  std::vector<Completion*> items;
  // A JS failure (the environment is terminating: JS can no longer run)
  // loses that event but never the native resources of the others: each
  // item is still disposed of and its context recycled; the first failure
  // is rethrown at the end.
  std::exception_ptr failure;
  // Rounds: deleting a response on this thread may release a trace, which
  // queues one more item that belongs to this same batch.
  for (int round = 0; round < 4; ++round) {
    queue_.TakeAll(&items);
    if (items.empty()) break;
    for (Completion* c : items) {
      RequestContext* ctx = c->ctx;
      try {
        DeliverCompletion(env, &encoder_, c);
      } catch (...) {
        if (!failure) failure = std::current_exception();
        DisposeCompletion(c);
        LostCompletion(c);
      }
      if (ctx != nullptr && ctx->lifecycle.JsDone()) {
        contexts_.Recycle(env, ctx);
      }
    }
    queue_.Recycle(&items);
  }
  if (failure) {
    encoder_.BeginDrain();
    std::rethrow_exception(failure);
  }
  if (encoder_.empty() || on_events_.IsEmpty()) {
    encoder_.BeginDrain();
    return;
  }
  encoder_.Deliver(env, on_events_.Value());
}

}  // namespace triton_node
