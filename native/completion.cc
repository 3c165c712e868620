#include "completion.h"

#include <cstring>
#include <exception>

#include "errors.h"
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      queue_.push_back(c);
      // Woken under the lock: the JS thread closes the queue before it
      // releases the thread-safe function, so the function still exists
      // here. (Once queued, the item is the JS thread's, or Close()'s.)
      if (!wake_pending_) {
        wake_pending_ = true;
        wake_(wake_arg_);
      }
      return;
    }
  }
  // Closed: no JS thread to hand it to; dispose of it here.
  DisposeCompletion(c);
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(c);
}

bool CompletionQueue::Poke() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  if (!wake_pending_) {
    wake_pending_ = true;
    wake_(wake_arg_);  // under the lock, as in Push
  }
  return true;
}

void CompletionQueue::BeginWake() {
  std::lock_guard<std::mutex> lock(mu_);
  wake_pending_ = false;
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
  SettleScope scope;  // the delete may release a trace (and settle)
  if (c->type == Completion::kResponse && c->response != nullptr) {
    TRITONSERVER_Error* err =
        Api().TRITONSERVER_InferenceResponseDelete(c->response);
    DropError(err);
    c->response = nullptr;
  }
}

// ---- Triton callbacks (Triton threads; no N-API) ---------------------------

// Frames of ours on this thread, and the cores whose last request settled
// inside them. A core freed by its last settling callback must outlive every
// frame of ours still using it: a trace release can run inside a response or
// request delete made by an outer frame (Push after Close, RequestSettled).
thread_local int SettleScope::depth_ = 0;
thread_local std::vector<std::shared_ptr<ServerCore>> SettleScope::dropped_;

SettleScope::~SettleScope() {
  if (--depth_ != 0) return;
  while (!dropped_.empty()) {
    std::vector<std::shared_ptr<ServerCore>> dropped;
    dropped.swap(dropped_);
    ++depth_;  // a destructor that settles more defers to this loop
    dropped.clear();
    --depth_;
  }
}

void SettleScope::Defer(std::shared_ptr<ServerCore> core) {
  dropped_.push_back(std::move(core));
}

namespace {

enum SettleEvent { kSettleRelease, kSettleFinal, kSettleTrace };

// Records RELEASE_ALL, FINAL or the trace release; deletes the request once
// RELEASE_ALL and FINAL both happened, unless a cancel is using it (the
// canceller deletes it afterwards). Runs before the item is queued, so JS
// never sees a request outlive its events. The last event of the server's
// last request in flight hands the core's keep-alive to the SettleScope.
void RequestSettled(RequestContext* ctx, SettleEvent what) {
  ServerCore* core = ctx->core;
  TRITONSERVER_InferenceRequest* to_delete = nullptr;
  std::shared_ptr<ServerCore> drop;
  {
    std::lock_guard<std::mutex> lock(core->ctx_mu());
    bool was_done = ctx->released && ctx->final_seen;
    bool was_settled = was_done && !ctx->trace_pending;
    switch (what) {
      case kSettleFinal:
        if (ctx->final_seen) return;
        ctx->final_seen = true;
        break;
      case kSettleRelease:
        if (ctx->released) return;
        ctx->released = true;
        break;
      case kSettleTrace:
        if (!ctx->trace_pending) return;
        ctx->trace_pending = false;
        break;
    }
    if (!was_done && ctx->released && ctx->final_seen) {
      if (ctx->cancel_inflight == 0) {
        to_delete = ctx->request;
      } else {
        ctx->delete_deferred = true;
      }
    }
    if (!was_settled && ctx->released && ctx->final_seen &&
        !ctx->trace_pending && --core->inflight_ == 0) {
      drop = std::move(core->keepalive_);
      core->settled_cv_.notify_all();  // a deferred server delete waits
    }
  }
  if (to_delete != nullptr) {
    TRITONSERVER_Error* err =
        Api().TRITONSERVER_InferenceRequestDelete(to_delete);
    DropError(err);
  }
  if (drop) SettleScope::Defer(std::move(drop));
}

}  // namespace

