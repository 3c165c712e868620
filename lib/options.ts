/**
 * Options of `Server.create` (and of the server's methods): their public
 * shape, and their checks. Every option is checked here, once: what comes
 * out is the addon's `NativeServerOptions` with each field already of the
 * type and range the C++ side reads it into (see lib/binding.ts), so the
 * addon reads it with plain typed reads. Mistakes are TypeErrors (wrong
 * type) or RangeErrors (right type, out of range) naming the option, what
 * was expected and what was received.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  MODEL_CONTROL_MODES,
  type ModelControlMode,
  NATIVE_INT32_MAX,
  NATIVE_UINT32_MAX,
  type NativeModelControlMode,
  type NativeServerOptions,
} from './binding.js';
import { optionError, optionRangeError } from './errors.js';
import { is } from './is.js';
import type { ModelConfig } from './model.js';
import type { LibraryInfo } from './native.js';

export interface LogOptions {
  /** Verbose level (0 = off). */
  verbose?: number;
  info?: boolean;
  warn?: boolean;
  error?: boolean;
  /** Write Triton's log to this file instead of stderr. */
  file?: string;
  /**
   * Line format: 'default' (Triton's glog-like `I1201 13:47:00.123456 ...`) or
   * 'iso8601' (`2026-12-01T13:47:00Z I ...`). Triton's logger is one per
   * process: the last server created sets it.
   */
  format?: LogFormat;
}

