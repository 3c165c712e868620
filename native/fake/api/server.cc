// Server options and the server's lifecycle: new (scan + startup loads),
// live/ready, metadata, stop (drain up to the exit timeout) and delete.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "../internal.h"

namespace fake {

std::atomic<bool> g_sync_callbacks{false};

namespace {
// Triton's pinned memory manager: a process-wide singleton that the
// initialisation of a server creates when there is none, and that the
// destruction of any server (a deleted one, or one that failed to start)
// destroys, whatever other servers still use it (r25.07, server.cc).
std::atomic<bool> g_host_memory_manager{false};
}  // namespace

bool HostMemoryManagerExists() { return g_host_memory_manager.load(); }

// ---- exit order: the singletons of a started server and of a backend ------
// Triton makes process-wide singletons when a server starts, and a backend
// library registers its static objects' destructors when it is first loaded
// (the Python backend: at its first model); libc destroys them at exit()
// latest first, so before any exit handler registered earlier (the addon's,
// registered when the library was loaded). A stop or delete called after
// them runs on a half-destroyed Triton (issue 29: SIGSEGV or SIGABRT
// "malloc_consolidate(): unaligned fastbin chunk"). The fake registers a
// handler at the same points that marks them destroyed, and such a stop
// aborts with a clear message.
namespace {
std::atomic<bool> g_exit_singletons_destroyed{false};
std::mutex g_exit_singletons_mu;
std::set<std::string>* g_exit_singletons =
    new std::set<std::string>();  // never freed (exit path)
void DestroyExitSingletons() { g_exit_singletons_destroyed.store(true); }
}  // namespace

void RegisterExitSingletons(const std::string& owner) {
  std::lock_guard<std::mutex> lock(g_exit_singletons_mu);
  if (!g_exit_singletons->insert(owner).second) return;
  std::atexit(DestroyExitSingletons);
}

void CheckExitSingletons(const char* call) {
  if (!g_exit_singletons_destroyed.load()) return;
  std::fprintf(stderr,
               "triton-node-fake-engine: %s was called during exit() after "
               "the exit handlers of Triton's singletons and backends ran "
               "(they were registered when the server started or a model "
               "loaded, after the caller's exit handler, and libc runs the "
               "latest first); the real library crashes here (SIGSEGV or "
               "SIGABRT, issue 29)\n",
               call);
  std::fflush(stderr);
  std::abort();
}

// ---- the reaper: joins the threads of models that finished unloading ------
// One process-wide thread, never joined: a model's last request may be
// deleted on that model's own thread (inside a callback), which cannot join
// itself. Its state is heap-allocated and never freed so process exit does
// not destroy a mutex it may be waiting on.
namespace {
struct Reaper {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Model>> queue;
};
Reaper* GetReaper() {
  static Reaper* reaper = [] {
    auto* r = new Reaper();
    std::thread([r] {
      std::unique_lock<std::mutex> lock(r->mu);
      while (true) {
        r->cv.wait(lock, [r] { return !r->queue.empty(); });
        std::shared_ptr<Model> m = std::move(r->queue.front());
        r->queue.pop_front();
        lock.unlock();
        m->JoinThreads();
        std::shared_ptr<ServerCore> core = m->core;
        core->Finalized(m.get());
        m.reset();
        lock.lock();
      }
    }).detach();
    return r;
  }();
  return reaper;
}
}  // namespace

// Triton destroys a model on a thread of its own as soon as its last
// reference goes, and r25.07's instance thread may then still be returning
// from the payload that finished the load (its warm-up: the load returns as
// soon as that payload's result is set). The destruction reads the
// thread's list of instances without a lock while the thread has that
// instance taken out (TritonBackendThread::StopBackendThread against
// BackendThread and RateLimiter::DequeuePayload): SIGSEGV in
// InstanceQueue::DecrementConsumerCount or StopBackendThread. The window
// is short but real on a busy machine; the fake makes it kLoadTailNs long.
void QueueFinalize(std::shared_ptr<Model> m) {
  const uint64_t tail = m->load_tail_until_ns.load();
  const uint64_t now = SteadyNs();
  if (tail != 0 && now < tail) {
    Violation("model unload",
              "'" + m->name + "' version " + std::to_string(m->version) +
                  " is destroyed " +
                  std::to_string((now + kLoadTailNs - tail) / 1000000) +
                  " ms after its load returned; the real library's model "
                  "deleter then races the instance thread still returning "
                  "from the load's warm-up (crash)");
  }
  if (m->finalize_queued.exchange(true)) return;
  Reaper* r = GetReaper();
  {
    std::lock_guard<std::mutex> lock(r->mu);
    r->queue.push_back(std::move(m));
  }
  r->cv.notify_one();
}

void ServerCore::Finalized(Model* m) {
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = models.find(m->name);
    if (it != models.end()) {
      auto vit = it->second.versions.find(m->version);
      if (vit != it->second.versions.end() && vit->second.model.get() == m) {
        vit->second.state = VersionState::kUnavailable;
        vit->second.reason = "unloaded";
        vit->second.model.reset();
      }
    }
  }
  cv.notify_all();
}

