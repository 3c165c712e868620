// The model repository: scanning the folders, loading and unloading model
// versions, the model index, and the per-model queries (readiness,
// properties, metadata, config).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "../internal.h"

namespace fake {
namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> SubDirs(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.empty() || n[0] == '.') continue;
    if (IsDir(dir + "/" + n)) out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

// The entries of the model's first version directory (first by name, as
// Triton takes it), each with whether it is a directory: Triton looks there
// for a model file to tell the backend. False without a version directory.
bool FirstVersionFiles(const std::string& dir,
                       std::map<std::string, bool>* files) {
  std::vector<std::string> versions;
  for (const auto& n : SubDirs(dir)) {
    if (std::all_of(n.begin(), n.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      versions.push_back(n);
    }
  }
  if (versions.empty()) return false;
  const std::string first = dir + "/" + versions.front();  // SubDirs sorts
  DIR* d = ::opendir(first.c_str());
  if (d == nullptr) return true;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    (*files)[n] = IsDir(first + "/" + n);
  }
  ::closedir(d);
  return true;
}

std::vector<int64_t> VersionDirs(const std::string& dir) {
  std::vector<int64_t> v;
  for (const auto& n : SubDirs(dir)) {
    if (n.size() > 18) continue;
    bool digits = std::all_of(n.begin(), n.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (digits) v.push_back(std::stoll(n));
  }
  std::sort(v.begin(), v.end());
  return v;
}

bool IsEnsemble(const ModelConfig& cfg) {
  return cfg.platform == "ensemble" || cfg.has_ensemble_scheduling;
}

TRITONSERVER_Error* PollFailure(const std::string& name,
                                const std::string& why) {
  LogError("Poll failed for model directory '" + name + "': " + why);
  return Err(
      TRITONSERVER_ERROR_INTERNAL,
      "failed to load '" + name + "', failed to poll from model repository");
}

const char* StateName(VersionState s) {
  switch (s) {
    case VersionState::kReady:
      return "READY";
    case VersionState::kUnloading:
      return "UNLOADING";
    default:
      return "UNAVAILABLE";
  }
}

// Removes an in-memory model's temporary directory (quietly: nothing
// depends on it once the model that used it is gone).
void RemoveTempDir(std::string* dir) {
  if (dir->empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  if (ec) LogError("cannot remove '" + *dir + "': " + ec.message());
  dir->clear();
}

// Owns a temporary model directory until Release(); removes it otherwise
// (every failed load).
class TempDirOwner {
 public:
  ~TempDirOwner() { RemoveTempDir(&dir_); }
  std::string* get() { return &dir_; }
  std::string Release() {
    std::string d = dir_;
    dir_.clear();
    return d;
  }

 private:
  std::string dir_;
};

// Writes an in-memory model's files into a new temporary directory, as
// Triton's localizing step does: each path is taken relative to the model
// directory (a leading '/' included) and must stay inside it; parent
// folders are created. Returns the reason on failure ("" on success).
std::string WriteModelFiles(
    const std::vector<std::pair<std::string, std::string>>& files,
    std::string* dir_out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string tmpl = (base / "triton-fake-model-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return "cannot create a temporary model directory under '" + base.string() +
           "'";
  }
  *dir_out = tmpl;
  const fs::path root = fs::canonical(tmpl, ec);
  if (ec) return "Nonexistent path '" + tmpl + "': " + ec.message();
  for (const auto& f : files) {
    const std::string& rel = f.first;
    const std::string param = "file:" + rel;
    // Lexical normalization is enough here: the new directory holds no
    // symbolic links.
    fs::path target = (root / fs::path(rel).relative_path()).lexically_normal();
    fs::path inside = target.lexically_relative(root);
    bool escapes = inside.empty() || *inside.begin() == "..";
    if (escapes || inside == ".") {
      return "Invalid file parameter '" + param + "' with normalized path '" +
             target.string() + "' must stay within model directory.";
    }
    fs::path parent = target.parent_path();
    if (fs::exists(parent, ec) && !fs::is_directory(parent, ec)) {
      return "Invalid file parameter '" + param +
             "', directory has been created as a file";
    }
    fs::create_directories(parent, ec);
    if (ec) {
      return "Invalid file parameter '" + param + "': " + ec.message();
    }
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out.write(f.second.data(), static_cast<std::streamsize>(f.second.size()));
    out.close();
    if (!out) {
      return "Invalid file parameter '" + param + "': cannot write '" +
             target.string() + "'";
    }
  }
  return "";
}

// Marks every live version of `entry` UNLOADING; models with no request
// objects left are finalized by the reaper right away. Caller holds core->mu.
void UnloadEntry(ModelEntry* entry) {
  for (auto& kv : entry->versions) {
    VersionSlot& slot = kv.second;
    if (slot.model == nullptr || slot.state != VersionState::kReady) continue;
    slot.state = VersionState::kUnloading;
    slot.model->unloading.store(true);
    if (slot.model->refs.load() == 0) QueueFinalize(slot.model);
  }
}

}  // namespace

void ScanRepository(ServerCore* core) {
  std::lock_guard<std::mutex> lock(core->mu);
  for (const auto& repo : core->options.repo_paths) {
    for (const auto& name : SubDirs(repo)) {
      auto& entry = core->models[name];
      if (entry.dir.empty()) entry.dir = repo + "/" + name;
    }
  }
}

TRITONSERVER_Error* ServerCore::FindReady(const std::string& name,
                                          int64_t version,
                                          std::shared_ptr<Model>* out) {
  std::lock_guard<std::mutex> lock(mu);
  return FindReadyLocked(name, version, out);
}

// The reference is taken under the repository lock: an unload marks a
// version UNLOADING and finalizes it when no reference is left, under
// that same lock. Taken after it, a request could be made on a model
// whose instance threads the reaper is already joining (it would never
// run: a hung request, which real Triton, holding the model by a shared
// pointer from the lookup on, never has).
TRITONSERVER_Error* ServerCore::FindReadyAndHold(const std::string& name,
                                                 int64_t version,
                                                 std::shared_ptr<Model>* out) {
  std::lock_guard<std::mutex> lock(mu);
  TRITONSERVER_Error* e = FindReadyLocked(name, version, out);
  if (e == nullptr) (*out)->AddRef();
  return e;
}

TRITONSERVER_Error* ServerCore::FindReadyLocked(const std::string& name,
                                                int64_t version,
                                                std::shared_ptr<Model>* out) {
  auto it = models.find(name);
  if (it == models.end() || it->second.versions.empty()) {
    return Err(TRITONSERVER_ERROR_NOT_FOUND,
               "Request for unknown model: '" + name + "' is not found");
  }
  auto& versions = it->second.versions;
  if (version == -1) {
    for (auto vit = versions.rbegin(); vit != versions.rend(); ++vit) {
      if (vit->second.state == VersionState::kReady) {
        *out = vit->second.model;
        return nullptr;
      }
    }
    return Err(
        TRITONSERVER_ERROR_NOT_FOUND,
        "Request for unknown model: '" + name + "' has no available versions");
  }
  auto vit = versions.find(version);
  if (vit == versions.end()) {
    return Err(TRITONSERVER_ERROR_NOT_FOUND,
               "Request for unknown model: '" + name + "' version " +
                   std::to_string(version) + " is not found");
  }
  // A version that was served once and is now unloaded (or still loading)
  // is known to Triton: it answers UNAVAILABLE, not NOT_FOUND.
  if (vit->second.state != VersionState::kReady) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE,
               "Request for unknown model: '" + name + "' version " +
                   std::to_string(version) + " is not at ready state");
  }
  *out = vit->second.model;
  return nullptr;
}

