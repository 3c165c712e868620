// The description of the ModelConfig messages both config readers follow
// (field names, types and enum values as in Triton's model_config.proto),
// and the integer and enum checks they share.
#include "schema.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "model_config.h"

namespace fake {
namespace config {

namespace {

FieldDesc Scalar(const char* name, FieldType type, bool repeated = false,
                 int64_t min_value = std::numeric_limits<int64_t>::min()) {
  FieldDesc f{name, type};
  f.repeated = repeated;
  f.min_value = min_value;
  return f;
}

FieldDesc Enum(const char* name, const EnumDesc* e) {
  FieldDesc f{name, FieldType::kEnum};
  f.enum_desc = e;
  return f;
}

FieldDesc Message(const char* name, const MessageDesc* m, bool repeated = false,
                  int oneof = 0) {
  FieldDesc f{name, FieldType::kMessage};
  f.message = m;
  f.repeated = repeated;
  f.oneof = oneof;
  return f;
}

FieldDesc Map(const char* name, const MessageDesc* entry) {
  FieldDesc f{name, FieldType::kMessage};
  f.message = entry;
  f.repeated = true;
  f.is_map = true;
  return f;
}

FieldDesc Skipped(const char* name, bool repeated = false) {
  FieldDesc f{name, FieldType::kSkippedMessage};
  f.repeated = repeated;
  return f;
}

const EnumDesc kDataTypeEnum{"inference.DataType",
                             {{"TYPE_INVALID", 0},
                              {"TYPE_BOOL", 1},
                              {"TYPE_UINT8", 2},
                              {"TYPE_UINT16", 3},
                              {"TYPE_UINT32", 4},
                              {"TYPE_UINT64", 5},
                              {"TYPE_INT8", 6},
                              {"TYPE_INT16", 7},
                              {"TYPE_INT32", 8},
                              {"TYPE_INT64", 9},
                              {"TYPE_FP16", 10},
                              {"TYPE_FP32", 11},
                              {"TYPE_FP64", 12},
                              {"TYPE_STRING", 13},
                              {"TYPE_BF16", 14}}};

const EnumDesc kFormatEnum{
    "inference.ModelInput.Format",
    {{"FORMAT_NONE", 0}, {"FORMAT_NHWC", 1}, {"FORMAT_NCHW", 2}}};
const EnumDesc kKindEnum{
    "inference.ModelInstanceGroup.Kind",
    {{"KIND_AUTO", 0}, {"KIND_GPU", 1}, {"KIND_CPU", 2}, {"KIND_MODEL", 3}}};
const EnumDesc kTimeoutActionEnum{"inference.ModelQueuePolicy.TimeoutAction",
                                  {{"REJECT", 0}, {"DELAY", 1}}};

const MessageDesc kReshapeDesc{"inference.ModelTensorReshape",
                               {Scalar("shape", FieldType::kInt64, true, -1)}};

const MessageDesc kInputDesc{
    "inference.ModelInput",
    {Scalar("name", FieldType::kString), Enum("data_type", &kDataTypeEnum),
     Enum("format", &kFormatEnum), Scalar("dims", FieldType::kInt64, true, -1),
     Message("reshape", &kReshapeDesc),
     Scalar("is_shape_tensor", FieldType::kBool),
     Scalar("allow_ragged_batch", FieldType::kBool),
     Scalar("optional", FieldType::kBool),
     Scalar("is_non_linear_format_io", FieldType::kBool)}};

const MessageDesc kOutputDesc{
    "inference.ModelOutput",
    {Scalar("name", FieldType::kString), Enum("data_type", &kDataTypeEnum),
     Scalar("dims", FieldType::kInt64, true, -1),
     Message("reshape", &kReshapeDesc),
     Scalar("label_filename", FieldType::kString),
     Scalar("is_shape_tensor", FieldType::kBool),
     Scalar("is_non_linear_format_io", FieldType::kBool)}};

const MessageDesc kRateLimiterResourceDesc{
    "inference.ModelRateLimiter.Resource",
    {Scalar("name", FieldType::kString), Scalar("global", FieldType::kBool),
     Scalar("count", FieldType::kUint32)}};

const MessageDesc kRateLimiterDesc{
    "inference.ModelRateLimiter",
    {Message("resources", &kRateLimiterResourceDesc, true),
     Scalar("priority", FieldType::kUint32)}};

const MessageDesc kInstanceGroupDesc{
    "inference.ModelInstanceGroup",
    {Scalar("name", FieldType::kString), Enum("kind", &kKindEnum),
     Scalar("count", FieldType::kInt32, false, 0),
     Message("rate_limiter", &kRateLimiterDesc),
     Scalar("gpus", FieldType::kInt32, true, 0),
     Skipped("secondary_devices", true),
     Scalar("profile", FieldType::kString, true),
     Scalar("passive", FieldType::kBool),
     Scalar("host_policy", FieldType::kString)}};

const MessageDesc kQueuePolicyDesc{
    "inference.ModelQueuePolicy",
    {Enum("timeout_action", &kTimeoutActionEnum),
     Scalar("default_timeout_microseconds", FieldType::kUint64),
     Scalar("allow_timeout_override", FieldType::kBool),
     Scalar("max_queue_size", FieldType::kUint32)}};

const MessageDesc kPriorityQueuePolicyEntryDesc{
    "inference.ModelDynamicBatching.PriorityQueuePolicyEntry",
    {Scalar("key", FieldType::kUint64), Message("value", &kQueuePolicyDesc)}};

const MessageDesc kDynamicBatchingDesc{
    "inference.ModelDynamicBatching",
    {Scalar("preferred_batch_size", FieldType::kInt32, true),
     Scalar("max_queue_delay_microseconds", FieldType::kUint64),
     Scalar("preserve_ordering", FieldType::kBool),
     Scalar("priority_levels", FieldType::kUint64),
     Scalar("default_priority_level", FieldType::kUint64),
     Message("default_queue_policy", &kQueuePolicyDesc),
     Map("priority_queue_policy", &kPriorityQueuePolicyEntryDesc)}};

const MessageDesc kSequenceInitialStateDesc{
    "inference.ModelSequenceBatching.InitialState",
    {Enum("data_type", &kDataTypeEnum),
     Scalar("dims", FieldType::kInt64, true, -1),
     Scalar("zero_data", FieldType::kBool),
     Scalar("data_file", FieldType::kString),
     Scalar("name", FieldType::kString)}};

const MessageDesc kSequenceStateDesc{
    "inference.ModelSequenceBatching.State",
    {Scalar("input_name", FieldType::kString),
     Scalar("output_name", FieldType::kString),
     Enum("data_type", &kDataTypeEnum),
     Scalar("dims", FieldType::kInt64, true, -1),
     Message("initial_state", &kSequenceInitialStateDesc, true),
     Scalar("use_same_buffer_for_input_output", FieldType::kBool),
     Scalar("use_growable_memory", FieldType::kBool)}};

const EnumDesc kControlKindEnum{"inference.ModelSequenceBatching.Control.Kind",
                                {{"CONTROL_SEQUENCE_START", 0},
                                 {"CONTROL_SEQUENCE_READY", 1},
                                 {"CONTROL_SEQUENCE_END", 2},
                                 {"CONTROL_SEQUENCE_CORRID", 3}}};

const MessageDesc kSequenceControlDesc{
    "inference.ModelSequenceBatching.Control",
    {Enum("kind", &kControlKindEnum),
     Scalar("int32_false_true", FieldType::kInt32, true),
     Scalar("fp32_false_true", FieldType::kFloat, true),
     Scalar("bool_false_true", FieldType::kBool, true),
     Enum("data_type", &kDataTypeEnum)}};

const MessageDesc kSequenceControlInputDesc{
    "inference.ModelSequenceBatching.ControlInput",
    {Scalar("name", FieldType::kString),
     Message("control", &kSequenceControlDesc, true)}};

const MessageDesc kSequenceBatchingDesc{
    "inference.ModelSequenceBatching",
    {Skipped("direct"), Skipped("oldest"),
     Scalar("max_sequence_idle_microseconds", FieldType::kUint64),
     Message("control_input", &kSequenceControlInputDesc, true),
     Message("state", &kSequenceStateDesc, true),
     Scalar("iterative_sequence", FieldType::kBool)}};

const MessageDesc kLatestDesc{"inference.ModelVersionPolicy.Latest",
                              {Scalar("num_versions", FieldType::kUint32)}};
const MessageDesc kAllDesc{"inference.ModelVersionPolicy.All", {}};
const MessageDesc kSpecificDesc{"inference.ModelVersionPolicy.Specific",
                                {Scalar("versions", FieldType::kInt64, true)}};

const MessageDesc kVersionPolicyDesc{
    "inference.ModelVersionPolicy",
    {Message("latest", &kLatestDesc, false, 1),
     Message("all", &kAllDesc, false, 1),
     Message("specific", &kSpecificDesc, false, 1)},
    "policy_choice"};

const MessageDesc kParameterDesc{"inference.ModelParameter",
                                 {Scalar("string_value", FieldType::kString)}};

const MessageDesc kParametersEntryDesc{
    "inference.ModelConfig.ParametersEntry",
    {Scalar("key", FieldType::kString), Message("value", &kParameterDesc)}};

const MessageDesc kStringMapEntryDesc{
    "inference.ModelConfig.StringEntry",
    {Scalar("key", FieldType::kString), Scalar("value", FieldType::kString)}};

const MessageDesc kStepInputMapEntryDesc{
    "inference.ModelEnsembling.Step.InputMapEntry",
    {Scalar("key", FieldType::kString), Scalar("value", FieldType::kString)}};

const MessageDesc kStepOutputMapEntryDesc{
    "inference.ModelEnsembling.Step.OutputMapEntry",
    {Scalar("key", FieldType::kString), Scalar("value", FieldType::kString)}};

const MessageDesc kEnsembleStepDesc{
    "inference.ModelEnsembling.Step",
    {Scalar("model_name", FieldType::kString),
     Scalar("model_version", FieldType::kInt64),
     Map("input_map", &kStepInputMapEntryDesc),
     Map("output_map", &kStepOutputMapEntryDesc),
     Scalar("model_namespace", FieldType::kString)}};

const MessageDesc kEnsemblingDesc{"inference.ModelEnsembling",
                                  {Message("step", &kEnsembleStepDesc, true)}};

const MessageDesc kTransactionPolicyDesc{
    "inference.ModelTransactionPolicy",
    {Scalar("decoupled", FieldType::kBool)}};

const MessageDesc kModelConfigDesc{
    "inference.ModelConfig",
    {Scalar("name", FieldType::kString),
     Scalar("platform", FieldType::kString),
     Scalar("backend", FieldType::kString),
     Scalar("runtime", FieldType::kString),
     Message("version_policy", &kVersionPolicyDesc),
     Scalar("max_batch_size", FieldType::kInt32, false, 0),
     Message("input", &kInputDesc, true),
     Message("output", &kOutputDesc, true),
     Skipped("batch_input", true),
     Skipped("batch_output", true),
     Skipped("optimization"),
     Message("dynamic_batching", &kDynamicBatchingDesc),
     Message("sequence_batching", &kSequenceBatchingDesc),
     Message("ensemble_scheduling", &kEnsemblingDesc),
     Message("instance_group", &kInstanceGroupDesc, true),
     Scalar("default_model_filename", FieldType::kString),
     Map("cc_model_filenames", &kStringMapEntryDesc),
     Map("metric_tags", &kStringMapEntryDesc),
     Map("parameters", &kParametersEntryDesc),
     Skipped("model_warmup", true),
     Skipped("model_operations"),
     Message("model_transaction_policy", &kTransactionPolicyDesc),
     Skipped("model_repository_agents"),
     Skipped("response_cache")}};

// Range of an integer field type, combined with the field's own minimum.
void IntegerRange(const FieldDesc& f, int64_t* lo, uint64_t* hi) {
  switch (f.type) {
    case FieldType::kInt32:
      *lo = std::numeric_limits<int32_t>::min();
      *hi = std::numeric_limits<int32_t>::max();
      break;
    case FieldType::kInt64:
      *lo = std::numeric_limits<int64_t>::min();
      *hi = std::numeric_limits<int64_t>::max();
      break;
    case FieldType::kUint32:
      *lo = 0;
      *hi = std::numeric_limits<uint32_t>::max();
      break;
    default:
      *lo = 0;
      *hi = std::numeric_limits<uint64_t>::max();
      break;
  }
  if (f.min_value > *lo) *lo = f.min_value;
}

bool IsUnsignedType(FieldType t) {
  return t == FieldType::kUint32 || t == FieldType::kUint64;
}

}  // namespace

const EnumDesc& DataTypeEnum() { return kDataTypeEnum; }
const MessageDesc& ModelConfigDesc() { return kModelConfigDesc; }

// Checks a parsed integer (sign + magnitude) against the field's range and
// returns it typed for the intermediate form.
bool MakeInteger(const FieldDesc& f, bool negative, uint64_t magnitude,
                 Json* out, std::string* problem) {
  int64_t lo;
  uint64_t hi;
  IntegerRange(f, &lo, &hi);
  const std::string text =
      (negative && magnitude != 0 ? "-" : "") + std::to_string(magnitude);
  if (negative && magnitude != 0) {
    // -magnitude >= lo  <=>  magnitude <= -lo (lo < 0 here, or fail).
    const uint64_t max_negative =
        lo >= 0 ? 0 : static_cast<uint64_t>(-(lo + 1)) + 1;
    if (magnitude > max_negative) {
      *problem = lo == f.min_value && lo > std::numeric_limits<int32_t>::min()
                     ? "Value " + text +
                           " is out of range: must be >= " + std::to_string(lo)
                     : "Integer out of range (" + text + ")";
      return false;
    }
    // magnitude <= 2^63 here, so the negation is representable.
    *out = Json::Int(magnitude == (uint64_t{1} << 63)
                         ? std::numeric_limits<int64_t>::min()
                         : -static_cast<int64_t>(magnitude));
    return true;
  }
  if (magnitude > hi) {
    *problem = "Integer out of range (" + text + ")";
    return false;
  }
  if (lo > 0 && magnitude < static_cast<uint64_t>(lo)) {
    *problem =
        "Value " + text + " is out of range: must be >= " + std::to_string(lo);
    return false;
  }
  if (IsUnsignedType(f.type)) {
    *out = Json::Uint(magnitude);
  } else {
    *out = Json::Int(static_cast<int64_t>(magnitude));
  }
  return true;
}

// Parses decimal, 0x hex or 0-prefixed octal digits (no sign) into a
// magnitude. False on overflow or a stray character.
bool ParseMagnitude(const std::string& digits, uint64_t* out) {
  if (digits.empty()) return false;
  int base = 10;
  size_t i = 0;
  if (digits.size() > 2 && digits[0] == '0' &&
      (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
    i = 1;
  }
  uint64_t v = 0;
  for (; i < digits.size(); ++i) {
    const char c = digits[i];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    if (d >= base) return false;
    if (v > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) /
                static_cast<uint64_t>(base)) {
      return false;
    }
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

const char* EnumName(const EnumDesc& e, int64_t value) {
  for (const auto& v : e.values) {
    if (v.second == value) return v.first;
  }
  return nullptr;
}

bool EnumHas(const EnumDesc& e, const std::string& name) {
  for (const auto& v : e.values) {
    if (name == v.first) return true;
  }
  return false;
}

void NoteIgnoredField(const std::string& path,
                      std::vector<std::string>* ignored) {
  if (std::find(ignored->begin(), ignored->end(), path) == ignored->end()) {
    ignored->push_back(path);
  }
}

}  // namespace config

}  // namespace fake
