// The subset of Triton's ModelConfig the fake engine understands, its
// protobuf-text parser, its JSON reader (for load-time "config" overrides)
// and the JSON documents Triton returns for it (model config, metadata).
//
// Where each part lives (native/fake/config/):
//   schema.cc          the ModelConfig messages both readers follow
//   data_types.cc      data type names and sizes (data_types.h)
//   text_tokenizer.cc  protobuf text format tokens (on support/lexer.h)
//   text_parser.cc     ParseModelConfigText
//   json_reader.cc     ParseModelConfigJson
//   convert.cc         both readers' result -> ModelConfig
//   defaults.cc        FillModelConfigDefaults
//   validate.cc        ValidateModelConfig
//   backend_checks.cc  ValidateForBackend
//   ensemble_checks.cc ValidateEnsembleScheduling, ValidateEnsembleSteps
//   documents.cc       ModelConfigToJson, ModelMetadataJson
#ifndef TRITON_NODE_FAKE_CONFIG_MODEL_CONFIG_H_
#define TRITON_NODE_FAKE_CONFIG_MODEL_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../../include/triton_capi.h"
#include "../support/json.h"

namespace fake {

struct TensorConfig {
  std::string name;
  // Protobuf enum name without its prefix handling: "TYPE_FP32", "TYPE_STRING"
  // (BYTES), ... ; `datatype` is the C API value for it.
  std::string data_type = "TYPE_INVALID";
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> dims;
  bool has_reshape = false;
  std::vector<int64_t> reshape;
  bool optional = false;  // inputs only
  // Accepted and reported back (the fake engine gives them no meaning).
  std::string format = "FORMAT_NONE";  // inputs only
  bool is_shape_tensor = false;
  bool allow_ragged_batch = false;  // inputs only
  std::string label_filename;       // outputs only
  bool is_non_linear_format_io = false;
};

struct RateLimiterResourceConfig {
  std::string name;
  bool global = false;
  uint32_t count = 0;
};

struct InstanceGroupConfig {
  std::string name;               // filled in: "<model>_<index>" or "<model>"
  std::string kind = "KIND_CPU";  // KIND_AUTO/KIND_CPU/KIND_GPU/KIND_MODEL
  int count = 1;
  std::vector<int> gpus;
  // Accepted and reported back; no meaning in the fake engine.
  std::vector<std::string> profile;
  bool passive = false;
  std::string host_policy;
  // rate_limiter: what each instance needs to run under the rate limiter.
  bool has_rate_limiter = false;
  std::vector<RateLimiterResourceConfig> rate_limiter_resources;
  uint32_t rate_limiter_priority = 0;
};

struct QueuePolicyConfig {
  bool present = false;
  std::string timeout_action = "REJECT";  // REJECT or DELAY
  uint64_t default_timeout_microseconds = 0;
  bool allow_timeout_override = false;
  uint32_t max_queue_size = 0;
};

struct DynamicBatchingConfig {
  bool present = false;
  std::vector<int> preferred_batch_size;
  uint64_t max_queue_delay_microseconds = 0;
  bool preserve_ordering = false;
  uint32_t priority_levels = 0;
  uint32_t default_priority_level = 0;
  QueuePolicyConfig default_queue_policy;
  // priority level -> its queue policy (present is always true in here).
  std::map<uint64_t, QueuePolicyConfig> priority_queue_policy;
};

// sequence_batching: the implicit state (state [...]) and the idle timeout;
// control inputs and the oldest strategy are not modelled.
struct SequenceInitialStateConfig {
  std::string data_type = "TYPE_INVALID";
  std::vector<int64_t> dims;
  std::string name;
  bool zero_data = false;
  std::string data_file;
};

struct SequenceStateConfig {
  std::string input_name;
  std::string output_name;
  std::string data_type = "TYPE_INVALID";
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> dims;
  std::vector<SequenceInitialStateConfig> initial_state;
  bool use_same_buffer_for_input_output = false;
  bool use_growable_memory = false;
};

// One control of a control input (ModelSequenceBatching.Control): the
// values its tensor takes for false and true (exactly one of the three
// lists set, for START/END/READY), or the data type of CORRID.
struct SequenceControlConfig {
  std::string kind;  // "CONTROL_SEQUENCE_START", ...
  std::vector<int32_t> int32_false_true;
  std::vector<float> fp32_false_true;
  std::vector<bool> bool_false_true;
  std::string data_type = "TYPE_INVALID";
};

struct SequenceControlInputConfig {
  std::string name;
  std::vector<SequenceControlConfig> control;
};

struct SequenceBatchingConfig {
  uint64_t max_sequence_idle_microseconds = 0;  // 0: Triton's 1 s
  std::vector<SequenceControlInputConfig> control_input;
  std::vector<SequenceStateConfig> state;
  bool iterative_sequence = false;
};

struct VersionPolicyConfig {
  enum class Kind { kLatest, kAll, kSpecific } kind = Kind::kLatest;
  uint32_t num_versions = 1;      // latest
  std::vector<int64_t> versions;  // specific
};

// One step of ensemble_scheduling: the composing model and which ensemble
// tensor feeds each of its inputs (input_map: model input -> ensemble
// tensor) and receives each of its outputs (output_map: model output ->
// ensemble tensor).
struct EnsembleStepConfig {
  std::string model_name;
  int64_t model_version = 0;  // -1: the highest ready version
  std::map<std::string, std::string> input_map;
  std::map<std::string, std::string> output_map;
  std::string model_namespace;
};

struct ModelConfig {
  std::string name;
  std::string platform;
  std::string backend;
  std::string runtime;
  VersionPolicyConfig version_policy;
  int max_batch_size = 0;
  std::vector<TensorConfig> input;
  std::vector<TensorConfig> output;
  std::vector<InstanceGroupConfig> instance_group;
  DynamicBatchingConfig dynamic_batching;
  bool has_sequence_batching = false;
  SequenceBatchingConfig sequence_batching;
  bool has_ensemble_scheduling = false;
  std::vector<EnsembleStepConfig> ensemble_steps;
  std::map<std::string, std::string> parameters;  // key -> string_value
  bool decoupled = false;  // model_transaction_policy.decoupled
  // Whether the config has a model_transaction_policy block: Triton reports
  // the block only then (repeat/square), never for identity models.
  bool has_transaction_policy = false;
  // Accepted and reported back; no meaning in the fake engine.
  std::string default_model_filename;
  std::map<std::string, std::string> cc_model_filenames;
  std::map<std::string, std::string> metric_tags;
  // Real ModelConfig fields the fake accepts but does not model (for
  // example optimization, model_warmup, instance_group.secondary_devices):
  // their contents are skipped and they are missing from ModelConfigToJson.
  // Dotted paths, in the order met ("optimization",
  // "instance_group.secondary_devices").
  std::vector<std::string> ignored_fields;
};

// Parses config.pbtxt text (protobuf text format: `field: value`,
// `message { ... }`, `[ ... ]` lists, repeated fields, # comments, quoted
// strings, enum identifiers). Unknown fields are errors, as protobuf's
// parser reports them. Returns false with a message naming line and column.
bool ParseModelConfigText(const std::string& text, ModelConfig* out,
                          std::string* error);

// Reads a load-time "config" override (the JSON form of ModelConfig, int64
// fields as numbers or strings; field names as in the proto or camelCase).
// Returns false with a message naming the field path ("input[0].dims[1]: ...")
// or the JSON line and column; the caller adds its "Invalid config
// override: " prefix. Real ModelConfig fields the fake does not model are
// skipped and listed in ignored_fields, as with ParseModelConfigText.
bool ParseModelConfigJson(const std::string& json_text, ModelConfig* out,
                          std::string* error);

// Fills defaults the way Triton does after loading (instance group names,
// dynamic_batching.preferred_batch_size = [max_batch_size] when empty, ...).
// `model_name` is the repository directory name.
void FillModelConfigDefaults(const std::string& model_name, ModelConfig* cfg);

// Fills backend, platform and default_model_filename the way Triton does
// for the backends it knows (tensorflow, tensorrt, onnxruntime, openvino,
// pytorch, python): a platform gives its backend (onnxruntime_onnx:
// onnxruntime) and a backend its platform, and with neither, the model file
// in the first version directory says (`files`: its entries, whether each
// is a directory; null without a version directory).
void FillBackendDefaults(const std::map<std::string, bool>* files,
                         ModelConfig* cfg);

// Checks what Triton checks while reading a model from the repository, after
// FillModelConfigDefaults: a backend or platform is named, max_batch_size is
// not negative, every input/output has a name, a data type and valid dims,
// dynamic batching sizes and priority levels are consistent, instance
// groups are well formed, sequence control inputs are well formed. Returns
// false with Triton's message; Triton only logs it and fails the load with
// "failed to poll from model repository".
bool ValidateModelConfig(const ModelConfig& cfg, std::string* error);

// A control input of a sequence model (sequence_batching.control_input), as
// Triton's batcher gives it to the backend with each request.
struct SequenceControl {
  std::string tensor;  // the model input's name; "" when the model has none
  std::string data_type = "TYPE_INVALID";  // its config data type
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<char> false_value, true_value;  // START/END/READY: one element
};
// The control of `kind` ("CONTROL_SEQUENCE_START", ...) with Triton's checks
// of it (GetBooleanSequenceControlProperties, or the typed one for CORRID):
// "" and *out (tensor "" when the model has none), else the error.
std::string FindSequenceControl(const ModelConfig& cfg, const std::string& kind,
                                SequenceControl* out);
// Triton's checks of sequence_batching.control_input (part of
// ValidateModelConfig, made while polling the repository for any model).
bool ValidateSequenceControls(const ModelConfig& cfg, std::string* error);

// Triton's checks of an ensemble's config alone (part of
// ValidateModelConfig): platform, no instance groups, every step complete,
// and every ensemble input, output and intermediate tensor connected.
bool ValidateEnsembleScheduling(const ModelConfig& cfg, std::string* error);

// Triton's checks of an ensemble against its composing models, once they
// are loaded (`composing[i]`: step i's model config): batch sizes, every
// model input mapped, every mapped name a real input or output, the data
// type and shape of each ensemble tensor the same wherever it is used, and
// no step fed by different decoupled models. *decoupled says whether an
// output comes through a decoupled model (Triton then makes the ensemble
// decoupled). False with Triton's message (INVALID_ARG).
bool ValidateEnsembleSteps(const ModelConfig& ens,
                           const std::vector<const ModelConfig*>& composing,
                           bool* decoupled, std::string* error);

// A sequence model's state, or initial state, that one sequence cannot
// have: its bytes (dims times the data type's size; a -1 counts one, a
// BYTES element its 4-byte length) overflow 64 bits or exceed
// `memory_bytes`. The message names the model, the state and its size; ""
// when every state fits. Real r25.07 allocates them without such a check
// (an initial state's zero data at load, where a failed allocation crashes
// the process; a state at each sequence start, where the request fails);
// the fake refuses both at load (INVALID_ARG) and never allocates them.
std::string SequenceStateSizeProblem(const ModelConfig& cfg,
                                     uint64_t memory_bytes);

// Checks what Triton's backends check for the fake's three backends when a
// model is created (identity INPUTn/OUTPUTn pairs; repeat and square tensor
// names, shapes and types by position), with their messages, plus that
// repeat/square models are decoupled (the fake's own rule and message).
// Returns false with the message (INVALID_ARG) on failure; other backends
// pass.
bool ValidateForBackend(const ModelConfig& cfg, std::string* error);

// TRITONSERVER_ServerModelConfig JSON (config_version 1), byte-compatible
// with real Triton's for the fields the fake supports (the tests in
// test/config_tests.cc hold what a real r25.07 returned, per model).
std::string ModelConfigToJson(const ModelConfig& cfg);

// TRITONSERVER_ServerModelMetadata JSON for a model with the given ready
// versions (strings, ascending), in Triton's shape.
// A stand-in model (backends/stand_ins.cc) gets "triton_node_stand_in":
// "<backend>:<mode>", which no Triton document has.
std::string ModelMetadataJson(const ModelConfig& cfg,
                              const std::vector<int64_t>& versions,
                              const std::string& stand_in = "");

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CONFIG_MODEL_CONFIG_H_
