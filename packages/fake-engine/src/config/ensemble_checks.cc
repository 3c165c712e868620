// The checks Triton makes on an ensemble: on its config alone when it reads
// the repository (the steps and the flow of tensors from the ensemble's
// inputs to its outputs), and against its composing models' configs once
// those are loaded (every input mapped, data types and shapes consistent,
// batch sizes, and which outputs come from decoupled models). Messages and
// order are Triton's (r25.07).
#include <deque>
#include <memory>
#include <set>
#include <unordered_map>

#include "model_config.h"

namespace fake {
namespace {

bool HasIgnoredField(const ModelConfig& cfg, const char* name) {
  for (const auto& f : cfg.ignored_fields) {
    if (f == name) return true;
  }
  return false;
}

// ---- the flow of tensors through the steps (config only) -------------------

struct FlowTensor {
  std::string name;
  bool written_by_step = false;  // appears in an output map
  bool ready = false;
  std::vector<FlowTensor*> prev;
  std::vector<FlowTensor*> next;
};

using FlowGraph = std::unordered_map<std::string, FlowTensor>;

FlowTensor* FlowNode(FlowGraph* graph, const std::string& name) {
  auto it = graph->find(name);
  if (it == graph->end()) {
    it = graph->emplace(name, FlowTensor()).first;
    it->second.name = name;
  }
  return &it->second;
}

bool BuildFlowGraph(const ModelConfig& cfg, FlowGraph* graph,
                    std::string* error) {
  const std::string of = " of ensemble '" + cfg.name + "'";
  for (size_t i = 0; i < cfg.ensemble_steps.size(); ++i) {
    const EnsembleStepConfig& step = cfg.ensemble_steps[i];
    const std::string where = " in step " + std::to_string(i) + of;
    if (step.model_name.empty()) {
      *error = "must specify 'model_name'" + where;
      return false;
    }
    if (step.input_map.empty()) {
      *error = "must specify 'input_map'" + where;
      return false;
    }
    if (step.output_map.empty()) {
      *error = "must specify 'output_map'" + where;
      return false;
    }
    std::vector<FlowTensor*> outputs;
    for (const auto& out : step.output_map) {
      FlowTensor* t = FlowNode(graph, out.second);
      if (t->written_by_step) {
        *error = "ensemble tensor '" + out.second +
                 "' can appear in an output map only once for ensemble '" +
                 cfg.name + "' step " + std::to_string(i);
        return false;
      }
      t->written_by_step = true;
      outputs.push_back(t);
    }
    for (const auto& in : step.input_map) {
      FlowTensor* t = FlowNode(graph, in.second);
      for (FlowTensor* o : outputs) {
        o->prev.push_back(t);
        t->next.push_back(o);
      }
    }
  }
  return true;
}

// Marks every tensor reachable from the ensemble's inputs (a step's outputs
// once all its inputs are).
bool PropagateReady(const ModelConfig& cfg, FlowGraph* graph,
                    std::string* error) {
  std::deque<FlowTensor*> ready;
  for (const auto& in : cfg.input) {
    auto it = graph->find(in.name);
    if (it == graph->end()) {
      *error = "ensemble input '" + in.name + "' for ensemble " + cfg.name +
               "' is not used";
      return false;
    }
    it->second.ready = true;
    ready.push_back(&it->second);
  }
  while (!ready.empty()) {
    for (FlowTensor* next : ready.front()->next) {
      if (next->ready) continue;
      bool all = true;
      for (FlowTensor* p : next->prev) all = all && p->ready;
      next->ready = all;
      if (all) ready.push_back(next);
    }
    ready.pop_front();
  }
  return true;
}

// An output no step writes: names the first tensor upstream of it that is
// not connected, as Triton does.
std::string NotWritten(const ModelConfig& cfg, const FlowTensor& output) {
  std::string message = "output '" + output.name + "' for ensemble '" +
                        cfg.name + "' is not written";
  std::set<std::string> seen;
  const FlowTensor* last = &output;
  const std::vector<FlowTensor*>* prev = &output.prev;
  while (prev != nullptr && !prev->empty()) {
    const std::vector<FlowTensor*>& nodes = *prev;
    prev = nullptr;
    for (const FlowTensor* node : nodes) {
      if (!node->ready && seen.insert(node->name).second) {
        last = node;
        prev = &node->prev;
        break;
      }
    }
  }
  if (last != &output) {
    message += ": at least one of its depending tensors, '" + last->name +
               "', is not connected";
  }
  return message;
}

bool CheckOutputsAndUnused(const ModelConfig& cfg, const FlowGraph& graph,
                           std::string* error) {
  std::set<std::string> outputs;
  for (const auto& out : cfg.output) {
    auto it = graph.find(out.name);
    if (it == graph.end()) {
      *error = "ensemble output '" + out.name + "' for ensemble " + cfg.name +
               "' is not used";
      return false;
    }
    if (!it->second.ready) {
      *error = NotWritten(cfg, it->second);
      return false;
    }
    outputs.insert(out.name);
  }
  for (const auto& item : graph) {
    if (outputs.count(item.first) != 0) continue;
    if (!item.second.ready || item.second.next.empty()) {
      *error = "ensemble tensor '" + item.first + "' is unused in ensemble '" +
               cfg.name + "'";
      return false;
    }
  }
  return true;
}

// ---- against the composing models' configs ---------------------------------

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

bool SameDimsWithWildcard(const std::vector<int64_t>& a,
                          const std::vector<int64_t>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != -1 && b[i] != -1 && a[i] != b[i]) return false;
  }
  return true;
}

