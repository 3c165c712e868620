#include "request/context.h"

#include <string>

#include "request/kept_requests.h"
#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

// A token is the context's index in its low bits and its generation above:
// a late cancel() of a finished request cannot reach the next one.
constexpr uint64_t kTokenIndexBits = 20;
constexpr uint64_t kTokenIndexMask = (1ull << kTokenIndexBits) - 1;

void DeleteUnsubmitted(RequestContext* ctx) {
  const TritonApi& api = Api();
  if (ctx->request != nullptr) {
    DropError(api.TRITONSERVER_InferenceRequestDelete(ctx->request));
  }
  if (ctx->trace != nullptr) {
    DropError(api.TRITONSERVER_InferenceTraceDelete(ctx->trace));
  }
}

}  // namespace

ContextPool::~ContextPool() {
  // References in contexts belong to the environment; when it is gone they
  // are gone with it, so they are not deleted here.
  for (RequestContext* ctx : contexts_) {
    for (TRITONSERVER_BufferAttributes* attrs :
         {ctx->attributes, ctx->ipc_attributes}) {
      if (attrs == nullptr || LoadedApi() == nullptr) continue;
      DropError(Api().TRITONSERVER_BufferAttributesDelete(attrs));
    }
    if (ctx->lifecycle.TritonDone()) delete ctx;
  }
}

RequestContext* ContextPool::Acquire(Napi::Env env) {
  RequestContext* ctx;
  if (!free_.empty()) {
    ctx = free_.back();
    free_.pop_back();
  } else {
    if (contexts_.size() > kTokenIndexMask) {
      throw MakeError(env, "UNAVAILABLE",
                      "too many requests in flight (" +
                          std::to_string(contexts_.size()) + ")");
    }
    ctx = new RequestContext();
    ctx->ledger = ledger_;
    ctx->queue = queue_;
    ctx->kept_requests = kept_requests_;
    ctx->index = static_cast<uint32_t>(contexts_.size());
    contexts_.push_back(ctx);
  }
  ++ctx->generation;
  ctx->token = (ctx->generation << kTokenIndexBits) | ctx->index;
  ctx->lifecycle.Acquired();
  return ctx;
}

void ContextPool::Activate(RequestContext* ctx) {
  ctx->lifecycle.Activated();
  ++active_;
}

void ContextPool::Recycle(napi_env env, RequestContext* ctx) {
  if (ctx->lifecycle.Recycled(env)) {
    // Finished: the ledger deleted the request, the trace released itself.
    --active_;
  } else {
    DeleteUnsubmitted(ctx);
  }
  // A record the ledger did not keep: its request is gone (deleted at the
  // release, by a cancel, or just now).
  if (ctx->kept_record != nullptr) {
    kept_requests_->Discard(ctx->kept_record);
    ctx->kept_record = nullptr;
  }
  ctx->request = nullptr;
  ctx->trace = nullptr;
  ReleaseBufferUses(&ctx->buffer_uses);  // may free a disposed buffer
  for (napi_ref ref : ctx->refs) napi_delete_reference(env, ref);
  ctx->refs.clear();
  ctx->holds.clear();  // may free memory the caller detached meanwhile
  ctx->placements.ClearDestinations();
  ctx->placements.count = 0;
  free_.push_back(ctx);
}

RequestContext* ContextPool::Find(uint64_t token) const {
  uint64_t index = token & kTokenIndexMask;
  return index < contexts_.size() ? contexts_[index] : nullptr;
}

}  // namespace triton_node
