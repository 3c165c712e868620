// The JSON documents Triton returns for a model: its config
// (TRITONSERVER_ServerModelConfig, config_version 1) and its metadata
// (TRITONSERVER_ServerModelMetadata).
#include <utility>

#include "model_config.h"
#include "data_types.h"

namespace fake {
namespace {

Json Int64Array(const std::vector<int64_t>& values) {
  Json a = Json::Array();
  for (int64_t v : values) a.push(Json::Int(v));
  return a;
}

Json QueuePolicyJson(const QueuePolicyConfig& q) {
  Json o = Json::Object();
  o.set("timeout_action", Json::Str(q.timeout_action));
  o.set("default_timeout_microseconds",
        Json::Uint(q.default_timeout_microseconds));
  o.set("allow_timeout_override", Json::Bool(q.allow_timeout_override));
  o.set("max_queue_size", Json::Uint(q.max_queue_size));
  return o;
}

Json StringMapJson(const std::map<std::string, std::string>& m) {
  Json o = Json::Object();
  for (const auto& item : m) o.set(item.first, Json::Str(item.second));
  return o;
}

Json VersionPolicyJson(const VersionPolicyConfig& policy) {
  Json vp = Json::Object();
  switch (policy.kind) {
    case VersionPolicyConfig::Kind::kLatest: {
      Json latest = Json::Object();
      latest.set("num_versions", Json::Uint(policy.num_versions));
      vp.set("latest", std::move(latest));
      break;
    }
    case VersionPolicyConfig::Kind::kAll:
      vp.set("all", Json::Object());
      break;
    case VersionPolicyConfig::Kind::kSpecific: {
      Json specific = Json::Object();
      specific.set("versions", Int64Array(policy.versions));
      vp.set("specific", std::move(specific));
      break;
    }
  }
  return vp;
}

void SetReshape(const TensorConfig& t, Json* j) {
  if (!t.has_reshape) return;
  Json r = Json::Object();
  r.set("shape", Int64Array(t.reshape));
  j->set("reshape", std::move(r));
}

Json InputJson(const TensorConfig& t) {
  Json i = Json::Object();
  i.set("name", Json::Str(t.name));
  i.set("data_type", Json::Str(t.data_type));
  i.set("format", Json::Str(t.format));
  i.set("dims", Int64Array(t.dims));
  SetReshape(t, &i);
  i.set("is_shape_tensor", Json::Bool(t.is_shape_tensor));
  i.set("allow_ragged_batch", Json::Bool(t.allow_ragged_batch));
  i.set("optional", Json::Bool(t.optional));
  i.set("is_non_linear_format_io", Json::Bool(t.is_non_linear_format_io));
  return i;
}

Json OutputJson(const TensorConfig& t) {
  Json i = Json::Object();
  i.set("name", Json::Str(t.name));
  i.set("data_type", Json::Str(t.data_type));
  i.set("dims", Int64Array(t.dims));
  SetReshape(t, &i);
  i.set("label_filename", Json::Str(t.label_filename));
  i.set("is_shape_tensor", Json::Bool(t.is_shape_tensor));
  i.set("is_non_linear_format_io", Json::Bool(t.is_non_linear_format_io));
  return i;
}

// What Triton reports for a model without an optimization block.
Json DefaultOptimizationJson() {
  Json opt = Json::Object();
  opt.set("priority", Json::Str("PRIORITY_DEFAULT"));
  Json pinned = Json::Object();
  pinned.set("enable", Json::Bool(true));
  opt.set("input_pinned_memory", pinned);
  opt.set("output_pinned_memory", pinned);
  opt.set("gather_kernel_buffer_threshold", Json::Uint(0));
  opt.set("eager_batching", Json::Bool(false));
  return opt;
}

Json SequenceBatchingJson(const SequenceBatchingConfig& sb) {
  Json o = Json::Object();
  o.set("max_sequence_idle_microseconds",
        Json::Uint(sb.max_sequence_idle_microseconds));
  Json controls = Json::Array();
  for (const auto& ci : sb.control_input) {
    Json c = Json::Object();
    c.set("name", Json::Str(ci.name));
    Json list = Json::Array();
    for (const auto& ctl : ci.control) {
      Json k = Json::Object();
      k.set("kind", Json::Str(ctl.kind));
      Json i32 = Json::Array(), f32 = Json::Array(), b = Json::Array();
      for (int32_t v : ctl.int32_false_true) i32.push(Json::Int(v));
      for (float v : ctl.fp32_false_true) f32.push(Json::Double(v));
      for (bool v : ctl.bool_false_true) b.push(Json::Bool(v));
      k.set("int32_false_true", std::move(i32));
      k.set("fp32_false_true", std::move(f32));
      k.set("bool_false_true", std::move(b));
      k.set("data_type", Json::Str(ctl.data_type));
      list.push(std::move(k));
    }
    c.set("control", std::move(list));
    controls.push(std::move(c));
  }
  o.set("control_input", std::move(controls));
  Json states = Json::Array();
  for (const auto& st : sb.state) {
    Json s = Json::Object();
    s.set("input_name", Json::Str(st.input_name));
    s.set("output_name", Json::Str(st.output_name));
    s.set("data_type", Json::Str(st.data_type));
    s.set("dims", Int64Array(st.dims));
    Json inits = Json::Array();
    for (const auto& in : st.initial_state) {
      Json i = Json::Object();
      i.set("data_type", Json::Str(in.data_type));
      // Triton writes these dims as strings (int64 in a message of a list).
      Json dims = Json::Array();
      for (int64_t d : in.dims) dims.push(Json::Str(std::to_string(d)));
      i.set("dims", std::move(dims));
      i.set("name", Json::Str(in.name));
      if (in.data_file.empty()) {
        i.set("zero_data", Json::Bool(in.zero_data));
      } else {
        i.set("data_file", Json::Str(in.data_file));
      }
      inits.push(std::move(i));
    }
    s.set("initial_state", std::move(inits));
    s.set("use_same_buffer_for_input_output",
          Json::Bool(st.use_same_buffer_for_input_output));
    s.set("use_growable_memory", Json::Bool(st.use_growable_memory));
    states.push(std::move(s));
  }
  o.set("state", std::move(states));
  o.set("iterative_sequence", Json::Bool(sb.iterative_sequence));
  return o;
}

Json DynamicBatchingJson(const DynamicBatchingConfig& d) {
  Json db = Json::Object();
  Json sizes = Json::Array();
  for (int s : d.preferred_batch_size) sizes.push(Json::Int(s));
  db.set("preferred_batch_size", std::move(sizes));
  db.set("max_queue_delay_microseconds",
         Json::Uint(d.max_queue_delay_microseconds));
  db.set("preserve_ordering", Json::Bool(d.preserve_ordering));
  db.set("priority_levels", Json::Uint(d.priority_levels));
  db.set("default_priority_level", Json::Uint(d.default_priority_level));
  if (d.default_queue_policy.present) {
    db.set("default_queue_policy", QueuePolicyJson(d.default_queue_policy));
  }
  Json pq = Json::Object();
  for (const auto& item : d.priority_queue_policy) {
    pq.set(std::to_string(item.first), QueuePolicyJson(item.second));
  }
  db.set("priority_queue_policy", std::move(pq));
  return db;
}

Json InstanceGroupJson(const InstanceGroupConfig& g) {
  Json j = Json::Object();
  j.set("name", Json::Str(g.name));
  j.set("kind", Json::Str(g.kind));
  j.set("count", Json::Int(g.count));
  Json gpus = Json::Array();
  for (int gpu : g.gpus) gpus.push(Json::Int(gpu));
  j.set("gpus", std::move(gpus));
  j.set("secondary_devices", Json::Array());
  Json profiles = Json::Array();
  for (const auto& p : g.profile) profiles.push(Json::Str(p));
  j.set("profile", std::move(profiles));
  j.set("passive", Json::Bool(g.passive));
  j.set("host_policy", Json::Str(g.host_policy));
  if (g.has_rate_limiter) {
    Json rl = Json::Object();
    Json resources = Json::Array();
    for (const auto& r : g.rate_limiter_resources) {
      Json one = Json::Object();
      one.set("name", Json::Str(r.name));
      one.set("global", Json::Bool(r.global));
      one.set("count", Json::Int(r.count));
      resources.push(std::move(one));
    }
    rl.set("resources", std::move(resources));
    rl.set("priority", Json::Int(g.rate_limiter_priority));
    j.set("rate_limiter", std::move(rl));
  }
  return j;
}

Json ParametersJson(const std::map<std::string, std::string>& parameters) {
  Json params = Json::Object();
  for (const auto& item : parameters) {
    Json p = Json::Object();
    p.set("string_value", Json::Str(item.second));
    params.set(item.first, std::move(p));
  }
  return params;
}

Json EnsembleSchedulingJson(const std::vector<EnsembleStepConfig>& steps) {
  Json list = Json::Array();
  for (const auto& step : steps) {
    Json j = Json::Object();
    j.set("model_name", Json::Str(step.model_name));
    j.set("model_version", Json::Int(step.model_version));
    j.set("input_map", StringMapJson(step.input_map));
    j.set("output_map", StringMapJson(step.output_map));
    j.set("model_namespace", Json::Str(step.model_namespace));
    list.push(std::move(j));
  }
  Json es = Json::Object();
  es.set("step", std::move(list));
  return es;
}

// A model's inputs or outputs as its metadata lists them.
Json TensorsMetadataJson(const ModelConfig& cfg,
                         const std::vector<TensorConfig>& list) {
  Json a = Json::Array();
  for (const auto& t : list) {
    Json j = Json::Object();
    j.set("name", Json::Str(t.name));
    j.set("datatype", Json::Str(ApiNameFromDataType(t.datatype)));
    Json shape = Json::Array();
    if (cfg.max_batch_size > 0) shape.push(Json::Int(-1));
    for (int64_t d : t.dims) shape.push(Json::Int(d));
    j.set("shape", std::move(shape));
    a.push(std::move(j));
  }
  return a;
}

}  // namespace

std::string ModelConfigToJson(const ModelConfig& cfg) {
  Json o = Json::Object();
  o.set("name", Json::Str(cfg.name));
  o.set("platform", Json::Str(cfg.platform));
  o.set("backend", Json::Str(cfg.backend));
  o.set("runtime", Json::Str(cfg.runtime));
  o.set("version_policy", VersionPolicyJson(cfg.version_policy));
  o.set("max_batch_size", Json::Int(cfg.max_batch_size));
  Json inputs = Json::Array();
  for (const auto& t : cfg.input) inputs.push(InputJson(t));
  o.set("input", std::move(inputs));
  Json outputs = Json::Array();
  for (const auto& t : cfg.output) outputs.push(OutputJson(t));
  o.set("output", std::move(outputs));
  o.set("batch_input", Json::Array());
  o.set("batch_output", Json::Array());
  if (!cfg.has_ensemble_scheduling) {
    o.set("optimization", DefaultOptimizationJson());
  }
  if (cfg.dynamic_batching.present) {
    o.set("dynamic_batching", DynamicBatchingJson(cfg.dynamic_batching));
  }
  if (cfg.has_sequence_batching) {
    o.set("sequence_batching", SequenceBatchingJson(cfg.sequence_batching));
  }
  if (cfg.has_ensemble_scheduling) {
    o.set("ensemble_scheduling", EnsembleSchedulingJson(cfg.ensemble_steps));
  }
  Json groups = Json::Array();
  for (const auto& g : cfg.instance_group) groups.push(InstanceGroupJson(g));
  o.set("instance_group", std::move(groups));
  o.set("default_model_filename", Json::Str(cfg.default_model_filename));
  o.set("cc_model_filenames", StringMapJson(cfg.cc_model_filenames));
  o.set("metric_tags", StringMapJson(cfg.metric_tags));
  o.set("parameters", ParametersJson(cfg.parameters));
  o.set("model_warmup", Json::Array());
  if (cfg.has_transaction_policy || cfg.has_ensemble_scheduling) {
    Json tp = Json::Object();
    tp.set("decoupled", Json::Bool(cfg.decoupled));
    o.set("model_transaction_policy", std::move(tp));
  }
  return o.dump();
}

std::string ModelMetadataJson(const ModelConfig& cfg,
                              const std::vector<int64_t>& versions,
                              const std::string& stand_in) {
  Json o = Json::Object();
  o.set("name", Json::Str(cfg.name));
  Json v = Json::Array();
  for (int64_t version : versions) v.push(Json::Str(std::to_string(version)));
  o.set("versions", std::move(v));
  // Triton reports the platform, or the backend name when there is none.
  o.set("platform",
        Json::Str(cfg.platform.empty() ? cfg.backend : cfg.platform));
  o.set("inputs", TensorsMetadataJson(cfg, cfg.input));
  o.set("outputs", TensorsMetadataJson(cfg, cfg.output));
  if (!stand_in.empty()) o.set("triton_node_stand_in", Json::Str(stand_in));
  return o.dump();
}

}  // namespace fake
