/**
 * Triton's model configuration as TypeScript types, in its JSON form (the
 * protobuf field names, enum values as their names), and the config.pbtxt
 * text form read and written.
 *
 * Every field is optional: Triton fills in what a config leaves out, and
 * `model.config()` returns the config with those defaults. 64-bit integers
 * may be numbers or strings: Triton's own JSON writes a few of them as strings
 * (`sequence_batching.state[].initial_state[].dims`,
 * `instance_group[].secondary_devices[].device_id`), and accepts both.
 */
import { formatModelConfigText, parseModelConfigText } from './pbtxt.js';

/** A 64-bit integer as Triton's JSON may carry it. */
export type Int64 = number | string;

/** `TYPE_FP32`…: a tensor's datatype in a config (`TYPE_STRING` is BYTES). */
export type ConfigDataType =
  | 'TYPE_INVALID'
  | 'TYPE_BOOL'
  | 'TYPE_UINT8'
  | 'TYPE_UINT16'
  | 'TYPE_UINT32'
  | 'TYPE_UINT64'
  | 'TYPE_INT8'
  | 'TYPE_INT16'
  | 'TYPE_INT32'
  | 'TYPE_INT64'
  | 'TYPE_FP16'
  | 'TYPE_FP32'
  | 'TYPE_FP64'
  | 'TYPE_STRING'
  | 'TYPE_BF16';

/** Which versions of a model are served: one of `latest`, `all`, `specific`. */
export interface ModelVersionPolicy {
  /** The highest `num_versions` versions. */
  latest?: { num_versions?: number };
  /** Every version folder. */
  all?: Record<string, never>;
  /** Exactly these versions. */
  specific?: { versions?: Int64[] };
}

/** A reshape of a tensor between what the model and what the client sees. */
export interface ModelTensorReshape {
  shape?: Int64[];
}

export interface ModelInput {
  name?: string;
  data_type?: ConfigDataType;
  format?: 'FORMAT_NONE' | 'FORMAT_NHWC' | 'FORMAT_NCHW';
  /** Without the batch dimension; -1 is variable. */
  dims?: Int64[];
  reshape?: ModelTensorReshape;
  is_shape_tensor?: boolean;
  allow_ragged_batch?: boolean;
  optional?: boolean;
  is_non_linear_format_io?: boolean;
}

export interface ModelOutput {
  name?: string;
  data_type?: ConfigDataType;
  dims?: Int64[];
  reshape?: ModelTensorReshape;
  label_filename?: string;
  is_shape_tensor?: boolean;
  is_non_linear_format_io?: boolean;
}

/** An input the batcher computes for the model from the requests of a batch. */
export interface BatchInput {
  kind?:
    | 'BATCH_ELEMENT_COUNT'
    | 'BATCH_ACCUMULATED_ELEMENT_COUNT'
    | 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO'
    | 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE'
    | 'BATCH_ITEM_SHAPE'
    | 'BATCH_ITEM_SHAPE_FLATTEN';
  target_name?: string[];
  data_type?: ConfigDataType;
  source_input?: string[];
}

/** An output the batcher splits back to the requests of a batch. */
export interface BatchOutput {
  target_name?: string[];
  kind?: 'BATCH_SCATTER_WITH_INPUT_SHAPE';
  source_input?: string[];
}

/** What a rate-limited instance needs (see the server option `rateLimiter`). */
export interface ModelRateLimiter {
  resources?: Array<{ name?: string; global?: boolean; count?: number }>;
  priority?: number;
}

export interface ModelInstanceGroup {
  name?: string;
  kind?: 'KIND_AUTO' | 'KIND_GPU' | 'KIND_CPU' | 'KIND_MODEL';
  count?: number;
  rate_limiter?: ModelRateLimiter;
  gpus?: number[];
  secondary_devices?: Array<{ kind?: 'KIND_NVDLA'; device_id?: Int64 }>;
  profile?: string[];
  passive?: boolean;
  /** A host policy of the server option `hostPolicy`. */
  host_policy?: string;
}

export interface ModelQueuePolicy {
  timeout_action?: 'REJECT' | 'DELAY';
  default_timeout_microseconds?: Int64;
  allow_timeout_override?: boolean;
  max_queue_size?: number;
}

export interface ModelDynamicBatching {
  preferred_batch_size?: number[];
  max_queue_delay_microseconds?: Int64;
  preserve_ordering?: boolean;
  priority_levels?: Int64;
  default_priority_level?: Int64;
  default_queue_policy?: ModelQueuePolicy;
  /** By priority level. */
  priority_queue_policy?: Record<string, ModelQueuePolicy>;
}

export interface ModelSequenceControl {
  kind?:
    | 'CONTROL_SEQUENCE_START'
    | 'CONTROL_SEQUENCE_READY'
    | 'CONTROL_SEQUENCE_END'
    | 'CONTROL_SEQUENCE_CORRID';
  int32_false_true?: number[];
  fp32_false_true?: number[];
  bool_false_true?: boolean[];
  data_type?: ConfigDataType;
}

