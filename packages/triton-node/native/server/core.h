// One Triton server and everything that outlives its JS wrapper: the
// operations in flight, the requests in flight, the wake-ups of the JS
// thread, and the stop sequence. Shared by the JS wrapper
// (objects/server_object.h), worker threads and Triton's callbacks.
#ifndef TRITON_NODE_SERVER_CORE_H_
#define TRITON_NODE_SERVER_CORE_H_

#include <napi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "env/env_data.h"
#include "memory/response_allocator.h"
#include "request/completion_queue.h"
#include "request/context.h"
#include "request/event_encoder.h"
#include "request/ledger.h"
#include "request/kept_requests.h"
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
  // Whether plain requests are kept for reuse (request/kept_requests.h): off
  // when Triton polls the repository and changes models on its own. Set once,
  // before the server runs.
  void SetKeepRequests(bool on) { kept_requests_.set_enabled(on); }
  // Kept requests of this core (tests).
  size_t KeptRequestCount() { return kept_requests_.size(); }

  // Sharing (server/share.cc). The owner core created the Triton server; an
  // attached core belongs to another environment (a worker thread) and
  // submits to the owner's server through a queue, waker, allocator and
  // request pool of its own, so completions reach the submitting thread.
  // Owner or attached, JS thread: the id that Attach() takes (one per owner,
  // for its life). Throws UNAVAILABLE once the server is stopping.
  std::string Share(Napi::Env env);
  // JS thread of the attaching environment: a running core over the shared
  // server. Throws NOT_FOUND (unknown id, or the owner is gone) or
  // UNAVAILABLE (the owner is stopping or stopped).
  static std::shared_ptr<ServerCore> Attach(Napi::Env env,
                                            const std::string& id,
                                            Napi::Function on_events);
  bool attached() const { return owner_ != nullptr; }
  // The owner's pinned versions (lib/deploy/deploy.ts), as the owner's JS
  // wrote them: attached servers read them here, never from a message (any
  // thread that knows the share id can post on the channel that says they
  // changed). JS thread of the owner: replaces them and returns their new
  // generation; an attached core is refused (TypeError), as only the owner
  // deploys and rolls back.
  uint64_t SetPins(Napi::Env env, std::string pins);
  // Any core: the owner's pins and their generation (0: never set).
  std::pair<uint64_t, std::string> Pins();

 private:
  static constexpr const char* kStoppedMessage = "server is stopped";
  static constexpr const char* kOwnerStoppedMessage =
      "server is stopped: the thread that created it stopped it (an "
      "attached server ends with its owner)";
  static constexpr const char* kDetachedMessage =
      "server is detached: stop() on an attached server ended this thread's "
      "use of it (the owner's server keeps running)";

  // share.cc: the owner's side, on its stop sequence's thread.
  // New work from every attachment is refused and its op threads and
  // submits still inside Triton are waited out.
  void StopAttachments();
  // The attachments still alive, taken under state_mu_ (then released: each
  // step below locks the attachment's own state).
  std::vector<std::shared_ptr<ServerCore>> LiveAttachments();
  bool AttachmentsInflight();
  void CancelAttachments();
  void WaitAttachmentsSettled();
  // The owner is stopped (deleted, left undeleted, or deleting late): each
  // attachment counts as stopped for JS and settles what is left.
  void AttachmentsStopped();
  // share.cc: the attached side.
  void OwnerStopping();
  void OwnerStopped();
  // The attached core's part of DeleteServerOnce: no Triton call, its
  // requests settle, then it leaves the owner.
  void DetachOnce();
  void RemoveAttachment(const ServerCore* core);
  // Any thread: the models change. Deletes the kept requests of every core
  // over this Triton server (the owner's and each attachment's).
  void PurgeSharedKeptRequests();
  // The owner's stop: no core over the server keeps requests any more.
  void CloseSharedKeptRequests();
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
  // Attached cores only: the owner (kept alive while this core is).
  std::shared_ptr<ServerCore> owner_;
  // What a refused call says (under state_mu_ once running).
  std::atomic<const char*> stopped_message_{kStoppedMessage};
  ResponseAllocator allocator_;
  CompletionQueue queue_;
  InflightLedger ledger_;
  KeptRequestPool kept_requests_;
  ContextPool contexts_{&ledger_, &queue_, &kept_requests_};
  JsWaker waker_;
  Napi::FunctionReference on_events_;
  EventEncoder encoder_;  // references dropped with on_events_

  std::mutex state_mu_;
  std::condition_variable state_cv_;
  Phase phase_ = Phase::kCreating;
  int active_threads_ = 0;  // operation threads inside Triton calls
  std::chrono::steady_clock::time_point loads_settle_at_{};
  // Owner only: the attached cores and the id they attach with.
  std::vector<std::weak_ptr<ServerCore>> attachments_;
  std::string share_id_;
  // Owner only: its pins (a JSON list of [model, version]) and how many
  // times they were set.
  std::mutex pins_mu_;
  std::string pins_ = "[]";
  uint64_t pins_generation_ = 0;
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
