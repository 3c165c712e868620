#include "server_wrap.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>
#include <utility>

#include "errors.h"
#include "metrics.h"
#include "tensor.h"
#include "triton_api.h"

namespace triton_node {
namespace {

constexpr uint64_t kTokenIndexBits = 20;
constexpr uint64_t kTokenIndexMask = (1ull << kTokenIndexBits) - 1;
constexpr const char* kStoppedMessage = "server is stopped";

std::mutex g_cores_mu;
std::vector<std::weak_ptr<ServerCore>>* g_cores =
    new std::vector<std::weak_ptr<ServerCore>>();  // never freed (exit path)

// Records the first error of a sequence of option calls.
class ErrorCollector {
 public:
  void Check(TRITONSERVER_Error* err, const char* what) {
    if (err == nullptr) return;
    ErrorInfo info = TakeError(err);
    if (result_.ok) {
      result_.ok = false;
      result_.error = info;
      result_.error.message = std::string(what) + ": " + info.message;
    }
  }
  bool ok() const { return result_.ok; }
  OpResult& result() { return result_; }

 private:
  OpResult result_;
};

OpResult FromError(TRITONSERVER_Error* err) {
  OpResult r;
  if (err != nullptr) {
    r.ok = false;
    r.error = TakeError(err);
  }
  return r;
}

OpResult MessageText(TRITONSERVER_Error* err, TRITONSERVER_Message* message) {
  if (err != nullptr) return FromError(err);
  OpResult r;
  const char* base = nullptr;
  size_t size = 0;
  TRITONSERVER_Error* ser =
      Api().TRITONSERVER_MessageSerializeToJson(message, &base, &size);
  if (ser != nullptr) {
    r = FromError(ser);
  } else {
    r.text.assign(base, size);
  }
  TRITONSERVER_Error* del = Api().TRITONSERVER_MessageDelete(message);
  DropError(del);
  return r;
}

struct ServerOptionsData {
  std::vector<std::string> repositories;
  int control_mode = 0;
  std::vector<std::string> startup_models;
  bool strict_config = true;
  unsigned int exit_timeout = 30;
  unsigned int retry_count = 0;
  std::string backend_dir;
  bool has_pinned = false;
  uint64_t pinned_bytes = 0;
  std::vector<std::pair<int, uint64_t>> cuda_pools;
  bool has_min_cc = false;
  double min_cc = 0;
  std::vector<std::array<std::string, 3>> backend_config;
  int log_verbose = 0;
  bool log_info = false, log_warn = true, log_error = true;
  std::string log_file;
  bool metrics = true;
  std::string server_id;
};

std::string GetString(Napi::Env env, Napi::Value v, const std::string& what) {
  if (!v.IsString()) ThrowTypeError(env, what + " must be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  // Triton takes C strings: a NUL would silently cut the name.
  if (s.find('\0') != std::string::npos) {
    ThrowTypeError(env, what + " must not contain a NUL character");
  }
  return s;
}

double GetNumber(Napi::Env env, Napi::Value v, const std::string& what) {
  if (!v.IsNumber()) ThrowTypeError(env, what + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

uint64_t GetUint(Napi::Env env, Napi::Value v, const std::string& what) {
  if (v.IsBigInt()) {
    bool lossless = false;
    uint64_t u = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) ThrowRangeError(env, what + " is out of range");
    return u;
  }
  double d = GetNumber(env, v, what);
  if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d))) {
    ThrowRangeError(env, what + " must be a non-negative integer");
  }
  return static_cast<uint64_t>(d);
}

int64_t GetVersion(Napi::Env env, Napi::Value v) {
  double d = GetNumber(env, v, "version");
  if (d != static_cast<double>(static_cast<int64_t>(d)) || d < -1) {
    ThrowRangeError(env, "version must be -1 or a non-negative integer");
  }
  return static_cast<int64_t>(d);
}

bool GetBool(Napi::Env env, Napi::Value v, const std::string& what) {
  if (!v.IsBoolean()) ThrowTypeError(env, what + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

std::vector<std::string> GetStringArray(Napi::Env env, Napi::Value v,
                                        const std::string& what) {
  if (!v.IsArray()) ThrowTypeError(env, what + " must be an array of strings");
  Napi::Array arr = v.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    out.push_back(
        GetString(env, arr.Get(i), what + "[" + std::to_string(i) + "]"));
  }
  return out;
}

ServerOptionsData ParseOptions(Napi::Env env, Napi::Object o) {
  ServerOptionsData d;
  d.repositories =
      GetStringArray(env, o.Get("modelRepositories"), "modelRepositories");
  double mode = GetNumber(env, o.Get("modelControlMode"), "modelControlMode");
  if (mode != 0 && mode != 1 && mode != 2) {
    ThrowRangeError(env, "modelControlMode must be 0, 1 or 2");
  }
  d.control_mode = static_cast<int>(mode);
  Napi::Value startup = o.Get("startupModels");
  if (!startup.IsUndefined()) {
    d.startup_models = GetStringArray(env, startup, "startupModels");
  }
  Napi::Value v = o.Get("strictModelConfig");
  if (!v.IsUndefined()) d.strict_config = GetBool(env, v, "strictModelConfig");
  v = o.Get("exitTimeoutSeconds");
  if (!v.IsUndefined()) {
    d.exit_timeout =
        static_cast<unsigned int>(GetUint(env, v, "exitTimeoutSeconds"));
  }
  v = o.Get("modelLoadRetryCount");
  if (!v.IsUndefined()) {
    d.retry_count =
        static_cast<unsigned int>(GetUint(env, v, "modelLoadRetryCount"));
  }
  v = o.Get("backendDirectory");
  if (!v.IsUndefined()) d.backend_dir = GetString(env, v, "backendDirectory");
  v = o.Get("pinnedMemoryPoolBytes");
  if (!v.IsUndefined()) {
    d.has_pinned = true;
    d.pinned_bytes = GetUint(env, v, "pinnedMemoryPoolBytes");
  }
  v = o.Get("cudaMemoryPoolBytes");
  if (!v.IsUndefined()) {
    if (!v.IsArray()) {
      ThrowTypeError(env, "cudaMemoryPoolBytes must be [device, bytes] pairs");
    }
    Napi::Array arr = v.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value pair = arr.Get(i);
      if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2) {
        ThrowTypeError(env, "cudaMemoryPoolBytes[" + std::to_string(i) +
                                "] must be [device, bytes]");
      }
      Napi::Array p = pair.As<Napi::Array>();
      d.cuda_pools.emplace_back(
          static_cast<int>(GetUint(env, p.Get(0u), "cuda pool device")),
          GetUint(env, p.Get(1u), "cuda pool bytes"));
    }
  }
  v = o.Get("minComputeCapability");
  if (!v.IsUndefined()) {
    d.has_min_cc = true;
    d.min_cc = GetNumber(env, v, "minComputeCapability");
  }
  v = o.Get("backendConfig");
  if (!v.IsUndefined()) {
    if (!v.IsArray()) {
      ThrowTypeError(env,
                     "backendConfig must be [backend, setting, value] triples");
    }
    Napi::Array arr = v.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      std::vector<std::string> t = GetStringArray(
          env, arr.Get(i), "backendConfig[" + std::to_string(i) + "]");
      if (t.size() != 3) {
        ThrowTypeError(env, "backendConfig[" + std::to_string(i) +
                                "] must be [backend, setting, value]");
      }
      d.backend_config.push_back({t[0], t[1], t[2]});
    }
  }
  v = o.Get("log");
  if (v.IsObject()) {
    Napi::Object log = v.As<Napi::Object>();
    Napi::Value f = log.Get("verbose");
    if (!f.IsUndefined()) {
      d.log_verbose = static_cast<int>(GetUint(env, f, "log.verbose"));
    }
    f = log.Get("info");
    if (!f.IsUndefined()) d.log_info = GetBool(env, f, "log.info");
    f = log.Get("warn");
    if (!f.IsUndefined()) d.log_warn = GetBool(env, f, "log.warn");
    f = log.Get("error");
    if (!f.IsUndefined()) d.log_error = GetBool(env, f, "log.error");
    f = log.Get("file");
    if (!f.IsUndefined()) d.log_file = GetString(env, f, "log.file");
  } else if (!v.IsUndefined()) {
    ThrowTypeError(env, "log must be an object");
  }
  v = o.Get("metrics");
  if (!v.IsUndefined()) d.metrics = GetBool(env, v, "metrics");
  v = o.Get("serverId");
  if (!v.IsUndefined()) d.server_id = GetString(env, v, "serverId");
  return d;
}