namespace {

// The model's directory: a new temporary one holding an in-memory model's
// `files` (the repository is not consulted at all then, as in Triton), or
// its folder in the first repository that has one (a folder may have
// appeared since the scan). Null with *dir set, or the load's error.
TRITONSERVER_Error* FindModelDir(
    ServerCore* core, const std::string& name,
    const std::vector<std::pair<std::string, std::string>>* files,
    TempDirOwner* temp_dir, std::string* dir) {
  if (files != nullptr) {
    std::string why = WriteModelFiles(*files, temp_dir->get());
    if (!why.empty()) return PollFailure(name, why);
    *dir = *temp_dir->get();
  } else {
    for (const auto& repo : core->options.repo_paths) {
      if (IsDir(repo + "/" + name)) {
        *dir = repo + "/" + name;
        break;
      }
    }
  }
  if (name.empty() || name.find('/') != std::string::npos || dir->empty()) {
    LogError("failed to poll model '" + name +
             "': model not found in any model repository.");
    return Err(
        TRITONSERVER_ERROR_INTERNAL,
        "failed to load '" + name + "', failed to poll from model repository");
  }
  return nullptr;
}

// The model's config: the load's override, or config.pbtxt (or the
// configs/<model_config_name>.pbtxt the options name, when there is one),
// with Triton's defaults filled in.
TRITONSERVER_Error* ReadModelConfig(ServerCore* core, const std::string& name,
                                    const std::string& dir,
                                    const std::string* override_json,
                                    ModelConfig* cfg) {
  std::string error;
  if (override_json != nullptr) {
    if (!ParseModelConfigJson(*override_json, cfg, &error)) {
      return PollFailure(name, "Invalid config override: " + error);
    }
  } else {
    std::string path = dir + "/config.pbtxt";
    if (!core->options.model_config_name.empty()) {
      std::string alt =
          dir + "/configs/" + core->options.model_config_name + ".pbtxt";
      std::ifstream probe(alt);
      if (probe) path = alt;
    }
    std::string text;
    const bool found = ReadFile(path, &text);
    // Without strict model config a model may come without one: its
    // backend auto-completes it (the onnxruntime backend does).
    if (!found && !core->options.strict_config) {
      text.clear();
    } else if (!found) {
      return PollFailure(
          name, "Invalid model name: Could not determine backend for model '" +
                    name + "' with no backend in model configuration.");
    }
    if (!ParseModelConfigText(text, cfg, &error)) {
      return PollFailure(
          name, "failed to read text proto from " + path + ": " + error);
    }
  }
  std::map<std::string, bool> files;
  const bool has_version = FirstVersionFiles(dir, &files);
  FillBackendDefaults(has_version ? &files : nullptr, cfg);
  FillModelConfigDefaults(name, cfg);
  // Triton's poll requires the config's name to be the model's (an empty
  // one has just been filled in with it).
  if (cfg->name != name) {
    return PollFailure(name, "unexpected directory name '" + name +
                                 "' for model '" + cfg->name +
                                 "', directory name must equal model name");
  }
  if (cfg->backend.empty() && cfg->platform.empty()) {
    return PollFailure(
        name, "Invalid model name: Could not determine backend for model '" +
                  name +
                  "' with no backend in model configuration. Expected model "
                  "name of the form 'model.<backend_name>'.");
  }
  // Triton checks the whole config while polling; the fake checks what
  // concerns ensembles.
  if (IsEnsemble(*cfg) && !ValidateModelConfig(*cfg, &error)) {
    return PollFailure(name, error);
  }
  return nullptr;
}

// The version folders the model's version policy serves, ascending.
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
TRITONSERVER_Error* RefuseNoVersions(ServerCore* core,
                                     const std::string& name) {
  std::lock_guard<std::mutex> lock(core->mu);
  auto it = core->models.find(name);
  if (it != core->models.end()) {
    bool any_live = false;
    for (auto& kv : it->second.versions) any_live |= kv.second.model != nullptr;
    if (!any_live) core->models.erase(it);  // Triton drops it from the index
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
  std::string mode;
  if (backend == "onnxruntime" && !StandInFor(backend, &mode)) {
    return BackendKind::kOnnxRuntime;
  }
  if (backend != "identity") return BackendKind::kStandIn;
  return BackendKind::kIdentity;
}

// Why no backend can be created for the model, with the error code to
// report it under; "" when one can.
std::string BackendProblem(ServerCore* core, const ModelConfig& cfg,
                           TRITONSERVER_Error_Code* code) {
  *code = TRITONSERVER_ERROR_INVALID_ARG;
  const std::string& backend_dir = core->options.backend_dir;
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
  // (onnxruntime_backend.cc); a stand-in asked for it still wins.
  const bool own = cfg.backend == "identity" || cfg.backend == "repeat" ||
                   cfg.backend == "square" ||
                   cfg.backend == "fake_text_stream" ||
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
// reloads, as Triton does). Caller holds core->mu.
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
// failure. Caller holds core->mu.
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
// holds core->mu.
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
    ServerCore* core, const std::string& dir,
    const std::vector<int64_t>& chosen, ModelConfig* cfg,
    std::map<int64_t, std::shared_ptr<OnnxModel>>* sessions,
    TRITONSERVER_Error_Code* code) {
  const TRITONSERVER_ServerOptions& o = core->options;
  OnnxRuntimeSource source;
  source.library = BackendSetting(o, "onnxruntime", "fake-onnxruntime-library");
  source.searched =
      BackendSetting(o, "onnxruntime", "fake-onnxruntime-searched");
  const ort::Library* lib = nullptr;
  *code = TRITONSERVER_ERROR_UNAVAILABLE;
  std::string problem = OnnxRuntimeLibraryProblem(source, &lib);
  if (!problem.empty()) return problem;
  problem = OnnxBackendRestartProblem(core, code);
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
      if (session_leaked) OnnxBackendLoadFailed(core);
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
// model. Caller holds core->mu.
void StartVersions(
    ServerCore* core, const std::string& name, const ModelConfig& cfg,
    const std::vector<int64_t>& chosen,
    const std::map<int64_t, std::shared_ptr<OnnxModel>>& sessions,
    ModelEntry* entry) {
  const BackendParameters params = ReadBackendParameters(cfg);
  for (int64_t v : chosen) {
    uint64_t t0 = SteadyNs();
    auto m = std::make_shared<Model>();
    m->self = m;
    m->core = core->self.lock();
    m->name = name;
    m->version = v;
    m->config = cfg;
    m->backend = KindOfBackend(cfg);
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
    m->Start();
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

TRITONSERVER_Error* ServerCore::Load(
    const std::string& name, const std::string* override_json,
    const std::vector<std::pair<std::string, std::string>>* files) {
  std::lock_guard<std::mutex> load_lock(load_mu);
  if (stopping) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  }
  TRITONSERVER_Error* err = LoadModel(name, override_json, files);
  if (err != nullptr) return err;
  {
    std::lock_guard<std::mutex> lock(mu);
    models[name].explicitly_loaded = true;
  }
  ReloadWaitingEnsembles(name);
  return nullptr;
}

TRITONSERVER_Error* ServerCore::LoadModel(
    const std::string& name, const std::string* override_json,
    const std::vector<std::pair<std::string, std::string>>* files) {
  TempDirOwner temp_dir;
  std::string dir;
  if (TRITONSERVER_Error* err =
          FindModelDir(this, name, files, &temp_dir, &dir)) {
    return err;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    models[name].dir = dir;
  }
  ModelConfig cfg;
  if (TRITONSERVER_Error* err =
          ReadModelConfig(this, name, dir, override_json, &cfg)) {
    return err;
  }
  std::vector<int64_t> dirs = VersionDirs(dir);
  std::vector<int64_t> chosen = ChooseVersions(cfg.version_policy, dirs);
  if (chosen.empty()) return RefuseNoVersions(this, name);

  TRITONSERVER_Error_Code fail_code = TRITONSERVER_ERROR_INVALID_ARG;
  const bool ensemble = IsEnsemble(cfg);
  std::string fail =
      ensemble ? PrepareEnsemble(&cfg) : BackendProblem(this, cfg, &fail_code);
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
    fail = LoadOnnxVersions(this, dir, chosen, &cfg, &sessions, &fail_code);
    if (fail.empty() && cfg.has_sequence_batching) {
      fail = SequenceConfigProblem(cfg, &fail_code);
    }
    load_code = TRITONSERVER_ERROR_INVALID_ARG;
  }
  std::string new_json = ModelConfigToJson(cfg);
  std::lock_guard<std::mutex> lock(mu);
  if (fail.empty()) {
    fail = RateLimiterProblem(*this, name, cfg);
    fail_code = load_code = TRITONSERVER_ERROR_INVALID_ARG;
  }
  ModelEntry& entry = models[name];
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
  StartVersions(this, name, cfg, chosen, sessions, &entry);
  entry.config_json = new_json;
  entry.temp_dir = temp_dir.Release();
  return nullptr;
}

TRITONSERVER_Error* ServerCore::Unload(const std::string& name,
                                       bool dependents) {
  std::lock_guard<std::mutex> load_lock(load_mu);
  if (stopping) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  }
  std::set<std::string> steps;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = models.find(name);
    if (it == models.end()) return nullptr;  // as Triton: success
    UnloadEntry(&it->second);
    RemoveTempDir(&it->second.temp_dir);
    it->second.config_json.clear();
    it->second.explicitly_loaded = false;
    steps.swap(it->second.composing);  // out of the dependency graph
  }
  UnloadEnsemblesUsing(name);
  if (dependents) UnloadUnusedSteps(steps);
  return nullptr;
}

// Triton's cascading removal: an ensemble's steps' models that were not
// loaded by name and that no other ensemble uses. Caller holds load_mu.
void ServerCore::UnloadUnusedSteps(const std::set<std::string>& steps) {
  std::set<std::string> next;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& step : steps) {
      auto it = models.find(step);
      if (it == models.end() || it->second.explicitly_loaded) continue;
      bool used = false;
      for (auto& kv : models) used |= kv.second.composing.count(step) != 0;
      if (used) continue;
      UnloadEntry(&it->second);
      it->second.config_json.clear();
      next.insert(it->second.composing.begin(), it->second.composing.end());
      it->second.composing.clear();
    }
  }
  if (!next.empty()) UnloadUnusedSteps(next);
}

