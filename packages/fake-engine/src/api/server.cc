// The server's lifecycle: new (scan + startup loads), live/ready, metadata,
// stop (drain up to the exit timeout) and delete.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../backends/stand_ins.h"
#include "../core/engine.h"
#include "../core/error.h"
#include "../core/process_state.h"
#include "../repository/model_dir.h"
#include "../repository/repository.h"
#include "../scheduling/submission.h"
#include "../support/clock.h"
#include "../support/json.h"
#include "../support/log.h"
#include "../support/release.h"
#include "export.h"

namespace fake {
namespace {

// Requests queued or executing in any model's scheduler (decoupled streams
// already released do not count, as in Triton). Caller holds engine->mu.
bool AnyInferenceInFlight(Engine* engine) {
  for (auto& kv : engine->models) {
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
TRITONSERVER_Error* StopEngine(Engine* engine) {
  if (engine->stopping.exchange(true)) return nullptr;
  unsigned iterations = engine->options.exit_timeout_s;
  bool unloading = false;
  while (true) {
    if (!unloading) {
      bool busy;
      {
        std::lock_guard<std::mutex> lock(engine->mu);
        busy = AnyInferenceInFlight(engine);
      }
      if (!busy) {
        UnloadAllModels(engine);
        unloading = true;
        continue;
      }
    } else {
      std::lock_guard<std::mutex> lock(engine->mu);
      if (engine->AllIdle()) return nullptr;
    }
    if (iterations == 0) break;
    --iterations;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return Err(TRITONSERVER_ERROR_INTERNAL,
             "Exit timeout expired. Exiting immediately.");
}

// The models to load at start: every model of the repositories without
// model control, else the startup models ("*" for all).
std::vector<std::string> StartupModels(Engine* engine,
                                       const TRITONSERVER_ServerOptions& opts) {
  std::vector<std::string> to_load;
  if (opts.mode == TRITONSERVER_MODEL_CONTROL_NONE) {
    std::lock_guard<std::mutex> lock(engine->mu);
    for (auto& kv : engine->models) to_load.push_back(kv.first);
    return to_load;
  }
  for (const auto& n : opts.startup_models) {
    if (n == "*") {
      std::lock_guard<std::mutex> lock(engine->mu);
      for (auto& kv : engine->models) to_load.push_back(kv.first);
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
bool LoadAll(Engine* engine, const std::vector<std::string>& to_load) {
  bool failed = false;
  for (const auto& name : to_load) {
    TRITONSERVER_Error* e = LoadModel(engine, name, nullptr);
    if (e != nullptr) {
      LogError(e->msg);
      delete e;
      failed = true;
    }
  }
  return !failed;
}

}  // namespace
}  // namespace fake

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerNew(
    TRITONSERVER_Server** server, TRITONSERVER_ServerOptions* options) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(server);
  *server = nullptr;
  // A server that fails to start is destroyed, and the memory manager with it.
  auto fail = [](TRITONSERVER_Error* e) {
    SetHostMemoryManager(false);
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
  if (init == nullptr) SetHostMemoryManager(true);
  for (const auto& p : options->repo_paths) {
    if (init == nullptr && !IsDir(p)) {
      init = Err(TRITONSERVER_ERROR_INTERNAL, "failed to stat file " + p);
    }
  }
  // As Triton: with exit-on-error, a failed start is an error; without, the
  // error is logged and a server that is not live is handed back.
  if (init != nullptr && options->exit_on_error) return fail(init);
  auto engine = std::make_shared<Engine>();
  engine->self = engine;
  engine->options = *options;
  engine->created_ns = SteadyNs();
  if (init != nullptr) {
    LogError(init->msg);
    delete init;
    engine->init_failed = true;
    auto* s = new TRITONSERVER_Server();
    s->engine = std::move(engine);
    *server = s;
    return nullptr;
  }
  const char* env = std::getenv("TRITONFAKE_SYNC_CALLBACKS");
  if (env != nullptr && std::strcmp(env, "1") == 0) {
    SetSyncCallbacks(true);
  }
  ReadStandInsFromEnvironment();
  ReadReleaseFromEnvironment();
  LogInfo(
      "triton-node-fake-engine: a CPU stand-in for libtritonserver.so "
      "(C API 1.34); this is NOT NVIDIA Triton Inference Server");
  RegisterExitSingletons("server");
  ScanRepository(engine.get());
  const bool loaded =
      LoadAll(engine.get(), StartupModels(engine.get(), *options));
  if (!loaded && options->exit_on_error) {
    // Real Triton unloads here right after the loads, with the same race
    // against the warm-up as above; nothing a caller can hold off.
    {
      std::lock_guard<std::mutex> lock(engine->mu);
      for (auto& kv : engine->models) ForgetLoadTails(&kv.second);
    }
    TRITONSERVER_Error* e = StopEngine(engine.get());
    if (e != nullptr) delete e;
    return fail(Err(TRITONSERVER_ERROR_INTERNAL, "failed to load all models"));
  }
  auto* s = new TRITONSERVER_Server();
  s->engine = std::move(engine);
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
  if (TRITONSERVER_Error* e = StopEngine(server->engine.get())) return e;
  const int64_t active = server->engine->active_inferences.load();
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
    std::lock_guard<std::mutex> lock(server->engine->mu);
    for (auto& kv : server->engine->models) {
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
  SetHostMemoryManager(false);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerStop(
    TRITONSERVER_Server* server) {
  if (server == nullptr) return nullptr;  // as Triton
  FAKE_LIVE(kServer, server);
  CheckExitSingletons("TRITONSERVER_ServerStop");
  return StopEngine(server->engine.get());
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerSetExitTimeout(
    TRITONSERVER_Server* server, unsigned int timeout) {
  if (server == nullptr) return nullptr;  // as Triton
  FAKE_LIVE(kServer, server);
  std::lock_guard<std::mutex> lock(server->engine->mu);
  server->engine->options.exit_timeout_s = timeout;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerIsLive(
    TRITONSERVER_Server* server, bool* live) {
  FAKE_LIVE(kServer, server);
  FAKE_NOT_NULL(live);
  if (server->engine->stopping) {
    *live = false;
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server exiting");
  }
  *live = !server->engine->init_failed;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerIsReady(
    TRITONSERVER_Server* server, bool* ready) {
  FAKE_LIVE(kServer, server);
  FAKE_NOT_NULL(ready);
  if (server->engine->stopping) {
    *ready = false;
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server exiting");
  }
  *ready = !server->engine->init_failed &&
           (!server->engine->options.strict_readiness ||
            server->engine->AllModelsReady());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerMetadata(
    TRITONSERVER_Server* server, TRITONSERVER_Message** server_metadata) {
  FAKE_LIVE(kServer, server);
  FAKE_NOT_NULL(server_metadata);
  auto* m = new TRITONSERVER_Message();
  // The name is the server id, "triton" unless set, as Triton's; the version
  // is the imitated release's, and the fake says what it is in a field of
  // its own.
  m->json = "{\"name\":";
  JsonEscape(server->engine->options.server_id, &m->json);
  m->json += std::string(",\"version\":\"") + ReleaseServerVersion() +
             "\",\"triton_node_imitates\":\"" + ReleaseName() +
             "\","
             "\"extensions\":[\"model_repository\",\"model_repository(unload_"
             "dependents)\",\"schedule_policy\",\"model_configuration\","
             "\"binary_tensor_data\",\"parameters\",\"statistics\",\"trace\","
             "\"logging\"]";
  // Stand-in backends, when asked for (backends/stand_ins.cc): said here
  // too.
  const std::string stand_ins = StandInsJson();
  if (!stand_ins.empty()) m->json += ",\"triton_node_stand_ins\":" + stand_ins;
  m->json += "}";
  *server_metadata = m;
  return nullptr;
}
