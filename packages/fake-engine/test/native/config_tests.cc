// Tests of the fake engine's JSON and ModelConfig module: the JSON reader
// and writer, the protobuf-text and JSON-override readers, Triton's
// defaults and checks, and the config/metadata JSON compared byte for byte
// with what real Triton r25.07 returned for the same config.pbtxt.
#include <cfloat>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/support/json.h"
#include "../../src/config/data_types.h"
#include "../../src/config/model_config.h"
#include "harness.h"

namespace {

using fake::Json;
using fake::ModelConfig;

struct ReferenceModel {
  const char* name;
  const char* pbtxt;
  const char* config_json;
  const char* metadata_json;
  std::vector<int64_t> ready_versions;
};

struct ProbeConfig {
  const char* name;
  const char* pbtxt;
};

// Captured from a real Triton r25.07: each model's config.pbtxt with the
// TRITONSERVER_ServerModelConfig / ServerModelMetadata JSON it returned.
const ReferenceModel
    kReferenceModels[] =
        {
            {"identity_batch8",
             R"pb(name: "identity_batch8"
                  backend: "identity"
                  max_batch_size: 8 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] instance_group
                  [ { count: 1 kind: KIND_CPU }]
             )pb",
             R"js({"name":"identity_batch8","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"identity_batch8_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"identity_batch8","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js",
             {1}},
            {"identity_nobatch",
             R"pb(name: "identity_nobatch"
                  backend: "identity"
                  max_batch_size: 0 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }]
             )pb",
             R"js({"name":"identity_nobatch","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":0,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"identity_nobatch","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"identity_nobatch","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1]}]})js",
             {1}},
            {"identity_dyn",
             R"pb(name: "identity_dyn"
                  backend: "identity"
                  max_batch_size: 8 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }]
                  dynamic_batching {
                    max_queue_delay_microseconds: 1000
                  } instance_group
                  [ { count: 1 kind: KIND_CPU }]
             )pb",
             R"js({"name":"identity_dyn","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"dynamic_batching":{"preferred_batch_size":[8],"max_queue_delay_microseconds":1000,"preserve_ordering":false,"priority_levels":0,"default_priority_level":0,"priority_queue_policy":{}},"instance_group":[{"name":"identity_dyn_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"identity_dyn","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js",
             {1}},
            {"identity_fp32",
             R"pb(name: "identity_fp32"
                  backend: "identity"
                  max_batch_size: 8 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }]
                  dynamic_batching {} instance_group
                  [ { count: 1 kind: KIND_CPU }]
             )pb",
             R"js({"name":"identity_fp32","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"dynamic_batching":{"preferred_batch_size":[8],"max_queue_delay_microseconds":0,"preserve_ordering":false,"priority_levels":0,"default_priority_level":0,"priority_queue_policy":{}},"instance_group":[{"name":"identity_fp32_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"identity_fp32","versions":["2"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js",
             {2}},
            {"identity_fp16_int64",
             R"pb(name: "identity_fp16_int64"
                  backend: "identity"
                  max_batch_size: 0 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP16
                    dims: [ 2, 3 ]
                  }
                    , {
                      name: "INPUT1"
                      data_type: TYPE_INT64
                      dims: [ -1, -1 ]
                    }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP16
                    dims: [ 2, 3 ]
                  }
                    , {
                      name: "OUTPUT1"
                      data_type: TYPE_INT64
                      dims: [ -1, -1 ]
                    }] instance_group
                  [ { count: 1 kind: KIND_CPU }]
             )pb",
             R"js({"name":"identity_fp16_int64","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":0,"input":[{"name":"INPUT0","data_type":"TYPE_FP16","format":"FORMAT_NONE","dims":[2,3],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false},{"name":"INPUT1","data_type":"TYPE_INT64","format":"FORMAT_NONE","dims":[-1,-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP16","dims":[2,3],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false},{"name":"OUTPUT1","data_type":"TYPE_INT64","dims":[-1,-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"identity_fp16_int64_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"identity_fp16_int64","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP16","shape":[2,3]},{"name":"INPUT1","datatype":"INT64","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP16","shape":[2,3]},{"name":"OUTPUT1","datatype":"INT64","shape":[-1,-1]}]})js",
             {1}},
            {"identity_bytes_bool",
             R"pb(name: "identity_bytes_bool"
                  backend: "identity"
                  max_batch_size: 8 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_STRING
                    dims: [ -1 ]
                  }
                    , {
                      name: "INPUT1"
                      data_type: TYPE_BOOL
                      dims: [ -1 ]
                    }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_STRING
                    dims: [ -1 ]
                  }
                    , {
                      name: "OUTPUT1"
                      data_type: TYPE_BOOL
                      dims: [ -1 ]
                    }] instance_group
                  [ { count: 1 kind: KIND_CPU }]
             )pb",
             R"js({"name":"identity_bytes_bool","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_STRING","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false},{"name":"INPUT1","data_type":"TYPE_BOOL","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_STRING","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false},{"name":"OUTPUT1","data_type":"TYPE_BOOL","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"identity_bytes_bool_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"identity_bytes_bool","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"BYTES","shape":[-1,-1]},{"name":"INPUT1","datatype":"BOOL","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"BYTES","shape":[-1,-1]},{"name":"OUTPUT1","datatype":"BOOL","shape":[-1,-1]}]})js",
             {1}},
            {"identity_delay20",
             R"pb(name: "identity_delay20"
                  backend: "identity"
                  max_batch_size: 8 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] instance_group
                  [ { count: 1 kind: KIND_CPU }]
                  parameters {
                    key: "execute_delay_ms"
                    value: { string_value: "20" }
                  }
             )pb",
             R"js({"name":"identity_delay20","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"identity_delay20_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{"execute_delay_ms":{"string_value":"20"}},"model_warmup":[]})js",
             R"js({"name":"identity_delay20","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js",
             {1}},
            {"identity_delay200_qp",
             R"pb(name: "identity_delay200_qp"
                  backend: "identity"
                  max_batch_size: 8 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }]
                  dynamic_batching {
                    default_queue_policy {
                      timeout_action: REJECT
                      default_timeout_microseconds: 10000000
                      allow_timeout_override: true
                      max_queue_size: 2
                    }
                  } instance_group
                  [ { count: 1 kind: KIND_CPU }]
                  parameters {
                    key: "execute_delay_ms"
                    value: { string_value: "200" }
                  }
             )pb",
             R"js({"name":"identity_delay200_qp","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"dynamic_batching":{"preferred_batch_size":[8],"max_queue_delay_microseconds":0,"preserve_ordering":false,"priority_levels":0,"default_priority_level":0,"default_queue_policy":{"timeout_action":"REJECT","default_timeout_microseconds":10000000,"allow_timeout_override":true,"max_queue_size":2},"priority_queue_policy":{}},"instance_group":[{"name":"identity_delay200_qp_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{"execute_delay_ms":{"string_value":"200"}},"model_warmup":[]})js",
             R"js({"name":"identity_delay200_qp","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js",
             {1}},
            {"identity_qpolicy",
             R"pb(name: "identity_qpolicy"
                  backend: "identity"
                  max_batch_size: 8
                  version_policy: { specific: { versions: [ 1 ] } } input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }]
                  dynamic_batching {
                    preferred_batch_size: [ 2, 4 ]
                    max_queue_delay_microseconds: 100
                    priority_levels: 2
                    default_priority_level: 1
                    default_queue_policy {
                      timeout_action: DELAY
                      default_timeout_microseconds: 5000000
                      allow_timeout_override: true
                      max_queue_size: 10
                    }
                    priority_queue_policy {
                      key: 2
                      value: {
                        timeout_action: REJECT
                        default_timeout_microseconds: 7000
                        max_queue_size: 3
                      }
                    }
                  } instance_group
                  [ { count: 2 kind: KIND_CPU }]
             )pb",
             R"js({"name":"identity_qpolicy","platform":"","backend":"identity","runtime":"","version_policy":{"specific":{"versions":[1]}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"dynamic_batching":{"preferred_batch_size":[2,4],"max_queue_delay_microseconds":100,"preserve_ordering":false,"priority_levels":2,"default_priority_level":1,"default_queue_policy":{"timeout_action":"DELAY","default_timeout_microseconds":5000000,"allow_timeout_override":true,"max_queue_size":10},"priority_queue_policy":{"2":{"timeout_action":"REJECT","default_timeout_microseconds":7000,"allow_timeout_override":false,"max_queue_size":3}}},"instance_group":[{"name":"identity_qpolicy_0","kind":"KIND_CPU","count":2,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"identity_qpolicy","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js",
             {1}},
            {"repeat_int32",
             R"pb(# (licence header omitted)
                  name: "repeat_int32"
                  backend: "repeat"
                  max_batch_size: 0
                  model_transaction_policy { decoupled: True } input
                  [ {
                    name: "IN"
                    data_type: TYPE_INT32
                    dims: [ -1 ]
                  }
                    , {
                      name: "DELAY"
                      data_type: TYPE_UINT32
                      dims: [ -1 ]
                    }
                    , {
                      name: "WAIT"
                      data_type: TYPE_UINT32
                      dims: [ 1 ]
                    }] output
                  [ {
                    name: "OUT"
                    data_type: TYPE_INT32
                    dims: [ 1 ]
                  }
                    , {
                      name: "IDX"
                      data_type: TYPE_UINT32
                      dims: [ 1 ]
                    }]
             )pb",
             R"js({"name":"repeat_int32","platform":"","backend":"repeat","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":0,"input":[{"name":"IN","data_type":"TYPE_INT32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false},{"name":"DELAY","data_type":"TYPE_UINT32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false},{"name":"WAIT","data_type":"TYPE_UINT32","format":"FORMAT_NONE","dims":[1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUT","data_type":"TYPE_INT32","dims":[1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false},{"name":"IDX","data_type":"TYPE_UINT32","dims":[1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"repeat_int32","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[],"model_transaction_policy":{"decoupled":true}})js",
             R"js({"name":"repeat_int32","versions":["1"],"platform":"repeat","inputs":[{"name":"IN","datatype":"INT32","shape":[-1]},{"name":"DELAY","datatype":"UINT32","shape":[-1]},{"name":"WAIT","datatype":"UINT32","shape":[1]}],"outputs":[{"name":"OUT","datatype":"INT32","shape":[1]},{"name":"IDX","datatype":"UINT32","shape":[1]}]})js",
             {1}},
            {"square_int32",
             R"pb(# (licence header omitted)
                  name: "square_int32"
                  backend: "square"
                  max_batch_size: 0
                  model_transaction_policy { decoupled: True } input
                  [ {
                    name: "IN"
                    data_type: TYPE_INT32
                    dims: [ 1 ]
                  }] output
                  [ {
                    name: "OUT"
                    data_type: TYPE_INT32
                    dims: [ 1 ]
                  }]
             )pb",
             R"js({"name":"square_int32","platform":"","backend":"square","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":0,"input":[{"name":"IN","data_type":"TYPE_INT32","format":"FORMAT_NONE","dims":[1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUT","data_type":"TYPE_INT32","dims":[1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"square_int32","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[],"model_transaction_policy":{"decoupled":true}})js",
             R"js({"name":"square_int32","versions":["1"],"platform":"square","inputs":[{"name":"IN","datatype":"INT32","shape":[1]}],"outputs":[{"name":"OUT","datatype":"INT32","shape":[1]}]})js",
             {1}},
            {"two_versions",
             R"pb(name: "two_versions"
                  backend: "identity"
                  max_batch_size: 8 input
                  [ {
                    name: "INPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] output
                  [ {
                    name: "OUTPUT0"
                    data_type: TYPE_FP32
                    dims: [ -1 ]
                  }] instance_group
                  [ { count: 1 kind: KIND_CPU }]
             )pb",
             R"js({"name":"two_versions","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"two_versions_0","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js",
             R"js({"name":"two_versions","versions":["2"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js",
             {2}},
};

// The other models of the probe's repository: config.pbtxt only.
const ProbeConfig kOtherProbeConfigs[] = {
    {"ensemble_identity_fp32",
     R"pb(name: "ensemble_identity_fp32"
          platform: "ensemble"
          max_batch_size: 8 input
          [ {
            name: "INPUT0"
            data_type: TYPE_FP32
            dims: [ -1 ]
          }] output
          [ {
            name: "OUTPUT0"
            data_type: TYPE_FP32
            dims: [ -1 ]
          }]
          ensemble_scheduling {
            step
            [ {
              model_name: "identity_fp32"
              model_version: -1
              input_map { key: "INPUT0" value: "INPUT0" }
              output_map { key: "OUTPUT0" value: "step1_out" }
            }
              , {
                model_name: "identity_fp32"
                model_version: -1
                input_map { key: "INPUT0" value: "step1_out" }
                output_map { key: "OUTPUT0" value: "OUTPUT0" }
              }]
          }
     )pb"},
    {"identity_delay200", R"pb(name: "identity_delay200"
                               backend: "identity"
                               max_batch_size: 8 input
                               [ {
                                 name: "INPUT0"
                                 data_type: TYPE_FP32
                                 dims: [ -1 ]
                               }] output
                               [ {
                                 name: "OUTPUT0"
                                 data_type: TYPE_FP32
                                 dims: [ -1 ]
                               }] instance_group
                               [ { count: 1 kind: KIND_CPU }]
                               parameters {
                                 key: "execute_delay_ms"
                                 value: { string_value: "200" }
                               }
     )pb"},
    {"identity_delay200_dyn", R"pb(name: "identity_delay200_dyn"
                                   backend: "identity"
                                   max_batch_size: 8 input
                                   [ {
                                     name: "INPUT0"
                                     data_type: TYPE_FP32
                                     dims: [ -1 ]
                                   }] output
                                   [ {
                                     name: "OUTPUT0"
                                     data_type: TYPE_FP32
                                     dims: [ -1 ]
                                   }]
                                   dynamic_batching {} instance_group
                                   [ { count: 1 kind: KIND_CPU }]
                                   parameters {
                                     key: "execute_delay_ms"
                                     value: { string_value: "200" }
                                   }
     )pb"},
    {"identity_dyn_delay20",
     R"pb(name: "identity_dyn_delay20"
          backend: "identity"
          max_batch_size: 8 input
          [ {
            name: "INPUT0"
            data_type: TYPE_FP32
            dims: [ -1 ]
          }] output
          [ {
            name: "OUTPUT0"
            data_type: TYPE_FP32
            dims: [ -1 ]
          }]
          dynamic_batching { max_queue_delay_microseconds: 1000 } instance_group
          [ { count: 1 kind: KIND_CPU }]
          parameters {
            key: "execute_delay_ms"
            value: { string_value: "20" }
          }
     )pb"},
    {"identity_graph_spec", R"pb(name: "identity_graph_spec"
                                 backend: "identity"
                                 max_batch_size: 8 input
                                 [ {
                                   name: "INPUT0"
                                   data_type: TYPE_FP32
                                   dims: [ -1 ]
                                 }] output
                                 [ {
                                   name: "OUTPUT0"
                                   data_type: TYPE_FP32
                                   dims: [ -1 ]
                                   reshape: { shape: [ -1 ] }
                                 }]
                                 optimization {
                                   cuda {
                                     graphs: true graph_spec
                                     [ {
                                       batch_size: 1
                                       input {
                                         key: "INPUT0"
                                         value { dim: [ 4 ] }
                                       }
                                     }]
                                   }
                                 } instance_group
                                 [ { count: 1 kind: KIND_CPU }]
     )pb"},
    {"identity_override", R"pb(name: "identity_override"
                               backend: "identity"
                               max_batch_size: 8 input
                               [ {
                                 name: "INPUT0"
                                 data_type: TYPE_FP32
                                 dims: [ -1 ]
                               }] output
                               [ {
                                 name: "OUTPUT0"
                                 data_type: TYPE_FP32
                                 dims: [ -1 ]
                               }] instance_group
                               [ { count: 1 kind: KIND_CPU }]
     )pb"},
    {"identity_secondary", R"pb(name: "identity_secondary"
                                backend: "identity"
                                max_batch_size: 8 input
                                [ {
                                  name: "INPUT0"
                                  data_type: TYPE_FP32
                                  dims: [ -1 ]
                                }] output
                                [ {
                                  name: "OUTPUT0"
                                  data_type: TYPE_FP32
                                  dims: [ -1 ]
                                }] instance_group
                                [ {
                                  count: 1
                                  kind: KIND_CPU secondary_devices
                                  [ { kind: KIND_NVDLA device_id: 3 }]
                                }]
     )pb"},
    {"identity_sequence",
     R"pb(name: "identity_sequence"
          backend: "identity"
          max_batch_size: 4 input
          [ {
            name: "INPUT0"
            data_type: TYPE_INT32
            dims: [ 1 ]
          }] output
          [ {
            name: "OUTPUT0"
            data_type: TYPE_INT32
            dims: [ 1 ]
          }]
          sequence_batching {
            max_sequence_idle_microseconds: 5000000
            direct { max_queue_delay_microseconds: 100 } control_input
            [ {
              name: "START" control
              [ {
                kind: CONTROL_SEQUENCE_START
                int32_false_true: [ 0, 1 ]
              }]
            }] state
            [ {
              input_name: "INPUT_STATE"
              output_name: "OUTPUT_STATE"
              data_type: TYPE_INT32
              dims: [ 1 ]
              initial_state: {
                data_type: TYPE_INT32
                dims: [ 1 ]
                zero_data: true
                name: "init"
              }
            }]
          } instance_group
          [ { count: 1 kind: KIND_CPU }]
     )pb"},
    {"identity_stats", R"pb(name: "identity_stats"
                            backend: "identity"
                            max_batch_size: 8 input
                            [ {
                              name: "INPUT0"
                              data_type: TYPE_FP32
                              dims: [ -1 ]
                            }] output
                            [ {
                              name: "OUTPUT0"
                              data_type: TYPE_FP32
                              dims: [ -1 ]
                            }] instance_group
                            [ { count: 1 kind: KIND_CPU }]
     )pb"},
    {"no_version", R"pb(name: "no_version"
                        backend: "identity"
                        max_batch_size: 8 input
                        [ {
                          name: "INPUT0"
                          data_type: TYPE_FP32
                          dims: [ -1 ]
                        }] output
                        [ {
                          name: "OUTPUT0"
                          data_type: TYPE_FP32
                          dims: [ -1 ]
                        }]
     )pb"},
    {"square_slow", R"pb(name: "square_slow"
                         backend: "square"
                         max_batch_size: 0
                         model_transaction_policy { decoupled: True } input
                         [ {
                           name: "IN"
                           data_type: TYPE_INT32
                           dims: [ 1 ]
                         }] output
                         [ {
                           name: "OUT"
                           data_type: TYPE_INT32
                           dims: [ 1 ]
                         }]
                         parameters {
                           key: "CUSTOM_INFER_DELAY_NS"
                           value: { string_value: "200000000" }
                         }
     )pb"},
    {"unknown_backend", R"pb(name: "unknown_backend"
                             backend: "no_such_backend"
                             max_batch_size: 8 input
                             [ {
                               name: "INPUT0"
                               data_type: TYPE_FP32
                               dims: [ -1 ]
                             }] output
                             [ {
                               name: "OUTPUT0"
                               data_type: TYPE_FP32
                               dims: [ -1 ]
                             }]
     )pb"},
};

const char kBrokenConfig[] = R"txt(name: "broken_config"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
this is not protobuf text {{
)txt";

const char kFullOverrideParam[] =
    R"js({"name":"identity_override","backend":"identity","max_batch_size":4,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[-1]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1]}]})js";
const char kFullOverrideConfig[] =
    R"js({"name":"identity_override","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":4,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"identity_override","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js";
const char kStringIntOverrideParam[] =
    R"js({"name":"identity_override","backend":"identity","max_batch_size":"3","input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":["-1"]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":["-1"]}]})js";