void OnResponseComplete(TRITONSERVER_InferenceResponse* response,
                        const uint32_t flags, void* userp) {
  SettleScope scope;
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
    // Triton's header says the response owns this error, but every Triton
    // release (r23.01 to r25.07 and main) returns a new copy on each call
    // (tritonserver.cc: RETURN_IF_STATUS_ERROR on the response's status):
    // not deleting it leaks one error per failed response.
    TRITONSERVER_Error* err = api.TRITONSERVER_InferenceResponseError(response);
    if (err != nullptr) {
      c->has_error = true;
      c->error = TakeError(err);
    }
    TRITONSERVER_Error* e = api.TRITONSERVER_InferenceResponseModel(
        response, &c->model, &c->version);
    DropError(e);
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
    // A failed response may carry the output whose allocation failed, and
    // Triton never initializes such an output's buffer_userp (r25.07
    // InferenceResponse::Output): reading it crashed the addon. A failed
    // response's outputs are of no use to the caller: leave them all (the
    // buffers that were allocated are still released with the response).
    e = c->has_error
            ? nullptr
            : api.TRITONSERVER_InferenceResponseOutputCount(response, &count);
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
      if (o.byte_size > 0 && o.base == nullptr) continue;  // no memory
      o.buffer = static_cast<OutputBuffer*>(userp_out);
      ++kept;
    }
    c->output_count = kept;
  }
  if ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) {
    RequestSettled(ctx, kSettleFinal);
  }
  queue.Push(c);
}

void OnRequestRelease(TRITONSERVER_InferenceRequest* request,
                      const uint32_t flags, void* userp) {
  // Only RELEASE_ALL hands the request back to us.
  if ((flags & TRITONSERVER_REQUEST_RELEASE_ALL) == 0) return;
  SettleScope scope;
  auto* ctx = static_cast<RequestContext*>(userp);
  ServerCore* core = ctx->core;
  (void)request;  // the same as ctx->request
  RequestSettled(ctx, kSettleRelease);
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
  SettleScope scope;
  // The release function owns the trace.
  TRITONSERVER_Error* err = Api().TRITONSERVER_InferenceTraceDelete(trace);
  DropError(err);
  auto* ctx = static_cast<RequestContext*>(userp);
  // It may come after FINAL and RELEASE_ALL (a decoupled backend deletes its
  // response factory, which holds the trace, after sending FINAL).
  RequestSettled(ctx, kSettleTrace);
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

Napi::Object ParametersObject(Napi::Env env, const Completion* c) {
  Napi::Object params = Napi::Object::New(env);
  for (uint32_t i = 0; i < c->parameter_count; ++i) {
    const ParameterRecord& p = c->parameters[i];
    if (p.name != nullptr) params.Set(p.name, ParameterValue(env, p));
  }
  return params;
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
  if (c->parameter_count > 0) ev.Set("parameters", ParametersObject(env, c));
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

// Turns the flat encoding of JsCache into NativeEvents (see binding.ts) and
// hands them to onEvents. Layout per event in `n`:
//   0                         a prebuilt event: vals[next]
//   1 token final flags ...   flags: 1 outputs, 2 error, 4 parameters,
//                             8 model, 16 id; then, in this order:
//     error: vals; count, per output: name (string index or -1: vals),
//     datatype code, memory kind, memory type id, byteLength,
//     inSlab (1: data = slab, else vals), byteOffset, dims, shape...;
//     parameters: vals; model (string index or -1: vals), version; id: vals.
// Every event has the same keys (absent ones undefined) so that V8 gives
// them one shape.
constexpr const char kDecoderSource[] = R"JS(
(function (dtNames, memNames) {
  'use strict';
  return function decode(onEvents, n, vals, strings, slab) {
    const events = [];
    const len = n.length;
    let i = 0;
    let v = 0;
    while (i < len) {
      if (n[i++] === 0) {
        events.push(vals[v++]);
        continue;
      }
      const token = n[i++];
      const final = n[i++] === 1;
      const flags = n[i++];
      let error, outputs, parameters, model, version, id;
      if (flags & 2) error = vals[v++];
      if (flags & 1) {
        const count = n[i++];
        outputs = [];
        for (let k = 0; k < count; k++) {
          const ni = n[i++];
          const name = ni >= 0 ? strings[ni] : vals[v++];
          const datatype = dtNames[n[i++]];
          const memoryType = memNames[n[i++]];
          const memoryTypeId = n[i++];
          const byteLength = n[i++];
          const data = n[i++] === 1 ? slab : vals[v++];
          const byteOffset = n[i++];
          const dims = n[i++];
          const shape = [];
          for (let d = 0; d < dims; d++) shape.push(n[i++]);
          outputs.push({ name, datatype, shape, memoryType, memoryTypeId, byteLength, data, byteOffset });
        }
      }
      if (flags & 4) parameters = vals[v++];
      if (flags & 8) {
        const mi = n[i++];
        model = mi >= 0 ? strings[mi] : vals[v++];
        version = n[i++];
      }
      if (flags & 16) id = vals[v++];
      events.push({ token, final, error, outputs, parameters, model, version, id, timing: undefined });
    }
    onEvents(events);
  };
})
)JS";

constexpr size_t kMaxInterned = 256;
constexpr size_t kSlabAlignment = 16;

}  // namespace

