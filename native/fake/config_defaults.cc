// The defaults Triton fills into a model config after reading it.
#include "model_config.h"

namespace fake {

void FillModelConfigDefaults(const std::string& model_name, ModelConfig* cfg) {
  if (cfg->name.empty()) cfg->name = model_name;
  if (cfg->dynamic_batching.present &&
      cfg->dynamic_batching.preferred_batch_size.empty() &&
      cfg->max_batch_size > 0) {
    cfg->dynamic_batching.preferred_batch_size.push_back(cfg->max_batch_size);
  }
  // Ensembles have no instances of their own.
  if (cfg->has_ensemble_scheduling) return;
  if (cfg->instance_group.empty()) {
    InstanceGroupConfig group;
    group.name = cfg->name;
    cfg->instance_group.push_back(group);
  }
  for (size_t i = 0; i < cfg->instance_group.size(); ++i) {
    InstanceGroupConfig& group = cfg->instance_group[i];
    if (group.name.empty()) group.name = cfg->name + "_" + std::to_string(i);
    // The fake engine is a CPU-only build: KIND_AUTO resolves to CPU there.
    // An explicit KIND_GPU stays as written.
    if (group.kind == "KIND_AUTO") group.kind = "KIND_CPU";
    if (group.count < 1) group.count = 1;
  }
}

}  // namespace fake