const char kStringIntOverrideConfig[] =
    R"js({"name":"identity_override","platform":"","backend":"identity","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":3,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"identity_override","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js";
const char kPartialOverrideParam[] = R"js({"max_batch_size": 2})js";
const char kPolicyAllParam[] =
    R"js({"name":"two_versions","backend":"identity","max_batch_size":8,"version_policy":{"all":{}},"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[-1]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1]}]})js";
const char kPolicyAllVersion1Config[] =
    R"js({"name":"two_versions","platform":"","backend":"identity","runtime":"","version_policy":{"all":{}},"max_batch_size":8,"input":[{"name":"INPUT0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"two_versions","kind":"KIND_CPU","count":1,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]})js";
const char kPolicyAllMetadataAll[] =
    R"js({"name":"two_versions","versions":["1","2"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js";
const char kPolicyAllMetadataV1[] =
    R"js({"name":"two_versions","versions":["1"],"platform":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,-1]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,-1]}]})js";

// Parses, fills defaults and validates like a model load does; false with
// the first error in *error.
bool LoadText(const std::string& model, const std::string& text,
              ModelConfig* cfg, std::string* error) {
  if (!fake::ParseModelConfigText(text, cfg, error)) return false;
  fake::FillModelConfigDefaults(model, cfg);
  return fake::ValidateModelConfig(*cfg, error) &&
         fake::ValidateForBackend(*cfg, error);
}

