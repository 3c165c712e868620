// The model repository, as Triton's model repository manager runs it under
// explicit model control: scanning the folders, loading a model's versions
// (its config read and checked, its backend chosen, one model started per
// version), unloading them, and ensembles' dependency graph (ensembles.cc).
#include "repository.h"

#include <sys/stat.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../backends/backends.h"
#include "../backends/onnxruntime_backend.h"
#include "../backends/stand_ins.h"
#include "../core/error.h"
#include "../core/process_state.h"
#include "../scheduling/ensemble_plan.h"
#include "../scheduling/rate_limiter.h"
#include "../scheduling/scheduler.h"
#include "../scheduling/sequence_batcher.h"
#include "../support/clock.h"
#include "../support/log.h"
#include "ensembles.h"
#include "model_dir.h"

namespace fake {
namespace {

void UnloadEntry(ModelEntry* entry) {
  for (auto& kv : entry->versions) {
    VersionSlot& slot = kv.second;
    if (slot.model == nullptr || slot.state != VersionState::kReady) continue;
    slot.state = VersionState::kUnloading;
    slot.model->unloading.store(true);
    if (slot.model->refs.load() == 0) QueueFinalize(slot.model);
  }
}

std::vector<int64_t> ChooseVersions(const VersionPolicyConfig& pol,
                                    const std::vector<int64_t>& dirs) {
  std::vector<int64_t> chosen;
  if (pol.kind == VersionPolicyConfig::Kind::kAll) {
    chosen = dirs;
  } else if (pol.kind == VersionPolicyConfig::Kind::kSpecific) {
    for (int64_t v : pol.versions) {
      if (std::find(dirs.begin(), dirs.end(), v) != dirs.end()) {
        chosen.push_back(v);
      }
    }
    std::sort(chosen.begin(), chosen.end());
  } else {
    size_t n = std::max<uint32_t>(pol.num_versions, 1);
    size_t start = dirs.size() > n ? dirs.size() - n : 0;
    chosen.assign(dirs.begin() + start, dirs.end());
  }
  return chosen;
}

// Triton refuses a load with no version to serve before touching any
// version: versions being served stay READY and serving.
TRITONSERVER_Error* RefuseNoVersions(Engine* engine, const std::string& name) {
  std::lock_guard<std::mutex> lock(engine->mu);
  auto it = engine->models.find(name);
  if (it != engine->models.end()) {
    bool any_live = false;
    for (auto& kv : it->second.versions) any_live |= kv.second.model != nullptr;
    if (!any_live) engine->models.erase(it);  // Triton drops it from the index
  }
  return ErrArg("load failed for model '" + name +
                "': at least one version must be available under the "
                "version policy of model '" +
                name + "'\n");
}

BackendKind KindOfBackend(const ModelConfig& cfg) {
  const std::string& backend = cfg.backend;
  if (IsEnsemble(cfg)) return BackendKind::kEnsemble;
  if (backend == "repeat") return BackendKind::kRepeat;
  if (backend == "square") return BackendKind::kSquare;
  if (backend == "fake_text_stream") return BackendKind::kTextStream;
  if (backend == "fake_text_embedding") return BackendKind::kTextEmbedding;
  std::string mode;
  if (backend == "onnxruntime" && !StandInFor(backend, &mode)) {
    return BackendKind::kOnnxRuntime;
  }
  if (backend != "identity") return BackendKind::kStandIn;
  return BackendKind::kIdentity;
}

// Why no backend can be created for the model, with the error code to
// report it under; "" when one can.
std::string BackendProblem(Engine* engine, const ModelConfig& cfg,
                           TRITONSERVER_Error_Code* code) {
  *code = TRITONSERVER_ERROR_INVALID_ARG;
  const std::string& backend_dir = engine->options.backend_dir;
  std::string error;
  if (cfg.has_sequence_batching &&
      KindOfBackend(cfg) != BackendKind::kOnnxRuntime) {
    *code = TRITONSERVER_ERROR_UNSUPPORTED;
    return "sequence batching is not supported by the fake engine's " +
           cfg.backend + " backend (only by its onnxruntime backend)";
  }
  std::string mode;
  const bool stand_in = StandInFor(cfg.backend, &mode);
  // The onnxruntime backend runs real models when ONNX Runtime is there
  // (backends/onnxruntime_backend.cc); a stand-in asked for it still wins.
  const bool own = cfg.backend == "identity" || cfg.backend == "repeat" ||
                   cfg.backend == "square" ||
                   cfg.backend == "fake_text_stream" ||
                   cfg.backend == "fake_text_embedding" ||
                   (cfg.backend == "onnxruntime" && !stand_in);
  if (!own && stand_in) return "";
  if (!own || (!backend_dir.empty() && !IsDir(backend_dir))) {
    // Triton's words; for python the fake says why it has no such backend.
    const std::string hint =
        cfg.backend == "python"
            ? " (the fake engine cannot run Python models: give it a "
              "stand-in, fakeEngine.standIns({ python: 'zeros' }))"
            : "";
    return "unable to find backend library for backend '" + cfg.backend +
           "', try specifying runtime on the model configuration." + hint;
  }
  if (!ValidateForBackend(cfg, &error)) return error;
  return "";
}

// A python model's version folder without its file (model.py, or the one
// default_model_filename names), in the words of r25.07's stub, which exits
// on it (real Triton then waits for the stub without end; triton-node's
// loadModel refuses such a load before Triton sees it).
std::string PythonModelFileProblem(const ModelConfig& cfg,
                                   const std::string& dir,
                                   const std::vector<int64_t>& chosen) {
  if (cfg.backend != "python") return "";
  const std::string file = cfg.default_model_filename.empty()
                               ? "model.py"
                               : cfg.default_model_filename;
  for (int64_t v : chosen) {
    const std::string path = dir + "/" + std::to_string(v) + "/" + file;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      return "Python model file not found in '" + path + "'";
    }
  }
  return "";
}

// Reloading the same config with the same versions changes nothing (a
// load that brings files, or replaces a model that had them, always
// reloads, as Triton does). Caller holds engine->mu.
bool IsUnchangedReload(const ModelEntry& entry, const std::string& new_json,
                       const std::vector<int64_t>& chosen, bool has_files) {
  if (entry.config_json != new_json || has_files || !entry.temp_dir.empty()) {
    return false;
  }
  bool same = true;
  for (int64_t v : chosen) {
    auto it = entry.versions.find(v);
    same &=
        it != entry.versions.end() && it->second.state == VersionState::kReady;
  }
  size_t ready = 0;
  for (auto& kv : entry.versions) {
    ready += kv.second.state == VersionState::kReady ? 1 : 0;
  }
  return same && ready == chosen.size();
}

// A load whose backend cannot be created. Triton loads a version that is
// being served in the background and swaps it in only when every version
// loaded: after a failure the served versions stay READY and serving (with
// their config and files); a version that was not served records the
// failure. Caller holds engine->mu.
TRITONSERVER_Error* FailVersions(const std::string& name, ModelEntry* entry,
                                 const std::vector<int64_t>& chosen,
                                 TRITONSERVER_Error_Code fail_code,
                                 const std::string& fail,
                                 TRITONSERVER_Error_Code load_code) {
  std::string msg = "load failed for model '" + name + "': ";
  const std::string reason = std::string(CodeString(fail_code)) + ": " + fail;
  bool serving = false;
  for (int64_t v : chosen) {
    VersionSlot& slot = entry->versions[v];
    if (slot.state != VersionState::kReady) {
      slot.state = VersionState::kUnavailable;
      slot.reason = reason;
    }
    msg += "version " + std::to_string(v) +
           " is at UNAVAILABLE state: " + reason + ";";
    LogError("failed to load '" + name + "' version " + std::to_string(v) +
             ": " + reason);
  }
  for (auto& kv : entry->versions) {
    serving |= kv.second.state == VersionState::kReady;
  }
  if (!serving) {
    entry->config_json.clear();
    RemoveTempDir(&entry->temp_dir);
  }
  return Err(load_code, msg + "\n");
}

// An ensemble whose steps do not check out: Triton unloads it (versions
// it served included) and reports the reason as the ensemble's. Caller
// holds engine->mu.
TRITONSERVER_Error* FailEnsemble(const std::string& name, ModelEntry* entry,
                                 const std::string& fail) {
  LogError(std::string(CodeString(TRITONSERVER_ERROR_INVALID_ARG)) + ": " +
           fail);
  UnloadEntry(entry);
  RemoveTempDir(&entry->temp_dir);
  entry->config_json.clear();
  return ErrArg("load failed for model '" + name + "': " + fail + "\n");
}

// A backend setting: the backend's own, else the global one, else "".
std::string BackendSetting(const TRITONSERVER_ServerOptions& options,
                           const std::string& backend,
                           const std::string& setting) {
  for (const std::string& b : {backend, std::string()}) {
    auto it = options.backend_config.find(b);
    if (it == options.backend_config.end()) continue;
    auto value = it->second.find(setting);
    if (value != it->second.end()) return value->second;
  }
  return "";
}

// An onnxruntime model's versions, each loaded as its backend loads it (the
// config auto-completed on the way when strict model config is off; the
// last version's config is the model's). "" with *sessions filled, else
// the problem (*code).
std::string LoadOnnxVersions(
    Engine* engine, const std::string& dir, const std::vector<int64_t>& chosen,
    ModelConfig* cfg, std::map<int64_t, std::shared_ptr<OnnxModel>>* sessions,
    TRITONSERVER_Error_Code* code) {
  const TRITONSERVER_ServerOptions& o = engine->options;
  OnnxRuntimeSource source;
  source.library = BackendSetting(o, "onnxruntime", "fake-onnxruntime-library");
  source.searched =
      BackendSetting(o, "onnxruntime", "fake-onnxruntime-searched");
  const ort::Library* lib = nullptr;
  *code = TRITONSERVER_ERROR_UNAVAILABLE;
  std::string problem = OnnxRuntimeLibraryProblem(source, &lib);
  if (!problem.empty()) return problem;
  problem = OnnxBackendRestartProblem(engine, code);
  if (!problem.empty()) return problem;
  OnnxLoadOptions options;
  options.auto_complete = !o.strict_config;
  const std::string mbs =
      BackendSetting(o, "onnxruntime", "default-max-batch-size");
  if (!mbs.empty()) options.default_max_batch_size = std::atoi(mbs.c_str());
  ModelConfig completed = *cfg;
  for (int64_t v : chosen) {
    ModelConfig version_cfg = *cfg;
    bool session_leaked = false;
    problem = OnnxRuntimeLoad(lib, dir, v, options, &version_cfg,
                              &(*sessions)[v], code, &session_leaked);
    if (!problem.empty()) {
      if (session_leaked) OnnxBackendLoadFailed(engine);
      return problem;
    }
    completed = version_cfg;
  }
  *cfg = completed;
  return "";
}

// A model whose backend the fake does not have, answered by the stand-in
// asked for: said loudly.
void StartStandIn(Model* m) {
  std::string mode;
  if (!StandInFor(m->config.backend, &mode)) mode = "zeros";
  m->stand_in = m->config.backend + ":" + mode;
  m->stand_in_echoes = mode == "echo";
  LogWarning("model '" + m->name + "' version " + std::to_string(m->version) +
             ": backend '" + m->config.backend +
             "' is a STAND-IN of the fake engine (" + mode +
             "): its outputs have the configured data types and shapes but "
             "are " +
             (m->stand_in_echoes ? "copies of compatible inputs (else zeros)"
                                 : "zeros") +
             ", not results of the model");
}

// The model's timing and echo parameters, as its backend reads them.
struct BackendParameters {
  uint64_t execute_delay_ms = 0;
  uint64_t square_delay_ns = 0;
  uint64_t word_delay_ns = 0;
  bool echo_request = false;
};

BackendParameters ReadBackendParameters(const ModelConfig& cfg) {
  BackendParameters p;
  auto pit = cfg.parameters.find("execute_delay_ms");
  if (pit != cfg.parameters.end()) {
    p.execute_delay_ms = std::strtoull(pit->second.c_str(), nullptr, 10);
  }
  pit = cfg.parameters.find("CUSTOM_INFER_DELAY_NS");
  if (pit != cfg.parameters.end()) {
    p.square_delay_ns = std::strtoull(pit->second.c_str(), nullptr, 10);
  }
  pit = cfg.parameters.find("word_delay_ms");
  if (pit != cfg.parameters.end()) {
    const double ms = std::strtod(pit->second.c_str(), nullptr);
    p.word_delay_ns = ms > 0 ? static_cast<uint64_t>(ms * 1e6) : 0;
  }
  pit = cfg.parameters.find("echo_request");
  p.echo_request = pit != cfg.parameters.end() && pit->second == "true";
  return p;
}

// Starts one model per chosen version and makes each the version's READY
// model. Caller holds engine->mu.
void StartVersions(
    Engine* engine, const std::string& name, const ModelConfig& cfg,
    const std::vector<int64_t>& chosen,
    const std::map<int64_t, std::shared_ptr<OnnxModel>>& sessions,
    ModelEntry* entry) {
  const BackendParameters params = ReadBackendParameters(cfg);
  for (int64_t v : chosen) {
    uint64_t t0 = SteadyNs();
    auto m = std::make_shared<Model>();
    m->self = m;
    m->engine = engine->self.lock();
    m->name = name;
    m->version = v;
    m->config = cfg;
    m->backend = KindOfBackend(cfg);
    m->execute = ExecuteBackend;
    if (m->backend == BackendKind::kEnsemble) {
      m->ensemble = MakeEnsemblePlan(m->config);
    } else if (m->backend == BackendKind::kStandIn) {
      StartStandIn(m.get());
    } else if (m->backend == BackendKind::kOnnxRuntime) {
      m->onnx = sessions.at(v);
    }
    m->execute_delay_ms = params.execute_delay_ms;
    m->square_delay_ns = params.square_delay_ns;
    m->word_delay_ns = params.word_delay_ns;
    m->echo_request = params.echo_request;
    StartInstances(m.get());
    m->load_seconds = (SteadyNs() - t0) / 1e9;
    m->load_tail_until_ns = SteadyNs() + kLoadTailNs;
    VersionSlot& slot = entry->versions[v];
    // A version still draining from the previous load keeps its threads
    // until the reaper finalizes it; the slot now belongs to the new model.
    slot.state = VersionState::kReady;
    slot.reason.clear();
    slot.model = std::move(m);
    LogInfo("successfully loaded '" + name + "' version " + std::to_string(v));
  }
}

}  // namespace