void ServerCore::UnloadEnsemblesUsing(const std::string& name) {
  std::vector<std::string> users;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& kv : models) {
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
  for (const auto& user : users) UnloadEnsemblesUsing(user);
}

void ServerCore::UnloadAll() {
  std::lock_guard<std::mutex> load_lock(load_mu);
  std::lock_guard<std::mutex> lock(mu);
  for (auto& kv : models) {
    UnloadEntry(&kv.second);
    RemoveTempDir(&kv.second.temp_dir);
    kv.second.config_json.clear();
  }
}

std::string ServerCore::IndexJson(bool ready_only) {
  std::lock_guard<std::mutex> lock(mu);
  std::string out = "[";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",";
    first = false;
  };
  for (auto& kv : models) {
    if (kv.second.versions.empty()) {
      if (ready_only) continue;
      sep();
      out += "{\"name\":";
      JsonEscape(kv.first, &out);
      out += "}";
      continue;
    }
    for (auto& v : kv.second.versions) {
      if (ready_only && v.second.state != VersionState::kReady) continue;
      sep();
      out += "{\"name\":";
      JsonEscape(kv.first, &out);
      out += ",\"version\":\"" + std::to_string(v.first) + "\",\"state\":\"" +
             StateName(v.second.state) + "\"";
      if (v.second.state == VersionState::kUnavailable) {
        out += ",\"reason\":";
        JsonEscape(v.second.reason, &out);
      }
      out += "}";
    }
  }
  return out + "]";
}