export interface ModelSequenceState {
  input_name?: string;
  output_name?: string;
  data_type?: ConfigDataType;
  dims?: Int64[];
  initial_state?: Array<{
    data_type?: ConfigDataType;
    dims?: Int64[];
    zero_data?: boolean;
    data_file?: string;
    name?: string;
  }>;
  use_same_buffer_for_input_output?: boolean;
  use_growable_memory?: boolean;
}

export interface ModelSequenceBatching {
  direct?: { max_queue_delay_microseconds?: Int64; minimum_slot_utilization?: number };
  oldest?: {
    max_candidate_sequences?: number;
    preferred_batch_size?: number[];
    max_queue_delay_microseconds?: Int64;
    preserve_ordering?: boolean;
  };
  max_sequence_idle_microseconds?: Int64;
  control_input?: Array<{ name?: string; control?: ModelSequenceControl[] }>;
  state?: ModelSequenceState[];
  iterative_sequence?: boolean;
}

/** One step of an ensemble: a model, and how its tensors map to the ensemble's. */
export interface ModelEnsembleStep {
  model_name?: string;
  /** -1: the highest ready version. */
  model_version?: Int64;
  /** The step model's input name → the ensemble tensor it reads. */
  input_map?: Record<string, string>;
  /** The step model's output name → the ensemble tensor it writes. */
  output_map?: Record<string, string>;
  model_namespace?: string;
}

export interface ModelEnsembling {
  step?: ModelEnsembleStep[];
}

export interface ModelOptimizationPolicy {
  graph?: { level?: number };
  priority?: 'PRIORITY_DEFAULT' | 'PRIORITY_MAX' | 'PRIORITY_MIN';
  cuda?: {
    graphs?: boolean;
    busy_wait_events?: boolean;
    graph_spec?: Array<Record<string, unknown>>;
    output_copy_stream?: boolean;
  };
  execution_accelerators?: {
    gpu_execution_accelerator?: Array<{ name?: string; parameters?: Record<string, string> }>;
    cpu_execution_accelerator?: Array<{ name?: string; parameters?: Record<string, string> }>;
  };
  input_pinned_memory?: { enable?: boolean };
  output_pinned_memory?: { enable?: boolean };
  gather_kernel_buffer_threshold?: number;
  eager_batching?: boolean;
}

export interface ModelWarmup {
  name?: string;
  batch_size?: number;
  inputs?: Record<
    string,
    {
      data_type?: ConfigDataType;
      dims?: Int64[];
      zero_data?: boolean;
      random_data?: boolean;
      input_data_file?: string;
    }
  >;
  count?: number;
}

/** Triton's model config in its JSON form (protobuf field names, e.g. `max_batch_size`). */
export interface ModelConfig {
  name?: string;
  /** 'ensemble', or a framework platform ('onnxruntime_onnx', …) where no `backend` is named. */
  platform?: string;
  backend?: string;
  runtime?: string;
  version_policy?: ModelVersionPolicy;
  /** 0: the model does not batch (its dims are the full shape). */
  max_batch_size?: number;
  input?: ModelInput[];
  output?: ModelOutput[];
  batch_input?: BatchInput[];
  batch_output?: BatchOutput[];
  optimization?: ModelOptimizationPolicy;
  dynamic_batching?: ModelDynamicBatching;
  sequence_batching?: ModelSequenceBatching;
  ensemble_scheduling?: ModelEnsembling;
  instance_group?: ModelInstanceGroup[];
  default_model_filename?: string;
  cc_model_filenames?: Record<string, string>;
  metric_tags?: Record<string, string>;
  /** Backend parameters: `{ key: { string_value } }`. */
  parameters?: Record<string, { string_value?: string }>;
  model_warmup?: ModelWarmup[];
  model_operations?: { op_library_filename?: string[] };
  model_transaction_policy?: { decoupled?: boolean };
  model_repository_agents?: { agents?: Array<{ name?: string; parameters?: Record<string, string> }> };
  response_cache?: { enable?: boolean };
}

/**
 * Reads config.pbtxt text into the JSON form. Throws a SyntaxError that says
 * where (`line 4, column 12: …`).
 */
export function parseModelConfig(text: string): ModelConfig {
  if (typeof text !== 'string')
    throw new TypeError(`parseModelConfig: expected the text of a config.pbtxt, got ${typeof text}`);
  return parseModelConfigText(text) as ModelConfig;
}

/** Writes a config (the JSON form) as config.pbtxt text; `parseModelConfig` reads back the same config. */
export function formatModelConfig(config: ModelConfig): string {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new TypeError('formatModelConfig: expected a model config object');
  }
  return formatModelConfigText(config as Record<string, unknown>);
}
