/**
 * Loads of the real ONNX models on the onnxruntime backend, each with the
 * outcome Triton gives: auto-completed configs (no config.pbtxt, or one with
 * inputs or outputs left out, under `strictModelConfig: false`), complete
 * configs, and broken ones (a wrong input or output name, dims, data type,
 * batching a model that cannot batch). `record.ts` runs them on a real Triton
 * and saves what it said in test/fixtures/real-triton-r25.07/onnxruntime/;
 * test/backends/fake-onnxruntime.test.ts runs them on the fake engine and compares.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RealModelFiles, realModelConfigs } from '@triton-node/test-support/backends/real-models.js';
import { type ModelConfig, formatModelConfig } from '../../lib/index.js';
import { ADD_BIAS, IDENTITY_BF16, IDENTITY_FP16 } from '../backends/tiny-onnx.js';

/** Tiny models written by test/backends/tiny-onnx.ts, for what the real ones cannot show. */
const TINY_MODELS = { identityFp16: IDENTITY_FP16, identityBf16: IDENTITY_BF16, addBias: ADD_BIAS } as const;
export type TinyModelName = keyof typeof TINY_MODELS;

export interface OnnxCase {
  /** The case (fixture file name) and the model's directory name. */
  name: string;
  /** Which model file the version folder holds: a real model's, or a tiny one written here. */
  model: keyof RealModelFiles | TinyModelName;
  /** config.pbtxt (null: none, auto-complete). */
  config: ModelConfig | null;
  /** The model file's name in `1/` (default model.onnx). */
  fileName?: string;
  /** Triton's strict model config (default true; false lets it auto-complete). */
  strict?: boolean;
  /** The onnxruntime backend setting default-max-batch-size (auto-complete only; default Triton's 4). */
  defaultMaxBatchSize?: number;
}

/**
 * The server a case loads on: its strictness and backend settings. One
 * server per mode, each in a process of its own (after a failed onnxruntime
 * load, r25.07 cannot start the backend again in that process).
 */
export type OnnxCaseMode = 'strict' | 'auto' | `auto-dmbs${number}`;

export function caseMode(c: OnnxCase): OnnxCaseMode {
  if (c.strict ?? true) return 'strict';
  return c.defaultMaxBatchSize === undefined ? 'auto' : `auto-dmbs${c.defaultMaxBatchSize}`;
}

/** The modes of ONNX_CASES, strict first. */
export function caseModes(): OnnxCaseMode[] {
  return [...new Set(ONNX_CASES.map(caseMode))].sort((a, b) =>
    a === 'strict' ? -1 : b === 'strict' ? 1 : a.localeCompare(b),
  );
}

/** What a case came to: the loaded model's config, or the load's error. */
export interface OnnxOutcome {
  case: string;
  loaded: boolean;
  /** The model config Triton reports once loaded. */
  config?: ModelConfig;
  /** The load's error (the repository directory written as <repo>). */
  error?: { code: string; message: string };
}