// Worker thread: options → TRITONSERVER_ServerNew (blocks while startup
// models load).
OpResult CreateTritonServer(const ServerOptionsData& d,
                            TRITONSERVER_Server** server) {
  const TritonApi& api = Api();
  TRITONSERVER_ServerOptions* opts = nullptr;
  TRITONSERVER_Error* err = api.TRITONSERVER_ServerOptionsNew(&opts);
  if (err != nullptr) return FromError(err);
  ErrorCollector c;
  if (!d.server_id.empty()) {
    c.Check(
        api.TRITONSERVER_ServerOptionsSetServerId(opts, d.server_id.c_str()),
        "serverId");
  }
  for (const std::string& repo : d.repositories) {
    c.Check(api.TRITONSERVER_ServerOptionsSetModelRepositoryPath(opts,
                                                                 repo.c_str()),
            "modelRepositories");
  }
  c.Check(api.TRITONSERVER_ServerOptionsSetModelControlMode(
              opts, static_cast<TRITONSERVER_ModelControlMode>(d.control_mode)),
          "modelControlMode");
  for (const std::string& model : d.startup_models) {
    c.Check(api.TRITONSERVER_ServerOptionsSetStartupModel(opts, model.c_str()),
            "startupModels");
  }
  c.Check(
      api.TRITONSERVER_ServerOptionsSetStrictModelConfig(opts, d.strict_config),
      "strictModelConfig");
  c.Check(api.TRITONSERVER_ServerOptionsSetExitTimeout(opts, d.exit_timeout),
          "exitTimeoutSeconds");
  // Always set: the library leaves this option uninitialised otherwise.
  c.Check(
      api.TRITONSERVER_ServerOptionsSetModelLoadRetryCount(opts, d.retry_count),
      "modelLoadRetryCount");
  if (!d.backend_dir.empty()) {
    c.Check(api.TRITONSERVER_ServerOptionsSetBackendDirectory(
                opts, d.backend_dir.c_str()),
            "backendDirectory");
  }
  if (d.has_pinned) {
    c.Check(api.TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(
                opts, d.pinned_bytes),
            "pinnedMemoryPoolBytes");
  }
  for (const auto& pool : d.cuda_pools) {
    c.Check(api.TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
                opts, pool.first, pool.second),
            "cudaMemoryPoolBytes");
  }
  if (d.has_min_cc) {
    c.Check(api.TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
                opts, d.min_cc),
            "minComputeCapability");
  }
  for (const auto& t : d.backend_config) {
    c.Check(api.TRITONSERVER_ServerOptionsSetBackendConfig(
                opts, t[0].c_str(), t[1].c_str(), t[2].c_str()),
            "backendConfig");
  }
  if (!d.log_file.empty()) {
    c.Check(api.TRITONSERVER_ServerOptionsSetLogFile(opts, d.log_file.c_str()),
            "log.file");
  }
  c.Check(api.TRITONSERVER_ServerOptionsSetLogVerbose(opts, d.log_verbose),
          "log.verbose");
  c.Check(api.TRITONSERVER_ServerOptionsSetLogInfo(opts, d.log_info),
          "log.info");
  c.Check(api.TRITONSERVER_ServerOptionsSetLogWarn(opts, d.log_warn),
          "log.warn");
  c.Check(api.TRITONSERVER_ServerOptionsSetLogError(opts, d.log_error),
          "log.error");
  c.Check(api.TRITONSERVER_ServerOptionsSetMetrics(opts, d.metrics), "metrics");
  if (c.ok()) {
    err = api.TRITONSERVER_ServerNew(server, opts);
    if (err != nullptr) {
      *server = nullptr;
      c.result() = FromError(err);
    }
  }
  TRITONSERVER_Error* del = api.TRITONSERVER_ServerOptionsDelete(opts);
  DropError(del);
  return c.result();
}

}  // namespace