bool LoadJson(const std::string& model, const std::string& text,
              ModelConfig* cfg, std::string* error) {
  if (!fake::ParseModelConfigJson(text, cfg, error)) return false;
  fake::FillModelConfigDefaults(model, cfg);
  return fake::ValidateModelConfig(*cfg, error) &&
         fake::ValidateForBackend(*cfg, error);
}

std::string TextError(const std::string& text) {
  ModelConfig cfg;
  std::string error;
  if (fake::ParseModelConfigText(text, &cfg, &error)) return "(parsed)";
  return error;
}

std::string JsonOverrideError(const std::string& text) {
  ModelConfig cfg;
  std::string error;
  if (fake::ParseModelConfigJson(text, &cfg, &error)) return "(parsed)";
  return error;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// An input and what its error message must contain (or, where a test says
// so, be).
struct ErrorCase {
  std::string input;
  const char* expected;
};

// Each case's error, as `error_of` reports it, must contain its expected
// part; a failure names the input, the error and the expected part.
template <size_t N>
void CheckErrorsContain(std::string (*error_of)(const std::string&),
                        const ErrorCase (&cases)[N]) {
  for (const ErrorCase& c : cases) {
    const std::string error = error_of(c.input);
    CHECK_CASE("input: " + c.input + "; error: " + error +
                   "; expected part: " + c.expected,
               Contains(error, c.expected));
  }
}

std::string JsonError(const std::string& text) {
  Json j;
  std::string error;
  if (Json::Parse(text, &j, &error)) return "(parsed)";
  return error;
}

std::string Roundtrip(const std::string& text) {
  Json j;
  std::string error;
  if (!Json::Parse(text, &j, &error)) return "ERROR " + error;
  return j.dump();
}

std::string FormatDouble(double v) {
  std::string s;
  fake::JsonFormatDouble(v, &s);
  return s;
}

// "ok" when the config text loads (parse, defaults, checks), else the
// error.
std::string LoadResult(const std::string& model, const std::string& text) {
  ModelConfig cfg;
  std::string error;
  if (!LoadText(model, text, &cfg, &error)) return error;
  return "ok";
}

struct Tensor {
  const char* name;
  const char* type;
  const char* dims;
};

// A repeat model's config: `extra`, then tensors a repeat model accepts
// (three inputs, two outputs) with tensor `bad` (0-2 inputs, 3-4 outputs;
// -1 none) replaced.
std::string RepeatConfig(const char* extra, int bad,
                         const Tensor& replacement) {
  const Tensor good[] = {{"IN", "TYPE_INT32", "[ -1 ]"},
                         {"DELAY", "TYPE_UINT32", "[ -1 ]"},
                         {"WAIT", "TYPE_UINT32", "[ 1 ]"},
                         {"OUT", "TYPE_INT32", "[ 1 ]"},
                         {"IDX", "TYPE_UINT32", "[ 1 ]"}};
  std::string text = std::string("backend: \"repeat\" ") + extra + " input [ ";
  for (int i = 0; i < 5; ++i) {
    if (i == 3) text += " ] output [ ";
    const Tensor& t = i == bad ? replacement : good[i];
    if (i != 0 && i != 3) text += ", ";
    text += std::string("{ name: \"") + t.name + "\" data_type: " + t.type +
            " dims: " + t.dims + " }";
  }
  text += " ]";
  return text;
}

// A case of ConfigValidateForBackendRepeat: tensor `bad` (0-2 inputs, 3-4
// outputs, -1 none) replaced, the config text before the tensors, and the
// whole result: "ok" or the error.
struct RepeatCase {
  int bad;
  Tensor replacement;
  const char* extra;
  const char* expected;
};

const char kDecoupled[] = "model_transaction_policy { decoupled: true }";

const RepeatCase kRepeatCases[] = {
    {-1, {}, kDecoupled, "ok"},
    // IN/DELAY of a fixed length is what the real backend accepts too.
    {0,
     {"IN", "TYPE_INT32", "[ 3 ]"},
     kDecoupled,
     "expected IN and DELAY shape to match, got [3] and [-1]"},
    {0,
     {"IN", "TYPE_INT32", "[ -1, 2 ]"},
     kDecoupled,
     "expected IN shape to have one dimension, got [-1,2]"},
    {1,
     {"DELAYS", "TYPE_UINT32", "[ -1 ]"},
     kDecoupled,
     "expected second input tensor name to be DELAY, got DELAYS"},
    {2,
     {"WAIT", "TYPE_UINT32", "[ 2 ]"},
     kDecoupled,
     "expected WAIT shape to be [1], got [2]"},
    {2,
     {"WAIT", "TYPE_INT32", "[ 1 ]"},
     kDecoupled,
     "expected WAIT datatype to be UINT32, got TYPE_INT32"},
    {3,
     {"OUT", "TYPE_FP32", "[ 1 ]"},
     kDecoupled,
     "expected OUT datatype to be INT32, got TYPE_FP32"},
    {4,
     {"INDEX", "TYPE_UINT32", "[ 1 ]"},
     kDecoupled,
     "expected second output tensor name to be IDX, got INDEX"},
    {4,
     {"IDX", "TYPE_UINT32", "[ -1 ]"},
     kDecoupled,
     "expected IDX shape to be [1], got [-1]"},
    {-1,
     {},
     "",
     "repeat backend requires a decoupled model: set "
     "model_transaction_policy { decoupled: true } in the model "
     "configuration"},
    {-1,
     {},
     "max_batch_size: 4 model_transaction_policy { decoupled: true }",
     "repeat backend only supports models with max_batch_size == 0"},
};

const char kMinimalIdentity[] =
    "name: \"m\" backend: \"identity\" max_batch_size: 8 "
    "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ] "
    "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ] ";

}  // namespace

// ---------------------------------------------------------------------------
// Reference documents from real Triton

TEST(ConfigReferenceModelsMatchTritonByteForByte) {
  for (const auto& m : kReferenceModels) {
    ModelConfig cfg;
    std::string error;
    const bool loaded = LoadText(m.name, m.pbtxt, &cfg, &error);
    if (!loaded) std::cerr << "    " << m.name << ": " << error << "\n";
    CHECK(loaded);
    CHECK(cfg.ignored_fields.empty());
    CHECK_EQ(fake::ModelConfigToJson(cfg), std::string(m.config_json));
    CHECK_EQ(fake::ModelMetadataJson(cfg, m.ready_versions),
             std::string(m.metadata_json));
  }
}

TEST(ConfigReferenceModelsTheirFields) {
  ModelConfig cfg;
  std::string error;
  CHECK(LoadText("identity_delay200_qp", kReferenceModels[7].pbtxt, &cfg,
                 &error));
  CHECK_EQ(cfg.name, std::string("identity_delay200_qp"));
  CHECK(cfg.dynamic_batching.present);
  CHECK(cfg.dynamic_batching.default_queue_policy.present);
  CHECK_EQ(cfg.dynamic_batching.default_queue_policy.timeout_action,
           std::string("REJECT"));
  CHECK_EQ(
      cfg.dynamic_batching.default_queue_policy.default_timeout_microseconds,
      uint64_t{10000000});
  CHECK(cfg.dynamic_batching.default_queue_policy.allow_timeout_override);
  CHECK_EQ(cfg.dynamic_batching.default_queue_policy.max_queue_size, 2u);
  CHECK_EQ(cfg.parameters.at("execute_delay_ms"), std::string("200"));
  CHECK_EQ(cfg.input[0].datatype, TRITONSERVER_TYPE_FP32);

  ModelConfig repeat;
  CHECK(LoadText("repeat_int32", kReferenceModels[9].pbtxt, &repeat, &error));
  CHECK(repeat.decoupled);
  CHECK(repeat.has_transaction_policy);
  CHECK_EQ(repeat.input.size(), size_t{3});
  CHECK_EQ(repeat.input[1].datatype, TRITONSERVER_TYPE_UINT32);
  CHECK_EQ(repeat.instance_group.size(), size_t{1});
  CHECK_EQ(repeat.instance_group[0].name, std::string("repeat_int32"));

  ModelConfig qpolicy;
  CHECK(LoadText("identity_qpolicy", kReferenceModels[8].pbtxt, &qpolicy,
                 &error));
  CHECK(qpolicy.version_policy.kind ==
        fake::VersionPolicyConfig::Kind::kSpecific);
  CHECK(qpolicy.version_policy.versions == std::vector<int64_t>{1});
  CHECK(qpolicy.dynamic_batching.preferred_batch_size ==
        std::vector<int>({2, 4}));
  CHECK_EQ(qpolicy.dynamic_batching.priority_queue_policy.count(2), size_t{1});
  CHECK_EQ(qpolicy.instance_group[0].count, 2);
}