// An ensemble tensor as one model sees it (or a symbolic node: the
// ensemble's sink, or the shared label of one step's outputs).
struct TypedTensor {
  std::string model;
  std::string data_type;
  std::vector<int64_t> dims;
  std::vector<int64_t> full_dims;  // with -1 for the batch dimension
  bool decoupled = false;
  size_t label = 0;
  bool visited = false;
  std::vector<TypedTensor*> prev;
  std::vector<TypedTensor*> next;
  std::shared_ptr<TypedTensor> sibling;

  TypedTensor() = default;
  TypedTensor(const std::string& m, bool batching, const std::string& type,
              const std::vector<int64_t>& d)
      : model(m), data_type(type), dims(d) {
    if (batching) full_dims.push_back(-1);
    full_dims.insert(full_dims.end(), d.begin(), d.end());
  }
};

using TypedTensors = std::unordered_map<std::string, TypedTensor>;

bool Consistent(const TypedTensor& a, const TypedTensor& b,
                const std::string& prefix, std::string* error) {
  if (a.data_type != b.data_type) {
    *error = prefix + "inconsistent data type: " + a.data_type +
             " is inferred from model " + a.model + " while " + b.data_type +
             " is inferred from model " + b.model;
    return false;
  }
  if (!SameDimsWithWildcard(a.dims, b.dims) &&
      !SameDimsWithWildcard(a.full_dims, b.full_dims)) {
    *error = prefix + "inconsistent shape: " + DimsString(a.full_dims) +
             " is inferred from model " + a.model + " while " +
             DimsString(b.full_dims) + " is inferred from model " + b.model;
    return false;
  }
  return true;
}

struct StepCheck {
  const std::string& ensemble;
  const EnsembleStepConfig& step;
  const ModelConfig& model;
  TypedTensors* tensors;
};

// Records `tensor` under its ensemble name, or checks it against what is
// already recorded there.
bool MapTensor(const StepCheck& c, const std::string& ensemble_name,
               const TensorConfig& t, TypedTensor** out, std::string* error) {
  TypedTensor typed(c.step.model_name, c.model.max_batch_size > 0, t.data_type,
                    t.dims);
  auto it = c.tensors->find(ensemble_name);
  if (it != c.tensors->end()) {
    if (!Consistent(it->second, typed,
                    "in ensemble " + c.ensemble + ", ensemble tensor " +
                        ensemble_name + ": ",
                    error)) {
      return false;
    }
  } else {
    it = c.tensors->emplace(ensemble_name, typed).first;
  }
  *out = &it->second;
  return true;
}

bool CheckStepInputs(const StepCheck& c, std::string* error) {
  const std::string in_ensemble = "in ensemble " + c.ensemble + ", ";
  const std::string in_model = " in model " + c.step.model_name;
  for (const auto& m : c.step.input_map) {
    bool known = false;
    for (const auto& t : c.model.input) known = known || t.name == m.first;
    if (!known) {
      *error = in_ensemble + "ensemble tensor " + m.second +
               " is mapping to non-existing input " + m.first + in_model;
      return false;
    }
  }
  for (const auto& t : c.model.input) {
    auto m = c.step.input_map.find(t.name);
    if (m == c.step.input_map.end()) {
      if (t.optional) continue;
      *error = in_ensemble + "input " + t.name + in_model +
               " is not mapped to any ensemble tensors";
      return false;
    }
    TypedTensor* unused;
    if (!MapTensor(c, m->second, t, &unused, error)) return false;
  }
  return true;
}

bool CheckStepOutputs(const StepCheck& c, std::string* error) {
  const std::string in_ensemble = "in ensemble " + c.ensemble + ", ";
  for (const auto& m : c.step.output_map) {
    bool known = false;
    for (const auto& t : c.model.output) known = known || t.name == m.first;
    if (!known) {
      *error = in_ensemble + "ensemble tensor " + m.second +
               " is mapped from non-existing output " + m.first + " in model " +
               c.step.model_name;
      return false;
    }
  }
  auto sibling = std::make_shared<TypedTensor>();
  sibling->model = c.step.model_name;
  for (const auto& m : c.step.output_map) {
    for (const auto& t : c.model.output) {
      if (t.name != m.first) continue;
      TypedTensor* node;
      if (!MapTensor(c, m.second, t, &node, error)) return false;
      node->sibling = sibling;
    }
  }
  // Each output follows every input of the step.
  for (const auto& out : c.step.output_map) {
    TypedTensor& node = c.tensors->at(out.second);
    node.decoupled = c.model.decoupled;
    for (const auto& in : c.step.input_map) {
      TypedTensor& prev = c.tensors->at(in.second);
      node.prev.push_back(&prev);
      prev.next.push_back(&node);
    }
  }
  return true;
}

