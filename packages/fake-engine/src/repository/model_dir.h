// A model's files in the repository (model_dir.cc): its folder (or the
// temporary one an in-memory model's files are written to), its version
// folders, and its config read as Triton's poll reads it.
#ifndef TRITON_NODE_FAKE_REPOSITORY_MODEL_DIR_H_
#define TRITON_NODE_FAKE_REPOSITORY_MODEL_DIR_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../../include/triton_capi.h"
#include "../config/model_config.h"
#include "../core/engine.h"

namespace fake {

bool IsDir(const std::string& p);
// The folders in `dir` (not hidden ones), sorted by name.
std::vector<std::string> SubDirs(const std::string& dir);
// The model's version folders (numeric names), ascending.
std::vector<int64_t> VersionDirs(const std::string& dir);
bool IsEnsemble(const ModelConfig& cfg);

// A load that failed while polling the repository: the reason goes to the
// log, the caller gets Triton's "failed to poll from model repository".
TRITONSERVER_Error* PollFailure(const std::string& name,
                                const std::string& why);

// Removes an in-memory model's temporary directory (quietly: nothing
// depends on it once the model that used it is gone).
void RemoveTempDir(std::string* dir);

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

// The model's directory: a new temporary one holding an in-memory model's
// `files` (the repository is not consulted at all then, as in Triton), or
// its folder in the first repository that has one (a folder may have
// appeared since the scan). Null with *dir set, or the load's error.
TRITONSERVER_Error* FindModelDir(
    Engine* engine, const std::string& name,
    const std::vector<std::pair<std::string, std::string>>* files,
    TempDirOwner* temp_dir, std::string* dir);

// The model's config: the load's override, or config.pbtxt (or the
// configs/<model_config_name>.pbtxt the options name, when there is one),
// with Triton's defaults filled in.
TRITONSERVER_Error* ReadModelConfig(Engine* engine, const std::string& name,
                                    const std::string& dir,
                                    const std::string* override_json,
                                    ModelConfig* cfg);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_REPOSITORY_MODEL_DIR_H_
