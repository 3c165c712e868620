#include "completion.h"

#include "request.h"
#include "server_wrap.h"
#include "tensor.h"
#include "triton_api.h"

namespace triton_node {

// ---- CompletionQueue -------------------------------------------------------

CompletionQueue::~CompletionQueue() {
  for (Completion* c : free_) delete c;
  for (Completion* c : queue_) delete c;  // responses already disposed
}

Completion* CompletionQueue::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      Completion* c = free_.back();
      free_.pop_back();
      return c;
    }
  }
  return new Completion();
}

void CompletionQueue::Push(Completion* c) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      queue_.push_back(c);
      if (!wake_pending_) {
        wake_pending_ = true;
        wake = true;
      }
    }
  }
  if (wake) {
    wake_(wake_arg_);
    return;
  }
  bool closed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed = closed_;
  }
  if (closed) {
    // No JS thread to hand it to: dispose of it here.
    DisposeCompletion(c);
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(c);
  }
}

bool CompletionQueue::Poke() {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return false;
    if (!wake_pending_) {
      wake_pending_ = true;
      wake = true;
    }
  }
  if (wake) wake_(wake_arg_);
  return true;
}

void CompletionQueue::TakeAll(std::vector<Completion*>* out) {
  out->clear();
  std::lock_guard<std::mutex> lock(mu_);
  out->swap(queue_);
  wake_pending_ = false;
}

void CompletionQueue::Recycle(std::vector<Completion*>* items) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Completion* c : *items) {
    c->response = nullptr;
    c->ctx = nullptr;
    free_.push_back(c);
  }
  items->clear();
}

void CompletionQueue::Close(std::vector<Completion*>* leftover) {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  leftover->insert(leftover->end(), queue_.begin(), queue_.end());
  queue_.clear();
}

bool CompletionQueue::closed() {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

void DisposeCompletion(Completion* c) {
  if (c->type == Completion::kResponse && c->response != nullptr) {
    TRITONSERVER_Error* err =
        Api().TRITONSERVER_InferenceResponseDelete(c->response);
    if (err != nullptr) Api().TRITONSERVER_ErrorDelete(err);
    c->response = nullptr;
  }
}

// ---- Triton callbacks (Triton threads; no N-API) ---------------------------

namespace {

// Records RELEASE_ALL or FINAL; deletes the request once both happened,
// unless a cancel is using it (the canceller deletes it afterwards). Runs
// before the item is queued, so JS never sees a request outlive its events.
void RequestSettled(RequestContext* ctx, bool final) {
  ServerCore* core = ctx->core;
  TRITONSERVER_InferenceRequest* to_delete = nullptr;
  {
    std::lock_guard<std::mutex> lock(core->ctx_mu());
    if (final) {
      if (ctx->final_seen) return;
      ctx->final_seen = true;
    } else {
      ctx->released = true;
      --core->inflight_;
    }
    if (ctx->released && ctx->final_seen) {
      if (ctx->cancel_inflight == 0) {
        to_delete = ctx->request;
      } else {
        ctx->delete_deferred = true;
      }
    }
  }
  if (to_delete != nullptr) {
    TRITONSERVER_Error* err =
        Api().TRITONSERVER_InferenceRequestDelete(to_delete);
    if (err != nullptr) Api().TRITONSERVER_ErrorDelete(err);
  }
}

}  // namespace

void OnResponseComplete(TRITONSERVER_InferenceResponse* response,
                        const uint32_t flags, void* userp) {
  auto* ctx = static_cast<RequestContext*>(userp);
  CompletionQueue& queue = ctx->core->queue();
  Completion* c = queue.Acquire();
  c->type = Completion::kResponse;
  c->ctx = ctx;
  c->response = response;
  c->flags = flags;
  c->has_error = false;
  c->model = nullptr;
  c->version = -1;
  c->id = nullptr;
  c->output_count = 0;
  c->parameter_count = 0;
  if (response != nullptr) {
    const TritonApi& api = Api();
    // The response owns this error: read it, do not delete it.
    TRITONSERVER_Error* err = api.TRITONSERVER_InferenceResponseError(response);
    if (err != nullptr) {
      c->has_error = true;
      c->error = PeekError(err);
    }
    TRITONSERVER_Error* e = api.TRITONSERVER_InferenceResponseModel(
        response, &c->model, &c->version);
    if (e != nullptr) api.TRITONSERVER_ErrorDelete(e);
    e = api.TRITONSERVER_InferenceResponseId(response, &c->id);
    if (e != nullptr) {
      api.TRITONSERVER_ErrorDelete(e);
      c->id = nullptr;
    }
    uint32_t count = 0;
    e = api.TRITONSERVER_InferenceResponseParameterCount(response, &count);
    if (e != nullptr) {
      api.TRITONSERVER_ErrorDelete(e);
      count = 0;
    }
    if (c->parameters.size() < count) c->parameters.resize(count);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count; ++i) {
      ParameterRecord& p = c->parameters[kept];
      e = api.TRITONSERVER_InferenceResponseParameter(response, i, &p.name,
                                                      &p.type, &p.value);
      if (e != nullptr) {
        api.TRITONSERVER_ErrorDelete(e);
        continue;
      }
      ++kept;
    }
    c->parameter_count = kept;
    count = 0;
    e = api.TRITONSERVER_InferenceResponseOutputCount(response, &count);
    if (e != nullptr) {
      api.TRITONSERVER_ErrorDelete(e);
      count = 0;
    }
    if (c->outputs.size() < count) c->outputs.resize(count);
    kept = 0;
    for (uint32_t i = 0; i < count; ++i) {
      OutputRecord& o = c->outputs[kept];
      void* userp_out = nullptr;
      e = api.TRITONSERVER_InferenceResponseOutput(
          response, i, &o.name, &o.datatype, &o.shape, &o.dim_count, &o.base,
          &o.byte_size, &o.memory_type, &o.memory_type_id, &userp_out);
      if (e != nullptr) {
        api.TRITONSERVER_ErrorDelete(e);
        continue;
      }
      o.buffer = static_cast<OutputBuffer*>(userp_out);
      ++kept;
    }
    c->output_count = kept;
  }
  if ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) {
    RequestSettled(ctx, /*final=*/true);
  }
  queue.Push(c);
}

