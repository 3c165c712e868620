// A Triton server: its shared state (ServerCore, used by worker threads and
// Triton callbacks) and its JS wrapper (ServerWrap, NativeServer).
#ifndef TRITON_NODE_SERVER_WRAP_H_
#define TRITON_NODE_SERVER_WRAP_H_

#include <napi.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "addon.h"
#include "allocator.h"
#include "completion.h"
#include "errors.h"
#include "request.h"
#include "triton_capi.h"

namespace triton_node {

// The result of work done on a worker thread, settled on the JS thread.
struct OpResult {
  bool ok = true;
  ErrorInfo error;
  std::string text;
  bool flag_a = false;
  bool flag_b = false;
};

struct PendingOp {
  Napi::Promise::Deferred deferred;
  std::function<OpResult()> work;                            // worker thread
  std::function<Napi::Value(Napi::Env, OpResult&)> resolve;  // JS thread
  OpResult result;
  bool abandoned = false;  // rejected at stop; its thread frees it (ops_mu_)
  explicit PendingOp(Napi::Env env)
      : deferred(Napi::Promise::Deferred::New(env)) {}
};

// Shared by the JS wrapper, worker threads and Triton callbacks. One
// thread-safe function per server wakes the JS thread both for inference
// completions and for finished operations (load, stop...).
class ServerCore : public std::enable_shared_from_this<ServerCore> {
 public:
  enum State { kCreating, kRunning, kStopping, kStopped };

  ServerCore(Napi::Env env, Napi::Function on_events);
  ~ServerCore();
  // JS thread, once, right after construction (needs shared_from_this).
  void InitTsfn(Napi::Env env);

  // JS thread. Runs `work` on a thread of its own; its promise settles on
  // the JS thread. Rejects with UNAVAILABLE once the server is stopped.
  Napi::Promise RunOp(Napi::Env env, std::function<OpResult()> work,
                      std::function<Napi::Value(Napi::Env, OpResult&)> resolve,
                      bool allow_when_creating = false);
  // JS thread: begins stopping (idempotent); the promise settles when the
  // server is deleted. `deferred` may be null (finalizer-initiated stop).
  void Stop(Napi::Env env, Napi::Promise::Deferred* deferred);
  // Cleanup hook / process exit: stop and delete without touching JS.
  void Teardown(bool env_alive);
  // Whether ServerDelete has returned (any thread).
  bool ServerDeleted();

  // JS thread.
  uint64_t Submit(const Napi::CallbackInfo& info);
  void Cancel(uint64_t token);
  // Any thread once stopping began: cancels every request still in flight.
  void CancelInflight();
  int64_t Inflight();
  void RecycleContext(napi_env env, RequestContext* ctx);
  bool IsStopped();  // stopping or stopped
  [[noreturn]] void ThrowStopped(Napi::Env env);

  // Called on the JS thread by the thread-safe function.
  void OnWake(Napi::Env env);

  // Worker/Triton threads: queue a finished op and wake the JS thread.
  void FinishOp(PendingOp* op);

  TRITONSERVER_Server* server() const { return server_; }
  CompletionQueue& queue() { return queue_; }
  JsCache& js_cache() { return js_cache_; }  // JS thread only
  Napi::FunctionReference& on_events() { return on_events_; }
  std::vector<RequestContext*>& contexts() { return contexts_; }
  std::mutex& ctx_mu() { return ctx_mu_; }
  void set_server(TRITONSERVER_Server* server) { server_ = server; }
  ResponseAllocator& allocator() { return allocator_; }
  // Creation thread: the server exists (or creation failed).
  void MarkCreated(TRITONSERVER_Server* server, bool ok);

  // Requests submitted and not yet settled (RELEASE_ALL, FINAL and, when
  // traced, the trace release all came; see RequestContext), under ctx_mu_.
  // While it is non-zero the core keeps itself alive through `keepalive_`:
  // a decoupled backend's own thread may call back after stop() and even
  // after ServerDelete returned, and those callbacks use this core, its
  // contexts and its allocator. The last settling callback drops it
  // (SettleScope in completion.cc).
  int64_t inflight_ = 0;
  std::shared_ptr<ServerCore> keepalive_;
  std::condition_variable settled_cv_;  // inflight_ reached 0 (ctx_mu_)

