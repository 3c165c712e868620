#include "request/ledger.h"

#include <utility>

#include "request/context.h"
#include "request/kept_requests.h"
#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

std::atomic<int64_t> g_pending_requests{0};

}  // namespace

int64_t InflightLedger::PendingRequests() {
  return g_pending_requests.load(std::memory_order_relaxed);
}

void InflightLedger::CountPending(int delta) {
  g_pending_requests.fetch_add(delta, std::memory_order_relaxed);
}

void InflightLedger::Abort(RequestContext* ctx) {
  std::shared_ptr<void> drop;  // released outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    ctx->lifecycle.Aborted();
    if (--inflight_ == 0) drop = std::move(keepalive_);
  }
  CountPending(-1);
}

void InflightLedger::Settle(RequestContext* ctx, Ending what) {
  if (what == Ending::kRelease) {
    CountPending(-1);
  }
  TRITONSERVER_InferenceRequest* to_delete = nullptr;
  std::shared_ptr<void> drop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const RequestLifecycle::Ended ended = ctx->lifecycle.End(what);
    if (ended.delete_request) to_delete = ctx->request;
    if (ended.settled && --inflight_ == 0) {
      drop = std::move(keepalive_);
      settled_cv_.notify_all();  // a deferred server delete waits
    }
  }
  if (to_delete != nullptr && ctx->kept_record != nullptr &&
      ctx->kept_requests->Keep(ctx->kept_record)) {
    // Kept for the next request of its shape: the pool's now.
    ctx->kept_record = nullptr;
    to_delete = nullptr;
  }
  if (to_delete != nullptr) {
    DropError(Api().TRITONSERVER_InferenceRequestDelete(to_delete));
  }
  if (drop) SettleScope::Defer(std::move(drop));
}

void InflightLedger::Cancel(RequestContext* ctx, const uint64_t* token) {
  TRITONSERVER_InferenceRequest* request;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (token != nullptr && ctx->token != *token) return;
    if (!ctx->lifecycle.CancelBegins()) return;
    request = ctx->request;
  }
  // No lock across the Triton call: Settle leaves the delete to us while a
  // cancel is in flight.
  DropError(Api().TRITONSERVER_InferenceRequestCancel(request));
  bool delete_now = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    delete_now = ctx->lifecycle.CancelEnds();
  }
  if (delete_now) {
    DropError(Api().TRITONSERVER_InferenceRequestDelete(request));
  }
}

int64_t InflightLedger::Inflight() {
  std::lock_guard<std::mutex> lock(mu_);
  return inflight_;
}

void InflightLedger::WaitSettled() {
  std::unique_lock<std::mutex> lock(mu_);
  settled_cv_.wait(lock, [this] { return inflight_ == 0; });
}

// ---- SettleScope
// -------------------------------------------------------------

// Frames of ours on this thread, and the owners whose last request settled
// inside them. An owner freed by its last settling callback must outlive
// every frame of ours still using it: a trace release can run inside a
// response or request delete made by an outer frame.
thread_local int SettleScope::depth_ = 0;
thread_local std::vector<std::shared_ptr<void>> SettleScope::dropped_;

SettleScope::~SettleScope() {
  if (--depth_ != 0) return;
  while (!dropped_.empty()) {
    std::vector<std::shared_ptr<void>> dropped;
    dropped.swap(dropped_);
    ++depth_;  // a destructor that settles more defers to this loop
    dropped.clear();
    --depth_;
  }
}

void SettleScope::Defer(std::shared_ptr<void> owner) {
  dropped_.push_back(std::move(owner));
}

}  // namespace triton_node
