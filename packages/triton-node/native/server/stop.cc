// ServerCore's stop sequence: stop() on the JS thread, ServerStop and
// ServerDelete on a thread of their own, the JS side finished once the
// server counts as stopped, and teardown without JS.
#include <algorithm>
#include <chrono>
#include <system_error>
#include <thread>

#include "env/env_data.h"
#include "env/js_call.h"
#include "request/delivery.h"
#include "server/core.h"
#include "server/exit_registry.h"
#include "triton/api.h"
#include "triton/server_handles.h"

namespace triton_node {

void ServerCore::Stop(Napi::Env env, Napi::Promise::Deferred* deferred) {
  if (deferred != nullptr) stop_waiters_.push_back(*deferred);
  Phase phase;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    phase = phase_;
    if (phase <= Phase::kRunning) phase_ = Phase::kStopping;
  }
  if (StoppedForJs(phase)) {
    if (js_stop_done_) FinishStopOnJsThread(env);  // settles the waiters
    return;
  }
  if (phase > Phase::kRunning) return;  // already stopping
  UpdateKeepAlive(env);
  std::shared_ptr<ServerCore> self = shared_from_this();
  std::thread([self] { self->StopOnThread(); }).detach();
}

void ServerCore::StopOnThread() {
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    state_cv_.wait(lock, [this] { return active_threads_ == 0; });
  }
  bool deferred = DeleteServerOnce();
  queue_.Poke();  // stop() settles now; the delete may come later
  if (deferred) DeleteServerWhenSettled();
}

bool ServerCore::DeleteServerOnce() {
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    if (phase_ == Phase::kDeleting) {
      state_cv_.wait(lock, [this] { return phase_ != Phase::kDeleting; });
    }
    if (phase_ > Phase::kDeleting) return false;
    phase_ = Phase::kDeleting;
  }
  if (owner_) {
    DetachOnce();
    return false;
  }
  // From here on no attachment starts anything in Triton.
  StopAttachments();
  // Kept requests hold their models: gone before Triton unloads them, and
  // none kept from here on (a request released later is deleted).
  CloseSharedKeptRequests();
  ErrorInfo error;
  bool failed = false;
  bool deferred = false;
  bool left = false;
  if (server_ != nullptr) {
    WaitLoadsSettled();
    TRITONSERVER_Error* err = Api().TRITONSERVER_ServerStop(server_);
    if (err != nullptr) {
      error = TakeError(err);
      failed = true;
    }
    deferred = ledger_.Inflight() > 0 || AttachmentsInflight();
    // The exit timeout passed with requests still in flight: cancel them, so
    // that backends which honour cancellation end them now rather than run
    // the queue out after stop() has returned.
    if (deferred) {
      CancelInflight();
      CancelAttachments();
    }
    if (failed) {
      // A stop that timed out is never followed by ServerDelete. Triton's
      // stop unloads the models only once no inference is in flight, and
      // gives up without waiting for the unloads it started: deleting the
      // server then destroys (or is still destroying) its models on
      // detached threads of Triton's model lifecycle, which go on using the
      // deleted server and lifecycle (r25.07: SIGSEGV or "double free";
      // docs/troubleshooting.md). The stop cannot be polled again (a second
      // ServerStop returns at once), so the server is left in place until
      // the process exits. It still counts as running for
      // triton/server_handles: no later delete of another server tears
      // Triton's process-wide memory managers down under its threads.
      left = true;
      NoteServerLeftUndeleted();
    } else if (!deferred) {
      err = ReleaseServer(server_);
      if (err != nullptr) {  // its own stop failed: nothing was deleted
        error = TakeError(err);
        failed = true;
        left = true;
        NoteServerLeftUndeleted();
      }
    }
  }
  // The allocator is not deleted here: a decoupled backend's thread may
  // still allocate for a request after ServerDelete returned, and responses
  // not yet deleted call its release function. The core's destructor
  // deletes it (the ledger holds the core until the last request settles).
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    stop_error_ = error;
    stop_failed_ = failed;
    phase_ = left       ? Phase::kUndeleted
             : deferred ? Phase::kDeletePending
                        : Phase::kStopped;
    state_cv_.notify_all();
  }
  AttachmentsStopped();
  return deferred && !left;
}

void ServerCore::DeleteServerWhenSettled() {
  ledger_.WaitSettled();
  WaitAttachmentsSettled();
  // The stop succeeded, so Triton has destroyed every model; what was left
  // in flight were callbacks of ours (a trace released after FINAL). A
  // second of margin, as Triton's own stop polls once a second.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (phase_ != Phase::kDeletePending) return;  // the process is exiting
    phase_ = Phase::kDeletingLate;
  }
  DropError(ReleaseServer(server_));
  std::lock_guard<std::mutex> lock(state_mu_);
  phase_ = Phase::kStopped;
  state_cv_.notify_all();
}

void ServerCore::NoteModelsLoaded() {
  // Loads and unloads of attached cores reach the owner's models.
  if (owner_) return owner_->NoteModelsLoaded();
  std::lock_guard<std::mutex> lock(state_mu_);
  loads_settle_at_ = std::chrono::steady_clock::now() + kLoadSettle;
}

void ServerCore::WaitLoadsSettled() {
  if (owner_) return owner_->WaitLoadsSettled();
  std::chrono::steady_clock::time_point until;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    until = loads_settle_at_;
  }
  std::this_thread::sleep_until(until);
}

