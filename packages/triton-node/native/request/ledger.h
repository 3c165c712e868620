// The ledger of a server's requests in flight: what Triton has finished with
// each, when a request object may be deleted, and the keep-alive that holds
// the server while any request is out.
#ifndef TRITON_NODE_REQUEST_LEDGER_H_
#define TRITON_NODE_REQUEST_LEDGER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "request/context.h"

namespace triton_node {

// A request counts as in flight from submit until Triton released it, sent
// its FINAL response and, when traced, released the trace: the last of these
// may come from a backend thread after stop() and even after ServerDelete.
// Meanwhile the ledger holds its owner (the server) alive, as those
// callbacks use the server's queue, contexts and allocator.
class InflightLedger {
 public:
  // JS thread, before ServerInferAsync: `ctx` is in flight. `owner()` (the
  // server, as a shared_ptr) is called only when nothing was in flight, so
  // a steady stream of requests takes no reference per request.
  template <typename OwnerFn>
  void Begin(RequestContext* ctx, OwnerFn owner) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ctx->lifecycle.Submitted(ctx->trace != nullptr);
      if (inflight_++ == 0) keepalive_ = owner();
    }
    CountPending(+1);
  }
  // ServerInferAsync failed: no callback will come.
  void Abort(RequestContext* ctx);
  // Triton threads: records one ending. The request is deleted once
  // released and final, unless a cancel is using it (the canceller deletes
  // it then). The last ending of the last request in flight hands the
  // keep-alive to the SettleScope.
  void Settle(RequestContext* ctx, Ending what);
  // Any thread: cancels ctx's request if it is in flight (and, with
  // `token`, still that request).
  void Cancel(RequestContext* ctx, const uint64_t* token);
  int64_t Inflight();
  // Blocks until nothing is in flight.
  void WaitSettled();

  // Requests submitted and not yet released, over all servers.
  static int64_t PendingRequests();

 private:
  static void CountPending(int delta);

  std::mutex mu_;
  int64_t inflight_ = 0;
  std::shared_ptr<void> keepalive_;
  std::condition_variable settled_cv_;
};

// Marks a frame of ours that may settle a request (Triton callbacks,
// response deletes). When a server's last request in flight settles, the
// keep-alive is released only as the outermost such frame on the thread
// returns: that may free the server, which inner frames still use.
class SettleScope {
 public:
  SettleScope() { ++depth_; }
  ~SettleScope();
  SettleScope(const SettleScope&) = delete;
  SettleScope& operator=(const SettleScope&) = delete;
  static void Defer(std::shared_ptr<void> owner);

 private:
  static thread_local int depth_;
  static thread_local std::vector<std::shared_ptr<void>> dropped_;
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_LEDGER_H_