void ForgetLoadTails(ModelEntry* entry) {
  for (auto& kv : entry->versions) {
    if (kv.second.model != nullptr) kv.second.model->load_tail_until_ns = 0;
  }
}

bool ServerCore::AllIdle() {
  for (auto& kv : models) {
    for (auto& v : kv.second.versions) {
      if (v.second.model != nullptr) return false;
    }
  }
  return true;
}

static bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Requests queued or executing in any model's scheduler (decoupled streams
// already released do not count, as in Triton). Caller holds core->mu.
static bool AnyInferenceInFlight(ServerCore* core) {
  for (auto& kv : core->models) {
    for (auto& v : kv.second.versions) {
      Model* m = v.second.model.get();
      if (m == nullptr) continue;
      if (m->stats.pending.load() > 0) return true;
      std::lock_guard<std::mutex> lock(m->mu);
      if (m->busy_instances > 0 || !m->queue.empty()) return true;
    }
  }
  return false;
}

// Stops the way Triton's server does: new requests are refused at once;
// then it checks once a second, first until no inference is queued or
// executing, then (after unloading every model) until no model is live
// (request objects, undeleted responses and running streams keep a model
// UNLOADING). Every failed check costs one second of the exit timeout, so
// even an idle stop takes a second, and stop gives up with INTERNAL after
// the timeout.
static TRITONSERVER_Error* StopCore(ServerCore* core) {
  if (core->stopping.exchange(true)) return nullptr;
  unsigned iterations = core->options.exit_timeout_s;
  bool unloading = false;
  while (true) {
    if (!unloading) {
      bool busy;
      {
        std::lock_guard<std::mutex> lock(core->mu);
        busy = AnyInferenceInFlight(core);
      }
      if (!busy) {
        core->UnloadAll();
        unloading = true;
        continue;
      }
    } else {
      std::lock_guard<std::mutex> lock(core->mu);
      if (core->AllIdle()) return nullptr;
    }
    if (iterations == 0) break;
    --iterations;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return Err(TRITONSERVER_ERROR_INTERNAL,
             "Exit timeout expired. Exiting immediately.");
}

}  // namespace fake

using namespace fake;

FAKE_EXPORT void TRITONFAKE_SetSyncCallbacks(bool enabled) {
  g_sync_callbacks.store(enabled);
}

// ---- options
// ------------------------------------------------------------------

// Every options setter reads the options object (the logging ones
// excepted, below); the string ones copy their argument into a std::string.
#define OPT_SETTER(name, type, body)                                \
  FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptions##name( \
      TRITONSERVER_ServerOptions* options, type value) {            \
    FAKE_LIVE(kServerOptions, options);                             \
    body;                                                           \
    return nullptr;                                                 \
  }
