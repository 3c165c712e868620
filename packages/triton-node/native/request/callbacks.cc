#include "request/callbacks.h"

#include "memory/buffer_pool.h"
#include "request/completion_queue.h"
#include "request/context.h"
#include "request/ledger.h"
#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

void ReadParameters(TRITONSERVER_InferenceResponse* response, Completion* c) {
  const TritonApi& api = Api();
  uint32_t count = 0;
  TRITONSERVER_Error* e =
      api.TRITONSERVER_InferenceResponseParameterCount(response, &count);
  if (e != nullptr) {
    DropError(e);
    count = 0;
  }
  if (c->parameters.size() < count) c->parameters.resize(count);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count; ++i) {
    ParameterRecord& p = c->parameters[kept];
    e = api.TRITONSERVER_InferenceResponseParameter(response, i, &p.name,
                                                    &p.type, &p.value);
    if (e != nullptr) {
      DropError(e);
      continue;
    }
    ++kept;
  }
  c->parameter_count = kept;
}

// A failed response may carry the output whose allocation failed, and
// Triton never initializes such an output's buffer_userp (r25.07
// InferenceResponse::Output): reading it crashed the addon. A failed
// response's outputs are of no use to the caller: they are all left (the
// buffers that were allocated are still released with the response).
void ReadOutputs(TRITONSERVER_InferenceResponse* response, Completion* c) {
  const TritonApi& api = Api();
  uint32_t count = 0;
  TRITONSERVER_Error* e =
      c->has_error
          ? nullptr
          : api.TRITONSERVER_InferenceResponseOutputCount(response, &count);
  if (e != nullptr) {
    DropError(e);
    count = 0;
  }
  if (c->outputs.size() < count) c->outputs.resize(count);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count; ++i) {
    OutputRecord& o = c->outputs[kept];
    void* userp = nullptr;
    e = api.TRITONSERVER_InferenceResponseOutput(
        response, i, &o.name, &o.datatype, &o.shape, &o.dim_count, &o.base,
        &o.byte_size, &o.memory_type, &o.memory_type_id, &userp);
    if (e != nullptr) {
      DropError(e);
      continue;
    }
    if (o.byte_size > 0 && o.base == nullptr) continue;  // no memory
    o.buffer = static_cast<OutputBuffer*>(userp);
    // Our own buffers say where they are (pinned memory may have been
    // reported to Triton as CPU memory: response_allocator.cc PinnedAsCpu).
    if (o.buffer != nullptr) {
      o.memory_type = static_cast<TRITONSERVER_MemoryType>(o.buffer->kind);
      o.memory_type_id = o.buffer->device;
    }
    ++kept;
  }
  c->output_count = kept;
}

void ReadResponse(TRITONSERVER_InferenceResponse* response, Completion* c) {
  const TritonApi& api = Api();
  // The C API's header says the response owns this error, but Triton's
  // implementation returns a new copy on each call: not deleting it leaks
  // one error per failed response.
  TRITONSERVER_Error* err = api.TRITONSERVER_InferenceResponseError(response);
  if (err != nullptr) {
    c->has_error = true;
    c->error = TakeError(err);
  }
  DropError(api.TRITONSERVER_InferenceResponseModel(response, &c->model,
                                                    &c->version));
  TRITONSERVER_Error* e =
      api.TRITONSERVER_InferenceResponseId(response, &c->id);
  if (e != nullptr) {
    DropError(e);
    c->id = nullptr;
  }
  ReadParameters(response, c);
  ReadOutputs(response, c);
}

// Queues a bare event (release, trace release) of `ctx`.
void PushBare(RequestContext* ctx, Completion::Type type) {
  Completion* c = ctx->queue->Acquire();
  c->type = type;
  c->ctx = ctx;
  c->response = nullptr;
  ctx->queue->Push(c);
}

}  // namespace

void OnResponseComplete(TRITONSERVER_InferenceResponse* response,
                        const uint32_t flags, void* userp) {
  SettleScope scope;
  auto* ctx = static_cast<RequestContext*>(userp);
  Completion* c = ctx->queue->Acquire();
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
  if (response != nullptr) ReadResponse(response, c);
  if ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) {
    ctx->ledger->Settle(ctx, Ending::kFinal);
  }
  ctx->queue->Push(c);
}

void OnRequestRelease(TRITONSERVER_InferenceRequest*, const uint32_t flags,
                      void* userp) {
  // Only RELEASE_ALL hands the request back to us.
  if ((flags & TRITONSERVER_REQUEST_RELEASE_ALL) == 0) return;
  SettleScope scope;
  auto* ctx = static_cast<RequestContext*>(userp);
  ctx->ledger->Settle(ctx, Ending::kRelease);
  PushBare(ctx, Completion::kReleased);
}

void OnTraceActivity(TRITONSERVER_InferenceTrace* trace,
                     TRITONSERVER_InferenceTraceActivity activity,
                     uint64_t timestamp_ns, void* userp) {
  auto* ctx = static_cast<RequestContext*>(userp);
  uint64_t id = 0;
  DropError(Api().TRITONSERVER_InferenceTraceId(trace, &id));
  // Ensemble steps report on child traces with this same userp.
  if (!ctx->traces.Record(trace, id, activity, timestamp_ns)) return;
  int a = static_cast<int>(activity);
  if (a >= 0 && a < kTraceActivities) ctx->timestamps[a] = timestamp_ns;
}

void OnTraceRelease(TRITONSERVER_InferenceTrace* trace, void* userp) {
  SettleScope scope;
  uint64_t id = 0;
  DropError(Api().TRITONSERVER_InferenceTraceId(trace, &id));
  // The release function owns the trace, a child trace too.
  DropError(Api().TRITONSERVER_InferenceTraceDelete(trace));
  auto* ctx = static_cast<RequestContext*>(userp);
  // The request's trace ends when it and every child trace were released
  // (a child's release may come after its parent's).
  if (!ctx->traces.Released(id)) return;
  // It may come after FINAL and RELEASE_ALL (a decoupled backend deletes its
  // response factory, which holds the trace, after sending FINAL).
  ctx->ledger->Settle(ctx, Ending::kTrace);
  PushBare(ctx, Completion::kTraceReleased);
}

}  // namespace triton_node
