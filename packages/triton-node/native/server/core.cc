#include "server/core.h"

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <utility>

#include "env/js_call.h"
#include "server/exit_registry.h"
#include "triton/api.h"

namespace triton_node {

ServerCore::ServerCore(Napi::Env env, Napi::Function on_events) : env_(env) {
  on_events_ = Napi::Persistent(on_events);
  queue_.SetWake(
      [](void* self) { static_cast<ServerCore*>(self)->waker_.Wake(); }, this);
}

ServerCore::~ServerCore() {
  UnregisterCore(this);
  // Ops finished after the environment went away (teardown): nobody can
  // settle them any more.
  std::vector<PendingOp*> unsettled;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    unsettled.swap(done_ops_);
  }
  for (PendingOp* op : unsettled) delete op;
  on_events_.SuppressDestruct();
  // The allocator may still be used by Triton while a request is out; else
  // every response is deleted (the queue was closed, or drained) and the
  // member's destructor deletes it, also for a server left undeleted (no
  // request of ours is left in it to allocate for).
  if (ledger_.Inflight() != 0) allocator_.Leak();
}

void ServerCore::Init(Napi::Env env) {
  encoder_.Init(env);  // first: it throws when JS gave no decoder
  waker_.Init(env, shared_from_this(), &ServerCore::OnWake, this);
}

void ServerCore::UpdateKeepAlive(napi_env env) {
  if (waker_.released()) return;
  Phase phase;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    phase = phase_;
  }
  bool stopping = phase == Phase::kStopping || phase == Phase::kDeleting ||
                  (StoppedForJs(phase) && !js_stop_done_);
  // Keep the event loop alive only while something will still settle.
  waker_.KeepLoopAlive(env,
                       contexts_.active() > 0 || pending_ops_ > 0 || stopping);
}

bool ServerCore::IsStopped() {
  std::lock_guard<std::mutex> lock(state_mu_);
  return phase_ >= Phase::kStopping;
}

bool ServerCore::ServerDeleted() {
  if (owner_) return true;  // an attached core deletes no server
  std::lock_guard<std::mutex> lock(state_mu_);
  return phase_ == Phase::kStopped;
}

void ServerCore::ThrowStopped(Napi::Env env) {
  throw MakeError(env, "UNAVAILABLE", stopped_message_.load());
}

void ServerCore::MarkCreated(TRITONSERVER_Server* server) {
  std::lock_guard<std::mutex> lock(state_mu_);
  server_ = server;
  if (server != nullptr) {
    if (phase_ == Phase::kCreating) phase_ = Phase::kRunning;
  } else {
    phase_ = Phase::kStopped;
    allocator_.Delete();  // no server ever used it
  }
  state_cv_.notify_all();
}

// ---- operations
// ----------------------------------------------------------------

Napi::Promise ServerCore::Run(Napi::Env env, std::unique_ptr<Operation> work,
                              bool allow_when_creating) {
  auto* op = new PendingOp(env);
  Napi::Promise promise = op->deferred.Promise();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    bool allowed = phase_ == Phase::kRunning ||
                   (phase_ == Phase::kCreating && allow_when_creating);
    if (!allowed || waker_.released()) {
      op->deferred.Reject(
          MakeError(env, "UNAVAILABLE", stopped_message_.load()).Value());
      delete op;
      return promise;
    }
    ++active_threads_;
  }
  if (work->effect() != ModelEffect::kNone) {
    // A kept request holds the version it was made for: none may outlive
    // a change of the models (one in flight is deleted at its release).
    ModelChangeBegins();  // ended by the op's thread
    PurgeSharedKeptRequests();
  }
  op->op = std::move(work);
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    live_ops_.push_back(op);
  }
  ++pending_ops_;
  UpdateKeepAlive(env);
  StartOpThread(env, op);
  return promise;
}