// Triton's logging setters change its process-wide logger and never read
// the options object; the fake keeps the settings in the options it is
// given (a null one is accepted and ignored).
#define LOG_SETTER(name, type, body)                                \
  FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptions##name( \
      TRITONSERVER_ServerOptions* options, type value) {            \
    if (options == nullptr) return nullptr;                         \
    FAKE_LIVE(kServerOptions, options);                             \
    body;                                                           \
    return nullptr;                                                 \
  }

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsNew(
    TRITONSERVER_ServerOptions** options) {
  FAKE_NOT_NULL(options);
  *options = new TRITONSERVER_ServerOptions();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsDelete(
    TRITONSERVER_ServerOptions* options) {
  FAKE_DELETABLE(kServerOptions, options);
  delete options;
  return nullptr;
}

OPT_SETTER(SetServerId, const char*, FAKE_NOT_NULL(value);
           options->server_id = value)
OPT_SETTER(SetModelRepositoryPath, const char*, FAKE_NOT_NULL(value);
           options->repo_paths.push_back(value))
OPT_SETTER(SetStartupModel, const char*, FAKE_NOT_NULL(value);
           options->startup_models.push_back(value))
OPT_SETTER(SetStrictModelConfig, bool, options->strict_config = value)
OPT_SETTER(SetPinnedMemoryPoolByteSize, uint64_t, options->pinned_pool = value)
OPT_SETTER(SetMinSupportedComputeCapability, double, (void)value)
OPT_SETTER(SetExitOnError, bool, options->exit_on_error = value)
OPT_SETTER(SetStrictReadiness, bool, options->strict_readiness = value)
OPT_SETTER(SetExitTimeout, unsigned int, options->exit_timeout_s = value)
OPT_SETTER(SetModelLoadThreadCount, unsigned int, (void)value)
OPT_SETTER(SetModelLoadRetryCount, unsigned int, (void)value)
LOG_SETTER(SetLogFile, const char*, options->log_file = value ? value : "")
LOG_SETTER(SetLogInfo, bool, options->log_info = value)
LOG_SETTER(SetLogWarn, bool, options->log_warn = value)
LOG_SETTER(SetLogError, bool, options->log_error = value)
LOG_SETTER(SetLogVerbose, int, options->log_verbose = value)

// Like Triton's: the process-wide logger changes now, whatever `options` is;
// an unknown format changes nothing.
FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetLogFormat(
    TRITONSERVER_ServerOptions* options, const TRITONSERVER_LogFormat format) {
  (void)options;
  if (format == TRITONSERVER_LOG_DEFAULT ||
      format == TRITONSERVER_LOG_ISO8601) {
    SetLogFormat(format);
  }
  return nullptr;
}
OPT_SETTER(SetMetrics, bool, options->metrics = value)
OPT_SETTER(SetGpuMetrics, bool, (void)value)
OPT_SETTER(SetCpuMetrics, bool, (void)value)
OPT_SETTER(SetMetricsInterval, uint64_t, (void)value)
OPT_SETTER(SetBackendDirectory, const char*, FAKE_NOT_NULL(value);
           options->backend_dir = value)
OPT_SETTER(SetRepoAgentDirectory, const char*, FAKE_NOT_NULL(value))
OPT_SETTER(SetModelConfigName, const char*, FAKE_NOT_NULL(value);
           options->model_config_name = value)
OPT_SETTER(SetEnablePeerAccess, bool, (void)value)

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetModelControlMode(
    TRITONSERVER_ServerOptions* options, TRITONSERVER_ModelControlMode mode) {
  FAKE_LIVE(kServerOptions, options);
  if (mode != TRITONSERVER_MODEL_CONTROL_NONE &&
      mode != TRITONSERVER_MODEL_CONTROL_POLL &&
      mode != TRITONSERVER_MODEL_CONTROL_EXPLICIT) {
    return ErrArg("unknown control mode '" +
                  std::to_string(static_cast<int>(mode)) + "'");
  }
  options->mode = mode;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetRateLimiterMode(
    TRITONSERVER_ServerOptions* options, TRITONSERVER_RateLimitMode mode) {
  FAKE_LIVE(kServerOptions, options);
  if (mode != TRITONSERVER_RATE_LIMIT_OFF &&
      mode != TRITONSERVER_RATE_LIMIT_EXEC_COUNT) {
    return ErrArg("unknown rate limit mode '" +
                  std::to_string(static_cast<int>(mode)) + "'");
  }
  options->rate_limit_mode = mode;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_ServerOptionsAddRateLimiterResource(
    TRITONSERVER_ServerOptions* options, const char* resource_name,
    size_t resource_count, int device) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(resource_name);
  auto& resources = options->rate_limit_resources[device];
  auto it = resources.find(resource_name);
  if (it == resources.end()) {
    resources.emplace(resource_name, resource_count);
  } else if (resource_count < it->second) {
    it->second = resource_count;  // as Triton: the smaller count wins
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetHostPolicy(
    TRITONSERVER_ServerOptions* options, const char* policy_name,
    const char* setting, const char* value) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(policy_name);
  FAKE_NOT_NULL(setting);
  FAKE_NOT_NULL(value);
  const std::string name(setting);
  if (name != "numa-node" && name != "cpu-cores") {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "Unsupported host policy setting '" + name +
                   "' is specified, supported settings are 'numa-node', "
                   "'cpu-cores'");
  }
  options->host_policies[policy_name][name] = value;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetCacheConfig(
    TRITONSERVER_ServerOptions* options, const char* cache_name,
    const char* config_json) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(cache_name);
  FAKE_NOT_NULL(config_json);
  options->caches[cache_name] = config_json;
  return nullptr;
}

OPT_SETTER(SetCacheDirectory, const char*, FAKE_NOT_NULL(value);
           options->cache_dir = value)

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
    TRITONSERVER_ServerOptions* options, int gpu_device, uint64_t size) {
  FAKE_LIVE(kServerOptions, options);
  (void)gpu_device;
  (void)size;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetBackendConfig(
    TRITONSERVER_ServerOptions* options, const char* backend_name,
    const char* setting, const char* value) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(backend_name);
  FAKE_NOT_NULL(setting);
  FAKE_NOT_NULL(value);
  options->backend_config[backend_name][setting] = value;
  return nullptr;
}

// ---- server
// -------------------------------------------------------------------

namespace {

// The models to load at start: every model of the repositories without
// model control, else the startup models ("*" for all).
std::vector<std::string> StartupModels(ServerCore* core,
                                       const TRITONSERVER_ServerOptions& opts) {
  std::vector<std::string> to_load;
  if (opts.mode == TRITONSERVER_MODEL_CONTROL_NONE) {
    std::lock_guard<std::mutex> lock(core->mu);
    for (auto& kv : core->models) to_load.push_back(kv.first);
    return to_load;
  }
  for (const auto& n : opts.startup_models) {
    if (n == "*") {
      std::lock_guard<std::mutex> lock(core->mu);
      for (auto& kv : core->models) to_load.push_back(kv.first);
    } else {
      to_load.push_back(n);
    }
  }
  return to_load;
}

// What Triton sets up before its model repository, in its order: the
// response cache (one at most, its library found in the cache directory).
// The fake runs no cache library: a cache that Triton would load is refused.
TRITONSERVER_Error* InitBeforeModels(const TRITONSERVER_ServerOptions& opts) {
  if (opts.caches.empty()) return nullptr;
  if (opts.cache_dir.empty()) return ErrArg("cache directory can not be empty");
  if (opts.caches.size() > 1) {
    return ErrArg(
        "found multiple cache configurations, but only a single cache is "
        "currently supported");
  }
  const std::string& name = opts.caches.begin()->first;
  const std::string lib = "libtritoncache_" + name + ".so";
  const std::string path = opts.cache_dir + "/" + name + "/" + lib;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return ErrArg("unable to find '" + lib +
                  "' for cache. Searched: " + opts.cache_dir);
  }
  return Err(
      TRITONSERVER_ERROR_UNSUPPORTED,
      "the fake engine runs no response cache library (found " + path + ")");
}

// Loads each model, logging the failures; false when any failed.
bool LoadAll(ServerCore* core, const std::vector<std::string>& to_load) {
  bool failed = false;
  for (const auto& name : to_load) {
    TRITONSERVER_Error* e = core->Load(name, nullptr);
    if (e != nullptr) {
      LogError(e->msg);
      delete e;
      failed = true;
    }
  }
  return !failed;
}

}  // namespace

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerNew(
    TRITONSERVER_Server** server, TRITONSERVER_ServerOptions* options) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(server);
  *server = nullptr;
  // A server that fails to start is destroyed, and the memory manager with it.
  auto fail = [](TRITONSERVER_Error* e) {
    g_host_memory_manager.store(false);
    return e;
  };
  if (options->mode == TRITONSERVER_MODEL_CONTROL_POLL) {
    return fail(
        Err(TRITONSERVER_ERROR_UNSUPPORTED,
            "model control mode POLL is not supported by the fake engine"));
  }
  if (options->repo_paths.empty()) {
    return fail(ErrArg("at least one model repository path must be set"));
  }
  TRITONSERVER_Error* init = InitBeforeModels(*options);
  // Triton makes the memory manager after the cache, before the models.
  if (init == nullptr) g_host_memory_manager.store(true);
  for (const auto& p : options->repo_paths) {
    if (init == nullptr && !IsDir(p)) {
      init = Err(TRITONSERVER_ERROR_INTERNAL, "failed to stat file " + p);
    }
  }
  // As Triton: with exit-on-error, a failed start is an error; without, the
  // error is logged and a server that is not live is handed back.
  if (init != nullptr && options->exit_on_error) return fail(init);
  SetLogOptions(*options);
  auto core = std::make_shared<ServerCore>();
  core->self = core;
  core->options = *options;
  core->created_ns = SteadyNs();
  if (init != nullptr) {
    LogError(init->msg);
    delete init;
    core->init_failed = true;
    auto* s = new TRITONSERVER_Server();
    s->core = std::move(core);
    *server = s;
    return nullptr;
  }
  const char* env = std::getenv("TRITONFAKE_SYNC_CALLBACKS");
  if (env != nullptr && std::strcmp(env, "1") == 0) {
    g_sync_callbacks.store(true);
  }
  ReadStandInsFromEnvironment();
  LogInfo(
      "triton-node-fake-engine: a CPU stand-in for libtritonserver.so "
      "(C API 1.34); this is NOT NVIDIA Triton Inference Server");
  RegisterExitSingletons("server");
  ScanRepository(core.get());
  const bool loaded = LoadAll(core.get(), StartupModels(core.get(), *options));
  if (!loaded && options->exit_on_error) {
    // Real Triton unloads here right after the loads, with the same race
    // against the warm-up as above; nothing a caller can hold off.
    {
      std::lock_guard<std::mutex> lock(core->mu);
      for (auto& kv : core->models) ForgetLoadTails(&kv.second);
    }
    TRITONSERVER_Error* e = StopCore(core.get());
    if (e != nullptr) delete e;
    return fail(Err(TRITONSERVER_ERROR_INTERNAL, "failed to load all models"));
  }
  auto* s = new TRITONSERVER_Server();
  s->core = std::move(core);
  *server = s;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerDelete(
    TRITONSERVER_Server* server) {
  // Triton stops the server first (a null server is accepted) and deletes
  // it only when the stop succeeds; a failed stop is returned and the
  // server stays (a second delete then finds it stopped and deletes it).
  FAKE_DELETABLE(kServer, server);
  if (server == nullptr) return nullptr;
  CheckExitSingletons("TRITONSERVER_ServerDelete");
  if (TRITONSERVER_Error* e = StopCore(server->core.get())) return e;
  const int64_t active = server->core->active_inferences.load();
  FAKE_EXPECT(active == 0,
              std::to_string(active) +
                  " inference request(s) or decoupled stream(s) of this "
                  "server are still running (a stop that timed out leaves "
                  "them); the real library's backend threads use the "
                  "deleted server (crash)");
  // Triton's stop unloads the models only once no inference is in flight,
  // and gives up (the exit timeout) without waiting for the unloads it
  // started; a second stop returns at once. The delete then destroys the
  // models still loaded, and the ones still being destroyed go on, on
  // detached threads of its model lifecycle that use the deleted server and
  // lifecycle (r25.07: "double free" in the rate limiter, SIGSEGV;
  // docs/troubleshooting.md).
  std::string live_models;
  {
    std::lock_guard<std::mutex> lock(server->core->mu);
    for (auto& kv : server->core->models) {
      for (auto& v : kv.second.versions) {
        if (v.second.model == nullptr) continue;
        live_models += (live_models.empty() ? "'" : ", '") + kv.first +
                       "' version " + std::to_string(v.first);
      }
    }
  }
  FAKE_EXPECT(live_models.empty(),
              "the stop timed out and model(s) " + live_models +
                  " are not destroyed yet; the real library destroys them "
                  "on detached threads that use the deleted server (crash)");
  delete server;
  g_host_memory_manager.store(false);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerStop(
    TRITONSERVER_Server* server) {
  if (server == nullptr) return nullptr;  // as Triton
  FAKE_LIVE(kServer, server);
  CheckExitSingletons("TRITONSERVER_ServerStop");
  return StopCore(server->core.get());
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerSetExitTimeout(
    TRITONSERVER_Server* server, unsigned int timeout) {
  if (server == nullptr) return nullptr;  // as Triton
  FAKE_LIVE(kServer, server);
  std::lock_guard<std::mutex> lock(server->core->mu);
  server->core->options.exit_timeout_s = timeout;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerIsLive(
    TRITONSERVER_Server* server, bool* live) {
  FAKE_LIVE(kServer, server);
  FAKE_NOT_NULL(live);
  if (server->core->stopping) {
    *live = false;
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server exiting");
  }
  *live = !server->core->init_failed;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerIsReady(
    TRITONSERVER_Server* server, bool* ready) {
  FAKE_LIVE(kServer, server);
  FAKE_NOT_NULL(ready);
  if (server->core->stopping) {
    *ready = false;
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server exiting");
  }
  *ready =
      !server->core->init_failed && (!server->core->options.strict_readiness ||
                                     server->core->AllModelsReady());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerMetadata(
    TRITONSERVER_Server* server, TRITONSERVER_Message** server_metadata) {
  FAKE_LIVE(kServer, server);
  FAKE_NOT_NULL(server_metadata);
  auto* m = new TRITONSERVER_Message();
  m->json =
      "{\"name\":\"triton-node-fake-engine\",\"version\":\"0.1.0\","
      "\"extensions\":[\"model_repository\",\"model_repository(unload_"
      "dependents)\",\"schedule_policy\",\"model_configuration\","
      "\"binary_tensor_data\",\"parameters\",\"statistics\",\"trace\","
      "\"logging\"]";
  // Stand-in backends, when asked for (stand_ins.cc): said here too.
  const std::string stand_ins = StandInsJson();
  if (!stand_ins.empty()) m->json += ",\"triton_node_stand_ins\":" + stand_ins;
  m->json += "}";
  *server_metadata = m;
  return nullptr;
}