// ---- registry for process exit ---------------------------------------------

void RegisterCore(const std::shared_ptr<ServerCore>& core) {
  std::lock_guard<std::mutex> lock(g_cores_mu);
  g_cores->push_back(core);
}

void UnregisterCore(ServerCore* core) {
  std::lock_guard<std::mutex> lock(g_cores_mu);
  auto& v = *g_cores;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [core](const std::weak_ptr<ServerCore>& w) {
                           auto p = w.lock();
                           return !p || p.get() == core;
                         }),
          v.end());
}

bool TeardownAllCoresAtExit() {
  std::vector<std::shared_ptr<ServerCore>> cores;
  {
    std::lock_guard<std::mutex> lock(g_cores_mu);
    for (auto& w : *g_cores) {
      if (auto p = w.lock()) cores.push_back(p);
    }
  }
  for (auto& core : cores) core->Teardown(false);
  // Keep the cores alive: static destruction must not run their
  // destructors (they would touch N-API).
  bool triton_running = false;
  for (auto& core : cores) {
    new std::shared_ptr<ServerCore>(core);
    if (!core->ServerDeleted()) triton_running = true;
  }
  return triton_running;
}

// ---- ServerCore ------------------------------------------------------------

ServerCore::ServerCore(Napi::Env env, Napi::Function on_events) : env_(env) {
  on_events_ = Napi::Persistent(on_events);
  queue_.SetWake(&ServerCore::Wake, this);
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
  // References in contexts belong to the environment; when it is gone they
  // are gone with it, so they are not deleted here.
  for (RequestContext* ctx : contexts_) {
    for (TRITONSERVER_BufferAttributes* attrs :
         {ctx->attributes, ctx->ipc_attributes}) {
      if (attrs == nullptr || LoadedApi() == nullptr) continue;
      TRITONSERVER_Error* err =
          Api().TRITONSERVER_BufferAttributesDelete(attrs);
      DropError(err);
    }
    // A context Triton may still call back for belongs to Triton: leak it.
    // (While one exists, keepalive_ holds the core; only the process-exit
    // path gets here with one.)
    bool settled = !ctx->submitted ||
                   (ctx->released && ctx->final_seen && !ctx->trace_pending);
    if (settled) delete ctx;
  }
  on_events_.SuppressDestruct();
  bool deleted;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    deleted = server_deleted_;
  }
  int64_t inflight;
  {
    std::lock_guard<std::mutex> lock(ctx_mu_);
    inflight = inflight_;
  }
  // The allocator may still be used by Triton while a request is out; else
  // every response is deleted (the queue was closed, or drained) and the
  // member's destructor deletes it.
  if (!deleted || inflight != 0) allocator_.Leak();
}

void ServerCore::InitTsfn(Napi::Env env) {
  auto* holder = new std::shared_ptr<ServerCore>(shared_from_this());
  napi_value name;
  napi_create_string_utf8(env, "triton-node server", NAPI_AUTO_LENGTH, &name);
  napi_status status = napi_create_threadsafe_function(
      env, nullptr, nullptr, name, 0, 1, holder,
      [](napi_env, void* data, void*) {
        delete static_cast<std::shared_ptr<ServerCore>*>(data);
      },
      this,
      [](napi_env env, napi_value, void* context, void*) {
        // Null while the function is finalized: the queued calls carry no
        // data; the queue's items are the cleanup hook's (Teardown).
        if (env == nullptr) return;
        auto* core = static_cast<ServerCore*>(context);
        // No C++ exception may leave this callback (std::terminate). OnWake
        // frees every drained item's native resources before it throws; the
        // JS error becomes an uncaught exception where JS can still run, and
        // is dropped while the environment terminates (napi_throw fails).
        napi_value error = nullptr;
        try {
          core->OnWake(Napi::Env(env));
        } catch (const Napi::Error& e) {
          try {
            error = e.Value();
          } catch (...) {
          }
        } catch (...) {
        }
        if (error != nullptr) napi_throw(env, error);
      },
      &tsfn_);
  if (status != napi_ok) {
    delete holder;
    throw MakeError(env, "INTERNAL", "cannot create a thread-safe function");
  }
  napi_unref_threadsafe_function(env, tsfn_);
  js_cache_.Init(env);
}

void ServerCore::Wake(void* arg) {
  auto* core = static_cast<ServerCore*>(arg);
  napi_call_threadsafe_function(core->tsfn_, nullptr, napi_tsfn_nonblocking);
}

void ServerCore::UpdateKeepAlive(napi_env env) {
  if (tsfn_released_) return;
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    stopping =
        state_ == kStopping || (state_ == kStopped && !stop_finished_js_);
  }
  // Keep the event loop alive only while something will still settle.
  bool want = active_contexts_ > 0 || pending_ops_ > 0 || stopping;
  if (want && !tsfn_refed_) {
    napi_ref_threadsafe_function(env, tsfn_);
    tsfn_refed_ = true;
  } else if (!want && tsfn_refed_) {
    napi_unref_threadsafe_function(env, tsfn_);
    tsfn_refed_ = false;
  }
}

bool ServerCore::IsStopped() {
  std::lock_guard<std::mutex> lock(state_mu_);
  return state_ == kStopping || state_ == kStopped;
}

void ServerCore::ThrowStopped(Napi::Env env) {
  throw MakeError(env, "UNAVAILABLE", kStoppedMessage);
}

void ServerCore::MarkCreated(TRITONSERVER_Server* server, bool ok) {
  std::lock_guard<std::mutex> lock(state_mu_);
  server_ = server;
  if (ok) {
    if (state_ == kCreating) state_ = kRunning;
  } else {
    state_ = kStopped;
    delete_state_ = 2;
    server_deleted_ = true;
    stop_result_.ok = true;
    allocator_.Delete();  // no server ever used it
  }
  state_cv_.notify_all();
}

