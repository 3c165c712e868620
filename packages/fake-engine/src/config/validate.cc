// The checks Triton makes on a model config read from the repository (after
// its defaults are filled), with Triton's messages; and the fake's own
// bound on a sequence model's state (SequenceStateSizeProblem).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "data_types.h"
#include "model_config.h"

namespace fake {
namespace {

bool IsValidDim(int64_t d) { return d >= 1 || d == -1; }

// Element count of a shape, saturated; *variable says whether it has a -1.
int64_t ElementCount(const std::vector<int64_t>& dims, bool* variable) {
  int64_t n = 1;
  *variable = false;
  for (int64_t d : dims) {
    if (d == -1) {
      *variable = true;
    } else if (n <= std::numeric_limits<int64_t>::max() / d) {
      n *= d;
    } else {
      n = std::numeric_limits<int64_t>::max();
    }
  }
  return n;
}

// A tensor's reshape: valid dimensions, and element counts that agree with
// its dims where both are fixed (an empty reshape stands for a single
// element). `named` is "model input 'NAME' ".
bool ValidateReshape(const TensorConfig& t, const std::string& named,
                     std::string* error) {
  for (int64_t d : t.reshape) {
    if (!IsValidDim(d)) {
      *error = named +
               "reshape dimensions must be integer >= 1, or -1 to indicate "
               "a variable-size dimension";
      return false;
    }
  }
  bool dims_variable = false;
  bool reshape_variable = false;
  const int64_t dims_count = ElementCount(t.dims, &dims_variable);
  const int64_t reshape_count = ElementCount(t.reshape, &reshape_variable);
  if (dims_variable != reshape_variable ||
      (!dims_variable && dims_count != reshape_count)) {
    *error = named + "has different size for dims and reshape";
    return false;
  }
  return true;
}

bool ValidateTensor(const TensorConfig& t, bool is_input,
                    const ModelConfig& cfg, std::string* error) {
  const std::string prefix = is_input ? "model input " : "model output ";
  if (t.name.empty()) {
    *error = prefix + "must specify 'name'";
    return false;
  }
  const std::string named = prefix + "'" + t.name + "' ";
  if (t.datatype == TRITONSERVER_TYPE_INVALID) {
    *error = named + "must specify 'data_type'";
    return false;
  }
  if (t.dims.empty()) {
    *error = named + "must specify 'dims'";
    return false;
  }
  if (t.has_reshape && t.reshape.empty() && cfg.max_batch_size == 0) {
    *error = named +
             "cannot have empty reshape for non-batching model as scalar "
             "tensors are not supported";
    return false;
  }
  for (int64_t d : t.dims) {
    if (!IsValidDim(d)) {
      *error = named +
               "dimension must be integer >= 1, or -1 to indicate a "
               "variable-size dimension";
      return false;
    }
  }
  if (t.has_reshape && !ValidateReshape(t, named, error)) return false;
  if (is_input && t.format != "FORMAT_NONE" && t.dims.size() != 3) {
    *error = "model input NHWC/NCHW require 3 dims";
    return false;
  }
  return true;
}

// The model's backend or platform, and its max_batch_size.
bool ValidateBackendAndBatchSize(const ModelConfig& cfg, std::string* error) {
  if (cfg.backend.empty() && cfg.platform.empty()) {
    *error = "Invalid model name: Could not determine backend for model '" +
             cfg.name +
             "' with no backend in model configuration. Expected model "
             "name of the form 'model.<backend_name>'.";
    return false;
  }
  if (cfg.backend.empty() && cfg.platform != "ensemble") {
    *error = "unexpected platform type '" + cfg.platform + "' for " + cfg.name;
    return false;
  }
  if (!cfg.backend.empty() && cfg.platform == "ensemble") {
    *error = "Ensemble model '" + cfg.name + "' must have platform type '" +
             cfg.platform + "' and empty backend type";
    return false;
  }
  if (cfg.max_batch_size < 0) {
    *error = "'max_batch_size' must be non-negative value for " + cfg.name;
    return false;
  }
  return true;
}

bool ValidateDynamicBatching(const ModelConfig& cfg, std::string* error) {
  const DynamicBatchingConfig& db = cfg.dynamic_batching;
  for (int size : db.preferred_batch_size) {
    if (size <= 0) {
      *error =
          "dynamic batching preferred size must be positive for " + cfg.name;
      return false;
    }
    if (size > cfg.max_batch_size) {
      *error =
          "dynamic batching preferred size must be <= max batch size for " +
          cfg.name;
      return false;
    }
  }
  if (db.priority_levels == 0) return true;
  const std::string range =
      "range [1, " + std::to_string(db.priority_levels) + "] for " + cfg.name;
  if (db.default_priority_level == 0 ||
      db.default_priority_level > db.priority_levels) {
    *error = "default priority level must be in " + range;
    return false;
  }
  for (const auto& item : db.priority_queue_policy) {
    if (item.first == 0 || item.first > db.priority_levels) {
      *error = "priority queue policy must have priority level in " + range;
      return false;
    }
  }
  return true;
}

bool ValidateInstanceGroups(const ModelConfig& cfg, std::string* error) {
  if (cfg.instance_group.empty()) {
    *error = "must specify one or more 'instance group's for " + cfg.name;
    return false;
  }
  for (const auto& g : cfg.instance_group) {
    const std::string group =
        "instance group " + g.name + " of model " + cfg.name;
    if ((g.kind == "KIND_CPU" || g.kind == "KIND_MODEL") && !g.gpus.empty()) {
      *error =
          group + " has kind " + g.kind + " but specifies one or more GPUs";
      return false;
    }
    if (g.kind == "KIND_AUTO") {
      *error = group + " has unexpected kind KIND_AUTO";
      return false;
    }
    if (!g.profile.empty()) {
      *error = group + " and platform " + cfg.platform +
               "specifies profile field which is only supported for "
               "TensorRT models";
      return false;
    }
  }
  return true;
}

// A value of a control's type, as a tensor's one element.
template <typename T>
std::vector<char> ElementBytes(T v) {
  std::vector<char> out(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

bool IsBooleanKind(const std::string& kind) {
  return kind != "CONTROL_SEQUENCE_CORRID";
}

// The false/true values of a boolean control (exactly one list was set).
std::string BooleanValues(const SequenceControlConfig& c,
                          const std::string& model, SequenceControl* out) {
  const bool i32 = !c.int32_false_true.empty();
  const bool f32 = !c.fp32_false_true.empty();
  const bool b = !c.bool_false_true.empty();
  if (!i32 && !f32 && !b) {
    return "sequence batching must specify either 'int32_false_true', "
           "'fp32_false_true' or 'bool_false_true' for " +
           c.kind + " for " + model;
  }
  if ((i32 && f32) || (i32 && b) || (f32 && b)) {
    return "sequence batching specifies more than one from "
           "'int32_false_true', 'fp32_false_true' and 'bool_false_true' for " +
           c.kind + " for " + model;
  }
  const char* list = i32   ? "int32_false_true"
                     : f32 ? "fp32_false_true"
                           : "bool_false_true";
  const size_t n = i32   ? c.int32_false_true.size()
                   : f32 ? c.fp32_false_true.size()
                         : c.bool_false_true.size();
  if (n != 2) {
    return std::string("sequence batching control '") + list +
           "' must have exactly 2 entries for " + c.kind + " for " + model;
  }
  if (i32) {
    out->data_type = "TYPE_INT32";
    out->false_value = ElementBytes(c.int32_false_true[0]);
    out->true_value = ElementBytes(c.int32_false_true[1]);
  } else if (f32) {
    out->data_type = "TYPE_FP32";
    out->false_value = ElementBytes(c.fp32_false_true[0]);
    out->true_value = ElementBytes(c.fp32_false_true[1]);
  } else {
    out->data_type = "TYPE_BOOL";
    out->false_value = ElementBytes<uint8_t>(c.bool_false_true[0] ? 1 : 0);
    out->true_value = ElementBytes<uint8_t>(c.bool_false_true[1] ? 1 : 0);
  }
  return "";
}

bool Validate(const ModelConfig& cfg, std::string* error) {
  if (cfg.name.empty()) {
    *error = "model configuration must specify 'name'";
    return false;
  }
  if (!ValidateBackendAndBatchSize(cfg, error)) return false;
  if (cfg.dynamic_batching.present && !ValidateDynamicBatching(cfg, error)) {
    return false;
  }
  for (const auto& t : cfg.input) {
    if (!ValidateTensor(t, true, cfg, error)) return false;
  }
  for (const auto& t : cfg.output) {
    if (!ValidateTensor(t, false, cfg, error)) return false;
  }
  if (cfg.has_sequence_batching && !ValidateSequenceControls(cfg, error)) {
    return false;
  }
  if (cfg.has_ensemble_scheduling)
    return ValidateEnsembleScheduling(cfg, error);
  if (cfg.platform == "ensemble") {
    *error = "ensemble scheduling must be set for ensemble " + cfg.name +
             " whose platform is ensemble";
    return false;
  }
  return ValidateInstanceGroups(cfg, error);
}

// Bytes of one sequence's value of `dims` elements of `data_type`; false
// when they do not fit 64 bits.
bool StateValueBytes(const std::vector<int64_t>& dims,
                     const std::string& data_type, uint64_t* bytes) {
  const uint32_t size = DataTypeSize(DataTypeFromConfigName(data_type));
  uint64_t n = size == 0 ? 4 : size;
  for (int64_t d : dims) {
    const uint64_t k = d < 0 ? 1 : static_cast<uint64_t>(d);
    if (__builtin_mul_overflow(n, k, &n)) return false;
  }
  *bytes = n;
  return true;
}

std::string StateSizeProblem(const ModelConfig& cfg, const std::string& what,
                             const std::vector<int64_t>& dims,
                             const std::string& data_type,
                             uint64_t memory_bytes) {
  uint64_t bytes = 0;
  const bool fits = StateValueBytes(dims, data_type, &bytes);
  if (fits && bytes <= memory_bytes) return "";
  return "sequence_batching " + what + " of model '" + cfg.name + "': dims " +
         ShapeString(dims) + " of " + data_type + " take " +
         (fits ? std::to_string(bytes) + " bytes"
               : std::string("more bytes than 64 bits count")) +
         (what.compare(0, 6, "state ") == 0 ? " per sequence" : "") +
         ", more than this machine's " + std::to_string(memory_bytes) +
         " bytes of memory";
}

}  // namespace

std::string SequenceStateSizeProblem(const ModelConfig& cfg,
                                     uint64_t memory_bytes) {
  for (const auto& s : cfg.sequence_batching.state) {
    std::string e = StateSizeProblem(cfg, "state '" + s.input_name + "'",
                                     s.dims, s.data_type, memory_bytes);
    if (!e.empty()) return e;
    for (const auto& init : s.initial_state) {
      e = StateSizeProblem(
          cfg,
          "initial_state '" + init.name + "' of state '" + s.input_name + "'",
          init.dims, init.data_type, memory_bytes);
      if (!e.empty()) return e;
    }
  }
  return "";
}

bool ValidateModelConfig(const ModelConfig& cfg, std::string* error) {
  std::string message;
  if (Validate(cfg, &message)) return true;
  if (error != nullptr) *error = message;
  return false;
}

std::string FindSequenceControl(const ModelConfig& cfg, const std::string& kind,
                                SequenceControl* out) {
  *out = SequenceControl();
  std::vector<std::string> seen_tensors;
  bool seen = false;
  for (const auto& ci : cfg.sequence_batching.control_input) {
    if (ci.name.empty()) {
      return "sequence batching control tensor must have a name for " +
             cfg.name;
    }
    if (std::find(seen_tensors.begin(), seen_tensors.end(), ci.name) !=
        seen_tensors.end()) {
      return "sequence batching control tensor '" + ci.name +
             "' is specified for multiple control kinds for " + cfg.name;
    }
    seen_tensors.push_back(ci.name);
    for (const auto& c : ci.control) {
      if (c.kind != kind) continue;
      if (seen) {
        return "sequence batching specifies multiple " + kind +
               " tensors for " + cfg.name;
      }
      seen = true;
      out->tensor = ci.name;
      if (IsBooleanKind(kind)) {
        std::string e = BooleanValues(c, cfg.name, out);
        if (!e.empty()) return e;
      } else {
        out->data_type = c.data_type;
        if (!c.int32_false_true.empty() || !c.fp32_false_true.empty() ||
            !c.bool_false_true.empty()) {
          return "sequence batching must not specify either "
                 "'int32_false_true', 'fp32_false_true' or 'bool_false_true' "
                 "for " +
                 kind + " for " + cfg.name;
        }
      }
    }
  }
  out->datatype = DataTypeFromConfigName(out->data_type);
  return "";
}

// Triton's checks of the control inputs (the part of ValidateModelConfig
// for sequence batching).
bool ValidateSequenceControls(const ModelConfig& cfg, std::string* error) {
  SequenceControl c;
  for (const char* kind :
       {"CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_END",
        "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_CORRID"}) {
    *error = FindSequenceControl(cfg, kind, &c);
    if (!error->empty()) return false;
  }
  if (!c.tensor.empty() && c.datatype != TRITONSERVER_TYPE_UINT64 &&
      c.datatype != TRITONSERVER_TYPE_INT64 &&
      c.datatype != TRITONSERVER_TYPE_UINT32 &&
      c.datatype != TRITONSERVER_TYPE_INT32 &&
      c.datatype != TRITONSERVER_TYPE_BYTES) {
    *error = "unexpected data type for control CONTROL_SEQUENCE_CORRID for " +
             cfg.name +
             ". Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, "
             "TYPE_INT32 and TYPE_STRING";
    return false;
  }
  return true;
}

}  // namespace fake