void OnRequestRelease(TRITONSERVER_InferenceRequest* request,
                      const uint32_t flags, void* userp) {
  // Only RELEASE_ALL hands the request back to us.
  if ((flags & TRITONSERVER_REQUEST_RELEASE_ALL) == 0) return;
  auto* ctx = static_cast<RequestContext*>(userp);
  ServerCore* core = ctx->core;
  (void)request;  // the same as ctx->request
  RequestSettled(ctx, /*final=*/false);
  g_pending_requests.fetch_sub(1, std::memory_order_relaxed);
  Completion* c = core->queue().Acquire();
  c->type = Completion::kReleased;
  c->ctx = ctx;
  c->response = nullptr;
  core->queue().Push(c);
}

void OnTraceActivity(TRITONSERVER_InferenceTrace*,
                     TRITONSERVER_InferenceTraceActivity activity,
                     uint64_t timestamp_ns, void* userp) {
  auto* ctx = static_cast<RequestContext*>(userp);
  int a = static_cast<int>(activity);
  if (a >= 0 && a < 7) ctx->timestamps[a] = timestamp_ns;
}

void OnTraceRelease(TRITONSERVER_InferenceTrace* trace, void* userp) {
  // The release function owns the trace.
  TRITONSERVER_Error* err = Api().TRITONSERVER_InferenceTraceDelete(trace);
  if (err != nullptr) Api().TRITONSERVER_ErrorDelete(err);
  auto* ctx = static_cast<RequestContext*>(userp);
  Completion* c = ctx->core->queue().Acquire();
  c->type = Completion::kTraceReleased;
  c->ctx = ctx;
  c->response = nullptr;
  ctx->core->queue().Push(c);
}

// ---- JS thread -------------------------------------------------------------