// ---- JsCache (JS thread) ---------------------------------------------------

void JsCache::Init(napi_env env) {
  Napi::Env e(env);
  Napi::Array dt_names = Napi::Array::New(e);
  for (int t = 0; t <= static_cast<int>(TRITONSERVER_TYPE_BF16); ++t) {
    dt_names.Set(static_cast<uint32_t>(t),
                 Napi::String::New(
                     e, DataTypeName(static_cast<TRITONSERVER_DataType>(t))));
  }
  Napi::Array mem_names = Napi::Array::New(e);
  for (int k = 0; k < 3; ++k) {
    mem_names.Set(static_cast<uint32_t>(k),
                  Napi::String::New(e, MemKindName(k)));
  }
  napi_value script = nullptr;
  napi_value factory = nullptr;
  napi_create_string_utf8(env, kDecoderSource, NAPI_AUTO_LENGTH, &script);
  if (napi_run_script(env, script, &factory) != napi_ok) {
    throw Napi::Error::New(e);
  }
  napi_value argv[2] = {dt_names, mem_names};
  napi_value decoder = nullptr;
  if (napi_call_function(env, e.Undefined(), factory, 2, argv, &decoder) !=
      napi_ok) {
    throw Napi::Error::New(e);
  }
  napi_create_reference(env, decoder, 1, &decoder_);
  napi_value strings = nullptr;
  napi_create_array(env, &strings);
  napi_create_reference(env, strings, 1, &strings_);
}

void JsCache::Release(napi_env env) {
  if (decoder_ != nullptr) napi_delete_reference(env, decoder_);
  if (strings_ != nullptr) napi_delete_reference(env, strings_);
  decoder_ = nullptr;
  strings_ = nullptr;
  interned_.clear();
}

void JsCache::BeginDrain() {
  nums_.clear();
  vals_.clear();
  slab_.clear();
  events_ = 0;
}

double JsCache::Intern(napi_env env, const char* s) {
  for (size_t i = 0; i < interned_.size(); ++i) {
    if (interned_[i] == s) return static_cast<double>(i);
  }
  napi_value str = nullptr;
  napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &str);
  if (interned_.size() < kMaxInterned && strings_ != nullptr) {
    napi_value strings = nullptr;
    napi_get_reference_value(env, strings_, &strings);
    uint32_t index = static_cast<uint32_t>(interned_.size());
    if (napi_set_element(env, strings, index, str) == napi_ok) {
      interned_.emplace_back(s);
      return static_cast<double>(index);
    }
  }
  vals_.push_back(str);
  return -1;
}

void JsCache::AddPrebuilt(napi_value event) {
  nums_.push_back(0);
  vals_.push_back(event);
  ++events_;
}