namespace {

std::mutex g_hold_mu;
std::condition_variable g_hold_cv;
bool g_hold = false;
uint32_t g_held = 0;

}  // namespace

uint32_t HoldModelLoads(int32_t mode) {
  std::lock_guard<std::mutex> lock(g_hold_mu);
  if (mode == 1) g_hold = true;
  if (mode == 0) {
    g_hold = false;
    g_hold_cv.notify_all();
  }
  return g_held;
}

void WaitWhileModelLoadsHeld() {
  std::unique_lock<std::mutex> lock(g_hold_mu);
  if (!g_hold) return;
  ++g_held;
  g_hold_cv.wait(lock, [] { return !g_hold; });
  --g_held;
}

void ScanRepository(Engine* engine) {
  std::lock_guard<std::mutex> lock(engine->mu);
  for (const auto& repo : engine->options.repo_paths) {
    for (const auto& name : SubDirs(repo)) {
      auto& entry = engine->models[name];
      if (entry.dir.empty()) entry.dir = repo + "/" + name;
    }
  }
}

TRITONSERVER_Error* LoadModel(
    Engine* engine, const std::string& name, const std::string* override_json,
    const std::vector<std::pair<std::string, std::string>>* files) {
  std::lock_guard<std::mutex> load_lock(engine->load_mu);
  if (engine->stopping) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  }
  TRITONSERVER_Error* err = LoadLocked(engine, name, override_json, files);
  if (err != nullptr) return err;
  {
    std::lock_guard<std::mutex> lock(engine->mu);
    engine->models[name].explicitly_loaded = true;
  }
  ReloadWaitingEnsembles(engine, name);
  return nullptr;
}

