// The intermediate form of a model config (already checked and typed by
// one of the readers) into the ModelConfig struct.
#include <limits>
#include <utility>

#include "intermediate.h"
#include "data_types.h"

namespace fake {
namespace config {
namespace {

std::string GetString(const Json& obj, const char* key) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}

bool GetBool(const Json& obj, const char* key) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

int64_t GetInt(const Json& obj, const char* key, int64_t dflt = 0) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_number() ? v->as_int() : dflt;
}

uint64_t GetUint(const Json& obj, const char* key) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_number() ? v->as_uint() : 0;
}

std::vector<int64_t> GetInt64List(const Json& obj, const char* key) {
  std::vector<int64_t> out;
  if (const Json* v = obj.find(key)) {
    for (size_t i = 0; i < v->size(); ++i) out.push_back(v->at(i).as_int());
  }
  return out;
}

bool ToUint32(uint64_t v, const std::string& what, uint32_t* out,
              std::string* error) {
  if (v > std::numeric_limits<uint32_t>::max()) {
    *error = what + " " + std::to_string(v) +
             " is larger than the fake engine supports";
    return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

TensorConfig ToTensor(const Json& obj) {
  TensorConfig t;
  t.name = GetString(obj, "name");
  if (obj.find("data_type") != nullptr) {
    t.data_type = GetString(obj, "data_type");
  }
  t.datatype = DataTypeFromConfigName(t.data_type);
  if (obj.find("format") != nullptr) t.format = GetString(obj, "format");
  t.dims = GetInt64List(obj, "dims");
  if (const Json* r = obj.find("reshape")) {
    t.has_reshape = true;
    t.reshape = GetInt64List(*r, "shape");
  }
  t.is_shape_tensor = GetBool(obj, "is_shape_tensor");
  t.allow_ragged_batch = GetBool(obj, "allow_ragged_batch");
  t.optional = GetBool(obj, "optional");
  t.label_filename = GetString(obj, "label_filename");
  t.is_non_linear_format_io = GetBool(obj, "is_non_linear_format_io");
  return t;
}

bool ToQueuePolicy(const Json& obj, const std::string& what,
                   QueuePolicyConfig* q, std::string* error) {
  q->present = true;
  if (obj.find("timeout_action") != nullptr) {
    q->timeout_action = GetString(obj, "timeout_action");
  }
  q->default_timeout_microseconds =
      GetUint(obj, "default_timeout_microseconds");
  q->allow_timeout_override = GetBool(obj, "allow_timeout_override");
  return ToUint32(GetUint(obj, "max_queue_size"), what + ".max_queue_size",
                  &q->max_queue_size, error);
}

bool ToVersionPolicy(const Json& vp, VersionPolicyConfig* policy,
                     std::string* error) {
  if (const Json* latest = vp.find("latest")) {
    policy->kind = VersionPolicyConfig::Kind::kLatest;
    return ToUint32(GetUint(*latest, "num_versions"),
                    "version_policy.latest.num_versions", &policy->num_versions,
                    error);
  }
  if (vp.find("all") != nullptr) {
    policy->kind = VersionPolicyConfig::Kind::kAll;
  } else if (const Json* specific = vp.find("specific")) {
    policy->kind = VersionPolicyConfig::Kind::kSpecific;
    policy->versions = GetInt64List(*specific, "versions");
  }
  // An empty `version_policy {}` chooses nothing; Triton then serves the
  // default (latest 1), which is what the struct already holds.
  return true;
}

void ToTensors(const Json& in, ModelConfig* cfg) {
  if (const Json* list = in.find("input")) {
    for (size_t i = 0; i < list->size(); ++i) {
      cfg->input.push_back(ToTensor(list->at(i)));
    }
  }
  if (const Json* list = in.find("output")) {
    for (size_t i = 0; i < list->size(); ++i) {
      TensorConfig t = ToTensor(list->at(i));
      t.format = "FORMAT_NONE";
      cfg->output.push_back(std::move(t));
    }
  }
}

InstanceGroupConfig ToInstanceGroup(const Json& g) {
  InstanceGroupConfig group;
  group.name = GetString(g, "name");
  group.kind = g.find("kind") != nullptr ? GetString(g, "kind") : "KIND_AUTO";
  // 0 (unset) becomes 1 in FillModelConfigDefaults, as in Triton.
  group.count = static_cast<int>(GetInt(g, "count", 0));
  for (int64_t gpu : GetInt64List(g, "gpus")) {
    group.gpus.push_back(static_cast<int>(gpu));
  }
  if (const Json* profiles = g.find("profile")) {
    for (size_t k = 0; k < profiles->size(); ++k) {
      group.profile.push_back(profiles->at(k).as_string());
    }
  }
  group.passive = GetBool(g, "passive");
  group.host_policy = GetString(g, "host_policy");
  if (const Json* rl = g.find("rate_limiter")) {
    group.has_rate_limiter = true;
    if (const Json* res = rl->find("resources")) {
      for (size_t k = 0; k < res->size(); ++k) {
        const Json& r = res->at(k);
        group.rate_limiter_resources.push_back(
            {GetString(r, "name"), GetBool(r, "global"),
             static_cast<uint32_t>(GetUint(r, "count"))});
      }
    }
    group.rate_limiter_priority =
        static_cast<uint32_t>(GetUint(*rl, "priority"));
  }
  return group;
}

bool ToDynamicBatching(const Json& db, DynamicBatchingConfig* d,
                       std::string* error) {
  d->present = true;
  for (int64_t size : GetInt64List(db, "preferred_batch_size")) {
    d->preferred_batch_size.push_back(static_cast<int>(size));
  }
  d->max_queue_delay_microseconds = GetUint(db, "max_queue_delay_microseconds");
  d->preserve_ordering = GetBool(db, "preserve_ordering");
  if (!ToUint32(GetUint(db, "priority_levels"),
                "dynamic_batching.priority_levels", &d->priority_levels,
                error) ||
      !ToUint32(GetUint(db, "default_priority_level"),
                "dynamic_batching.default_priority_level",
                &d->default_priority_level, error)) {
    return false;
  }
  if (const Json* q = db.find("default_queue_policy")) {
    if (!ToQueuePolicy(*q, "dynamic_batching.default_queue_policy",
                       &d->default_queue_policy, error)) {
      return false;
    }
  }
  if (const Json* pq = db.find("priority_queue_policy")) {
    for (const auto& item : pq->items()) {
      QueuePolicyConfig q;
      if (!ToQueuePolicy(item.second,
                         "dynamic_batching.priority_queue_policy." + item.first,
                         &q, error)) {
        return false;
      }
      d->priority_queue_policy[std::stoull(item.first)] = q;
    }
  }
  return true;
}

// cc_model_filenames, metric_tags and parameters.
void ToStringMaps(const Json& in, ModelConfig* cfg) {
  if (const Json* m = in.find("cc_model_filenames")) {
    for (const auto& item : m->items()) {
      cfg->cc_model_filenames[item.first] = item.second.as_string();
    }
  }
  if (const Json* m = in.find("metric_tags")) {
    for (const auto& item : m->items()) {
      cfg->metric_tags[item.first] = item.second.as_string();
    }
  }
  if (const Json* params = in.find("parameters")) {
    for (const auto& item : params->items()) {
      cfg->parameters[item.first] = GetString(item.second, "string_value");
    }
  }
}

std::map<std::string, std::string> ToStringMap(const Json* m) {
  std::map<std::string, std::string> out;
  if (m != nullptr) {
    for (const auto& item : m->items())
      out[item.first] = item.second.as_string();
  }
  return out;
}

SequenceControlConfig ToSequenceControl(const Json& c) {
  SequenceControlConfig control;
  // Protobuf's default kind is its first value.
  control.kind = c.find("kind") != nullptr ? GetString(c, "kind")
                                           : "CONTROL_SEQUENCE_START";
  if (c.find("data_type") != nullptr) {
    control.data_type = GetString(c, "data_type");
  }
  for (int64_t v : GetInt64List(c, "int32_false_true")) {
    control.int32_false_true.push_back(static_cast<int32_t>(v));
  }
  if (const Json* v = c.find("fp32_false_true")) {
    for (size_t i = 0; i < v->size(); ++i) {
      control.fp32_false_true.push_back(
          static_cast<float>(v->at(i).as_double()));
    }
  }
  if (const Json* v = c.find("bool_false_true")) {
    for (size_t i = 0; i < v->size(); ++i) {
      control.bool_false_true.push_back(v->at(i).as_bool());
    }
  }
  return control;
}

void ToSequenceBatching(const Json& sb, SequenceBatchingConfig* out) {
  out->max_sequence_idle_microseconds =
      GetUint(sb, "max_sequence_idle_microseconds");
  const Json* controls = sb.find("control_input");
  for (size_t i = 0; controls != nullptr && i < controls->size(); ++i) {
    const Json& ci = controls->at(i);
    SequenceControlInputConfig input;
    input.name = GetString(ci, "name");
    const Json* list = ci.find("control");
    for (size_t j = 0; list != nullptr && j < list->size(); ++j) {
      input.control.push_back(ToSequenceControl(list->at(j)));
    }
    out->control_input.push_back(std::move(input));
  }
  out->iterative_sequence = GetBool(sb, "iterative_sequence");
  const Json* states = sb.find("state");
  for (size_t i = 0; states != nullptr && i < states->size(); ++i) {
    const Json& st = states->at(i);
    SequenceStateConfig state;
    state.input_name = GetString(st, "input_name");
    state.output_name = GetString(st, "output_name");
    if (st.find("data_type") != nullptr) {
      state.data_type = GetString(st, "data_type");
    }
    state.datatype = DataTypeFromConfigName(state.data_type);
    state.dims = GetInt64List(st, "dims");
    state.use_same_buffer_for_input_output =
        GetBool(st, "use_same_buffer_for_input_output");
    state.use_growable_memory = GetBool(st, "use_growable_memory");
    const Json* inits = st.find("initial_state");
    for (size_t j = 0; inits != nullptr && j < inits->size(); ++j) {
      const Json& in = inits->at(j);
      SequenceInitialStateConfig init;
      if (in.find("data_type") != nullptr) {
        init.data_type = GetString(in, "data_type");
      }
      init.dims = GetInt64List(in, "dims");
      init.name = GetString(in, "name");
      init.zero_data = GetBool(in, "zero_data");
      init.data_file = GetString(in, "data_file");
      state.initial_state.push_back(std::move(init));
    }
    out->state.push_back(std::move(state));
  }
}

void ToEnsembleSteps(const Json& es, ModelConfig* cfg) {
  const Json* steps = es.find("step");
  if (steps == nullptr) return;
  for (size_t i = 0; i < steps->size(); ++i) {
    const Json& s = steps->at(i);
    EnsembleStepConfig step;
    step.model_name = GetString(s, "model_name");
    step.model_version = GetInt(s, "model_version");
    step.input_map = ToStringMap(s.find("input_map"));
    step.output_map = ToStringMap(s.find("output_map"));
    step.model_namespace = GetString(s, "model_namespace");
    cfg->ensemble_steps.push_back(std::move(step));
  }
}

}  // namespace

bool FromIntermediate(const Json& in, ModelConfig* cfg, std::string* error) {
  cfg->name = GetString(in, "name");
  cfg->platform = GetString(in, "platform");
  cfg->backend = GetString(in, "backend");
  cfg->runtime = GetString(in, "runtime");
  if (const Json* vp = in.find("version_policy")) {
    if (!ToVersionPolicy(*vp, &cfg->version_policy, error)) return false;
  }
  cfg->max_batch_size = static_cast<int>(GetInt(in, "max_batch_size"));
  ToTensors(in, cfg);
  if (const Json* groups = in.find("instance_group")) {
    for (size_t i = 0; i < groups->size(); ++i) {
      cfg->instance_group.push_back(ToInstanceGroup(groups->at(i)));
    }
  }
  if (const Json* db = in.find("dynamic_batching")) {
    if (!ToDynamicBatching(*db, &cfg->dynamic_batching, error)) return false;
  }
  if (const Json* sb = in.find("sequence_batching")) {
    cfg->has_sequence_batching = true;
    ToSequenceBatching(*sb, &cfg->sequence_batching);
  }
  if (const Json* es = in.find("ensemble_scheduling")) {
    cfg->has_ensemble_scheduling = true;
    ToEnsembleSteps(*es, cfg);
  }
  cfg->default_model_filename = GetString(in, "default_model_filename");
  ToStringMaps(in, cfg);
  if (const Json* tp = in.find("model_transaction_policy")) {
    cfg->has_transaction_policy = true;
    cfg->decoupled = GetBool(*tp, "decoupled");
  }
  return true;
}

}  // namespace config
}  // namespace fake
