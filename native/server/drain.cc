// ServerCore's drain: on the JS thread, everything queued for the server
// becomes NativeEvents, handed to onEvents in one call.
#include <exception>
#include <vector>

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
        HandleCompletion(env, c);
      } catch (...) {
        if (!failure) failure = std::current_exception();
        DisposeCompletion(c);
        MarkSeenAfterFailure(c);
      }
      if (ctx != nullptr && ctx->active && ctx->JsDone()) {
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

void ServerCore::HandleCompletion(Napi::Env env, Completion* c) {
  switch (c->type) {
    case Completion::kResponse:
      HandleResponse(env, c);
      break;
    case Completion::kReleased:
      c->ctx->js_released = true;
      break;
    case Completion::kTraceReleased:
      HandleTraceRelease(env, c->ctx);
      break;
  }
}

void ServerCore::HandleResponse(Napi::Env env, Completion* c) {
  RequestContext* ctx = c->ctx;
  bool final = (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
  // A failed FINAL is not held for the trace: a backend that fails a
  // response may leak it, and with it the trace, which is then never
  // released; the caller must get the error all the same.
  if (final && ctx->timing && !c->has_error) {
    HoldTimedFinal(env, c);
    return;
  }
  encoder_.AddResponse(env, c);
  // Outputs are converted (or copied): the response may go (this releases
  // the buffers JS did not take, and may release the trace).
  DisposeCompletion(c);
  if (final) ctx->js_final = true;
}

// A timed FINAL waits for its trace's timestamps: decoded now (its outputs
// are converted before the response goes), delivered with the trace
// release.
void ServerCore::HoldTimedFinal(Napi::Env env, Completion* c) {
  RequestContext* ctx = c->ctx;
  napi_value event = encoder_.DecodeAlone(env, c);
  DisposeCompletion(c);
  ctx->js_final = true;
  if (!ctx->js_trace_done) {
    napi_create_reference(env, event, 1, &ctx->held_final_event);
    return;
  }
  EventEncoder::AttachTiming(env, event, ctx);
  encoder_.AddDecoded(event);
}

void ServerCore::HandleTraceRelease(Napi::Env env, RequestContext* ctx) {
  ctx->js_trace_done = true;
  if (ctx->held_final_event == nullptr) return;
  napi_value held;
  napi_get_reference_value(env, ctx->held_final_event, &held);
  EventEncoder::AttachTiming(env, held, ctx);
  encoder_.AddDecoded(held);
  napi_delete_reference(env, ctx->held_final_event);
  ctx->held_final_event = nullptr;
}

// The event was lost to a JS failure: what it meant for the request still
// counts, so that the context is recycled.
void ServerCore::MarkSeenAfterFailure(Completion* c) {
  RequestContext* ctx = c->ctx;
  if (c->type == Completion::kResponse &&
      (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) {
    ctx->js_final = true;
  } else if (c->type == Completion::kReleased) {
    ctx->js_released = true;
  } else if (c->type == Completion::kTraceReleased) {
    ctx->js_trace_done = true;
  }
}

}  // namespace triton_node