// The decoupled label a node gets once all its inputs are labelled: a new
// one after each decoupled step, shared by the outputs of one step.
void LabelNode(TypedTensor* node, size_t* next_label) {
  const size_t inherited = node->prev.empty() ? 0 : node->prev[0]->label;
  if (node->sibling != nullptr) {
    if (node->sibling->visited) {
      node->label = node->sibling->label;
    } else {
      node->label = node->decoupled ? ++*next_label : inherited;
      node->sibling->label = node->label;
      node->sibling->visited = true;
    }
  } else {
    node->label = node->decoupled ? ++*next_label : inherited;
  }
}

// Walks the tensors from the ensemble's inputs: a step (or the ensemble's
// outputs) must not mix tensors that went through different decoupled
// models. *decoupled: whether any output went through one.
bool CheckDecoupledFlow(const ModelConfig& ens, TypedTensors* tensors,
                        bool* decoupled, std::string* error) {
  size_t next_label = 0;
  std::deque<TypedTensor*> current;
  for (const auto& in : ens.input) {
    TypedTensor& t = tensors->at(in.name);
    t.visited = true;
    current.push_back(&t);
  }
  while (!current.empty()) {
    for (TypedTensor* next : current.front()->next) {
      if (next->visited) continue;
      bool ready = true;
      for (TypedTensor* p : next->prev) ready = ready && p->visited;
      if (!ready) continue;
      const size_t first = next->prev[0]->label;
      for (TypedTensor* p : next->prev) {
        if (p->label != first) {
          *error = "in ensemble " + ens.name + ", step of model '" +
                   next->model +
                   "' receives inputs originated from different decoupled "
                   "models";
          return false;
        }
      }
      LabelNode(next, &next_label);
      next->visited = true;
      current.push_back(next);
    }
    current.pop_front();
  }
  *decoupled = next_label != 0;
  return true;
}

}  // namespace

bool ValidateEnsembleScheduling(const ModelConfig& cfg, std::string* error) {
  const std::string quoted = "'" + cfg.name + "'";
  if (cfg.platform != "ensemble") {
    *error = "ensemble scheduling cannot be set for model " + quoted +
             " whose platform is not ensemble";
    return false;
  }
  if (!cfg.instance_group.empty()) {
    *error = "instance group should not be specified for ensemble " + quoted;
    return false;
  }
  if (HasIgnoredField(cfg, "optimization")) {
    *error = "optimization should not be specified for ensemble " + quoted;
    return false;
  }
  // Triton also refuses a non-empty model_warmup here; the fake keeps no
  // more than the presence of that field (an empty list is fine).
  if (cfg.ensemble_steps.empty()) {
    *error = "must specify 'step' for ensemble " + quoted;
    return false;
  }
  FlowGraph graph;
  return BuildFlowGraph(cfg, &graph, error) &&
         PropagateReady(cfg, &graph, error) &&
         CheckOutputsAndUnused(cfg, graph, error);
}

bool ValidateEnsembleSteps(const ModelConfig& ens,
                           const std::vector<const ModelConfig*>& composing,
                           bool* decoupled, std::string* error) {
  const bool batching = ens.max_batch_size > 0;
  TypedTensors tensors;
  for (const auto& in : ens.input) {
    tensors.emplace(in.name,
                    TypedTensor(ens.name, batching, in.data_type,
                                in.has_reshape ? in.reshape : in.dims));
  }
  TypedTensor sink;
  sink.model = ens.name;
  for (const auto& out : ens.output) {
    auto it =
        tensors
            .emplace(out.name,
                     TypedTensor(ens.name, batching, out.data_type,
                                 out.has_reshape ? out.reshape : out.dims))
            .first;
    sink.prev.push_back(&it->second);
    it->second.next.push_back(&sink);
  }
  for (size_t i = 0; i < ens.ensemble_steps.size(); ++i) {
    const EnsembleStepConfig& step = ens.ensemble_steps[i];
    const ModelConfig& model = *composing[i];
    if (model.max_batch_size != 0 &&
        model.max_batch_size < ens.max_batch_size) {
      *error = "ensemble " + ens.name + " allows maximum batch size " +
               std::to_string(ens.max_batch_size) + ", but it contains model " +
               step.model_name +
               " which only allows maximum batch size to be " +
               std::to_string(model.max_batch_size);
      return false;
    }
    StepCheck check{ens.name, step, model, &tensors};
    if (!CheckStepInputs(check, error) || !CheckStepOutputs(check, error)) {
      return false;
    }
  }
  return CheckDecoupledFlow(ens, &tensors, decoupled, error);
}

}  // namespace fake