TRITONSERVER_Error* LoadLocked(
    Engine* engine, const std::string& name, const std::string* override_json,
    const std::vector<std::pair<std::string, std::string>>* files) {
  TempDirOwner temp_dir;
  std::string dir;
  if (TRITONSERVER_Error* err =
          FindModelDir(engine, name, files, &temp_dir, &dir)) {
    return err;
  }
  {
    std::lock_guard<std::mutex> lock(engine->mu);
    engine->models[name].dir = dir;
  }
  ModelConfig cfg;
  if (TRITONSERVER_Error* err =
          ReadModelConfig(engine, name, dir, override_json, &cfg)) {
    return err;
  }
  std::vector<int64_t> dirs = VersionDirs(dir);
  std::vector<int64_t> chosen = ChooseVersions(cfg.version_policy, dirs);
  if (chosen.empty()) return RefuseNoVersions(engine, name);

  TRITONSERVER_Error_Code fail_code = TRITONSERVER_ERROR_INVALID_ARG;
  const bool ensemble = IsEnsemble(cfg);
  std::string fail = ensemble ? PrepareEnsemble(engine, &cfg)
                              : BackendProblem(engine, cfg, &fail_code);
  if (fail.empty()) fail = PythonModelFileProblem(cfg, dir, chosen);
  // A backend's library is loaded at its first model: its exit handlers
  // register then.
  if (fail.empty() && !ensemble)
    RegisterExitSingletons("backend " + cfg.backend);
  // A backend's failure to create the model fails its load as INVALID_ARG
  // (the backend's own code is in the message).
  TRITONSERVER_Error_Code load_code = fail_code;
  std::map<int64_t, std::shared_ptr<OnnxModel>> sessions;
  if (fail.empty() && KindOfBackend(cfg) == BackendKind::kOnnxRuntime) {
    fail = LoadOnnxVersions(engine, dir, chosen, &cfg, &sessions, &fail_code);
    if (fail.empty() && cfg.has_sequence_batching) {
      fail = SequenceConfigProblem(cfg, &fail_code);
    }
    load_code = TRITONSERVER_ERROR_INVALID_ARG;
  }
  std::string new_json = ModelConfigToJson(cfg);
  std::lock_guard<std::mutex> lock(engine->mu);
  if (fail.empty()) {
    fail = RateLimiterProblem(*engine, name, cfg);
    fail_code = load_code = TRITONSERVER_ERROR_INVALID_ARG;
  }
  ModelEntry& entry = engine->models[name];
  entry.dir = dir;
  entry.version_dirs = dirs;
  if (ensemble) {
    entry.has_override_config = override_json != nullptr && files == nullptr;
    entry.override_config = entry.has_override_config ? *override_json : "";
    entry.composing.clear();
    for (const auto& step : cfg.ensemble_steps) {
      entry.composing.insert(step.model_name);
    }
    if (!fail.empty()) return FailEnsemble(name, &entry, fail);
  }
  if (fail.empty() &&
      IsUnchangedReload(entry, new_json, chosen, files != nullptr)) {
    return nullptr;
  }
  if (!fail.empty()) {
    return FailVersions(name, &entry, chosen, fail_code, fail, load_code);
  }
  // Triton releases the previous versions only once the new ones loaded:
  // their own load is long over.
  ForgetLoadTails(&entry);
  UnloadEntry(&entry);
  // The versions that used the previous files are unloading.
  RemoveTempDir(&entry.temp_dir);
  StartVersions(engine, name, cfg, chosen, sessions, &entry);
  entry.config_json = new_json;
  entry.temp_dir = temp_dir.Release();
  return nullptr;
}