Napi::Promise ServerCore::RunOp(
    Napi::Env env, std::function<OpResult()> work,
    std::function<Napi::Value(Napi::Env, OpResult&)> resolve,
    bool allow_when_creating) {
  auto* op = new PendingOp(env);
  Napi::Promise promise = op->deferred.Promise();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    bool allowed =
        state_ == kRunning || (state_ == kCreating && allow_when_creating);
    if (!allowed || tsfn_released_) {
      op->deferred.Reject(
          MakeError(env, "UNAVAILABLE", kStoppedMessage).Value());
      delete op;
      return promise;
    }
    ++active_threads_;
  }
  op->work = std::move(work);
  op->resolve = std::move(resolve);
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    live_ops_.push_back(op);
  }
  ++pending_ops_;
  UpdateKeepAlive(env);
  std::shared_ptr<ServerCore> self = shared_from_this();
  try {
    std::thread([self, op] {
      try {
        op->result = op->work();
      } catch (const std::exception& e) {
        op->result.ok = false;
        op->result.error.code = TRITONSERVER_ERROR_INTERNAL;
        op->result.error.message = e.what();
      }
      // Queue the op before leaving the count of active threads: the stop
      // thread waits for that count to reach zero before it deletes the
      // server and lets the JS thread close the queue, so every op is queued
      // (and settled) before the server counts as stopped.
      self->FinishOp(op);
      {
        std::lock_guard<std::mutex> lock(self->state_mu_);
        --self->active_threads_;
        self->state_cv_.notify_all();
      }
    }).detach();
  } catch (const std::system_error& e) {
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
  return promise;
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
      if (op->result.ok) {
        try {
          op->deferred.Resolve(op->resolve(env, op->result));
        } catch (const Napi::Error& e) {
          op->deferred.Reject(e.Value());
        }
      } else {
        op->deferred.Reject(MakeError(env, op->result.error).Value());
      }
    } catch (...) {
    }
    delete op;
  }
  ops->clear();
}

void ServerCore::OnWake(Napi::Env env) {
  Napi::HandleScope scope(env);
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
    DrainCompletions(env, this);
  } catch (const JsUnavailable&) {
    js_usable = false;
  } catch (...) {
    pending = std::current_exception();
  }
  bool finish;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    finish = state_ == kStopped && !stop_finished_js_;
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

bool ServerCore::DeleteServerOnce() {
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    if (delete_state_ == 2) return false;
    if (delete_state_ == 1) {
      state_cv_.wait(lock, [this] { return delete_state_ == 2; });
      return false;
    }
    delete_state_ = 1;
  }
  OpResult result;
  bool deferred = false;
  if (server_ != nullptr) {
    TRITONSERVER_Error* err = Api().TRITONSERVER_ServerStop(server_);
    if (err != nullptr) result = FromError(err);
    {
      std::lock_guard<std::mutex> lock(ctx_mu_);
      deferred = inflight_ > 0;
    }
    // The exit timeout passed with requests still in flight: cancel them, so
    // that backends which honour cancellation end them now rather than run
    // the queue out after stop() has returned.
    if (deferred) CancelInflight();
    // A stop that timed out leaves the models of the requests still in
    // flight alive, and a model destroyed after ServerDelete crashes Triton
    // (its backend thread uses the deleted server): delete later, once they
    // have all settled (DeleteServerWhenSettled).
    if (!deferred) {
      err = Api().TRITONSERVER_ServerDelete(server_);
      if (err != nullptr) {
        OpResult del = FromError(err);
        if (result.ok) result = del;
      }
    }
  }
  // The allocator is not deleted here: a decoupled backend's thread may
  // still allocate for a request after ServerDelete returned, and responses
  // not yet deleted call its release function. The core's destructor
  // deletes it (keepalive_ holds the core until the last request settles).
  std::lock_guard<std::mutex> lock(state_mu_);
  stop_result_ = result;
  delete_state_ = 2;
  delete_deferred_ = deferred;
  server_deleted_ = !deferred;
  state_cv_.notify_all();
  return deferred;
}

void ServerCore::DeleteServerWhenSettled() {
  {
    std::unique_lock<std::mutex> lock(ctx_mu_);
    settled_cv_.wait(lock, [this] { return inflight_ == 0; });
  }
  // The last request or response of a model lets Triton destroy it on a
  // thread of its own, and a stopped server no longer reports model states:
  // give that Triton's own stop polling period.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (!delete_deferred_) return;  // abandoned: the process is exiting
    delete_deferred_ = false;
    deferred_deleting_ = true;
  }
  TRITONSERVER_Error* err = Api().TRITONSERVER_ServerDelete(server_);
  DropError(err);
  std::lock_guard<std::mutex> lock(state_mu_);
  deferred_deleting_ = false;
  server_deleted_ = true;
  state_cv_.notify_all();
}

void ServerCore::Stop(Napi::Env env, Napi::Promise::Deferred* deferred) {
  if (deferred != nullptr) stop_waiters_.push_back(*deferred);
  State state;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    state = state_;
    if (state == kCreating || state == kRunning) state_ = kStopping;
  }
  if (state == kStopped) {
    if (stop_finished_js_) FinishStopOnJsThread(env);  // settles waiters
    return;
  }
  if (state == kStopping) return;
  UpdateKeepAlive(env);
  std::shared_ptr<ServerCore> self = shared_from_this();
  std::thread([self] {
    {
      std::unique_lock<std::mutex> lock(self->state_mu_);
      self->state_cv_.wait(lock, [&] { return self->active_threads_ == 0; });
    }
    bool deferred = self->DeleteServerOnce();
    {
      std::lock_guard<std::mutex> lock(self->state_mu_);
      self->state_ = kStopped;
    }
    self->queue_.Poke();  // stop() settles now; the delete may come later
    if (deferred) self->DeleteServerWhenSettled();
  }).detach();
}

