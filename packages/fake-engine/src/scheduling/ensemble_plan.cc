// An ensemble's plan (ensemble_plan.h), made when the ensemble loads.
#include "ensemble_plan.h"

#include <utility>

namespace fake {

std::shared_ptr<const EnsemblePlan> MakeEnsemblePlan(const ModelConfig& cfg) {
  auto plan = std::make_shared<EnsemblePlan>();
  plan->name = cfg.name;
  plan->decoupled = cfg.decoupled;
  for (const auto& in : cfg.input) {
    plan->tensor_to_step.emplace(in.name, std::set<size_t>());
    if (in.optional) plan->optional_inputs.insert(in.name);
  }
  for (const auto& out : cfg.output) {
    plan->tensor_to_step.emplace(out.name, std::set<size_t>());
    plan->outputs[out.name] = &out;
  }
  for (const auto& s : cfg.ensemble_steps) {
    const size_t idx = plan->steps.size();
    EnsemblePlan::Step step;
    step.model_name = s.model_name;
    step.model_version = s.model_version;
    for (const auto& m : s.input_map) {
      plan->tensor_to_step[m.second].insert(idx);
      step.input_to_tensor.emplace(m.first, m.second);
    }
    for (const auto& m : s.output_map) {
      plan->tensor_to_step.emplace(m.second, std::set<size_t>());
      step.output_to_tensor.emplace(m.first, m.second);
      plan->tensor_to_prev_step.emplace(m.second, idx);
    }
    plan->steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace fake
