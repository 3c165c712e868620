// One Triton server and everything that outlives its JS wrapper: the
// operations in flight, the requests in flight, the wake-ups of the JS
// thread, and the stop sequence. Shared by the JS wrapper
// (objects/server_object.h), worker threads and Triton's callbacks.
#ifndef TRITON_NODE_SERVER_CORE_H_
#define TRITON_NODE_SERVER_CORE_H_

#include <napi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "env/env_data.h"
#include "memory/response_allocator.h"
#include "request/completion_queue.h"
#include "request/context.h"
#include "request/event_encoder.h"
#include "request/ledger.h"
#include "server/js_waker.h"
#include "server/operations.h"
#include "triton/errors.h"
#include "triton_capi.h"

namespace triton_node {

class ServerCore : public EnvServer,
                   public std::enable_shared_from_this<ServerCore> {
 public:
  // Where the server is in its life. Only ever moves forward.
  enum class Phase {
    kCreating,       // ServerNew runs
    kRunning,        //
    kStopping,       // stop() began: operations still inside Triton finish
    kDeleting,       // ServerStop, then ServerDelete, run
    kDeletePending,  // stopped, but requests are still in flight: the delete
                     // waits until they settle
    kDeletingLate,   // that delete runs
    kUndeleted,      // left undeleted for good: its stop timed out (see
                     // DeleteServerOnce), or the process exits first
    kStopped,        // deleted (or never created)
  };

  ServerCore(Napi::Env env, Napi::Function on_events);
  ~ServerCore() override;
  // JS thread, once, right after construction (needs shared_from_this).
  void Init(Napi::Env env);

  // JS thread. Runs `op` on a thread of its own; the promise settles on the
  // JS thread. Rejects with UNAVAILABLE once the server is stopping.
  Napi::Promise Run(Napi::Env env, std::unique_ptr<Operation> op,
                    bool allow_when_creating = false);
  // The creation operation: the server exists, or creation failed.
  void MarkCreated(TRITONSERVER_Server* server);

  // JS thread: begins stopping (idempotent); the promise settles when the
  // server is deleted. `deferred` may be null (a collected wrapper).
  void Stop(Napi::Env env, Napi::Promise::Deferred* deferred);
  // Cleanup hook / process exit: stop and delete without touching JS.
  void Teardown(bool env_alive) override;
  // Whether ServerDelete has returned (or there was no server).
  bool ServerDeleted();
  bool IsStopped();  // stopping or stopped
  [[noreturn]] void ThrowStopped(Napi::Env env);

  // JS thread: builds and submits a request; returns its token.
  uint64_t Submit(const Napi::CallbackInfo& info);
  // JS thread: cancels the request of `token` if it is still in flight.
  void Cancel(uint64_t token);
  int64_t Inflight() override { return ledger_.Inflight(); }

  ResponseAllocator& allocator() { return allocator_; }

 private:
  static constexpr const char* kStoppedMessage = "server is stopped";
  // How long an unload or a stop keeps off a model load that just returned.
  static constexpr std::chrono::milliseconds kLoadSettle{100};

  struct PendingOp {
    Napi::Promise::Deferred deferred;
    std::unique_ptr<Operation> op;
    bool abandoned = false;  // rejected at stop; its thread frees it
    explicit PendingOp(Napi::Env env)
        : deferred(Napi::Promise::Deferred::New(env)) {}
  };

  // core.cc: operations and wake-ups.
  static void OnWake(Napi::Env env, void* self);
  void HandleWake(Napi::Env env);
  void StartOpThread(Napi::Env env, PendingOp* op);
  void FinishOp(PendingOp* op);
  void SettleOps(Napi::Env env, std::vector<PendingOp*>* ops);
  void SettleOpsAtStop(Napi::Env env);
  void UpdateKeepAlive(napi_env env);
  static bool StoppedForJs(Phase phase) {
    return phase >= Phase::kDeletePending;
  }

  // drain.cc: completions → events.
  void Drain(Napi::Env env);

  // stop.cc: the stop sequence.
  void StopOnThread();
  // Operation threads and the stop sequence: a model unload (or the stop,
  // which unloads every model) waits until kLoadSettle has passed since the
  // last load returned (Triton r25.07 crashes when a model is destroyed
  // while its instance thread is still returning from the load's warm-up:
  // docs/troubleshooting.md, "Triton's model deleter threads").
  void NoteModelsLoaded();
  void WaitLoadsSettled();
  bool DeleteServerOnce();
  void DeleteServerWhenSettled();
  void CancelInflight();
  void FinishStopOnJsThread(Napi::Env env);
  void DeliverUnfinished(Napi::Env env);
  void CloseQueue();
  void ReleaseJs(Napi::Env env);
  void SettleStopWaiters(Napi::Env env, std::exception_ptr* pending);

  napi_env env_;
  TRITONSERVER_Server* server_ = nullptr;
  ResponseAllocator allocator_;
  CompletionQueue queue_;
  InflightLedger ledger_;
  ContextPool contexts_{&ledger_, &queue_};
  JsWaker waker_;
  Napi::FunctionReference on_events_;
  EventEncoder encoder_;  // references dropped with on_events_

  std::mutex state_mu_;
  std::condition_variable state_cv_;
  Phase phase_ = Phase::kCreating;
  int active_threads_ = 0;  // operation threads inside Triton calls
  std::chrono::steady_clock::time_point loads_settle_at_{};
  ErrorInfo stop_error_;
  bool stop_failed_ = false;

  // JS thread only.
  int pending_ops_ = 0;
  std::vector<Napi::Promise::Deferred> stop_waiters_;
  bool js_stop_done_ = false;  // FinishStopOnJsThread ran

  std::mutex ops_mu_;
  std::vector<PendingOp*> done_ops_;  // finished, not yet settled
  std::vector<PendingOp*> live_ops_;  // every op not yet settled
};

}  // namespace triton_node

#endif  // TRITON_NODE_SERVER_CORE_H_