void ServerCore::FinishStopOnJsThread(Napi::Env env) {
  // JS failures (the environment terminating) must not skip the native
  // cleanup below: the first one is rethrown at the end.
  std::exception_ptr pending;
  if (!stop_finished_js_) {
    stop_finished_js_ = true;
    try {
      DrainCompletions(env, this);
    } catch (...) {
      pending = std::current_exception();
    }
    try {
      // Requests Triton never finished before it was deleted still settle.
      Napi::Array events = Napi::Array::New(env);
      uint32_t n = 0;
      for (RequestContext* ctx : contexts_) {
        if (!ctx->active) continue;
        if (ctx->held_final_event != nullptr) {
          napi_value held;
          napi_get_reference_value(env, ctx->held_final_event, &held);
          napi_delete_reference(env, ctx->held_final_event);
          ctx->held_final_event = nullptr;
          events.Set(n++, Napi::Value(env, held));
          continue;
        }
        if (ctx->js_final) continue;
        ctx->js_final = true;
        Napi::Object ev = Napi::Object::New(env);
        ev.Set("token",
               Napi::Number::New(env, static_cast<double>(ctx->token)));
        ev.Set("final", Napi::Boolean::New(env, true));
        ErrorInfo info{TRITONSERVER_ERROR_UNAVAILABLE,
                       "server stopped before the request completed"};
        ev.Set("error", MakeErrorInfoObject(env, info));
        events.Set(n++, ev);
      }
      if (n > 0 && !on_events_.IsEmpty()) {
        napi_value argv[1] = {events};
        CallJs(env, on_events_.Value(), 1, argv);
      }
    } catch (...) {
      if (!pending) pending = std::current_exception();
    }
    // From here on a late callback disposes of its item itself (Push).
    std::vector<Completion*> leftover;
    queue_.Close(&leftover);
    for (Completion* c : leftover) DisposeCompletion(c);
    queue_.Recycle(&leftover);
    SettleOpsAtStop(env);
    if (!tsfn_released_) {
      if (tsfn_refed_) napi_unref_threadsafe_function(env, tsfn_);
      tsfn_refed_ = false;
      tsfn_released_ = true;
      napi_release_threadsafe_function(tsfn_, napi_tsfn_release);
    }
    on_events_.Reset();  // nothing will be delivered any more
    js_cache_.Release(env);
    EnvData* data = GetEnvData(env);
    auto& servers = data->servers;
    servers.erase(std::remove_if(servers.begin(), servers.end(),
                                 [this](const std::shared_ptr<ServerCore>& p) {
                                   return p.get() == this;
                                 }),
                  servers.end());
  }
  std::vector<Napi::Promise::Deferred> waiters;
  waiters.swap(stop_waiters_);
  OpResult result;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    result = stop_result_;
  }
  for (auto& d : waiters) {
    try {
      if (result.ok) {
        d.Resolve(env.Undefined());
      } else {
        d.Reject(MakeError(env, result.error).Value());
      }
    } catch (...) {
      if (!pending) pending = std::current_exception();
    }
  }
  if (pending) std::rethrow_exception(pending);
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
          MakeError(env, "UNAVAILABLE", kStoppedMessage).Value());
    } catch (...) {  // JS cannot run: nothing to settle
    }
  }
}

void ServerCore::Teardown(bool env_alive) {
  // Responses not yet handed to JS hold their model: delete them BEFORE the
  // server stops (else ServerStop waits the whole exit timeout and they
  // would be deleted after ServerDelete, under Triton's backend threads).
  // Once closed, the queue makes each late callback dispose of its own item.
  std::vector<Completion*> leftover;
  queue_.Close(&leftover);
  for (Completion* c : leftover) DisposeCompletion(c);
  queue_.Recycle(&leftover);
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    if (state_ == kCreating || state_ == kRunning) state_ = kStopping;
    state_cv_.wait(lock, [this] { return active_threads_ == 0; });
  }
  // Nobody can receive these results any more (the environment or the
  // process is ending): cancel them so the stop need not wait them out.
  CancelInflight();
  bool deferred = DeleteServerOnce();
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    state_ = kStopped;
    if (!env_alive) {
      // Process exit: a server whose requests are still in flight is left
      // undeleted (deleting it would crash Triton once they end), and a
      // deferred delete must not start or run during exit.
      delete_deferred_ = false;
      state_cv_.wait(lock, [this] { return !deferred_deleting_; });
    }
  }
  if (deferred && env_alive) {
    // The environment goes, the process may not: delete it once settled.
    std::shared_ptr<ServerCore> self = shared_from_this();
    try {
      std::thread([self] { self->DeleteServerWhenSettled(); }).detach();
    } catch (const std::system_error&) {  // left undeleted
    }
  }
  if (env_alive && !tsfn_released_) {
    tsfn_released_ = true;
    stop_finished_js_ = true;
    napi_release_threadsafe_function(tsfn_, napi_tsfn_abort);
  }
}

// ---- requests --------------------------------------------------------------