// test/models/ensemble_identity, and the config JSON a real Triton r25.07
// returned for it.
const char kEnsembleIdentity[] = R"pb(
  name: "ensemble_identity"
  platform: "ensemble"
  max_batch_size: 8 input
  [ {
    name: "IN"
    data_type: TYPE_FP32
    dims: [ -1 ]
  }] output
  [ {
    name: "OUT"
    data_type: TYPE_FP32
    dims: [ -1 ]
  }]
  ensemble_scheduling { step
                        [ {
                          model_name: "identity_fp32"
                          model_version: -1
                          input_map { key: "INPUT0" value: "IN" }
                          output_map { key: "OUTPUT0" value: "MIDDLE" }
                        }
                          , {
                            model_name: "identity_fp32"
                            model_version: 1
                            input_map { key: "INPUT0" value: "MIDDLE" }
                            output_map { key: "OUTPUT0" value: "OUT" }
                          }] }
)pb";
const char kEnsembleIdentityJson[] =
    R"js({"name":"ensemble_identity","platform":"ensemble","backend":"","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":8,"input":[{"name":"IN","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[-1],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"OUT","data_type":"TYPE_FP32","dims":[-1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"ensemble_scheduling":{"step":[{"model_name":"identity_fp32","model_version":-1,"input_map":{"INPUT0":"IN"},"output_map":{"OUTPUT0":"MIDDLE"},"model_namespace":""},{"model_name":"identity_fp32","model_version":1,"input_map":{"INPUT0":"MIDDLE"},"output_map":{"OUTPUT0":"OUT"},"model_namespace":""}]},"instance_group":[],"default_model_filename":"","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[],"model_transaction_policy":{"decoupled":false}})js";

TEST(ConfigEnsembleMatchesTritonByteForByte) {
  ModelConfig cfg;
  std::string error;
  CHECK(LoadText("ensemble_identity", kEnsembleIdentity, &cfg, &error));
  CHECK_EQ(cfg.ensemble_steps.size(), size_t{2});
  CHECK_EQ(cfg.ensemble_steps[1].model_version, int64_t{1});
  CHECK_EQ(cfg.ensemble_steps[0].output_map.at("OUTPUT0"),
           std::string("MIDDLE"));
  CHECK(cfg.instance_group.empty());
  CHECK_EQ(fake::ModelConfigToJson(cfg), std::string(kEnsembleIdentityJson));
  // The JSON form reads back to the same config.
  ModelConfig again;
  CHECK(LoadJson("ensemble_identity", kEnsembleIdentityJson, &again, &error));
  CHECK_EQ(fake::ModelConfigToJson(again), std::string(kEnsembleIdentityJson));
}

// The flow checks Triton makes on an ensemble's config alone, with its
// messages (a load fails with "failed to poll"; the reason is logged).
TEST(ConfigEnsembleFlowChecks) {
  // ensemble_identity changed by `edit`, then checked.
  auto problem = [](void (*edit)(ModelConfig*)) {
    ModelConfig cfg;
    std::string error;
    CHECK(fake::ParseModelConfigText(kEnsembleIdentity, &cfg, &error));
    edit(&cfg);
    fake::FillModelConfigDefaults("ensemble_identity", &cfg);
    CHECK(!fake::ValidateModelConfig(cfg, &error));
    return error;
  };
  auto tensor = [](const char* name) {
    fake::TensorConfig t;
    t.name = name;
    t.data_type = "TYPE_FP32";
    t.datatype = TRITONSERVER_TYPE_FP32;
    t.dims = {-1};
    return t;
  };
  static fake::TensorConfig extra;
  extra = tensor("EXTRA");
  CHECK_EQ(problem([](ModelConfig* c) { c->output.push_back(extra); }),
           std::string("ensemble output 'EXTRA' for ensemble "
                       "ensemble_identity' is not used"));
  CHECK_EQ(problem([](ModelConfig* c) { c->input.push_back(extra); }),
           std::string("ensemble input 'EXTRA' for ensemble "
                       "ensemble_identity' is not used"));
  CHECK_EQ(problem([](ModelConfig* c) {
             c->instance_group.push_back(fake::InstanceGroupConfig());
           }),
           std::string("instance group should not be specified for ensemble "
                       "'ensemble_identity'"));
  CHECK_EQ(problem([](ModelConfig* c) {
             fake::EnsembleStepConfig again = c->ensemble_steps[1];
             again.input_map = {{"INPUT0", "LOST"}};
             c->ensemble_steps.push_back(again);
           }),
           std::string("ensemble tensor 'OUT' can appear in an output map "
                       "only once for ensemble 'ensemble_identity' step 2"));
  CHECK_EQ(problem([](ModelConfig* c) {
             c->ensemble_steps[1].input_map["INPUT1"] = "LOST";
           }),
           std::string("output 'OUT' for ensemble 'ensemble_identity' is not "
                       "written: at least one of its depending tensors, "
                       "'LOST', is not connected"));
  CHECK_EQ(
      problem([](ModelConfig* c) { c->ensemble_steps[0].model_name = ""; }),
      std::string("must specify 'model_name' in step 0 of ensemble "
                  "'ensemble_identity'"));
  CHECK_EQ(problem([](ModelConfig* c) { c->ensemble_steps.clear(); }),
           std::string("must specify 'step' for ensemble 'ensemble_identity'"));
  CHECK_EQ(problem([](ModelConfig* c) {
             c->has_ensemble_scheduling = false;
             c->ensemble_steps.clear();
           }),
           std::string("ensemble scheduling must be set for ensemble "
                       "ensemble_identity whose platform is ensemble"));
}

TEST(ConfigOtherProbeModelsParse) {
  for (const auto& m : kOtherProbeConfigs) {
    ModelConfig cfg;
    std::string error;
    const bool parsed = fake::ParseModelConfigText(m.pbtxt, &cfg, &error);
    if (!parsed) std::cerr << "    " << m.name << ": " << error << "\n";
    CHECK(parsed);
    CHECK_EQ(cfg.name, std::string(m.name));
  }
  ModelConfig cfg;
  std::string error;
  CHECK(fake::ParseModelConfigText(kOtherProbeConfigs[0].pbtxt, &cfg, &error));
  CHECK(cfg.has_ensemble_scheduling);
  CHECK_EQ(cfg.platform, std::string("ensemble"));
  CHECK(fake::ParseModelConfigText(kOtherProbeConfigs[7].pbtxt, &cfg, &error));
  CHECK(cfg.has_sequence_batching);
  CHECK(fake::ParseModelConfigText(kOtherProbeConfigs[4].pbtxt, &cfg, &error));
  CHECK(cfg.ignored_fields == std::vector<std::string>{"optimization"});
  CHECK(cfg.output[0].has_reshape);
  CHECK(cfg.output[0].reshape == std::vector<int64_t>{-1});
  CHECK(fake::ParseModelConfigText(kOtherProbeConfigs[6].pbtxt, &cfg, &error));
  CHECK(cfg.ignored_fields ==
        std::vector<std::string>{"instance_group.secondary_devices"});
  CHECK(fake::ParseModelConfigText(kOtherProbeConfigs[10].pbtxt, &cfg, &error));
  CHECK_EQ(cfg.parameters.at("CUSTOM_INFER_DELAY_NS"),
           std::string("200000000"));
  // A model without a backend library still parses; the load fails later.
  CHECK(
      LoadText("unknown_backend", kOtherProbeConfigs[11].pbtxt, &cfg, &error));
  CHECK_EQ(cfg.backend, std::string("no_such_backend"));
}

TEST(ConfigBrokenProbeConfigNamesLineAndColumn) {
  const std::string error = TextError(kBrokenConfig);
  CHECK_EQ(error, std::string("Error parsing text-format "
                              "inference.ModelConfig: 5:1: Expected \",\", "
                              "found \"output\". (field \"input\")"));
}

TEST(ConfigOverrideFullMatchesTriton) {
  ModelConfig cfg;
  std::string error;
  CHECK(LoadJson("identity_override", kFullOverrideParam, &cfg, &error));
  CHECK_EQ(fake::ModelConfigToJson(cfg), std::string(kFullOverrideConfig));
  CHECK_EQ(cfg.max_batch_size, 4);
}

TEST(ConfigOverrideStringIntsMatchTriton) {
  ModelConfig cfg;
  std::string error;
  CHECK(LoadJson("identity_override", kStringIntOverrideParam, &cfg, &error));
  CHECK_EQ(fake::ModelConfigToJson(cfg), std::string(kStringIntOverrideConfig));
  CHECK_EQ(cfg.max_batch_size, 3);
  CHECK(cfg.input[0].dims == std::vector<int64_t>{-1});
}

TEST(ConfigOverridePartialFailsLikeTriton) {
  // Triton parsed the override, then failed the poll: no backend.
  ModelConfig cfg;
  std::string error;
  CHECK(fake::ParseModelConfigJson(kPartialOverrideParam, &cfg, &error));
  fake::FillModelConfigDefaults("identity_override", &cfg);
  CHECK(!fake::ValidateModelConfig(cfg, &error));
  CHECK_EQ(error,
           std::string("Invalid model name: Could not determine backend for "
                       "model 'identity_override' with no backend in model "
                       "configuration. Expected model name of the form "
                       "'model.<backend_name>'."));
}

TEST(ConfigOverrideVersionPolicyAllMatchesTriton) {
  ModelConfig cfg;
  std::string error;
  CHECK(LoadJson("two_versions", kPolicyAllParam, &cfg, &error));
  CHECK(cfg.version_policy.kind == fake::VersionPolicyConfig::Kind::kAll);
  CHECK_EQ(fake::ModelConfigToJson(cfg), std::string(kPolicyAllVersion1Config));
  CHECK_EQ(fake::ModelMetadataJson(cfg, {1, 2}),
           std::string(kPolicyAllMetadataAll));
  CHECK_EQ(fake::ModelMetadataJson(cfg, {1}),
           std::string(kPolicyAllMetadataV1));
}

// ---------------------------------------------------------------------------
// Protobuf text format

TEST(ConfigTextSyntaxVariants) {
  const char* text = R"pb(
    # comment line
    name: 'quoted\x41\101\u00e9\n'
          "joined"
    ;  # adjacent strings concatenate
    backend: "identity",
    max_batch_size: 0x10
    version_policy < latest { num_versions: 2 } >
    input { name: "INPUT0" data_type: 11 dims: 2 dims: 3 optional: True }
    input: { name: "INPUT1", data_type: TYPE_STRING; dims: [ -1 ] }
    output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [2, 3] },
             { name: "OUTPUT1" data_type: TYPE_STRING dims: [ -1 ] } ]
    output []
    instance_group [ { kind: KIND_GPU gpus: [ 0, 1 ] }, { name: "g" count: 3 } ]
    dynamic_batching { }
    parameters [ { key: "a" value: { string_value: "1" } },
                 { key: "b" value { string_value: "2" } } ]
    parameters { key: "a" value: { string_value: "3" } }
    model_transaction_policy { decoupled: f }
  )pb";
  ModelConfig cfg;
  std::string error;
  const bool parsed = fake::ParseModelConfigText(text, &cfg, &error);
  if (!parsed) std::cerr << "    " << error << "\n";
  CHECK(parsed);
  CHECK_EQ(cfg.name, std::string("quotedAA\xC3\xA9\njoined"));
  CHECK_EQ(cfg.max_batch_size, 16);
  CHECK_EQ(cfg.version_policy.num_versions, 2u);
  CHECK_EQ(cfg.input.size(), size_t{2});
  CHECK(cfg.input[0].dims == std::vector<int64_t>({2, 3}));
  CHECK_EQ(cfg.input[0].data_type, std::string("TYPE_FP32"));
  CHECK(cfg.input[0].optional);
  CHECK_EQ(cfg.input[1].datatype, TRITONSERVER_TYPE_BYTES);
  CHECK_EQ(cfg.output.size(), size_t{2});
  CHECK_EQ(cfg.parameters.size(), size_t{2});
  CHECK_EQ(cfg.parameters.at("a"), std::string("3"));  // last one wins
  CHECK_EQ(cfg.parameters.at("b"), std::string("2"));
  CHECK(cfg.has_transaction_policy);
  CHECK(!cfg.decoupled);
  CHECK(cfg.dynamic_batching.present);
  fake::FillModelConfigDefaults("dir_name", &cfg);
  CHECK_EQ(cfg.instance_group[0].name, cfg.name + "_0");
  CHECK_EQ(cfg.instance_group[0].kind, std::string("KIND_GPU"));
  CHECK(cfg.instance_group[0].gpus == std::vector<int>({0, 1}));
  CHECK_EQ(cfg.instance_group[1].name, std::string("g"));
  CHECK_EQ(cfg.instance_group[1].kind, std::string("KIND_CPU"));
  CHECK_EQ(cfg.instance_group[1].count, 3);
  // dynamic_batching {} with max_batch_size 16 prefers 16.
  CHECK(cfg.dynamic_batching.preferred_batch_size == std::vector<int>{16});
}