void ServerCore::StartOpThread(Napi::Env env, PendingOp* op) {
  std::shared_ptr<ServerCore> self = shared_from_this();
  try {
    std::thread([self, op] {
      const ModelEffect effect = op->op->effect();
      if (effect == ModelEffect::kUnloads) self->WaitLoadsSettled();
      try {
        op->op->Execute(self->server_);
      } catch (const std::exception& e) {
        op->op->Fail(ErrorInfo{TRITONSERVER_ERROR_INTERNAL, e.what()});
      }
      if (effect == ModelEffect::kLoads) {
        self->NoteModelsLoaded();
        RenewExitHandler();
      }
      if (effect != ModelEffect::kNone) ModelChangeEnds();
      // Queue the op before leaving the count of active threads: the stop
      // thread waits for that count to reach zero before it deletes the
      // server and lets the JS thread close the queue, so every op is queued
      // (and settled) before the server counts as stopped.
      self->FinishOp(op);
      std::lock_guard<std::mutex> lock(self->state_mu_);
      --self->active_threads_;
      self->state_cv_.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    if (op->op->effect() != ModelEffect::kNone) ModelChangeEnds();
    {
      std::lock_guard<std::mutex> lock(ops_mu_);
      live_ops_.pop_back();
    }
    {
      std::lock_guard<std::mutex> lock(state_mu_);
      --active_threads_;
      state_cv_.notify_all();
    }
    --pending_ops_;
    op->deferred.Reject(
        MakeError(env, "INTERNAL",
                  std::string("cannot start a thread: ") + e.what())
            .Value());
    delete op;
    UpdateKeepAlive(env);
  }
}

void ServerCore::FinishOp(PendingOp* op) {
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    if (op->abandoned) {
      // Already rejected on the JS thread when the server stopped.
      delete op;
      return;
    }
    done_ops_.push_back(op);
  }
  // Once the queue is closed the op stays in done_ops_: the JS thread settles
  // it in FinishStopOnJsThread, or (environment gone) the destructor frees it.
  queue_.Poke();
}

void ServerCore::SettleOps(Napi::Env env, std::vector<PendingOp*>* ops) {
  for (PendingOp* op : *ops) {
    --pending_ops_;
    // Settling fails only when JS cannot run (the environment terminates):
    // the op is freed all the same.
    try {
      if (op->op->ok()) {
        try {
          op->deferred.Resolve(op->op->Result(env));
        } catch (const Napi::Error& e) {
          op->deferred.Reject(e.Value());
        }
      } else {
        op->deferred.Reject(MakeError(env, op->op->error()).Value());
      }
    } catch (...) {
    }
    delete op;
  }
  ops->clear();
}

void ServerCore::OnWake(Napi::Env env, void* self) {
  static_cast<ServerCore*>(self)->HandleWake(env);
}

void ServerCore::HandleWake(Napi::Env env) {
  // No handle scope of its own: Node-API opens one around each call of a
  // thread-safe function's callback (its docs: none is needed inside).
  queue_.BeginWake();  // before taking ops: a later FinishOp wakes again
  std::vector<PendingOp*> ops;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    ops.swap(done_ops_);
    for (PendingOp* op : ops) {
      live_ops_.erase(std::remove(live_ops_.begin(), live_ops_.end(), op),
                      live_ops_.end());
    }
  }
  SettleOps(env, &ops);
  // An exception from onEvents must not skip the bookkeeping below; it is
  // rethrown (as an uncaught exception) at the end.
  std::exception_ptr pending;
  bool js_usable = true;
  try {
    Drain(env);
  } catch (const JsUnavailable&) {
    js_usable = false;
  } catch (...) {
    pending = std::current_exception();
  }
  bool finish;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    finish = StoppedForJs(phase_) && !js_stop_done_;
  }
  // Terminating: the cleanup hook (Teardown) finishes the stop natively.
  if (finish && js_usable) {
    try {
      FinishStopOnJsThread(env);
    } catch (...) {
      if (!pending) pending = std::current_exception();
    }
  }
  UpdateKeepAlive(env);
  if (pending) std::rethrow_exception(pending);
}

}  // namespace triton_node