uint64_t ServerCore::Submit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (state_ != kRunning) ThrowStopped(env);
  }
  RequestContext* ctx;
  if (!free_contexts_.empty()) {
    ctx = free_contexts_.back();
    free_contexts_.pop_back();
  } else {
    if (contexts_.size() > kTokenIndexMask) {
      throw MakeError(env, "UNAVAILABLE",
                      "too many requests in flight (" +
                          std::to_string(contexts_.size()) + ")");
    }
    ctx = new RequestContext();
    ctx->core = this;
    ctx->index = static_cast<uint32_t>(contexts_.size());
    contexts_.push_back(ctx);
  }
  ++ctx->generation;
  ctx->token = (ctx->generation << kTokenIndexBits) | ctx->index;
  try {
    BuildRequest(info, server_, allocator_.handle(), ctx);
  } catch (...) {
    ResetContext(env, ctx);
    free_contexts_.push_back(ctx);
    throw;
  }
  ctx->active = true;
  ctx->js_final = false;
  ctx->js_released = false;
  ctx->js_trace_done = false;
  {
    std::lock_guard<std::mutex> lock(ctx_mu_);
    ctx->submitted = true;
    ctx->released = false;
    ctx->final_seen = false;
    ctx->trace_pending = ctx->trace != nullptr;
    ctx->cancel_inflight = 0;
    ctx->delete_deferred = false;
    // Callbacks for this request may outlive stop() and ServerDelete: the
    // core (its queue, contexts and allocator) stays until they are done.
    if (inflight_++ == 0) keepalive_ = shared_from_this();
  }
  ++active_contexts_;
  g_pending_requests.fetch_add(1, std::memory_order_relaxed);
  // Callbacks may run (even all of them) before this returns.
  TRITONSERVER_Error* err =
      Api().TRITONSERVER_ServerInferAsync(server_, ctx->request, ctx->trace);
  if (err != nullptr) {
    // No callback will come: the request (and trace) are still ours.
    std::shared_ptr<ServerCore> drop;  // the JS wrapper holds the core too
    {
      std::lock_guard<std::mutex> lock(ctx_mu_);
      ctx->submitted = false;
      ctx->trace_pending = false;
      if (--inflight_ == 0) drop = std::move(keepalive_);
    }
    --active_contexts_;
    g_pending_requests.fetch_sub(1, std::memory_order_relaxed);
    ctx->active = false;
    ResetContext(env, ctx);
    free_contexts_.push_back(ctx);
    ErrorInfo info = TakeError(err);
    throw MakeError(env, info);
  }
  UpdateKeepAlive(env);
  return ctx->token;
}

void ServerCore::Cancel(uint64_t token) {
  uint64_t index = token & kTokenIndexMask;
  if (index >= contexts_.size()) return;
  CancelContext(contexts_[index], &token);
}

void ServerCore::CancelInflight() {
  // contexts_ grows only in Submit, which is refused once stopping began.
  for (RequestContext* ctx : contexts_) CancelContext(ctx, nullptr);
}

void ServerCore::CancelContext(RequestContext* ctx, const uint64_t* token) {
  TRITONSERVER_InferenceRequest* request;
  {
    std::lock_guard<std::mutex> lock(ctx_mu_);
    // Once released and final, the request is deleted (or about to be).
    if ((token != nullptr && ctx->token != *token) || !ctx->submitted ||
        (ctx->released && ctx->final_seen)) {
      return;
    }
    ++ctx->cancel_inflight;
    request = ctx->request;
  }
  // No lock across the Triton call: the release callback defers the delete
  // to us while a cancel is in flight.
  TRITONSERVER_Error* err = Api().TRITONSERVER_InferenceRequestCancel(request);
  DropError(err);
  bool delete_now = false;
  {
    std::lock_guard<std::mutex> lock(ctx_mu_);
    --ctx->cancel_inflight;
    if (ctx->cancel_inflight == 0 && ctx->delete_deferred) {
      ctx->delete_deferred = false;
      delete_now = true;
    }
  }
  if (delete_now) {
    err = Api().TRITONSERVER_InferenceRequestDelete(request);
    DropError(err);
  }
}

bool ServerCore::ServerDeleted() {
  std::lock_guard<std::mutex> lock(state_mu_);
  return server_deleted_;
}

int64_t ServerCore::Inflight() {
  std::lock_guard<std::mutex> lock(ctx_mu_);
  return inflight_;
}

void ServerCore::RecycleContext(napi_env env, RequestContext* ctx) {
  ReleaseBufferUses(&ctx->buffer_uses);  // may free a disposed buffer
  for (napi_ref ref : ctx->refs) napi_delete_reference(env, ref);
  ctx->refs.clear();
  ctx->holds.clear();  // may free memory the caller detached meanwhile
  if (ctx->held_final_event != nullptr) {
    napi_delete_reference(env, ctx->held_final_event);
    ctx->held_final_event = nullptr;
  }
  for (size_t i = 0; i < ctx->placement_count; ++i) {
    ctx->placements[i].into_ref = nullptr;
    ctx->placements[i].has_into = false;
  }
  ctx->request = nullptr;
  ctx->trace = nullptr;
  ctx->active = false;
  --active_contexts_;
  free_contexts_.push_back(ctx);
}

// ---- ServerWrap ------------------------------------------------------------

Napi::Function ServerWrap::Init(Napi::Env env) {
  return DefineClass(
      env, "NativeServer",
      {InstanceMethod<&ServerWrap::IsLive>("isLive"),
       InstanceMethod<&ServerWrap::IsReady>("isReady"),
       InstanceMethod<&ServerWrap::Metadata>("metadata"),
       InstanceMethod<&ServerWrap::LoadModel>("loadModel"),
       InstanceMethod<&ServerWrap::UnloadModel>("unloadModel"),
       InstanceMethod<&ServerWrap::ModelIndex>("modelIndex"),
       InstanceMethod<&ServerWrap::ModelIsReady>("modelIsReady"),
       InstanceMethod<&ServerWrap::ModelProperties>("modelProperties"),
       InstanceMethod<&ServerWrap::ModelMetadata>("modelMetadata"),
       InstanceMethod<&ServerWrap::ModelConfig>("modelConfig"),
       InstanceMethod<&ServerWrap::ModelStatistics>("modelStatistics"),
       InstanceMethod<&ServerWrap::Metrics>("metrics"),
       InstanceMethod<&ServerWrap::Submit>("submit"),
       InstanceMethod<&ServerWrap::Cancel>("cancel"),
       InstanceMethod<&ServerWrap::Inflight>("inflight"),
       InstanceMethod<&ServerWrap::Stop>("stop"),
       InstanceMethod<&ServerWrap::CreateMetricFamily>("createMetricFamily")});
}

ServerWrap::ServerWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<ServerWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(),
                   "NativeServer cannot be constructed directly; use "
                   "createServer()");
  }
  core_ = *info[0].As<Napi::External<std::shared_ptr<ServerCore>>>().Data();
}