namespace {

Napi::Object TimingObject(Napi::Env env, const RequestContext* ctx) {
  static const char* const kNames[7] = {
      "requestStartNs",    "queueStartNs",         "computeStartNs",
      "computeInputEndNs", "computeOutputStartNs", "computeEndNs",
      "requestEndNs"};
  Napi::Object t = Napi::Object::New(env);
  for (int i = 0; i < 7; ++i) {
    t.Set(kNames[i], Napi::BigInt::New(env, ctx->timestamps[i]));
  }
  return t;
}

Napi::Value ParameterValue(Napi::Env env, const ParameterRecord& p) {
  switch (p.type) {
    case TRITONSERVER_PARAMETER_STRING:
      return Napi::String::New(env, static_cast<const char*>(p.value));
    case TRITONSERVER_PARAMETER_INT:
      return Napi::Number::New(
          env, static_cast<double>(*static_cast<const int64_t*>(p.value)));
    case TRITONSERVER_PARAMETER_BOOL:
      return Napi::Boolean::New(env, *static_cast<const bool*>(p.value));
    case TRITONSERVER_PARAMETER_DOUBLE:
      return Napi::Number::New(env, *static_cast<const double*>(p.value));
    default:
      return env.Undefined();
  }
}

Napi::Object ResponseEvent(Napi::Env env, Completion* c) {
  RequestContext* ctx = c->ctx;
  Napi::Object ev = Napi::Object::New(env);
  ev.Set("token", Napi::Number::New(env, static_cast<double>(ctx->token)));
  bool final = (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
  ev.Set("final", Napi::Boolean::New(env, final));
  if (c->response == nullptr) return ev;
  if (c->has_error) ev.Set("error", MakeErrorInfoObject(env, c->error));
  Napi::Array outputs = Napi::Array::New(env, c->output_count);
  for (uint32_t i = 0; i < c->output_count; ++i) {
    outputs.Set(i, ConvertOutput(env, ctx, c->outputs[i]));
  }
  ev.Set("outputs", outputs);
  if (c->parameter_count > 0) {
    Napi::Object params = Napi::Object::New(env);
    for (uint32_t i = 0; i < c->parameter_count; ++i) {
      const ParameterRecord& p = c->parameters[i];
      if (p.name != nullptr) params.Set(p.name, ParameterValue(env, p));
    }
    ev.Set("parameters", params);
  }
  if (c->model != nullptr) {
    ev.Set("model", Napi::String::New(env, c->model));
    ev.Set("version", Napi::Number::New(env, static_cast<double>(c->version)));
  }
  if (c->id != nullptr && c->id[0] != '\0') {
    ev.Set("id", Napi::String::New(env, c->id));
  }
  return ev;
}

bool ContextDone(const RequestContext* ctx) {
  return ctx->js_final && ctx->js_released &&
         (!ctx->timing || ctx->js_trace_done);
}

}  // namespace

void DrainCompletions(Napi::Env env, ServerCore* core) {
  Napi::HandleScope scope(env);
  Napi::Array events = Napi::Array::New(env);
  uint32_t n = 0;
  std::vector<Completion*> items;
  // Loop: deleting a response on this thread may release a trace, which
  // queues one more item that belongs to this same batch.
  for (int round = 0; round < 4; ++round) {
    core->queue().TakeAll(&items);
    if (items.empty()) break;
    for (Completion* c : items) {
      RequestContext* ctx = c->ctx;
      switch (c->type) {
        case Completion::kResponse: {
          Napi::Object ev;
          try {
            ev = ResponseEvent(env, c);
          } catch (const Napi::Error& e) {
            ev = Napi::Object::New(env);
            ev.Set("token",
                   Napi::Number::New(env, static_cast<double>(ctx->token)));
            ev.Set("final",
                   Napi::Boolean::New(
                       env,
                       (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0));
            ErrorInfo info{TRITONSERVER_ERROR_INTERNAL,
                           "cannot convert the response: " + e.Message()};
            ev.Set("error", MakeErrorInfoObject(env, info));
          }
          // Outputs are converted: the response may go (this releases the
          // buffers JS did not take, and may release the trace).
          DisposeCompletion(c);
          bool final = (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
          if (final) {
            ctx->js_final = true;
            if (ctx->timing && !ctx->js_trace_done) {
              napi_create_reference(env, ev, 1, &ctx->held_final_event);
              break;
            }
            if (ctx->timing) ev.Set("timing", TimingObject(env, ctx));
          }
          events.Set(n++, ev);
          break;
        }
        case Completion::kReleased:
          ctx->js_released = true;
          break;
        case Completion::kTraceReleased:
          ctx->js_trace_done = true;
          if (ctx->held_final_event != nullptr) {
            napi_value held;
            napi_get_reference_value(env, ctx->held_final_event, &held);
            Napi::Object ev(env, held);
            ev.Set("timing", TimingObject(env, ctx));
            events.Set(n++, ev);
            napi_delete_reference(env, ctx->held_final_event);
            ctx->held_final_event = nullptr;
          }
          break;
      }
      if (ctx != nullptr && ctx->active && ContextDone(ctx)) {
        core->RecycleContext(env, ctx);
      }
    }
    core->queue().Recycle(&items);
  }
  if (n > 0 && !core->on_events().IsEmpty()) {
    core->on_events().Call({events});
  }
}

}  // namespace triton_node