TEST(ConfigTextEmptyAndDefaults) {
  ModelConfig cfg;
  std::string error;
  CHECK(fake::ParseModelConfigText("", &cfg, &error));
  CHECK(fake::ParseModelConfigText("# only a comment\n", &cfg, &error));
  fake::FillModelConfigDefaults("from_dir", &cfg);
  CHECK_EQ(cfg.name, std::string("from_dir"));
  CHECK_EQ(cfg.instance_group.size(), size_t{1});
  CHECK_EQ(cfg.instance_group[0].name, std::string("from_dir"));
  CHECK_EQ(cfg.instance_group[0].count, 1);
  CHECK_EQ(cfg.instance_group[0].kind, std::string("KIND_CPU"));
  CHECK(cfg.version_policy.kind == fake::VersionPolicyConfig::Kind::kLatest);
  CHECK_EQ(cfg.version_policy.num_versions, 1u);
  CHECK(!fake::ValidateModelConfig(cfg, &error));  // no backend

  // Non-batching dynamic batching gets no preferred size.
  ModelConfig nobatch;
  CHECK(fake::ParseModelConfigText(
      "backend: \"identity\" dynamic_batching {} instance_group { count: 0 }",
      &nobatch, &error));
  fake::FillModelConfigDefaults("nb", &nobatch);
  CHECK(nobatch.dynamic_batching.preferred_batch_size.empty());
  CHECK_EQ(nobatch.instance_group[0].count, 1);  // 0 means "unset"
  CHECK_EQ(nobatch.instance_group[0].name, std::string("nb_0"));

  // The config's own name wins over the directory name.
  ModelConfig named;
  CHECK(fake::ParseModelConfigText(kMinimalIdentity, &named, &error));
  fake::FillModelConfigDefaults("dir", &named);
  CHECK_EQ(named.name, std::string("m"));
  CHECK_EQ(named.instance_group[0].name, std::string("m"));
}

TEST(ConfigTextVersionPolicies) {
  ModelConfig cfg;
  std::string error;
  CHECK(
      fake::ParseModelConfigText("version_policy: { all: {} }", &cfg, &error));
  CHECK(cfg.version_policy.kind == fake::VersionPolicyConfig::Kind::kAll);
  CHECK(fake::ParseModelConfigText(
      "version_policy { specific { versions: [1, 3] versions: 7 } }", &cfg,
      &error));
  CHECK(cfg.version_policy.kind == fake::VersionPolicyConfig::Kind::kSpecific);
  CHECK(cfg.version_policy.versions == std::vector<int64_t>({1, 3, 7}));
  CHECK(fake::ParseModelConfigText(
      "version_policy { latest { num_versions: 3 } }", &cfg, &error));
  CHECK_EQ(cfg.version_policy.num_versions, 3u);
  CHECK(Contains(TextError("version_policy { latest {} all {} }"),
                 "1:28: Field \"all\" is specified along with field "
                 "\"latest\", another member of oneof \"policy_choice\"."));
}

TEST(ConfigTextErrorsNameLineColumnAndField) {
  CHECK_EQ(TextError("name: \"x\"\n  foo: 1"),
           std::string("Error parsing text-format inference.ModelConfig: "
                       "2:3: Message type \"inference.ModelConfig\" has no "
                       "field named \"foo\"."));
  const ErrorCase cases[] = {
      {"input [ { name: \"a\" colour: 1 } ]",
       "1:21: Message type \"inference.ModelInput\" has no field "
       "named \"colour\". (field \"input\")"},
      // Unterminated block, list, string.
      {"input [ { name: \"a\"",
       "1:20: Expected \"}\", found \"end of input\". The \"{\" at "
       "1:9 is not closed. (field \"input\")"},
      {"dynamic_batching {\n max_queue_delay_microseconds: 5",
       "2:33: Expected \"}\", found \"end of input\". The \"{\" at 1:18 "
       "is not closed. (field \"dynamic_batching\")"},
      {"input [ { name: \"a\" }",
       "1:22: Expected \"]\", found \"end of input\". The \"[\" at "
       "1:7 is not closed. (field \"input\")"},
      {"input [ { dims: [ 1, 2 ",
       "1:24: Expected \"]\", found \"end of input\". The \"[\" at "
       "1:17 is not closed. (field \"input.dims\")"},
      {"output [ { name: \"a\" }, { name: 5 } ]",
       "1:33: Expected string, got: 5 (field \"output.name\")"},
      {"name: \"abc", "1:11: Unexpected end of string. (field \"name\")"},
      {"name: \"abc\nbackend: \"x\"",
       "String literals cannot cross line boundaries."},
      // Bad enum values.
      {"input { data_type: TYPE_FOO }",
       "1:20: Unknown enumeration value of \"TYPE_FOO\" for field "
       "\"data_type\"."},
      {"instance_group { kind: 7 }",
       "Unknown enumeration value of \"7\" for field \"kind\"."},
      {"input { data_type: \"TYPE_FP32\" }", "Expected integer or identifier"},
      // Wrong value kinds.
      {"name: 5", "1:7: Expected string, got: 5"},
      {"max_batch_size: \"8\"", "1:17: Expected integer, got: \"8\""},
      {"max_batch_size: 1.5", "Expected integer, got: 1.5"},
      {"input: 5", "1:8: Expected \"{\", found \"5\"."},
      {"name { }", "1:6: Expected \":\", found \"{\"."},
      {"model_transaction_policy { decoupled: yes }",
       "Invalid value for boolean field \"decoupled\". Value: \"yes\"."},
      {"max_batch_size: [ 1 ]",
       "Field \"max_batch_size\" is not a repeated field"},
      {"name: \"a\" name: \"b\"",
       "1:11: Non-repeated field \"name\" is specified multiple times."},
      {"dims: [ 1 ]", "has no field named \"dims\""},
      {"input [ { dims: [ 1 2 ] } ]", "1:21: Expected \",\", found \"2\"."},
      {"name: \"a\" }", "1:11: Expected identifier"},
      {"max_batch_size: 8abc", "Need space between number and identifier."},
      {"name: \"\\q\"", "Invalid escape sequence in string literal."},
  };
  CheckErrorsContain(TextError, cases);
}

