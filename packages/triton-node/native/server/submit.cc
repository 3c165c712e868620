// ServerCore's requests: submission and cancellation on the JS thread.
#include "request/builder.h"
#include "server/core.h"
#include "triton/api.h"

namespace triton_node {

namespace {

// An attached core's submit counts as a thread inside Triton: the owner's
// stop (another thread) waits it out before it stops and deletes the server.
class SubmitScope {
 public:
  SubmitScope(std::mutex* mu, std::condition_variable* cv, int* active)
      : mu_(mu), cv_(cv), active_(active) {}
  ~SubmitScope() {
    if (active_ == nullptr) return;
    std::lock_guard<std::mutex> lock(*mu_);
    --*active_;
    cv_->notify_all();
  }
  SubmitScope(const SubmitScope&) = delete;
  SubmitScope& operator=(const SubmitScope&) = delete;

 private:
  std::mutex* mu_;
  std::condition_variable* cv_;
  int* active_;
};

}  // namespace

uint64_t ServerCore::Submit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (phase_ != Phase::kRunning) ThrowStopped(env);
    if (owner_) ++active_threads_;
  }
  SubmitScope scope(&state_mu_, &state_cv_,
                    owner_ ? &active_threads_ : nullptr);
  RequestContext* ctx = contexts_.Acquire(env);
  try {
    BuildRequest(info, server_, allocator_.handle(), ctx);
  } catch (...) {
    contexts_.Recycle(env, ctx);
    throw;
  }
  // Callbacks for this request may outlive stop() and ServerDelete: the
  // core (its queue, contexts and allocator) stays until they are done.
  ledger_.Begin(ctx, [this] { return shared_from_this(); });
  // Callbacks may run (even all of them) before this returns.
  TRITONSERVER_Error* err =
      Api().TRITONSERVER_ServerInferAsync(server_, ctx->request, ctx->trace);
  if (err != nullptr) {
    // No callback will come: the request (and trace) are still ours.
    ledger_.Abort(ctx);
    contexts_.Recycle(env, ctx);
    throw MakeError(env, TakeError(err));
  }
  contexts_.Activate(ctx);
  UpdateKeepAlive(env);
  return ctx->token;
}

void ServerCore::Cancel(uint64_t token) {
  RequestContext* ctx = contexts_.Find(token);
  if (ctx != nullptr) ledger_.Cancel(ctx, &token);
}

void ServerCore::CancelInflight() {
  // The pool grows only in Submit, which is refused once stopping began.
  for (RequestContext* ctx : contexts_.all()) ledger_.Cancel(ctx, nullptr);
}

}  // namespace triton_node