ServerWrap::~ServerWrap() {
  // Collected without stop(): stop in the background (no promise).
  if (core_ && !core_->IsStopped()) {
    try {
      core_->Stop(Env(), nullptr);
    } catch (...) {
    }
  }
}

Napi::Value ServerWrap::CreateServer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (LoadedApi() == nullptr) {
    throw MakeError(env, "UNAVAILABLE",
                    "the Triton library is not loaded; call loadLibrary() "
                    "first");
  }
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    ThrowTypeError(env,
                   "createServer(options, onEvents) expects an options "
                   "object and a function");
  }
  ServerOptionsData options = ParseOptions(env, info[0].As<Napi::Object>());
  auto core = std::make_shared<ServerCore>(env, info[1].As<Napi::Function>());
  TRITONSERVER_Error* err = core->allocator().Create();
  ThrowIfError(env, err, "response allocator");
  core->InitTsfn(env);
  GetEnvData(env)->servers.push_back(core);
  RegisterCore(core);
  ServerCore* raw = core.get();
  return raw->RunOp(
      env,
      [raw, options]() {
        TRITONSERVER_Server* server = nullptr;
        OpResult r = CreateTritonServer(options, &server);
        raw->MarkCreated(server, r.ok);
        return r;
      },
      [core](Napi::Env env, OpResult&) -> Napi::Value {
        auto holder = std::make_unique<std::shared_ptr<ServerCore>>(core);
        Napi::Object wrap = GetEnvData(env)->server_ctor.New(
            {Napi::External<std::shared_ptr<ServerCore>>::New(env,
                                                              holder.get())});
        return wrap;
      },
      true);
}

Napi::Value ServerWrap::IsLive(const Napi::CallbackInfo& info) {
  ServerCore* core = core_.get();
  return core->RunOp(
      info.Env(),
      [core] {
        bool live = false;
        OpResult r =
            FromError(Api().TRITONSERVER_ServerIsLive(core->server(), &live));
        r.flag_a = live;
        return r;
      },
      [](Napi::Env env, OpResult& r) -> Napi::Value {
        return Napi::Boolean::New(env, r.flag_a);
      });
}

Napi::Value ServerWrap::IsReady(const Napi::CallbackInfo& info) {
  ServerCore* core = core_.get();
  return core->RunOp(
      info.Env(),
      [core] {
        bool ready = false;
        OpResult r =
            FromError(Api().TRITONSERVER_ServerIsReady(core->server(), &ready));
        r.flag_a = ready;
        return r;
      },
      [](Napi::Env env, OpResult& r) -> Napi::Value {
        return Napi::Boolean::New(env, r.flag_a);
      });
}

namespace {
Napi::Value TextResult(Napi::Env env, OpResult& r) {
  return Napi::String::New(env, r.text);
}
}  // namespace

Napi::Value ServerWrap::Metadata(const Napi::CallbackInfo& info) {
  ServerCore* core = core_.get();
  return core->RunOp(
      info.Env(),
      [core] {
        TRITONSERVER_Message* msg = nullptr;
        TRITONSERVER_Error* err =
            Api().TRITONSERVER_ServerMetadata(core->server(), &msg);
        return MessageText(err, msg);
      },
      TextResult);
}

Napi::Value ServerWrap::LoadModel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = GetString(env, info[0], "model name");
  bool has_config =
      info.Length() > 1 && !info[1].IsUndefined() && !info[1].IsNull();
  std::string config = has_config ? GetString(env, info[1], "config") : "";
  // Copied: the load runs later on another thread.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    if (!info[2].IsArray()) {
      ThrowTypeError(env, "files must be an array of [path, Uint8Array]");
    }
    Napi::Array arr = info[2].As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value entry = arr.Get(i);
      if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 2) {
        ThrowTypeError(
            env, "files[" + std::to_string(i) + "] must be [path, Uint8Array]");
      }
      Napi::Array pair = entry.As<Napi::Array>();
      std::string path = GetString(env, pair.Get(0u), "file path");
      MemView view;
      if (!ResolveMemView(env, GetEnvData(env), pair.Get(1u),
                          "file '" + path + "'", &view) ||
          view.kind != kMemCpu) {
        ThrowTypeError(env, "file '" + path + "' must be a Uint8Array");
      }
      files.emplace_back(path,
                         std::vector<uint8_t>(view.ptr, view.ptr + view.size));
    }
  }
  ServerCore* core = core_.get();
  return core->RunOp(
      env,
      [core, name, has_config, config, files] {
        const TritonApi& api = Api();
        if (!has_config && files.empty()) {
          return FromError(
              api.TRITONSERVER_ServerLoadModel(core->server(), name.c_str()));
        }
        std::vector<TRITONSERVER_Parameter*> params;
        if (has_config) {
          params.push_back(api.TRITONSERVER_ParameterNew(
              "config", TRITONSERVER_PARAMETER_STRING, config.c_str()));
        }
        for (const auto& f : files) {
          std::string key = "file:" + f.first;
          params.push_back(api.TRITONSERVER_ParameterBytesNew(
              key.c_str(), f.second.data(), f.second.size()));
        }
        OpResult r = FromError(api.TRITONSERVER_ServerLoadModelWithParameters(
            core->server(), name.c_str(),
            const_cast<const TRITONSERVER_Parameter**>(params.data()),
            params.size()));
        for (TRITONSERVER_Parameter* p : params) {
          if (p != nullptr) api.TRITONSERVER_ParameterDelete(p);
        }
        return r;
      },
      [](Napi::Env env, OpResult&) -> Napi::Value { return env.Undefined(); });
}

Napi::Value ServerWrap::UnloadModel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = GetString(env, info[0], "model name");
  bool dependents =
      info.Length() > 1 && info[1].IsBoolean() && info[1].As<Napi::Boolean>();
  ServerCore* core = core_.get();
  return core->RunOp(
      env,
      [core, name, dependents] {
        return FromError(
            dependents ? Api().TRITONSERVER_ServerUnloadModelAndDependents(
                             core->server(), name.c_str())
                       : Api().TRITONSERVER_ServerUnloadModel(core->server(),
                                                              name.c_str()));
      },
      [](Napi::Env env, OpResult&) -> Napi::Value { return env.Undefined(); });
}