void ServerCore::FinishStopOnJsThread(Napi::Env env) {
  // JS failures (the environment terminating) must not skip the native
  // cleanup below: the first one is rethrown at the end.
  std::exception_ptr pending;
  if (!js_stop_done_) {
    js_stop_done_ = true;
    try {
      Drain(env);
    } catch (...) {
      pending = std::current_exception();
    }
    try {
      DeliverUnfinished(env);
    } catch (...) {
      if (!pending) pending = std::current_exception();
    }
    CloseQueue();
    SettleOpsAtStop(env);
    ReleaseJs(env);
  }
  SettleStopWaiters(env, &pending);
  if (pending) std::rethrow_exception(pending);
}

// Requests Triton never finished before it was deleted still settle.
void ServerCore::DeliverUnfinished(Napi::Env env) {
  encoder_.BeginDrain();
  for (RequestContext* ctx : contexts_.all()) {
    if (ctx->lifecycle.active()) DeliverStoppedRequest(env, &encoder_, ctx);
  }
  if (on_events_.IsEmpty()) {
    encoder_.BeginDrain();
    return;
  }
  encoder_.Deliver(env, on_events_.Value());
}

// From here on a late callback disposes of its item itself (Push).
void ServerCore::CloseQueue() {
  std::vector<Completion*> leftover;
  queue_.Close(&leftover);
  for (Completion* c : leftover) DisposeCompletion(c);
  queue_.Recycle(&leftover);
}

// Nothing will be delivered any more.
void ServerCore::ReleaseJs(Napi::Env env) {
  waker_.Release(env);
  on_events_.Reset();
  encoder_.Release(env);
  GetEnvData(env)->RemoveServer(this);
}

void ServerCore::SettleStopWaiters(Napi::Env env, std::exception_ptr* pending) {
  std::vector<Napi::Promise::Deferred> waiters;
  waiters.swap(stop_waiters_);
  ErrorInfo error;
  bool failed;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    error = stop_error_;
    failed = stop_failed_;
  }
  for (auto& d : waiters) {
    try {
      if (failed) {
        d.Reject(MakeError(env, error).Value());
      } else {
        d.Resolve(env.Undefined());
      }
    } catch (...) {
      if (!*pending) *pending = std::current_exception();
    }
  }
}

void ServerCore::SettleOpsAtStop(Napi::Env env) {
  // Ops that finished before the queue closed settle with their own result;
  // any other op (a thread still out, which the stop sequence should rule
  // out) is rejected now, and its thread frees it when it returns.
  std::vector<PendingOp*> done;
  std::vector<PendingOp*> abandoned;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    done.swap(done_ops_);
    for (PendingOp* op : live_ops_) {
      if (std::find(done.begin(), done.end(), op) == done.end()) {
        op->abandoned = true;
        abandoned.push_back(op);
      }
    }
    live_ops_.clear();
  }
  SettleOps(env, &done);
  for (PendingOp* op : abandoned) {
    --pending_ops_;
    try {
      op->deferred.Reject(
          MakeError(env, "UNAVAILABLE", stopped_message_.load()).Value());
    } catch (...) {  // JS cannot run: nothing to settle
    }
  }
}

void ServerCore::Teardown(bool env_alive) {
  if (owner_) {
    // An attached core's environment goes (a worker terminates): its
    // requests are cancelled and settle natively (the ledger keeps this core
    // until their last callback); the owner's server keeps serving.
    CloseQueue();
    {
      std::unique_lock<std::mutex> lock(state_mu_);
      if (phase_ <= Phase::kRunning) phase_ = Phase::kStopping;
      state_cv_.wait(lock, [this] { return active_threads_ == 0; });
    }
    CancelInflight();
    kept_requests_
        .Close();  // the owner's server still exists: it waited for us
    {
      std::lock_guard<std::mutex> lock(state_mu_);
      phase_ = Phase::kStopped;
      state_cv_.notify_all();
    }
    if (!env_alive) return;
    js_stop_done_ = true;
    waker_.Abort();
    return;
  }
  // Responses not yet handed to JS hold their model: delete them BEFORE the
  // server stops (else ServerStop waits the whole exit timeout and they
  // would be deleted after ServerDelete, under Triton's backend threads).
  // Once closed, the queue makes each late callback dispose of its own item.
  CloseQueue();
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    if (phase_ <= Phase::kRunning) phase_ = Phase::kStopping;
    state_cv_.wait(lock, [this] { return active_threads_ == 0; });
  }
  // Nobody can receive these results any more (the environment or the
  // process is ending): cancel them so the stop need not wait them out.
  CancelInflight();
  bool deferred = DeleteServerOnce();
  if (!env_alive) {
    // Process exit: a server whose requests are still in flight is left
    // undeleted (deleting it would crash Triton once they end), as is one
    // whose stop timed out, and a deferred delete must not start or run
    // during exit.
    std::unique_lock<std::mutex> lock(state_mu_);
    if (phase_ == Phase::kDeletePending) phase_ = Phase::kUndeleted;
    state_cv_.wait(lock, [this] { return phase_ != Phase::kDeletingLate; });
    return;
  }
  if (deferred) {
    // The environment goes, the process may not: delete it once settled.
    std::shared_ptr<ServerCore> self = shared_from_this();
    try {
      std::thread([self] { self->DeleteServerWhenSettled(); }).detach();
    } catch (const std::system_error&) {  // left undeleted
    }
  }
  js_stop_done_ = true;
  waker_.Abort();
}

}  // namespace triton_node