TEST(ConfigTextAbsurdNumbersAreErrors) {
  const ErrorCase cases[] = {
      {"input { dims: [ 99999999999999999999 ] }",
       "1:17: Integer out of range (99999999999999999999)"},
      {"input { dims: [ 9223372036854775808 ] }",
       "Integer out of range (9223372036854775808)"},
      {"input { dims: [ -2 ] }",
       "1:17: Value -2 is out of range: must be >= -1 for field \"dims\"."},
      {"output { reshape { shape: [ -5 ] } }", "for field \"shape\""},
      {"max_batch_size: 3000000000", "Integer out of range (3000000000)"},
      {"max_batch_size: -1",
       "Value -1 is out of range: must be >= 0 for field "
       "\"max_batch_size\"."},
      {"instance_group [ { count: -1 } ]",
       "1:27: Value -1 is out of range: must be >= 0 for field \"count\"."},
      {"instance_group [ { gpus: [ -1 ] } ]", "for field \"gpus\""},
      {"dynamic_batching { max_queue_delay_microseconds: -1 }",
       "Integer out of range (-1)"},
      {"dynamic_batching { default_queue_policy { max_queue_size: "
       "4294967296 } }",
       "Integer out of range (4294967296)"},
      {"dynamic_batching { priority_levels: 18446744073709551616 }",
       "Integer out of range"},
      // uint64 priority levels beyond what the fake keeps are refused.
      {"dynamic_batching { priority_levels: 4294967296 }",
       "priority_levels 4294967296 is larger than the fake engine supports"},
  };
  CheckErrorsContain(TextError, cases);
  // Extremes that fit are fine.
  ModelConfig cfg;
  std::string error;
  CHECK(fake::ParseModelConfigText(
      "version_policy { specific { versions: [ -9223372036854775808, "
      "9223372036854775807 ] } }",
      &cfg, &error));
  CHECK(cfg.version_policy.versions ==
        std::vector<int64_t>({INT64_MIN, INT64_MAX}));
  CHECK(fake::ParseModelConfigText(
      "dynamic_batching { max_queue_delay_microseconds: 18446744073709551615 "
      "}",
      &cfg, &error));
  CHECK_EQ(cfg.dynamic_batching.max_queue_delay_microseconds, UINT64_MAX);
}

// A state one sequence cannot have is refused, naming the model and the
// state: larger than the memory given, or past 64 bits; a state at the
// bound, a variable one and a BYTES one (4 bytes an element) fit.
TEST(SequenceStateSizeIsBoundedByMemory) {
  auto problem = [](const std::string& state, uint64_t memory) {
    ModelConfig cfg;
    std::string error;
    CHECK(fake::ParseModelConfigText(
        "name: \"seq\" sequence_batching { state [ " + state + " ] }", &cfg,
        &error));
    return fake::SequenceStateSizeProblem(cfg, memory);
  };
  const std::string s = "input_name: \"S\" data_type: TYPE_INT32 ";
  CHECK(problem("{ " + s + "dims: [ 256 ] }", 1024).empty());
  CHECK(problem("{ " + s + "dims: [ -1, 256 ] }", 1024).empty());
  CHECK(problem("{ input_name: \"S\" data_type: TYPE_STRING dims: [ 256 ] }",
                1024)
            .empty());
  CHECK(problem("{ " + s + "dims: [ 257 ] }", 1024) ==
        "sequence_batching state 'S' of model 'seq': dims [257] of TYPE_INT32 "
        "take 1028 bytes per sequence, more than this machine's 1024 bytes of "
        "memory");
  CHECK(Contains(
      problem("{ " + s + "dims: [ 1099511627776 ] }", uint64_t{1} << 30),
      "dims [1099511627776] of TYPE_INT32 take 4398046511104 bytes"));
  CHECK(Contains(
      problem("{ " + s + "dims: [ 4294967296, 4294967296 ] }", UINT64_MAX),
      "take more bytes than 64 bits count per sequence"));
  CHECK(problem("{ input_name: \"S\" data_type: TYPE_STRING dims: [ 257 ] }",
                1024) != "");
  // The initial state is checked on its own (its dims are fixed where the
  // state's vary).
  CHECK(problem("{ " + s +
                    "dims: [ -1 ] initial_state: { data_type: TYPE_INT32 "
                    "dims: [ 300 ] name: \"init\" zero_data: true } }",
                1024) ==
        "sequence_batching initial_state 'init' of state 'S' of model 'seq': "
        "dims [300] of TYPE_INT32 take 1200 bytes, more than this machine's "
        "1024 bytes of memory");
}

TEST(ConfigTextSkipsUnmodelledFields) {
  const char* text = R"pb(
    name: "m"
    backend: "identity"
    optimization {
      cuda {
        graphs: true graph_spec
        [ {
          batch_size: 1
          input {
            key: "INPUT0"
            value { dim: [ 4 ] }
          }
        }]
      }
      priority: PRIORITY_MAX
    } model_warmup
    [ {
      name: "w"
      batch_size: 1
      inputs {
        key: "x"
        value: {
          data_type: TYPE_FP32
          dims: [ 1 ]
          zero_data: true
        }
      }
    }]
    response_cache { enable: true }
    sequence_batching {
      max_sequence_idle_microseconds: 5
      oldest {}
    }
  )pb";
  ModelConfig cfg;
  std::string error;
  CHECK(fake::ParseModelConfigText(text, &cfg, &error));
  CHECK(
      cfg.ignored_fields ==
      std::vector<std::string>({"optimization", "model_warmup",
                                "response_cache", "sequence_batching.oldest"}));
  CHECK(cfg.has_sequence_batching);
  // Skipped blocks are still checked for well-formed syntax.
  CHECK(Contains(TextError("optimization { cuda { graphs: true }"),
                 "Expected \"}\", found \"end of input\"."));
  CHECK(Contains(TextError("optimization { : }"), "Expected identifier"));
  CHECK(Contains(TextError("optimization { x: }"), "Expected a value"));
}

TEST(ConfigTextDeepNestingIsAnErrorNotACrash) {
  std::string text = "optimization ";
  for (int i = 0; i < 100000; ++i) text += "{ a ";
  CHECK(Contains(TextError(text), "Message nesting is too deep."));
}

// ---------------------------------------------------------------------------
// JSON overrides

TEST(ConfigJsonOverrideForms) {
  const char* text = R"js({
    "name": "m", "backend": "identity", "maxBatchSize": "8",
    "versionPolicy": {"specific": {"versions": ["3", 4]}},
    "input": [{"name": "INPUT0", "dataType": 11, "dims": ["-1", 2.0],
               "optional": true}],
    "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [-1, 2],
                "reshape": {"shape": [-1]}}],
    "instance_group": [{"kind": "KIND_CPU", "count": 2}],
    "dynamic_batching": {"preferred_batch_size": [4],
      "max_queue_delay_microseconds": "100",
      "default_queue_policy": {"timeout_action": "DELAY",
        "default_timeout_microseconds": "18446744073709551615"},
      "priority_levels": 2, "default_priority_level": 1,
      "priority_queue_policy": {"1": {"max_queue_size": 3}}},
    "parameters": {"execute_delay_ms": {"string_value": "5"}},
    "model_transaction_policy": {"decoupled": false},
    "runtime": null
  })js";
  ModelConfig cfg;
  std::string error;
  const bool parsed = fake::ParseModelConfigJson(text, &cfg, &error);
  if (!parsed) std::cerr << "    " << error << "\n";
  CHECK(parsed);
  CHECK_EQ(cfg.max_batch_size, 8);
  CHECK(cfg.version_policy.versions == std::vector<int64_t>({3, 4}));
  CHECK_EQ(cfg.input[0].datatype, TRITONSERVER_TYPE_FP32);
  CHECK(cfg.input[0].dims == std::vector<int64_t>({-1, 2}));
  CHECK(cfg.input[0].optional);
  CHECK(cfg.output[0].has_reshape);
  CHECK_EQ(cfg.dynamic_batching.max_queue_delay_microseconds, uint64_t{100});
  CHECK_EQ(
      cfg.dynamic_batching.default_queue_policy.default_timeout_microseconds,
      UINT64_MAX);
  CHECK_EQ(cfg.dynamic_batching.priority_queue_policy.at(1).max_queue_size, 3u);
  CHECK_EQ(cfg.parameters.at("execute_delay_ms"), std::string("5"));
  CHECK(cfg.has_transaction_policy);
  fake::FillModelConfigDefaults("m", &cfg);
  CHECK(fake::ValidateModelConfig(cfg, &error));
  CHECK(fake::ValidateForBackend(cfg, &error) == false);  // reshape differs
  const std::string json = fake::ModelConfigToJson(cfg);
  CHECK(Contains(json,
                 "\"priority_queue_policy\":{\"1\":{\"timeout_action\":"
                 "\"REJECT\",\"default_timeout_microseconds\":0,"
                 "\"allow_timeout_override\":false,\"max_queue_size\":3}"
                 "}"));
  CHECK(Contains(json,
                 "\"default_timeout_microseconds\":"
                 "18446744073709551615"));
  CHECK(Contains(json, "\"model_transaction_policy\":{\"decoupled\":false}"));
}

