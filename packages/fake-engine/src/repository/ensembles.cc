// Ensembles in the model repository, as Triton's dependency graph handles
// them under explicit model control (r25.07, model_repository_manager.cc,
// seen on the real CPU build): loading an ensemble loads its steps' models
// that are new or changed (they stay loaded when the ensemble goes); the
// ensemble loads only once each is loaded at the versions its steps name
// and its tensors agree with theirs. Unloading a step's model unloads the
// ensemble; loading that model again loads the ensemble again.
#include "ensembles.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "../core/error.h"
#include "../support/log.h"
#include "repository.h"

namespace fake {
namespace {

// What loading one step's model gave.
struct ComposingLoad {
  bool polled = true;   // false: no readable model of that name
  std::string failure;  // why it failed to load ("" when it loaded)
};

// A load error's reason as Triton reports a composing model's ("version 1
// is at UNAVAILABLE state: ...;"), or false for a poll failure.
bool LoadFailureReason(const std::string& model, const std::string& message,
                       std::string* reason) {
  const std::string prefix = "load failed for model '" + model + "': ";
  if (message.compare(0, prefix.size(), prefix) != 0) return false;
  *reason = message.substr(prefix.size());
  if (!reason->empty() && reason->back() == '\n') reason->pop_back();
  return true;
}

std::string JoinNames(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

// Caller holds load_mu, not mu.
static std::set<int64_t> ReadyVersions(Engine* engine,
                                       const std::string& name) {
  std::set<int64_t> ready;
  std::lock_guard<std::mutex> lock(engine->mu);
  auto it = engine->models.find(name);
  if (it == engine->models.end()) return ready;
  for (auto& v : it->second.versions) {
    if (v.second.state == VersionState::kReady) ready.insert(v.first);
  }
  return ready;
}

// Triton's check of each step's model once the loads are done: loaded,
// and at every version a step asks for (the last missing one is named).
static std::string CheckComposing(
    Engine* engine, const ModelConfig& cfg, const std::string& model,
    const std::map<std::string, ComposingLoad>& loads) {
  const std::string depends =
      "ensemble '" + cfg.name + "' depends on '" + model + "' ";
  const std::set<int64_t> ready = ReadyVersions(engine, model);
  if (ready.empty()) {
    const std::string& failure = loads.at(model).failure;
    if (failure.empty()) return depends + "which has no loaded version.";
    return depends + "which has no loaded version. Model '" + model +
           "' loading failed with error: " + failure;
  }
  std::set<int64_t> required;
  for (const auto& step : cfg.ensemble_steps) {
    if (step.model_name == model) required.insert(step.model_version);
  }
  std::string problem;
  for (int64_t v : required) {
    if (v != -1 && ready.count(v) == 0) {
      problem = depends + "whose required version " + std::to_string(v) +
                " is not loaded.";
    }
  }
  return problem;
}

std::string PrepareEnsemble(Engine* engine, ModelConfig* cfg) {
  std::vector<std::string> order;
  for (const auto& step : cfg->ensemble_steps) {
    if (std::find(order.begin(), order.end(), step.model_name) == order.end()) {
      order.push_back(step.model_name);
    }
  }
  engine->loading.insert(cfg->name);
  std::map<std::string, ComposingLoad> loads;
  std::set<std::string> missing;
  for (const auto& model : order) {
    if (engine->loading.count(model) != 0) {
      engine->loading.erase(cfg->name);
      return "circular dependency between ensembles: " + cfg->name +
             " -> ... -> " + model + " -> " + cfg->name;
    }
    ComposingLoad& load = loads[model];
    // A loaded model is taken as it is (Triton reloads one whose files
    // changed; the fake does not look at files, and keeps the config a
    // model was loaded with).
    if (!ReadyVersions(engine, model).empty()) continue;
    TRITONSERVER_Error* e = LoadLocked(engine, model, nullptr, nullptr);
    if (e != nullptr) {
      load.polled = LoadFailureReason(model, e->msg, &load.failure);
      delete e;
    }
    // A model that cannot be read is not in the graph, unless it was
    // already (then its loaded versions serve on).
    if (!load.polled && ReadyVersions(engine, model).empty()) {
      missing.insert(model);
    }
  }
  engine->loading.erase(cfg->name);
  if (!missing.empty()) {
    return "ensemble " + cfg->name +
           " contains models that are not available or ambiguous: " +
           JoinNames(missing);
  }
  for (const auto& model : order) {
    std::string problem = CheckComposing(engine, *cfg, model, loads);
    if (!problem.empty()) return problem;
  }
  // The steps' completed configs (the highest ready version's).
  std::vector<std::shared_ptr<Model>> held;
  std::vector<const ModelConfig*> configs;
  for (const auto& step : cfg->ensemble_steps) {
    std::shared_ptr<Model> m;
    delete engine->FindReady(step.model_name, -1, &m);
    held.push_back(m);
    configs.push_back(&m->config);
  }
  bool decoupled = false;
  std::string error;
  if (!ValidateEnsembleSteps(*cfg, configs, &decoupled, &error)) return error;
  cfg->decoupled = decoupled;
  return "";
}

void ReloadWaitingEnsembles(Engine* engine, const std::string& name) {
  struct Waiting {
    std::string name;
    bool has_config;
    std::string config;
  };
  std::vector<Waiting> waiting;
  {
    std::lock_guard<std::mutex> lock(engine->mu);
    for (auto& kv : engine->models) {
      if (kv.second.composing.count(name) == 0) continue;
      bool serving = false;
      for (auto& v : kv.second.versions) {
        serving |= v.second.state == VersionState::kReady;
      }
      if (serving) continue;
      waiting.push_back(
          {kv.first, kv.second.has_override_config, kv.second.override_config});
    }
  }
  for (const auto& w : waiting) {
    TRITONSERVER_Error* e =
        LoadLocked(engine, w.name, w.has_config ? &w.config : nullptr, nullptr);
    if (e != nullptr) {
      LogError(e->msg);
      delete e;
    } else {
      ReloadWaitingEnsembles(engine, w.name);
    }
  }
}

}  // namespace fake
