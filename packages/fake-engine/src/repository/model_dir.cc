// A model's files in the repository (model_dir.h).
#include "model_dir.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "../core/error.h"
#include "../support/log.h"

namespace fake {

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

void RemoveTempDir(std::string* dir) {
  if (dir->empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  if (ec) LogError("cannot remove '" + *dir + "': " + ec.message());
  dir->clear();
}

namespace {

// What a path that exists is when it is not a regular file ("" for a
// regular file, or a path that cannot be stat'ed).
std::string NotRegular(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

// A config file's text. False when it is missing; *refused says why a file
// that is there is not read (a FIFO would make the read wait for a writer
// for good, /dev/zero never end).
bool ReadFile(const std::string& path, std::string* out, std::string* refused) {
  const std::string kind = NotRegular(path);
  if (!kind.empty()) {
    *refused =
        "cannot read " + path + ": it is " + kind + ", not a regular file";
    return false;
  }
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

}  // namespace

TRITONSERVER_Error* FindModelDir(
    Engine* engine, const std::string& name,
    const std::vector<std::pair<std::string, std::string>>* files,
    TempDirOwner* temp_dir, std::string* dir) {
  if (files != nullptr) {
    std::string why = WriteModelFiles(*files, temp_dir->get());
    if (!why.empty()) return PollFailure(name, why);
    *dir = *temp_dir->get();
  } else {
    for (const auto& repo : engine->options.repo_paths) {
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

TRITONSERVER_Error* ReadModelConfig(Engine* engine, const std::string& name,
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
    if (!engine->options.model_config_name.empty()) {
      std::string alt =
          dir + "/configs/" + engine->options.model_config_name + ".pbtxt";
      struct stat st;
      if (::stat(alt.c_str(), &st) == 0) path = alt;
    }
    std::string text, refused;
    const bool found = ReadFile(path, &text, &refused);
    if (!refused.empty()) {
      LogError("failed to load '" + name + "': " + refused);
      return Err(TRITONSERVER_ERROR_INVALID_ARG,
                 "load failed for model '" + name + "': " + refused);
    }
    // Without strict model config a model may come without one: its
    // backend auto-completes it (the onnxruntime backend does).
    if (!found && !engine->options.strict_config) {
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
  // concerns ensembles and sequence control inputs.
  if (IsEnsemble(*cfg) && !ValidateModelConfig(*cfg, &error)) {
    return PollFailure(name, error);
  }
  if (cfg->has_sequence_batching && !ValidateSequenceControls(*cfg, &error)) {
    return PollFailure(name, error);
  }
  return nullptr;
}

}  // namespace fake