TEST(ConfigJsonOverrideErrors) {
  CHECK_EQ(JsonOverrideError(R"({"colour": 1})"),
           std::string("Cannot find field: colour in message "
                       "inference.ModelConfig"));
  const ErrorCase cases[] = {
      {"{this is not json", "invalid JSON at line 1 column 2"},
      {"[1]", "expected a JSON object"},
      {R"({"input": [{"nam": "x"}]})",
       "input[0]: Cannot find field: nam in message inference.ModelInput"},
      {R"({"max_batch_size": "abc"})",
       "max_batch_size: invalid integer \"abc\""},
      {R"({"max_batch_size": true})", "max_batch_size: expected an integer"},
      {R"({"max_batch_size": 2.5})",
       "max_batch_size: expected an integer, got 2.5"},
      {R"({"max_batch_size": 1e300})", "Integer out of range"},
      {R"({"max_batch_size": -3})", "Value -3 is out of range: must be >= 0"},
      {R"({"input": [{"dims": ["-2"]}]})",
       "input[0].dims[0]: Value -2 is out of range: must be >= -1"},
      {R"({"input": [{"dims": ["99999999999999999999"]}]})",
       "Integer out of range (99999999999999999999)"},
      {R"({"input": [{"dims": [99999999999999999999]}]})",
       "Integer out of range"},
      {R"({"input": [{"data_type": "FP32"}]})",
       "invalid value \"FP32\" for enum inference.DataType"},
      {R"({"input": {"name": "x"}})", "input: expected a JSON array"},
      {R"({"name": 5})", "name: expected a string"},
      {R"({"model_transaction_policy": {"decoupled": "true"}})",
       "model_transaction_policy.decoupled: expected true or false"},
      {R"({"version_policy": {"all": {}, "latest": {}}})",
       "both members of oneof \"policy_choice\""},
      // JSON duplicate keys: the last one wins.
      {R"({"name": "a", "name": "b"})", "(parsed)"},
      {R"({"dynamic_batching": {"priority_queue_policy": {"x": {}}}})",
       "invalid integer \"x\""},
  };
  CheckErrorsContain(JsonOverrideError, cases);
}

// ---------------------------------------------------------------------------
// Checks

TEST(ConfigValidateModelConfig) {
  auto check = [](const std::string& text) {
    ModelConfig cfg;
    std::string error;
    if (!fake::ParseModelConfigText(text, &cfg, &error))
      return "parse: " + error;
    fake::FillModelConfigDefaults("m", &cfg);
    if (!fake::ValidateModelConfig(cfg, &error)) return error;
    return std::string("ok");
  };
  const std::string base = kMinimalIdentity;
  // The config text and the whole result: "ok" or the error.
  const ErrorCase cases[] = {
      {base, "ok"},
      {"name: \"m\" platform: \"onnxruntime_onnx\"",
       "unexpected platform type 'onnxruntime_onnx' for m"},
      {"name: \"m\" backend: \"identity\" input { name: \"A\" }",
       "model input 'A' must specify 'data_type'"},
      {"backend: \"identity\" input { data_type: TYPE_FP32 }",
       "model input must specify 'name'"},
      {"backend: \"identity\" output { name: \"B\" data_type: TYPE_FP32 }",
       "model output 'B' must specify 'dims'"},
      {"backend: \"identity\" input { name: \"A\" data_type: TYPE_FP32 "
       "dims: [ 0 ] }",
       "model input 'A' dimension must be integer >= 1, or -1 to indicate a "
       "variable-size dimension"},
      {"backend: \"identity\" output { name: \"B\" data_type: TYPE_FP32 "
       "dims: [ 4 ] reshape { shape: [ 2, 3 ] } }",
       "model output 'B' has different size for dims and reshape"},
      {base + "dynamic_batching { preferred_batch_size: [ 16 ] }",
       "dynamic batching preferred size must be <= max batch size for m"},
      {base + "dynamic_batching { preferred_batch_size: [ 0 ] }",
       "dynamic batching preferred size must be positive for m"},
      {base + "dynamic_batching { priority_levels: 2 }",
       "default priority level must be in range [1, 2] for m"},
      {base + "instance_group { kind: KIND_CPU gpus: [ 0 ] }",
       "instance group m_0 of model m has kind KIND_CPU but specifies one "
       "or more GPUs"},
      {base + "instance_group { kind: KIND_GPU gpus: [ 0 ] }", "ok"},
  };
  for (const ErrorCase& c : cases) {
    CHECK_EQ_CASE(c.input, check(c.input), std::string(c.expected));
  }
}

TEST(ConfigValidateForBackendIdentity) {
  auto tensor = [](const char* name, const char* type, const char* dims) {
    return std::string("{ name: \"") + name + "\" data_type: " + type +
           " dims: " + dims + " }";
  };
  auto io = [](const std::string& in, const std::string& out) {
    return "input [ " + in + " ] output [ " + out + " ]";
  };
  // The inputs and outputs, and the whole result: "ok" or the error.
  const ErrorCase cases[] = {
      {io(tensor("INPUT0", "TYPE_FP32", "[ -1 ]"),
          tensor("OUTPUT0", "TYPE_FP32", "[ -1 ]")),
       "ok"},
      {io(tensor("INPUT0", "TYPE_FP32", "[ -1 ]"),
          tensor("OUTPUT0", "TYPE_INT32", "[ -1 ]")),
       "expected input and output datatype to match, got TYPE_FP32 and "
       "TYPE_INT32"},
      {io(tensor("INPUT0", "TYPE_FP32", "[ 4 ]"),
          tensor("OUTPUT0", "TYPE_FP32", "[ 2, 2 ]")),
       "expected input and output shape to match, got [4] and [2,2]"},
      // The reshape is what is compared when there is one.
      {io(tensor("INPUT0", "TYPE_FP32", "[ 4 ]"),
          "{ name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ 2, 2 ] "
          "reshape { shape: [ 4 ] } }"),
       "ok"},
      // Pairs match by index, in any order.
      {io(tensor("INPUT0", "TYPE_FP32", "[ 4 ]") + "," +
              tensor("INPUT1", "TYPE_STRING", "[ -1 ]"),
          tensor("OUTPUT1", "TYPE_STRING", "[ -1 ]") + "," +
              tensor("OUTPUT0", "TYPE_FP32", "[ 4 ]")),
       "ok"},
      {io(tensor("INPUT0", "TYPE_FP32", "[ 4 ]"),
          tensor("OUTPUT1", "TYPE_FP32", "[ 4 ]")),
       "expected input and output indices to match"},
      {io(tensor("IN", "TYPE_FP32", "[ 4 ]"),
          tensor("OUTPUT0", "TYPE_FP32", "[ 4 ]")),
       "expected input name to follow INPUT<index> pattern, got 'IN'"},
      {io(tensor("INPUT0", "TYPE_FP32", "[ 4 ]"),
          tensor("OUT", "TYPE_FP32", "[ 4 ]")),
       "expected output name to follow OUTPUT<index> pattern, got 'OUT'"},
      {"input [ " + tensor("INPUT0", "TYPE_FP32", "[ 4 ]") + " ]",
       "model configuration must have equal input/output pairs"},
  };
  for (const ErrorCase& c : cases) {
    CHECK_EQ_CASE(
        c.input,
        LoadResult("m", "backend: \"identity\" max_batch_size: 8 " + c.input),
        std::string(c.expected));
  }
}

TEST(ConfigValidateForBackendRepeat) {
  for (const RepeatCase& c : kRepeatCases) {
    const std::string text = RepeatConfig(c.extra, c.bad, c.replacement);
    CHECK_EQ_CASE(text, LoadResult("r", text), std::string(c.expected));
  }
  CHECK_EQ(LoadResult("r",
                      "backend: \"repeat\" model_transaction_policy { "
                      "decoupled: true } input [ { name: \"IN\" data_type: "
                      "TYPE_INT32 dims: [ -1 ] } ]"),
           std::string("expected 3 inputs, got 1"));
}

TEST(ConfigValidateForBackendSquare) {
  const std::string decoupled = "model_transaction_policy { decoupled: true } ";
  const std::string in =
      "input [ { name: \"IN\" data_type: TYPE_INT32 dims: [ 1 ] } ] ";
  const std::string out =
      "output [ { name: \"OUT\" data_type: TYPE_INT32 dims: [ 1 ] } ] ";
  // The config text after the backend, and the whole result: "ok" or the
  // error.
  const ErrorCase cases[] = {
      {decoupled + in + out, "ok"},
      {in + out,
       "square backend requires a decoupled model: set "
       "model_transaction_policy { decoupled: true } in the model "
       "configuration"},
      {decoupled + in +
           "output [ { name: \"OUT\" data_type: TYPE_FP32 dims: [ 1 ] } ]",
       "expected OUT datatype to be INT32, got TYPE_FP32"},
      {decoupled + in +
           "output [ { name: \"RESULT\" data_type: TYPE_INT32 dims: [ 1 ] } ]",
       "expected first output tensor name to be OUT, got RESULT"},
      {decoupled +
           "input [ { name: \"IN\" data_type: TYPE_INT32 dims: [ -1 ] } ] " +
           out,
       "expected IN shape to be [1], got [-1]"},
      {decoupled + out, "expected 1 input, got 0"},
      {decoupled + in, "expected 1 output, got 0"},
  };
  for (const ErrorCase& c : cases) {
    CHECK_EQ_CASE(c.input, LoadResult("s", "backend: \"square\" " + c.input),
                  std::string(c.expected));
  }
}