 private:
  static void Wake(void* arg);
  void UpdateKeepAlive(napi_env env);
  void FinishStopOnJsThread(Napi::Env env);
  // JS thread: settles finished ops and deletes them.
  void SettleOps(Napi::Env env, std::vector<PendingOp*>* ops);
  // JS thread, once the queue is closed: settles every op still pending.
  void SettleOpsAtStop(Napi::Env env);
  // Stops the server and deletes it, unless requests are still in flight
  // after the stop (it timed out): then returns true and the caller either
  // runs DeleteServerWhenSettled (blocks) or leaves the server undeleted.
  bool DeleteServerOnce();
  // Cancels ctx's request if it is in flight (and, with `token`, still that
  // request).
  void CancelContext(RequestContext* ctx, const uint64_t* token);
  void DeleteServerWhenSettled();

  napi_env env_;
  TRITONSERVER_Server* server_ = nullptr;
  ResponseAllocator allocator_;
  CompletionQueue queue_;
  Napi::FunctionReference on_events_;
  JsCache js_cache_;  // references dropped with on_events_
  napi_threadsafe_function tsfn_ = nullptr;
  bool tsfn_refed_ = false;
  bool tsfn_released_ = false;

  std::mutex state_mu_;
  std::condition_variable state_cv_;
  State state_ = kCreating;
  int active_threads_ = 0;          // worker threads inside Triton calls
  int delete_state_ = 0;            // 0 not stopped, 1 stopping, 2 stopped
  bool delete_deferred_ = false;    // stopped, ServerDelete still to come
  bool deferred_deleting_ = false;  // DeleteServerWhenSettled is deleting
  bool server_deleted_ = false;     // ServerDelete returned (or no server)
  OpResult stop_result_;

  // JS thread only.
  int pending_ops_ = 0;
  std::vector<Napi::Promise::Deferred> stop_waiters_;
  bool stop_finished_js_ = false;
  std::vector<RequestContext*> contexts_;
  std::vector<RequestContext*> free_contexts_;
  int active_contexts_ = 0;

  std::mutex ops_mu_;
  std::vector<PendingOp*> done_ops_;  // finished, not yet settled
  std::vector<PendingOp*> live_ops_;  // every op not yet settled

  std::mutex ctx_mu_;
};

class ServerWrap : public Napi::ObjectWrap<ServerWrap> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit ServerWrap(const Napi::CallbackInfo& info);
  ~ServerWrap() override;

  // addon.createServer(options, onEvents)
  static Napi::Value CreateServer(const Napi::CallbackInfo& info);

 private:
  Napi::Value IsLive(const Napi::CallbackInfo& info);
  Napi::Value IsReady(const Napi::CallbackInfo& info);
  Napi::Value Metadata(const Napi::CallbackInfo& info);
  Napi::Value LoadModel(const Napi::CallbackInfo& info);
  Napi::Value UnloadModel(const Napi::CallbackInfo& info);
  Napi::Value ModelIndex(const Napi::CallbackInfo& info);
  Napi::Value ModelIsReady(const Napi::CallbackInfo& info);
  Napi::Value ModelProperties(const Napi::CallbackInfo& info);
  Napi::Value ModelMetadata(const Napi::CallbackInfo& info);
  Napi::Value ModelConfig(const Napi::CallbackInfo& info);
  Napi::Value ModelStatistics(const Napi::CallbackInfo& info);
  Napi::Value Metrics(const Napi::CallbackInfo& info);
  Napi::Value Submit(const Napi::CallbackInfo& info);
  void Cancel(const Napi::CallbackInfo& info);
  Napi::Value Inflight(const Napi::CallbackInfo& info);
  Napi::Value Stop(const Napi::CallbackInfo& info);
  Napi::Value CreateMetricFamily(const Napi::CallbackInfo& info);

  Napi::Value ModelQuery(const Napi::CallbackInfo& info, int which);

  std::shared_ptr<ServerCore> core_;
};

// Every server core still able to reach Triton, for process exit.
void RegisterCore(const std::shared_ptr<ServerCore>& core);
void UnregisterCore(ServerCore* core);
// Returns true when a server could not be deleted (a stop that timed out with
// requests still in a backend): Triton's threads may then still run.
bool TeardownAllCoresAtExit();

}  // namespace triton_node

#endif  // TRITON_NODE_SERVER_WRAP_H_