void JsCache::AddEvent(napi_env env, Completion* c) {
  size_t nums_mark = nums_.size();
  size_t vals_mark = vals_.size();
  try {
    EncodeResponse(env, c);
  } catch (const Napi::Error& e) {
    // Roll back the partial event and report the failure on it instead.
    nums_.resize(nums_mark);
    vals_.resize(vals_mark);
    ErrorInfo info{TRITONSERVER_ERROR_INTERNAL,
                   "cannot convert the response: " + e.Message()};
    nums_.push_back(1);
    nums_.push_back(static_cast<double>(c->ctx->token));
    nums_.push_back((c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0 ? 1
                                                                           : 0);
    nums_.push_back(2);
    vals_.push_back(MakeErrorInfoObject(Napi::Env(env), info));
  }
  ++events_;
}

void JsCache::EncodeResponse(napi_env env, Completion* c) {
  Napi::Env e(env);
  const RequestContext* ctx = c->ctx;
  nums_.push_back(1);
  nums_.push_back(static_cast<double>(ctx->token));
  nums_.push_back((c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0 ? 1
                                                                         : 0);
  if (c->response == nullptr) {
    nums_.push_back(0);
    return;
  }
  int flags = 1;
  if (c->has_error) flags |= 2;
  if (c->parameter_count > 0) flags |= 4;
  if (c->model != nullptr) flags |= 8;
  if (c->id != nullptr && c->id[0] != '\0') flags |= 16;
  nums_.push_back(flags);
  if (c->has_error) vals_.push_back(MakeErrorInfoObject(e, c->error));
  nums_.push_back(c->output_count);
  for (uint32_t i = 0; i < c->output_count; ++i) {
    const OutputRecord& out = c->outputs[i];
    nums_.push_back(Intern(env, out.name != nullptr ? out.name : ""));
    int dtype = static_cast<int>(out.datatype);
    if (dtype < 0 || dtype > static_cast<int>(TRITONSERVER_TYPE_BF16)) {
      dtype = TRITONSERVER_TYPE_INVALID;
    }
    nums_.push_back(dtype);
    int kind = static_cast<int>(out.memory_type);
    nums_.push_back(kind >= 0 && kind <= 2 ? kind : 0);
    nums_.push_back(static_cast<double>(out.memory_type_id));
    nums_.push_back(static_cast<double>(out.byte_size));
    if (CopiedSmall(out)) {
      // Into the drain's slab; the pooled buffer goes back with the response.
      size_t offset =
          (slab_.size() + kSlabAlignment - 1) & ~(kSlabAlignment - 1);
      slab_.resize(offset + out.byte_size);
      if (out.byte_size > 0) {
        std::memcpy(slab_.data() + offset, out.base, out.byte_size);
      }
      nums_.push_back(1);
      nums_.push_back(static_cast<double>(offset));
    } else {
      size_t offset = 0;
      vals_.push_back(OutputData(e, ctx, out, &offset));
      nums_.push_back(0);
      nums_.push_back(static_cast<double>(offset));
    }
    nums_.push_back(static_cast<double>(out.dim_count));
    for (uint64_t d = 0; d < out.dim_count; ++d) {
      nums_.push_back(static_cast<double>(out.shape[d]));
    }
  }
  if (c->parameter_count > 0) vals_.push_back(ParametersObject(e, c));
  if (c->model != nullptr) {
    nums_.push_back(Intern(env, c->model));
    nums_.push_back(static_cast<double>(c->version));
  }
  if (c->id != nullptr && c->id[0] != '\0') {
    vals_.push_back(Napi::String::New(e, c->id));
  }
}

void JsCache::Deliver(napi_env env, napi_value on_events) {
  if (events_ == 0 || decoder_ == nullptr) return;
  Napi::Env e(env);
  size_t nbytes = nums_.size() * sizeof(double);
  Napi::ArrayBuffer nums_buffer = Napi::ArrayBuffer::New(e, nbytes);
  if (nbytes > 0) std::memcpy(nums_buffer.Data(), nums_.data(), nbytes);
  Napi::Float64Array nums =
      Napi::Float64Array::New(e, nums_.size(), nums_buffer, 0);
  Napi::Array vals = Napi::Array::New(e, vals_.size());
  for (size_t i = 0; i < vals_.size(); ++i) {
    napi_set_element(env, vals, static_cast<uint32_t>(i), vals_[i]);
  }
  Napi::ArrayBuffer slab = Napi::ArrayBuffer::New(e, slab_.size());
  if (!slab_.empty()) std::memcpy(slab.Data(), slab_.data(), slab_.size());
  napi_value strings = nullptr;
  napi_get_reference_value(env, strings_, &strings);
  napi_value decoder = nullptr;
  napi_get_reference_value(env, decoder_, &decoder);
  napi_value argv[5] = {on_events, nums, vals, strings, slab};
  // Whatever happens next, this drain's scratch is spent.
  BeginDrain();
  CallJs(env, decoder, 5, argv);
}

void CallJs(napi_env env, napi_value fn, size_t argc, const napi_value* argv) {
  napi_value undefined = nullptr;
  napi_get_undefined(env, &undefined);
  napi_value result = nullptr;
  if (napi_call_function(env, undefined, fn, argc, argv, &result) == napi_ok) {
    return;
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

void DrainCompletions(Napi::Env env, ServerCore* core) {
  Napi::HandleScope scope(env);
  JsCache& cache = core->js_cache();
  cache.BeginDrain();
  std::vector<Completion*> items;
  // A JS failure (the environment is terminating: JS can no longer run)
  // loses that event but never the native resources of the others: each
  // item is still disposed of and its context recycled; the first failure
  // is rethrown at the end.
  std::exception_ptr failure;
  // Loop: deleting a response on this thread may release a trace, which
  // queues one more item that belongs to this same batch.
  for (int round = 0; round < 4; ++round) {
    core->queue().TakeAll(&items);
    if (items.empty()) break;
    for (Completion* c : items) {
      RequestContext* ctx = c->ctx;
      try {
        switch (c->type) {
          case Completion::kResponse: {
            bool final = (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
            // A failed FINAL is not held for the trace: a backend that fails
            // a response may leak it (r25.07 repeat and square do, on GPU
            // output memory), and with it the trace, which is then never
            // released; the caller must get the error all the same.
            if (final && ctx->timing && !c->has_error) {
              // Rare: built as an object, held until the trace is released.
              Napi::Object ev;
              try {
                ev = ResponseEvent(env, c);
              } catch (const Napi::Error& e) {
                ev = Napi::Object::New(env);
                ev.Set("token",
                       Napi::Number::New(env, static_cast<double>(ctx->token)));
                ev.Set("final", Napi::Boolean::New(env, true));
                ErrorInfo info{TRITONSERVER_ERROR_INTERNAL,
                               "cannot convert the response: " + e.Message()};
                ev.Set("error", MakeErrorInfoObject(env, info));
              }
              DisposeCompletion(c);
              ctx->js_final = true;
              if (!ctx->js_trace_done) {
                napi_create_reference(env, ev, 1, &ctx->held_final_event);
                break;
              }
              ev.Set("timing", TimingObject(env, ctx));
              cache.AddPrebuilt(ev);
              break;
            }
            cache.AddEvent(env, c);
            // Outputs are converted (or copied): the response may go (this
            // releases the buffers JS did not take, and may release the trace).
            DisposeCompletion(c);
            if (final) ctx->js_final = true;
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
              cache.AddPrebuilt(ev);
              napi_delete_reference(env, ctx->held_final_event);
              ctx->held_final_event = nullptr;
            }
            break;
        }
      } catch (...) {
        if (!failure) failure = std::current_exception();
        DisposeCompletion(c);
        if (c->type == Completion::kResponse &&
            (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) {
          ctx->js_final = true;
        } else if (c->type == Completion::kReleased) {
          ctx->js_released = true;
        } else if (c->type == Completion::kTraceReleased) {
          ctx->js_trace_done = true;
        }
      }
      if (ctx != nullptr && ctx->active && ContextDone(ctx)) {
        core->RecycleContext(env, ctx);
      }
    }
    core->queue().Recycle(&items);
  }
  if (failure) {
    cache.BeginDrain();
    std::rethrow_exception(failure);
  }
  if (!cache.empty() && !core->on_events().IsEmpty()) {
    cache.Deliver(env, core->on_events().Value());
  } else {
    cache.BeginDrain();
  }
}

}  // namespace triton_node