TEST(ConfigDataTypeNames) {
  CHECK_EQ(fake::DataTypeFromConfigName("TYPE_STRING"),
           TRITONSERVER_TYPE_BYTES);
  CHECK_EQ(fake::DataTypeFromConfigName("TYPE_BF16"), TRITONSERVER_TYPE_BF16);
  CHECK_EQ(fake::DataTypeFromConfigName("FP32"), TRITONSERVER_TYPE_INVALID);
  CHECK_EQ(std::string(fake::ConfigNameFromDataType(TRITONSERVER_TYPE_BYTES)),
           std::string("TYPE_STRING"));
  CHECK_EQ(std::string(fake::ApiNameFromDataType(TRITONSERVER_TYPE_BYTES)),
           std::string("BYTES"));
  CHECK_EQ(std::string(fake::ApiNameFromDataType(TRITONSERVER_TYPE_FP16)),
           std::string("FP16"));
  CHECK_EQ(std::string(fake::ApiNameFromDataType(
               static_cast<TRITONSERVER_DataType>(99))),
           std::string("<invalid>"));
}

// ---------------------------------------------------------------------------
// JSON

TEST(JsonParseKeepsOrderAndTypes) {
  Json j;
  std::string error;
  CHECK(Json::Parse(
            R"( {"z": 1, "a": [true, false, null], "m": {"k": "v"}, "n": -5,
           "u": 18446744073709551615, "d": 1.5, "e": 1E2, "big": 1e400x } )",
            &j, &error) == false);
  CHECK(Json::Parse(
      R"( {"z": 1, "a": [true, false, null], "m": {"k": "v"}, "n": -5,
           "u": 18446744073709551615, "d": 1.5, "e": 1E2,
           "huge": 123456789012345678901234567890} )",
      &j, &error));
  CHECK(j.is_object());
  CHECK_EQ(j.items()[0].first, std::string("z"));
  CHECK_EQ(j.items()[1].first, std::string("a"));
  CHECK(j.find("z")->type() == Json::Type::kInt);
  CHECK(j.find("n")->type() == Json::Type::kInt);
  CHECK_EQ(j.find("n")->as_int(), int64_t{-5});
  CHECK(j.find("u")->type() == Json::Type::kUint);
  CHECK_EQ(j.find("u")->as_uint(), UINT64_MAX);
  CHECK(j.find("d")->type() == Json::Type::kDouble);
  CHECK(j.find("e")->type() == Json::Type::kDouble);
  CHECK(j.find("e")->is_integral());
  CHECK(j.find("huge")->type() == Json::Type::kDouble);
  CHECK_EQ(j.find("a")->size(), size_t{3});
  CHECK(j.find("a")->at(2).is_null());
  CHECK_EQ(j.find("m")->find("k")->as_string(), std::string("v"));
  CHECK(j.find("missing") == nullptr);
  CHECK_EQ(j.dump(),
           std::string("{\"z\":1,\"a\":[true,false,null],\"m\":{\"k\":\"v\"},"
                       "\"n\":-5,\"u\":18446744073709551615,\"d\":1.5,"
                       "\"e\":100.0,\"huge\":1.2345678901234568e29}"));
  CHECK_EQ(Roundtrip("-9223372036854775808"),
           std::string("-9223372036854775808"));
  CHECK_EQ(Roundtrip("-9223372036854775809"),
           std::string("-9223372036854776000.0"));
  CHECK_EQ(Roundtrip("-0"), std::string("0"));
  CHECK_EQ(Roundtrip("-0.0"), std::string("-0.0"));
  CHECK_EQ(Roundtrip("1e-400"), std::string("0.0"));
  CHECK_EQ(Roundtrip(" [ ] "), std::string("[]"));
  CHECK_EQ(Roundtrip("{}"), std::string("{}"));
  CHECK_EQ(Roundtrip(R"({"a":1,"a":2})"), std::string("{\"a\":2}"));
}

TEST(JsonStringEscapes) {
  CHECK_EQ(Roundtrip(R"("a\"b\\c\/d\b\f\n\r\t")"),
           std::string("\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\""));
  Json j;
  std::string error;
  CHECK(Json::Parse(R"("\u00e9\u20AC\ud83d\ude00\u0000x")", &j, &error));
  CHECK_EQ(j.as_string(),
           std::string("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9) +
               std::string(1, '\0') + "x");
  // Control characters come back as \u00XX (uppercase hex), raw UTF-8 and
  // DEL pass through unchanged.
  CHECK_EQ(j.dump(), std::string("\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"
                                 "\\u0000x\""));
  std::string out;
  fake::JsonEscape(std::string("\x01\x1f\x7f<>&'", 7), &out);
  CHECK_EQ(out, std::string("\"\\u0001\\u001F\x7f<>&'\""));
}

TEST(JsonParseErrors) {
  const ErrorCase cases[] = {
      {"", "line 1 column 1: unexpected end of input"},
      {"{\"a\" 1}", "line 1 column 6: expected ':' after an object key"},
      {"{\n  \"a\": 1,\n}", "line 3 column 1: expected a string key"},
      {"[1,]", "line 1 column 4: unexpected character"},
      {"[1 2]", "expected ',' or ']' in an array"},
      {"{\"a\":1 \"b\":2}", "expected ',' or '}' in an object"},
      {"01", "leading zeros are not allowed"},
      {"1.", "expected a digit after the decimal point"},
      {"1e", "expected a digit in the exponent"},
      {"-", "expected a digit"},
      {"+1", "unexpected character '+'"},
      {"1e400", "number out of range: 1e400"},
      {"\"abc", "unterminated string"},
      {"\"a\nb\"", "control character in a string"},
      {R"("\x")", "invalid escape '\\x'"},
      {R"("\u12")", "truncated \\u escape"},
      {R"("\u12G4")", "invalid hex digit"},
      {R"("\ud83d")", "high surrogate not followed by a low surrogate"},
      {R"("\ud83d\u0041")", "high surrogate not followed by a low surrogate"},
      {R"("\ude00")", "lone low surrogate"},
      {"tru", "unexpected character 't'"},
      {"nul", "unexpected character 'n'"},
      {"{} x", "unexpected text after the JSON value"},
      {"'a'", "unexpected character '''"},
      {std::string(100000, '['), "nesting too deep"},
  };
  CheckErrorsContain(JsonError, cases);
  // Exactly at the depth limit is fine.
  std::string deep(Json::kMaxDepth, '[');
  deep += std::string(Json::kMaxDepth, ']');
  CHECK_EQ(Roundtrip(deep), deep);
}

TEST(JsonDoubleFormattingRoundTrips) {
  const struct {
    double value;
    const char* text;
  } cases[] = {
      {123.123, "123.123"},
      {1.0, "1.0"},
      {-2.5, "-2.5"},
      {0.1, "0.1"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {0.001, "0.001"},
      {1e-6, "0.000001"},
      {1e-7, "1e-7"},
      {1.5e-7, "1.5e-7"},
      {1e20, "100000000000000000000.0"},
      {1e21, "1e21"},
      {1.5e30, "1.5e30"},
      {1234567.25, "1234567.25"},
      {5e-324, "5e-324"},
      {DBL_MAX, "1.7976931348623157e308"},
      {std::nan(""), "null"},
      {HUGE_VAL, "null"},
  };
  for (const auto& c : cases) {
    CHECK_EQ_CASE(c.text, FormatDouble(c.value), std::string(c.text));
  }
  CHECK_EQ(Json::Double(0.30000000000000004).dump(),
           std::string("0.30000000000000004"));
  // Every formatted value reads back as the same double.
  const double samples[] = {123.123, 0.1,      1.0 / 3, 2.0 / 3, 1e-300,
                            6.02e23, 1e15 + 1, 3.14159, 1e-5,    4.35e-7};
  for (double v : samples) {
    Json j;
    std::string error;
    CHECK_CASE(v, Json::Parse(FormatDouble(v), &j, &error));
    CHECK_EQ_CASE(v, j.as_double(), v);
  }
}

TEST(JsonBuilderAndAccessors) {
  Json o = Json::Object();
  o.set("b", Json::Int(1));
  o.set("a", Json::Str("x"));
  o.set("b", Json::Uint(2));  // replaces in place
  Json& arr = o.set("list", Json::Array());
  arr.push(Json::Double(0.5));
  arr.push(Json::Bool(false));
  arr.push(Json());
  CHECK_EQ(o.dump(),
           std::string("{\"b\":2,\"a\":\"x\",\"list\":[0.5,false,null]}"));
  CHECK_EQ(o.size(), size_t{3});
  CHECK_EQ(Json::Str("s").size(), size_t{0});
  CHECK_EQ(Json::Double(-3.7).as_int(), int64_t{-3});
  CHECK_EQ(Json::Double(1e300).as_int(), INT64_MAX);
  CHECK_EQ(Json::Double(-1e300).as_int(), INT64_MIN);
  CHECK_EQ(Json::Int(-1).as_uint(), uint64_t{0});
  CHECK_EQ(Json::Uint(UINT64_MAX).as_int(), INT64_MAX);
  CHECK(!Json::Double(0.5).is_integral());
  CHECK(Json::Double(2.0).is_integral());
  CHECK(!Json::Str("1").is_number());
  Json* found = o.find("a");
  CHECK(found != nullptr);
  *found = Json::Str("y");
  CHECK_EQ(o.find("a")->as_string(), std::string("y"));
}