namespace {

// Triton's cascading removal: an ensemble's steps' models that were not
// loaded by name and that no other ensemble uses. Caller holds load_mu.
void UnloadUnusedSteps(Engine* engine, const std::set<std::string>& steps) {
  std::set<std::string> next;
  {
    std::lock_guard<std::mutex> lock(engine->mu);
    for (const auto& step : steps) {
      auto it = engine->models.find(step);
      if (it == engine->models.end() || it->second.explicitly_loaded) continue;
      bool used = false;
      for (auto& kv : engine->models)
        used |= kv.second.composing.count(step) != 0;
      if (used) continue;
      UnloadEntry(&it->second);
      it->second.config_json.clear();
      next.insert(it->second.composing.begin(), it->second.composing.end());
      it->second.composing.clear();
    }
  }
  if (!next.empty()) UnloadUnusedSteps(engine, next);
}

void UnloadEnsemblesUsing(Engine* engine, const std::string& name) {
  std::vector<std::string> users;
  {
    std::lock_guard<std::mutex> lock(engine->mu);
    for (auto& kv : engine->models) {
      if (kv.second.composing.count(name) == 0) continue;
      bool serving = false;
      for (auto& v : kv.second.versions) {
        serving |= v.second.state == VersionState::kReady;
      }
      if (!serving) continue;
      UnloadEntry(&kv.second);
      kv.second.config_json.clear();
      users.push_back(kv.first);
    }
  }
  for (const auto& user : users) UnloadEnsemblesUsing(engine, user);
}

}  // namespace

TRITONSERVER_Error* UnloadModel(Engine* engine, const std::string& name,
                                bool dependents) {
  std::lock_guard<std::mutex> load_lock(engine->load_mu);
  if (engine->stopping) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  }
  std::set<std::string> steps;
  {
    std::lock_guard<std::mutex> lock(engine->mu);
    auto it = engine->models.find(name);
    if (it == engine->models.end()) return nullptr;  // as Triton: success
    UnloadEntry(&it->second);
    RemoveTempDir(&it->second.temp_dir);
    it->second.config_json.clear();
    it->second.explicitly_loaded = false;
    steps.swap(it->second.composing);  // out of the dependency graph
  }
  UnloadEnsemblesUsing(engine, name);
  if (dependents) UnloadUnusedSteps(engine, steps);
  return nullptr;
}

void UnloadAllModels(Engine* engine) {
  std::lock_guard<std::mutex> load_lock(engine->load_mu);
  std::lock_guard<std::mutex> lock(engine->mu);
  for (auto& kv : engine->models) {
    UnloadEntry(&kv.second);
    RemoveTempDir(&kv.second.temp_dir);
    kv.second.config_json.clear();
  }
}

}  // namespace fake
