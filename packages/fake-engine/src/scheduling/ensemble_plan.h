// How an ensemble runs, built once from its validated config (Triton's
// EnsembleInfo): its steps, which ensemble tensor feeds each step input
// and receives each step output, and which steps read each tensor.
#ifndef TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_PLAN_H_
#define TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "../config/model_config.h"

namespace fake {

struct EnsemblePlan {
  struct Step {
    std::string model_name;
    int64_t model_version = 0;
    // model input -> ensemble tensor; model output -> ensemble tensor.
    std::unordered_map<std::string, std::string> input_to_tensor;
    std::unordered_map<std::string, std::string> output_to_tensor;
  };
  std::string name;
  bool decoupled = false;
  // Triton keeps the outputs in this container and answers in its order.
  std::unordered_map<std::string, const TensorConfig*> outputs;
  std::set<std::string> optional_inputs;
  std::vector<Step> steps;
  // Which steps read each tensor; which step writes each.
  std::unordered_map<std::string, std::set<size_t>> tensor_to_step;
  std::unordered_map<std::string, size_t> tensor_to_prev_step;
};

std::shared_ptr<const EnsemblePlan> MakeEnsemblePlan(const ModelConfig& cfg);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_PLAN_H_
