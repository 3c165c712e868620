#include "request/delivery.h"

#include "request/context.h"

namespace triton_node {
namespace {

bool IsFinal(const Completion* c) {
  return (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
}

// A timed FINAL waits for its trace's timestamps: decoded now (its outputs
// are converted before the response goes), delivered with the trace
// release.
void HoldTimedFinal(napi_env env, EventEncoder* encoder, Completion* c) {
  RequestContext* ctx = c->ctx;
  napi_value event = encoder->DecodeAlone(env, c);
  DisposeCompletion(c);
  const bool trace_seen = !ctx->lifecycle.JsAwaits(Ending::kTrace);
  ctx->lifecycle.JsSaw(Ending::kFinal);
  if (!trace_seen) {
    ctx->lifecycle.HoldFinal(env, event);
    return;
  }
  EventEncoder::AttachTiming(env, event, ctx);
  encoder->AddDecoded(event);
}

void DeliverResponse(napi_env env, EventEncoder* encoder, Completion* c) {
  RequestContext* ctx = c->ctx;
  bool final = IsFinal(c);
  // A failed FINAL is not held for the trace: a backend that fails a
  // response may leak it, and with it the trace, which is then never
  // released; the caller must get the error all the same.
  if (final && ctx->lifecycle.traced() && !c->has_error) {
    HoldTimedFinal(env, encoder, c);
    return;
  }
  encoder->AddResponse(env, c);
  // Outputs are converted (or copied): the response may go (this releases
  // the buffers JS did not take, and may release the trace).
  DisposeCompletion(c);
  if (final) ctx->lifecycle.JsSaw(Ending::kFinal);
}

void DeliverTraceRelease(napi_env env, EventEncoder* encoder,
                         RequestContext* ctx) {
  ctx->lifecycle.JsSaw(Ending::kTrace);
  napi_value held = ctx->lifecycle.TakeHeldFinal(env);
  if (held == nullptr) return;
  EventEncoder::AttachTiming(env, held, ctx);
  encoder->AddDecoded(held);
}

}  // namespace

void DeliverCompletion(napi_env env, EventEncoder* encoder, Completion* c) {
  switch (c->type) {
    case Completion::kResponse:
      DeliverResponse(env, encoder, c);
      break;
    case Completion::kReleased:
      c->ctx->lifecycle.JsSaw(Ending::kRelease);
      break;
    case Completion::kTraceReleased:
      DeliverTraceRelease(env, encoder, c->ctx);
      break;
  }
}

void LostCompletion(const Completion* c) {
  RequestLifecycle& lifecycle = c->ctx->lifecycle;
  if (c->type == Completion::kResponse && IsFinal(c)) {
    lifecycle.JsSaw(Ending::kFinal);
  } else if (c->type == Completion::kReleased) {
    lifecycle.JsSaw(Ending::kRelease);
  } else if (c->type == Completion::kTraceReleased) {
    lifecycle.JsSaw(Ending::kTrace);
  }
}

void DeliverStoppedRequest(napi_env env, EventEncoder* encoder,
                           RequestContext* ctx) {
  napi_value held = ctx->lifecycle.TakeHeldFinal(env);
  if (held != nullptr) {
    encoder->AddDecoded(held);
    return;
  }
  if (!ctx->lifecycle.JsAwaits(Ending::kFinal)) return;
  ctx->lifecycle.JsSaw(Ending::kFinal);
  encoder->AddError(env, ctx->token, true,
                    ErrorInfo{TRITONSERVER_ERROR_UNAVAILABLE,
                              "server stopped before the request completed"});
}

}  // namespace triton_node