/** Triton's log line formats, in the order of TRITONSERVER_LogFormat. */
export const LOG_FORMATS = ['default', 'iso8601'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The `metrics` option of `Server.create`. */
export interface MetricsOptions {
  /** Triton's own metrics (default true). */
  enabled?: boolean;
  /** Time-to-first-response and time-between-responses histograms of streams (default false). */
  streaming?: boolean;
}

export interface ServerOptions {
  /** Model repository path, or several. */
  modelRepository: string | readonly string[];
  /** Where backends live (default: `backends/` beside the library's `lib/` folder). */
  backendDirectory?: string;
  /** Path of libtritonserver.so (default: TRITON_SERVER_LIB, then /opt/tritonserver/lib/libtritonserver.so). */
  library?: string;
  /** 'explicit' (default): models are loaded with loadModel(); 'none': every model at startup; 'poll'. */
  modelControlMode?: ModelControlMode;
  /** Models loaded at startup in 'explicit' mode ('*' for all). */
  startupModels?: readonly string[];
  /** Require complete model configs (default true). */
  strictModelConfig?: boolean;
  /** How long stop() waits for in-flight work, seconds (default 30). */
  exitTimeoutSeconds?: number;
  /** Retries of a failing model load (default 0). */
  modelLoadRetryCount?: number;
  /**
   * Fail `Server.create` when a model fails to load at startup (default true,
   * as Triton). With false the server starts with the models that loaded; the
   * others are UNAVAILABLE in `modelIndex()`, with the reason.
   */
  exitOnError?: boolean;
  /**
   * `server.isReady()` only when every model that was loaded is READY
   * (default true, as Triton); false: ready once the server runs.
   */
  strictReadiness?: boolean;
  /** Threads loading models in parallel (Triton's default is 4). */
  modelLoadThreads?: number;
  /** Size of Triton's pinned memory pool, bytes. */
  pinnedMemoryPoolBytes?: number;
  /** CUDA memory pool per device: `{ 0: bytes }`, or bytes for device 0. */
  cudaMemoryPoolBytes?: number | Record<number, number>;
  minComputeCapability?: number;
  /** Backend settings: `{ onnxruntime: { 'default-max-batch-size': '4' } }`. */
  backendConfig?: Record<string, Record<string, string | number | boolean>>;
  /** Triton's own log (default: warnings and errors only). */
  log?: LogOptions;
  /**
   * Prometheus metrics. `true`/`false`, or `{ enabled?, streaming? }`: `enabled` (default true)
   * turns Triton's own metrics on or off; `streaming` (default false) also records stream
   * timing histograms (custom metrics, recorded even when `enabled` is false).
   */
  metrics?: boolean | MetricsOptions;
  /** Server id reported by metadata(). */
  serverId?: string;
}

export interface LoadModelOptions {
  /** A full model config (Triton's JSON form) overriding config.pbtxt. */
  config?: ModelConfig | string;
  /** Files of an in-memory model directory, by path ('1/model.onnx'); needs `config`. */
  files?: Record<string, Uint8Array | string>;
  /** Serve exactly these version directories (a version_policy override). */
  versions?: readonly number[];
}

export interface UnloadModelOptions {
  /** Also unload models this one brought in (ensemble steps). */
  unloadDependents?: boolean;
  /** Resolve only once no version of the model is loaded or unloading. */
  wait?: boolean;
}

// Each option named once; the Record makes the compiler insist on all of them.
const SERVER_OPTION_KEYS = Object.keys({
  modelRepository: true,
  backendDirectory: true,
  library: true,
  modelControlMode: true,
  startupModels: true,
  strictModelConfig: true,
  exitTimeoutSeconds: true,
  modelLoadRetryCount: true,
  exitOnError: true,
  strictReadiness: true,
  modelLoadThreads: true,
  pinnedMemoryPoolBytes: true,
  cudaMemoryPoolBytes: true,
  minComputeCapability: true,
  backendConfig: true,
  log: true,
  metrics: true,
  serverId: true,
} satisfies Record<keyof ServerOptions, true>);

const LOAD_MODEL_OPTION_KEYS = Object.keys({
  config: true,
  files: true,
  versions: true,
} satisfies Record<keyof LoadModelOptions, true>);

const METRICS_OPTION_KEYS = Object.keys({
  enabled: true,
  streaming: true,
} satisfies Record<keyof MetricsOptions, true>);

/** `'a', 'b' or 'c'`, for messages. */
function alternatives(list: readonly string[]): string {
  const quoted = list.map((s) => `'${s}'`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

// ---- the checks, one per kind of value ---------------------------------------

/** A string the addon passes to Triton as a C string: non-empty, no NUL. */
function text(option: string, value: unknown): string {
  if (!is.cString(value)) throw optionError(option, 'a non-empty string without NUL characters', value);
  return value;
}

function textList(option: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!is.array(value)) throw optionError(option, 'an array of strings', value);
  return value.map((v, i) => text(`${option}[${i}]`, v));
}

/** A name or value handed on to Triton as is ('' allowed); only a NUL is refused. */
function rawText(option: string, value: string): string {
  if (value.includes('\0')) throw optionError(option, 'a string without NUL characters', value);
  return value;
}

/** An optional boolean option. */
export function flag(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (!is.bool(value)) throw optionError(option, 'a boolean', value);
  return value;
}

/** An optional non-negative integer option, at most `max` (the C++ field's range). */
function whole(option: string, value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (!is.integer(value) || value < 0) throw optionError(option, 'a non-negative integer', value);
  if (!is.inRange(value, 0, max)) throw optionRangeError(option, `an integer from 0 to ${max}`, value);
  return value;
}

/** Not null and of type 'object' (arrays included, as Object.entries reads them). */
function objectLike(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

// ---- Server.create --------------------------------------------------------------

function optionsObject(options: unknown): Record<string, unknown> {
  if (!objectLike(options)) {
    throw optionError('Server.create options', 'an object with modelRepository', options);
  }
  for (const key of Object.keys(options)) {
    if (!SERVER_OPTION_KEYS.includes(key)) throw new TypeError(`Unknown option '${key}' for Server.create`);
  }
  return options;
}

function repositories(value: unknown): string[] {
  const list = is.string(value) ? [value] : value;
  if (!is.array(list) || list.length === 0) {
    throw optionError('modelRepository', 'a path or a non-empty array of paths', value);
  }
  return list.map((r, i) => resolve(text(`modelRepository[${i}]`, r)));
}

function controlMode(value: unknown): NativeModelControlMode {
  const mode = value ?? 'explicit';
  if (!is.oneOf(MODEL_CONTROL_MODES, mode)) {
    throw optionError('modelControlMode', alternatives(MODEL_CONTROL_MODES), value);
  }
  return MODEL_CONTROL_MODES.indexOf(mode) as NativeModelControlMode;
}

function logOptions(value: unknown): NativeServerOptions['log'] {
  const log = value ?? {};
  if (!objectLike(log)) throw optionError('log', 'an object', value);
  const out: NativeServerOptions['log'] = {
    verbose: whole('log.verbose', log.verbose, 0, NATIVE_INT32_MAX),
    info: flag('log.info', log.info, false),
    warn: flag('log.warn', log.warn, true),
    error: flag('log.error', log.error, true),
  };
  if (log.file !== undefined) out.file = text('log.file', log.file);
  if (log.format !== undefined) {
    if (!is.oneOf(LOG_FORMATS, log.format))
      throw optionError('log.format', alternatives(LOG_FORMATS), log.format);
    out.format = LOG_FORMATS.indexOf(log.format);
  }
  return out;
}

/** `{ backend: { setting: value } }` as [backend, setting, value] triples of strings. */
function backendConfig(value: unknown): Array<[string, string, string]> {
  if (value === undefined) return [];
  if (!objectLike(value)) {
    throw optionError('backendConfig', 'an object of { backend: { setting: value } }', value);
  }
  const out: Array<[string, string, string]> = [];
  for (const [backend, settings] of Object.entries(value)) {
    const where = `backendConfig.${backend}`;
    rawText('backendConfig key', backend);
    if (!objectLike(settings)) throw optionError(where, 'an object of settings', settings);
    for (const [setting, v] of Object.entries(settings)) {
      rawText(`${where} key`, setting);
      if (!is.string(v) && !is.bool(v) && typeof v !== 'number') {
        throw optionError(`${where}.${setting}`, 'a string, number or boolean', v);
      }
      out.push([backend, setting, rawText(`${where}.${setting}`, String(v))]);
    }
  }
  return out;
}

/** Bytes for device 0, or `{ device: bytes }`, as [device, bytes] pairs. */
function cudaPools(value: unknown): Array<[number, number]> {
  if (typeof value === 'number') return [[0, whole('cudaMemoryPoolBytes', value, 0)]];
  if (!objectLike(value)) {
    throw optionError('cudaMemoryPoolBytes', 'bytes, or an object of { device: bytes }', value);
  }
  return Object.entries(value).map(([key, bytes]) => {
    const device = Number(key);
    if (!is.integer(device) || device < 0)
      throw optionError('cudaMemoryPoolBytes key', 'a device number', key);
    if (device > NATIVE_INT32_MAX) {
      throw optionRangeError('cudaMemoryPoolBytes key', `a device number up to ${NATIVE_INT32_MAX}`, key);
    }
    return [device, whole(`cudaMemoryPoolBytes[${key}]`, bytes, 0)];
  });
}

function computeCapability(value: unknown): number {
  if (!is.number(value) || value < 0)
    throw optionError('minComputeCapability', 'a non-negative number', value);
  return value;
}

/** The `metrics` option: Triton's metrics on or off, and stream histograms. */
function metricsOption(value: unknown): { enabled: boolean; streaming: boolean } {
  if (value === undefined) return { enabled: true, streaming: false };
  if (is.bool(value)) return { enabled: value, streaming: false };
  if (!is.object(value)) {
    throw optionError('metrics', 'a boolean or { enabled?: boolean, streaming?: boolean }', value);
  }
  for (const key of Object.keys(value)) {
    if (!METRICS_OPTION_KEYS.includes(key))
      throw new TypeError(`Unknown option 'metrics.${key}' for Server.create`);
  }
  return {
    enabled: flag('metrics.enabled', value.enabled, true),
    streaming: flag('metrics.streaming', value.streaming, false),
  };
}

/** Server.create's options, checked and resolved. */
export interface ParsedServerOptions {
  /** What the addon's createServer() takes; `backendDirectory` '' until the library is known. */
  native: NativeServerOptions;
  /** The `library` option, when given. */
  library: string | undefined;
  /** Record stream timing histograms. */
  streamingMetrics: boolean;
}

/** Checks every option of Server.create. Throws a TypeError or RangeError naming the first mistake. */
export function parseServerOptions(options: unknown): ParsedServerOptions {
  const o = optionsObject(options);
  const library = o.library === undefined ? undefined : text('library', o.library);
  const metrics = metricsOption(o.metrics);
  const native: NativeServerOptions = {
    modelRepositories: repositories(o.modelRepository),
    modelControlMode: controlMode(o.modelControlMode),
    startupModels: textList('startupModels', o.startupModels),
    strictModelConfig: flag('strictModelConfig', o.strictModelConfig, true),
    exitTimeoutSeconds: whole('exitTimeoutSeconds', o.exitTimeoutSeconds, 30, NATIVE_UINT32_MAX),
    modelLoadRetryCount: whole('modelLoadRetryCount', o.modelLoadRetryCount, 0, NATIVE_UINT32_MAX),
    exitOnError: flag('exitOnError', o.exitOnError, true),
    strictReadiness: flag('strictReadiness', o.strictReadiness, true),
    // Filled in from the library's location once it is loaded, when not given.
    backendDirectory:
      o.backendDirectory === undefined ? '' : resolve(text('backendDirectory', o.backendDirectory)),
    backendConfig: backendConfig(o.backendConfig),
    log: logOptions(o.log),
    metrics: metrics.enabled,
  };
  if (o.pinnedMemoryPoolBytes !== undefined) {
    native.pinnedMemoryPoolBytes = whole('pinnedMemoryPoolBytes', o.pinnedMemoryPoolBytes, 0);
  }
  if (o.cudaMemoryPoolBytes !== undefined) native.cudaMemoryPoolBytes = cudaPools(o.cudaMemoryPoolBytes);
  if (o.minComputeCapability !== undefined) {
    native.minComputeCapability = computeCapability(o.minComputeCapability);
  }
  if (o.serverId !== undefined) native.serverId = text('serverId', o.serverId);
  if (o.modelLoadThreads !== undefined) {
    const threads = whole('modelLoadThreads', o.modelLoadThreads, 4, NATIVE_UINT32_MAX);
    if (threads === 0) throw optionRangeError('modelLoadThreads', 'at least 1', threads);
    native.modelLoadThreads = threads;
  }
  return { native, library, streamingMetrics: metrics.streaming };
}

/**
 * `backends/` beside the library's `lib/` folder (Triton's install layout).
 * The fake engine has its test backends built in: no directory. Where the
 * folder does not exist, '' leaves Triton's own default in place.
 */
export function defaultBackendDirectory(library: LibraryInfo): string {
  if (library.isFake) return '';
  const dir = join(dirname(dirname(library.path)), 'backends');
  return existsSync(dir) ? dir : '';
}

// ---- the server's methods ----------------------------------------------------------

/** A model name: non-empty, no NUL (Triton takes C strings). */
export function modelName(name: unknown): string {
  if (!is.cString(name)) throw optionError('model name', 'a non-empty string without NUL characters', name);
  return name;
}

/** A model version; -1 (the default) is the highest ready version. */
export function modelVersion(version: unknown): number {
  if (version === undefined) return -1;
  if (!is.integer(version) || version < -1) {
    throw optionError('model version', 'an integer >= 1 (or -1 for the highest ready version)', version);
  }
  return version;
}

function modelConfigOption(value: unknown): ModelConfig | undefined {
  if (value === undefined) return undefined;
  if (is.string(value)) {
    try {
      return JSON.parse(value) as ModelConfig;
    } catch {
      throw optionError('loadModel config', 'a model config object or its JSON text', value);
    }
  }
  if (!is.object(value)) throw optionError('loadModel config', 'a model config object', value);
  return value as ModelConfig;
}

function modelFiles(value: unknown, config: ModelConfig | undefined): Array<[string, Uint8Array]> {
  if (value === undefined) return [];
  if (!objectLike(value)) throw optionError('loadModel files', 'an object of { path: bytes }', value);
  if (config === undefined) {
    throw new TypeError('loadModel: files need a config (Triton requires one for in-memory models)');
  }
  return Object.entries(value).map(([path, content]): [string, Uint8Array] => {
    // Triton keeps the files inside the model directory; a path that
    // would leave it fails there with an opaque poll failure.
    if (path === '' || path.startsWith('/') || path.split('/').includes('..')) {
      throw new TypeError(
        `loadModel files['${path}']: expected a path relative to the model directory, without '..'`,
      );
    }
    if (is.string(content)) return [path, Buffer.from(content)];
    if (content instanceof Uint8Array) return [path, content];
    throw optionError(`loadModel files['${path}']`, 'a Uint8Array or string', content);
  });
}

function modelVersions(value: unknown): number[] | undefined {
  if (value === undefined) return undefined;
  if (!is.array(value) || value.length === 0 || !value.every((n) => is.integer(n) && n >= 0)) {
    throw optionError('loadModel versions', 'a non-empty array of version numbers', value);
  }
  return [...(value as number[])];
}

/** loadModel's options, checked. */
export function parseLoadModelOptions(options: unknown): {
  config: ModelConfig | undefined;
  files: Array<[string, Uint8Array]>;
  versions: number[] | undefined;
} {
  if (!objectLike(options)) throw optionError('loadModel options', 'an object', options);
  for (const key of Object.keys(options)) {
    if (!LOAD_MODEL_OPTION_KEYS.includes(key)) throw new TypeError(`Unknown option '${key}' for loadModel`);
  }
  const config = modelConfigOption(options.config);
  const files = modelFiles(options.files, config);
  return { config, files, versions: modelVersions(options.versions) };
}

/** unloadModel's options, checked. */
export function parseUnloadModelOptions(options: unknown): { dependents: boolean; wait: boolean } {
  if (!objectLike(options)) throw optionError('unloadModel options', 'an object', options);
  return {
    dependents: flag('unloadDependents', options.unloadDependents, false),
    wait: flag('wait', options.wait, false),
  };
}