const base = realModelConfigs();
/** A base config without its thread parameters, renamed and changed. */
function from(config: ModelConfig, name: string, change: Partial<ModelConfig>): ModelConfig {
  const { parameters: _, ...rest } = config;
  const out: Record<string, unknown> = { ...rest, name, instance_group: [{ kind: 'KIND_CPU', count: 1 }] };
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out as ModelConfig;
}
const cls = (name: string, change: Partial<ModelConfig> = {}) => from(base.ocr_cls, name, change);
const det = (name: string, change: Partial<ModelConfig> = {}) => from(base.ocr_det, name, change);
const vad = (name: string, change: Partial<ModelConfig> = {}) => from(base.silero_vad, name, change);
/** A config of IDENTITY_FP16 or IDENTITY_BF16 (x → y, [2] after the batch) with `type` for both. */
function tiny(name: string, type: 'TYPE_FP16' | 'TYPE_BF16' | 'TYPE_FP32'): ModelConfig {
  return {
    name,
    backend: 'onnxruntime',
    max_batch_size: 4,
    input: [{ name: 'x', data_type: type, dims: [2] }],
    output: [{ name: 'y', data_type: type, dims: [2] }],
    instance_group: [{ kind: 'KIND_CPU', count: 1 }],
  };
}
/** A config of ADD_BIAS (y = x + bias, bias with a default): `bias` given, optional or not. */
function addBias(name: string, maxBatchSize: number, optional: boolean): ModelConfig {
  const batch = maxBatchSize > 0 ? [] : [-1];
  return {
    name,
    backend: 'onnxruntime',
    max_batch_size: maxBatchSize,
    input: [
      { name: 'x', data_type: 'TYPE_FP32', dims: [...batch, 4] },
      { name: 'bias', data_type: 'TYPE_FP32', dims: [4], optional },
    ],
    output: [{ name: 'y', data_type: 'TYPE_FP32', dims: [...batch, 4] }],
    instance_group: [{ kind: 'KIND_CPU', count: 1 }],
  };
}
const clsInput = base.ocr_cls.input ?? [];
const clsOutput = base.ocr_cls.output ?? [];

