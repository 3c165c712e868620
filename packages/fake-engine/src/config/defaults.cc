// The defaults Triton fills into a model config after reading it.
#include "model_config.h"

namespace fake {
namespace {

// The first version directory holds `name` (as a directory or not).
bool Holds(const std::map<std::string, bool>* files, const char* name,
           bool want_dir, bool either = false) {
  if (files == nullptr) return false;
  auto it = files->find(name);
  return it != files->end() && (either || it->second == want_dir);
}

// TensorFlow needs its platform: from the default file name or the files.
void FillTensorFlowPlatform(const std::map<std::string, bool>* files,
                            ModelConfig* cfg) {
  if (!cfg->platform.empty() ||
      (!cfg->backend.empty() && cfg->backend != "tensorflow")) {
    return;
  }
  if (cfg->default_model_filename == "model.savedmodel") {
    cfg->platform = "tensorflow_savedmodel";
  } else if (cfg->default_model_filename == "model.graphdef") {
    cfg->platform = "tensorflow_graphdef";
  } else if (cfg->default_model_filename.empty()) {
    if (Holds(files, "model.savedmodel", true)) {
      cfg->platform = "tensorflow_savedmodel";
    }
    if (Holds(files, "model.graphdef", false)) {
      cfg->platform = "tensorflow_graphdef";
    }
  }
}

// One backend Triton knows by platform, file name, or the model's file.
struct KnownBackend {
  const char* backend;
  const char* platform;  // "" when it has none
  const char* filename;
  int file_kind;  // 0: a file, 1: a directory, 2: either
};

const KnownBackend kKnownBackends[] = {
    {"tensorrt", "tensorrt_plan", "model.plan", 0},
    {"onnxruntime", "onnxruntime_onnx", "model.onnx", 2},
    {"openvino", "", "model.xml", 2},
    {"pytorch", "pytorch_libtorch", "model.pt", 0},
    {"python", "", "model.py", 2},
};

}  // namespace

void FillBackendDefaults(const std::map<std::string, bool>* files,
                         ModelConfig* cfg) {
  FillTensorFlowPlatform(files, cfg);
  if (cfg->platform == "tensorflow_savedmodel" ||
      cfg->platform == "tensorflow_graphdef") {
    if (cfg->backend.empty()) cfg->backend = "tensorflow";
    if (cfg->default_model_filename.empty()) {
      cfg->default_model_filename = cfg->platform == "tensorflow_savedmodel"
                                        ? "model.savedmodel"
                                        : "model.graphdef";
    }
    return;
  }
  for (const KnownBackend& k : kKnownBackends) {
    if (cfg->backend.empty()) {
      const bool named =
          (k.platform[0] != '\0' && cfg->platform == k.platform) ||
          cfg->default_model_filename == k.filename;
      const bool found =
          cfg->platform.empty() && cfg->default_model_filename.empty() &&
          Holds(files, k.filename, k.file_kind == 1, k.file_kind == 2);
      if (named || found) cfg->backend = k.backend;
    }
    if (cfg->backend != k.backend) continue;
    if (cfg->platform.empty() && k.platform[0] != '\0') {
      cfg->platform = k.platform;
    }
    // PyTorch models run by the Python runtime keep their own file name.
    const bool python_runtime =
        cfg->backend == "pytorch" && cfg->runtime == "model.py";
    if (cfg->default_model_filename.empty() && !python_runtime) {
      cfg->default_model_filename = k.filename;
    }
    return;
  }
}

void FillModelConfigDefaults(const std::string& model_name, ModelConfig* cfg) {
  if (cfg->name.empty()) cfg->name = model_name;
  if (cfg->dynamic_batching.present &&
      cfg->dynamic_batching.preferred_batch_size.empty() &&
      cfg->max_batch_size > 0) {
    cfg->dynamic_batching.preferred_batch_size.push_back(cfg->max_batch_size);
  }
  // Triton's default idle time of a sequence: 1 s.
  if (cfg->has_sequence_batching &&
      cfg->sequence_batching.max_sequence_idle_microseconds == 0) {
    cfg->sequence_batching.max_sequence_idle_microseconds = 1000000;
  }
  // Ensembles have no instances of their own.
  if (cfg->has_ensemble_scheduling) return;
  if (cfg->instance_group.empty()) {
    InstanceGroupConfig group;
    group.name = cfg->name;
    group.count = 0;  // the default count, below
    cfg->instance_group.push_back(group);
  }
  // Triton's default count: 2 CPU instances for the backends that opt in
  // (onnxruntime, tensorflow), else 1.
  const bool two_cpu_instances =
      cfg->backend == "onnxruntime" || cfg->backend == "tensorflow";
  for (size_t i = 0; i < cfg->instance_group.size(); ++i) {
    InstanceGroupConfig& group = cfg->instance_group[i];
    if (group.name.empty()) group.name = cfg->name + "_" + std::to_string(i);
    // The fake engine is a CPU-only build: KIND_AUTO resolves to CPU there.
    // An explicit KIND_GPU stays as written.
    if (group.kind == "KIND_AUTO") group.kind = "KIND_CPU";
    if (group.count < 1) {
      group.count = group.kind == "KIND_CPU" && two_cpu_instances ? 2 : 1;
    }
  }
}

}  // namespace fake