Napi::Value ServerWrap::ModelIndex(const Napi::CallbackInfo& info) {
  bool ready_only =
      info.Length() > 0 && info[0].IsBoolean() && info[0].As<Napi::Boolean>();
  ServerCore* core = core_.get();
  return core->RunOp(
      info.Env(),
      [core, ready_only] {
        TRITONSERVER_Message* msg = nullptr;
        TRITONSERVER_Error* err = Api().TRITONSERVER_ServerModelIndex(
            core->server(), ready_only ? TRITONSERVER_INDEX_FLAG_READY : 0,
            &msg);
        return MessageText(err, msg);
      },
      TextResult);
}

// which: 0 ready, 1 properties, 2 metadata, 3 config, 4 statistics
Napi::Value ServerWrap::ModelQuery(const Napi::CallbackInfo& info, int which) {
  Napi::Env env = info.Env();
  std::string name = GetString(env, info[0], "model name");
  int64_t version = info.Length() > 1 ? GetVersion(env, info[1]) : -1;
  ServerCore* core = core_.get();
  auto work = [core, name, version, which] {
    const TritonApi& api = Api();
    TRITONSERVER_Server* s = core->server();
    TRITONSERVER_Message* msg = nullptr;
    switch (which) {
      case 0: {
        bool ready = false;
        OpResult r = FromError(api.TRITONSERVER_ServerModelIsReady(
            s, name.c_str(), version, &ready));
        r.flag_a = ready;
        return r;
      }
      case 1: {
        uint32_t batch = 0, txn = 0;
        OpResult r = FromError(api.TRITONSERVER_ServerModelBatchProperties(
            s, name.c_str(), version, &batch, nullptr));
        if (!r.ok) return r;
        r = FromError(api.TRITONSERVER_ServerModelTransactionProperties(
            s, name.c_str(), version, &txn, nullptr));
        r.flag_a = (txn & TRITONSERVER_TXN_DECOUPLED) != 0;
        r.flag_b = (batch & TRITONSERVER_BATCH_FIRST_DIM) != 0;
        return r;
      }
      case 2: {
        // Call first: argument evaluation order is unspecified.
        TRITONSERVER_Error* err = api.TRITONSERVER_ServerModelMetadata(
            s, name.c_str(), version, &msg);
        return MessageText(err, msg);
      }
      case 3: {
        TRITONSERVER_Error* err = api.TRITONSERVER_ServerModelConfig(
            s, name.c_str(), version, 1, &msg);
        return MessageText(err, msg);
      }
      default: {
        TRITONSERVER_Error* err = api.TRITONSERVER_ServerModelStatistics(
            s, name.c_str(), version, &msg);
        return MessageText(err, msg);
      }
    }
  };
  std::function<Napi::Value(Napi::Env, OpResult&)> resolve;
  if (which == 0) {
    resolve = [](Napi::Env env, OpResult& r) -> Napi::Value {
      return Napi::Boolean::New(env, r.flag_a);
    };
  } else if (which == 1) {
    resolve = [](Napi::Env env, OpResult& r) -> Napi::Value {
      Napi::Object o = Napi::Object::New(env);
      o.Set("decoupled", Napi::Boolean::New(env, r.flag_a));
      o.Set("batchFirstDim", Napi::Boolean::New(env, r.flag_b));
      return o;
    };
  } else {
    resolve = TextResult;
  }
  return core->RunOp(env, work, resolve);
}

Napi::Value ServerWrap::ModelIsReady(const Napi::CallbackInfo& info) {
  return ModelQuery(info, 0);
}
Napi::Value ServerWrap::ModelProperties(const Napi::CallbackInfo& info) {
  return ModelQuery(info, 1);
}
Napi::Value ServerWrap::ModelMetadata(const Napi::CallbackInfo& info) {
  return ModelQuery(info, 2);
}
Napi::Value ServerWrap::ModelConfig(const Napi::CallbackInfo& info) {
  return ModelQuery(info, 3);
}
Napi::Value ServerWrap::ModelStatistics(const Napi::CallbackInfo& info) {
  return ModelQuery(info, 4);
}

Napi::Value ServerWrap::Metrics(const Napi::CallbackInfo& info) {
  ServerCore* core = core_.get();
  return core->RunOp(
      info.Env(),
      [core] {
        const TritonApi& api = Api();
        TRITONSERVER_Metrics* metrics = nullptr;
        TRITONSERVER_Error* err =
            api.TRITONSERVER_ServerMetrics(core->server(), &metrics);
        if (err != nullptr) return FromError(err);
        const char* base = nullptr;
        size_t size = 0;
        OpResult r = FromError(api.TRITONSERVER_MetricsFormatted(
            metrics, TRITONSERVER_METRIC_PROMETHEUS, &base, &size));
        if (r.ok) r.text.assign(base, size);
        TRITONSERVER_Error* del = api.TRITONSERVER_MetricsDelete(metrics);
        DropError(del);
        return r;
      },
      TextResult);
}

Napi::Value ServerWrap::Submit(const Napi::CallbackInfo& info) {
  // The arguments are read in BuildRequest (positional layout: request.h).
  uint64_t token = core_->Submit(info);
  return Napi::Number::New(info.Env(), static_cast<double>(token));
}

void ServerWrap::Cancel(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) {
    ThrowTypeError(info.Env(), "cancel(token) expects a number");
  }
  double d = info[0].As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > 9007199254740991.0) return;
  core_->Cancel(static_cast<uint64_t>(d));
}

Napi::Value ServerWrap::Inflight(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(core_->Inflight()));
}

Napi::Value ServerWrap::Stop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  core_->Stop(env, &deferred);
  return deferred.Promise();
}

Napi::Value ServerWrap::CreateMetricFamily(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (core_->IsStopped()) core_->ThrowStopped(env);
  return CreateMetricFamilyObject(info);
}

}  // namespace triton_node