bool ServerCore::AllModelsReady() {
  std::lock_guard<std::mutex> lock(mu);
  for (auto& kv : models) {
    // Scanned but never loaded: not in Triton's lifecycle map, not counted.
    for (auto& v : kv.second.versions) {
      if (v.second.state != VersionState::kReady &&
          v.second.reason != "unloaded") {
        return false;
      }
    }
  }
  return true;
}

}  // namespace fake

using namespace fake;

static TRITONSERVER_Error* NotReadyAfterStop(TRITONSERVER_Server* server) {
  if (server->core->stopping) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  }
  return nullptr;
}

static TRITONSERVER_Error* ModelControlAllowed(TRITONSERVER_Server* server) {
  if (server->core->options.mode != TRITONSERVER_MODEL_CONTROL_EXPLICIT) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE,
               "explicit model load / unload is not allowed if polling is "
               "enabled");
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerLoadModel(
    TRITONSERVER_Server* server, const char* model_name) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  return server->core->Load(model_name, nullptr);
}

namespace {

// An in-memory model's parameters: every "file:<path>" one must be BYTES
// (its path and bytes go to *files), and a STRING "config" must be among
// them.
TRITONSERVER_Error* CollectModelFiles(
    const std::string& name, const TRITONSERVER_Parameter** parameters,
    uint64_t parameter_count,
    std::vector<std::pair<std::string, std::string>>* files) {
  bool found_config = false;
  for (uint64_t i = 0; i < parameter_count; ++i) {
    const TRITONSERVER_Parameter* p = parameters[i];
    if (p->name == "config") {
      if (p->type != TRITONSERVER_PARAMETER_STRING) {
        return PollFailure(
            name,
            "Config parameter 'config' must have string type for its value");
      }
      found_config = true;
    } else if (p->name.rfind("file:", 0) == 0) {
      if (p->type != TRITONSERVER_PARAMETER_BYTES) {
        return PollFailure(name, "File parameter '" + p->name +
                                     "' must have bytes type for its value");
      }
      files->emplace_back(p->name.substr(5), p->str);
    }
  }
  if (!found_config) {
    return PollFailure(name,
                       "Load parameter 'config' must be specified for model "
                       "file override");
  }
  return nullptr;
}

// The first STRING "config" parameter (null when none); every parameter
// before it must be a "file:" one.
TRITONSERVER_Error* FindConfigOverride(
    const std::string& name, const TRITONSERVER_Parameter** parameters,
    uint64_t parameter_count, const std::string** config) {
  for (uint64_t i = 0; i < parameter_count; ++i) {
    const TRITONSERVER_Parameter* p = parameters[i];
    if (p->name == "config" && p->type == TRITONSERVER_PARAMETER_STRING) {
      *config = &p->str;
      return nullptr;
    }
    if (p->name.rfind("file:", 0) != 0) {
      static const char* kTypes[] = {"STRING", "INT", "BOOL", "DOUBLE",
                                     "BYTES"};
      return PollFailure(name, "Unrecognized load parameter '" + p->name +
                                   "' with type '" + kTypes[p->type % 5] + "'");
    }
  }
  return nullptr;
}

}  // namespace

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerLoadModelWithParameters(
    TRITONSERVER_Server* server, const char* model_name,
    const TRITONSERVER_Parameter** parameters, const uint64_t parameter_count) {
  // Checked before anything else, server included.
  if (parameters == nullptr && parameter_count != 0) {
    return ErrArg(
        "load parameters are not provided while parameter count is "
        "non-zero");
  }
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  for (uint64_t i = 0; i < parameter_count; ++i) {
    FAKE_LIVE(kParameter, parameters[i]);
  }
  FAKE_NOT_NULL(model_name);
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  // Triton's order: with any "file:" parameter (an in-memory model), the
  // files are checked and written first and a string "config" is required;
  // then the parameters up to the first string "config" must all be known.
  // Every failure is a poll failure (reason in the log only).
  std::vector<std::pair<std::string, std::string>> files;
  bool file_override = false;
  for (uint64_t i = 0; i < parameter_count; ++i) {
    if (parameters[i]->name.rfind("file:", 0) == 0) file_override = true;
  }
  const std::string name = model_name;
  if (file_override) {
    if (auto* e =
            CollectModelFiles(name, parameters, parameter_count, &files)) {
      return e;
    }
  }
  const std::string* config = nullptr;
  if (auto* e =
          FindConfigOverride(name, parameters, parameter_count, &config)) {
    return e;
  }
  return server->core->Load(name, config, file_override ? &files : nullptr);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerUnloadModel(
    TRITONSERVER_Server* server, const char* model_name) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  return server->core->Unload(model_name, false);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerUnloadModelAndDependents(
    TRITONSERVER_Server* server, const char* model_name) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  // The ensembles that use the model go with it in both calls (seen on
  // real r25.07: a plain unload of a step's model unloads its ensembles);
  // this one also unloads what an ensemble's steps brought in.
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  return server->core->Unload(model_name, true);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelIndex(
    TRITONSERVER_Server* server, uint32_t flags,
    TRITONSERVER_Message** model_index) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (auto* e = NotReadyAfterStop(server)) return e;
  FAKE_NOT_NULL(model_index);
  auto* m = new TRITONSERVER_Message();
  m->json =
      server->core->IndexJson((flags & TRITONSERVER_INDEX_FLAG_READY) != 0);
  *model_index = m;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelIsReady(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, bool* ready) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  FAKE_NOT_NULL(ready);
  *ready = false;
  if (auto* e = NotReadyAfterStop(server)) return e;
  std::shared_ptr<Model> m;
  TRITONSERVER_Error* e =
      server->core->FindReady(model_name, model_version, &m);
  *ready = e == nullptr;
  delete e;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelBatchProperties(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* flags, void** voidp) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (voidp != nullptr) *voidp = nullptr;
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->core->FindReady(model_name, model_version, &m))
    return e;
  FAKE_NOT_NULL(flags);
  *flags = m->config.max_batch_size > 0 ? TRITONSERVER_BATCH_FIRST_DIM
                                        : TRITONSERVER_BATCH_UNKNOWN;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelTransactionProperties(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* txn_flags, void** voidp) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (voidp != nullptr) *voidp = nullptr;
  // Triton writes 0 to it before looking the model up.
  FAKE_NOT_NULL(txn_flags);
  *txn_flags = 0;
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->core->FindReady(model_name, model_version, &m))
    return e;
  *txn_flags = m->config.decoupled ? TRITONSERVER_TXN_DECOUPLED
                                   : TRITONSERVER_TXN_ONE_TO_ONE;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelMetadata(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, TRITONSERVER_Message** model_metadata) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->core->FindReady(model_name, model_version, &m))
    return e;
  if (auto* e = NotReadyAfterStop(server)) return e;
  std::vector<int64_t> ready;
  {
    std::lock_guard<std::mutex> lock(server->core->mu);
    auto it = server->core->models.find(model_name);
    if (it != server->core->models.end()) {
      for (auto& kv : it->second.versions) {
        if (kv.second.state == VersionState::kReady) ready.push_back(kv.first);
      }
    }
  }
  FAKE_NOT_NULL(model_metadata);
  auto* msg = new TRITONSERVER_Message();
  msg->json = ModelMetadataJson(m->config, ready, m->stand_in);
  *model_metadata = msg;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelConfig(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, const uint32_t config_version,
    TRITONSERVER_Message** model_config) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->core->FindReady(model_name, model_version, &m))
    return e;
  if (config_version != 1) {
    return ErrArg("model configuration version " +
                  std::to_string(config_version) +
                  " not supported, supported versions are: 1");
  }
  FAKE_NOT_NULL(model_config);
  auto* msg = new TRITONSERVER_Message();
  msg->json = ModelConfigToJson(m->config);
  *model_config = msg;
  return nullptr;
}