export const ONNX_CASES: readonly OnnxCase[] = [
  // Auto-complete: no config at all.
  { name: 'ocr_cls_auto', model: 'ocrCls', config: null, strict: false },
  { name: 'ocr_det_auto', model: 'ocrDet', config: null, strict: false },
  { name: 'silero_vad_auto', model: 'sileroVad', config: null, strict: false },
  // Auto-complete of what a config leaves out.
  {
    name: 'ocr_cls_auto_mbs16',
    model: 'ocrCls',
    config: { name: 'ocr_cls_auto_mbs16', backend: 'onnxruntime', max_batch_size: 16 },
    strict: false,
  },
  {
    name: 'ocr_cls_auto_outputs',
    model: 'ocrCls',
    config: {
      name: 'ocr_cls_auto_outputs',
      platform: 'onnxruntime_onnx',
      max_batch_size: 2,
      input: clsInput,
    },
    strict: false,
  },
  {
    name: 'silero_vad_auto_mbs4',
    model: 'sileroVad',
    config: { name: 'silero_vad_auto_mbs4', backend: 'onnxruntime', max_batch_size: 4 },
    strict: false,
  },
  // Complete configs.
  { name: 'ocr_cls', model: 'ocrCls', config: cls('ocr_cls') },
  { name: 'ocr_det', model: 'ocrDet', config: det('ocr_det') },
  { name: 'silero_vad', model: 'sileroVad', config: vad('silero_vad') },
  {
    name: 'ocr_cls_platform',
    model: 'ocrCls',
    config: cls('ocr_cls_platform', { backend: undefined, platform: 'onnxruntime_onnx' }),
  },
  {
    name: 'ocr_cls_filename',
    model: 'ocrCls',
    config: cls('ocr_cls_filename', { default_model_filename: 'classifier.onnx' }),
    fileName: 'classifier.onnx',
  },
  {
    name: 'ocr_cls_unbatched',
    model: 'ocrCls',
    config: cls('ocr_cls_unbatched', {
      max_batch_size: 0,
      dynamic_batching: undefined,
      input: [{ name: 'x', data_type: 'TYPE_FP32', dims: [-1, 3, 48, 192] }],
      output: [{ name: 'softmax_0.tmp_0', data_type: 'TYPE_FP32', dims: [-1, 2] }],
    }),
  },
  // Broken configs.
  {
    name: 'ocr_cls_wrong_input_name',
    model: 'ocrCls',
    config: cls('ocr_cls_wrong_input_name', { input: [{ ...clsInput[0]!, name: 'image' }] }),
  },
  {
    name: 'ocr_cls_wrong_output_name',
    model: 'ocrCls',
    config: cls('ocr_cls_wrong_output_name', { output: [{ ...clsOutput[0]!, name: 'probabilities' }] }),
  },
  {
    name: 'ocr_cls_wrong_dims',
    model: 'ocrCls',
    config: cls('ocr_cls_wrong_dims', { input: [{ ...clsInput[0]!, dims: [3, 48, 100] }] }),
  },
  {
    name: 'ocr_cls_wrong_rank',
    model: 'ocrCls',
    config: cls('ocr_cls_wrong_rank', { input: [{ ...clsInput[0]!, dims: [3, 48] }] }),
  },
  {
    name: 'ocr_cls_wrong_output_dims',
    model: 'ocrCls',
    config: cls('ocr_cls_wrong_output_dims', { output: [{ ...clsOutput[0]!, dims: [-1] }] }),
  },
  {
    // Inputs are compared where the model's dimension is fixed only: loads.
    name: 'ocr_det_fixed_input_dims',
    model: 'ocrDet',
    config: det('ocr_det_fixed_input_dims', {
      input: [{ name: 'x', data_type: 'TYPE_FP32', dims: [3, 64, 64] }],
    }),
  },
  {
    // Outputs are compared exactly: -1 where the model has -1.
    name: 'ocr_det_fixed_output_dims',
    model: 'ocrDet',
    config: det('ocr_det_fixed_output_dims', {
      output: [{ name: 'sigmoid_0.tmp_0', data_type: 'TYPE_FP32', dims: [1, 64, 64] }],
    }),
  },
  {
    name: 'ocr_cls_wrong_type',
    model: 'ocrCls',
    config: cls('ocr_cls_wrong_type', { input: [{ ...clsInput[0]!, data_type: 'TYPE_FP16' }] }),
  },
  {
    name: 'ocr_cls_wrong_output_type',
    model: 'ocrCls',
    config: cls('ocr_cls_wrong_output_type', { output: [{ ...clsOutput[0]!, data_type: 'TYPE_INT64' }] }),
  },
  {
    name: 'ocr_cls_extra_input',
    model: 'ocrCls',
    config: cls('ocr_cls_extra_input', {
      input: [...clsInput, { name: 'scale', data_type: 'TYPE_FP32', dims: [1] }],
    }),
  },
  {
    name: 'ocr_cls_missing_file',
    model: 'ocrCls',
    config: cls('ocr_cls_missing_file'),
    fileName: 'other.onnx',
  },
  {
    name: 'silero_vad_batched',
    model: 'sileroVad',
    config: vad('silero_vad_batched', {
      max_batch_size: 4,
      input: [
        { name: 'input', data_type: 'TYPE_FP32', dims: [-1] },
        { name: 'sr', data_type: 'TYPE_INT64', dims: [1] },
      ],
      output: [{ name: 'output', data_type: 'TYPE_FP32', dims: [1] }],
    }),
  },
  {
    name: 'silero_vad_sr_dims',
    model: 'sileroVad',
    config: vad('silero_vad_sr_dims', {
      input: [
        { name: 'input', data_type: 'TYPE_FP32', dims: [-1, -1] },
        { name: 'sr', data_type: 'TYPE_INT64', dims: [2] },
      ],
    }),
  },
  {
    name: 'silero_vad_state_type',
    model: 'sileroVad',
    config: vad('silero_vad_state_type', {
      sequence_batching: {
        ...base.silero_vad.sequence_batching,
        state: (base.silero_vad.sequence_batching?.state ?? []).map((s, i) =>
          i === 1 ? { ...s, data_type: 'TYPE_FP64' as const } : s,
        ),
      },
    }),
  },
  {
    name: 'silero_vad_state_type_both',
    model: 'sileroVad',
    config: vad('silero_vad_state_type_both', {
      sequence_batching: {
        ...base.silero_vad.sequence_batching,
        state: (base.silero_vad.sequence_batching?.state ?? []).map((s, i) =>
          i === 1
            ? {
                ...s,
                data_type: 'TYPE_FP64' as const,
                initial_state: (s.initial_state ?? []).map((init) => ({
                  ...init,
                  data_type: 'TYPE_FP64' as const,
                })),
              }
            : s,
        ),
      },
    }),
  },
  {
    name: 'silero_vad_missing_state',
    model: 'sileroVad',
    config: vad('silero_vad_missing_state', {
      sequence_batching: {
        ...base.silero_vad.sequence_batching,
        state: (base.silero_vad.sequence_batching?.state ?? []).slice(0, 1),
      },
    }),
  },
  // Auto-complete turns dynamic batching on only for a max_batch_size above 1.
  {
    name: 'ocr_cls_auto_mbs1',
    model: 'ocrCls',
    config: { name: 'ocr_cls_auto_mbs1', backend: 'onnxruntime', max_batch_size: 1 },
    strict: false,
  },
  { name: 'ocr_cls_auto_dmbs1', model: 'ocrCls', config: null, strict: false, defaultMaxBatchSize: 1 },
  { name: 'ocr_cls_auto_dmbs0', model: 'ocrCls', config: null, strict: false, defaultMaxBatchSize: 0 },
  // A thread count that is not a number.
  {
    name: 'ocr_cls_threads_text',
    model: 'ocrCls',
    config: cls('ocr_cls_threads_text', { parameters: { intra_op_thread_count: { string_value: 'many' } } }),
  },
  // FP16 and BF16 tensors (tiny models).
  { name: 'identity_fp16_auto', model: 'identityFp16', config: null, strict: false },
  { name: 'identity_fp16', model: 'identityFp16', config: tiny('identity_fp16', 'TYPE_FP16') },
  {
    name: 'identity_fp16_as_bf16',
    model: 'identityFp16',
    config: tiny('identity_fp16_as_bf16', 'TYPE_BF16'),
  },
  {
    name: 'identity_fp16_as_fp32',
    model: 'identityFp16',
    config: tiny('identity_fp16_as_fp32', 'TYPE_FP32'),
  },
  { name: 'identity_bf16_auto', model: 'identityBf16', config: null, strict: false },
  { name: 'identity_bf16', model: 'identityBf16', config: tiny('identity_bf16', 'TYPE_BF16') },
  // Optional inputs: an input with a default in the model (an overridable initializer).
  { name: 'add_bias_auto', model: 'addBias', config: null, strict: false },
  { name: 'add_bias_optional', model: 'addBias', config: addBias('add_bias_optional', 0, true) },
  { name: 'add_bias_required', model: 'addBias', config: addBias('add_bias_required', 0, false) },
  {
    name: 'add_bias_optional_batching',
    model: 'addBias',
    config: addBias('add_bias_optional_batching', 4, true),
  },
  {
    // A required model input marked optional: the count of required inputs is short.
    name: 'ocr_cls_unbatched_optional',
    model: 'ocrCls',
    config: cls('ocr_cls_unbatched_optional', {
      max_batch_size: 0,
      dynamic_batching: undefined,
      input: [{ name: 'x', data_type: 'TYPE_FP32', dims: [-1, 3, 48, 192], optional: true }],
      output: [{ name: 'softmax_0.tmp_0', data_type: 'TYPE_FP32', dims: [-1, 2] }],
    }),
  },
];

/** Writes one case's model into `repo` (its folder replaced). */
export function writeCase(repo: string, files: RealModelFiles, c: OnnxCase): void {
  const dir = join(repo, c.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, '1'), { recursive: true });
  const file = join(dir, '1', c.fileName ?? 'model.onnx');
  if (c.model in TINY_MODELS) writeFileSync(file, TINY_MODELS[c.model as TinyModelName]);
  else symlinkSync(files[c.model as keyof RealModelFiles], file);
  if (c.config !== null) writeFileSync(join(dir, 'config.pbtxt'), formatModelConfig(c.config));
}

/** A message with the repository's directory written as <repo> (it differs per run). */
export function portableMessage(message: string, repo: string): string {
  return message.split(repo).join('<repo>');
}
