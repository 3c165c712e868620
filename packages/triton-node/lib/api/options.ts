/**
 * Options of `Server.create` (and of the server's methods): their public
 * shape, and their checks. Every option is checked here, once: what comes
 * out is the addon's `NativeServerOptions` with each field already of the
 * type and range the C++ side reads it into (see lib/abi/binding.ts), so the
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
  type NativeLogSettings,
  type NativeModelControlMode,
  type NativeServerOptions,
} from '../abi/binding.js';
import type { LibraryInfo } from '../addon/load.js';
import { optionError, optionRangeError } from '../base/errors.js';
import { is } from '../base/is.js';
import { checkBackendSettings } from '../config/backend-settings.js';
import type { ModelConfig } from './model.js';

export interface LogOptions {
  /** Verbose level (0 = off). */
  verbose?: number;
  /** Log info lines (default false). */
  info?: boolean;
  /** Log warnings (default true). */
  warn?: boolean;
  /** Log errors (default true). */
  error?: boolean;
  /** Write Triton's log to this file instead of stderr. */
  file?: string;
  /**
   * Line format: 'default' (Triton's glog-like `I1201 13:47:00.123456 ...`) or
   * 'iso8601' (`2026-12-01T13:47:00Z I ...`). Triton's logger is one per
   * process: the last server created sets it.
   */
  format?: LogFormat;
  /**
   * Send Triton's log lines to this logger (pino's, or any object with
   * `info`, `warn` and `error` functions) instead of stderr. Needs a Triton
   * whose C API has `TRITONSERVER_ServerOptionsSetLogCallback` (1.35+, Triton
   * 2.72+): on an older library (r25.07, r26.06) Server.create rejects with a
   * TritonError UNSUPPORTED saying so, and Triton keeps logging to stderr or `file`.
   */
  logger?: TritonLogger;
}

/** Where `log.logger` sends Triton's log lines: pino's logger has this shape. */
export interface TritonLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Triton's log line formats, in the order of TRITONSERVER_LogFormat. */
export const LOG_FORMATS = ['default', 'iso8601'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * Triton's logger as it is now (`server.logSettings()`): one per process,
 * set by the last server created and by `server.updateLogSettings()`.
 */
export interface LogSettings {
  /** The log file ('' for stderr). */
  file: string;
  info: boolean;
  warn: boolean;
  error: boolean;
  verbose: number;
  format: LogFormat;
}

/** What `server.updateLogSettings()` changes (the file is set at start only, as in tritonserver). */
export type LogSettingsUpdate = Partial<Omit<LogSettings, 'file'>>;

/** The `metrics` option of `Server.create`. */
export interface MetricsOptions {
  /** Triton's own metrics (default true). */
  enabled?: boolean;
  /** Time-to-first-response and time-between-responses histograms of streams (default false). */
  streaming?: boolean;
  /** GPU utilization, memory and power metrics (Triton's default: on in builds with GPU metrics). */
  gpu?: boolean;
  /** CPU utilization and memory metrics (Triton's default: on in builds with CPU metrics). */
  cpu?: boolean;
  /** How often Triton refreshes its GPU, CPU and pinned-memory gauges, ms (Triton's default 2000). */
  intervalMs?: number;
}

/** Triton's rate limiter modes, in the order of TRITONSERVER_RateLimitMode. */
export const RATE_LIMITER_MODES = ['off', 'execCount'] as const;
export type RateLimiterMode = (typeof RATE_LIMITER_MODES)[number];

/** One resource the rate limiter hands out to model instances. */
export interface RateLimiterResource {
  /** The name instance groups use in their `rate_limiter { resources [...] }`. */
  name: string;
  /** How many of it there are. */
  count: number;
  /** A device's own resource (a GPU id); absent: a global resource. */
  device?: number;
}

/**
 * Triton's rate limiter. With `mode: 'execCount'` a model instance runs only
 * when the resources its instance group's `rate_limiter` names are free, and
 * instances with a higher `priority` weight go first.
 */
export interface RateLimiterOptions {
  /** 'off' (Triton's default) or 'execCount'. */
  mode: RateLimiterMode;
  /**
   * The counts available. A resource models name but that is not listed gets
   * the largest count any instance asks for; a count smaller than an instance
   * needs fails that model's load.
   */
  resources?: readonly RateLimiterResource[];
}

/**
 * A host policy: instance groups that name it in `host_policy` run their
 * threads on these CPU cores and allocate from this NUMA node. Triton's
 * default policy names are 'cpu' (KIND_CPU instances) and 'gpu_<id>'.
 */
export interface HostPolicy {
  /** The NUMA node to allocate memory from. */
  numaNode?: number;
  /** CPU cores as ranges: '0-3' or '0-3,8-11' (a single core is '5-5'). */
  cpuCores?: string;
}

/**
 * Triton's response cache: the one cache library that models with
 * `response_cache { enable: true }` in their config use.
 */
export interface ResponseCacheOptions {
  /** The cache: 'local' (default) or 'redis'; its library is `<directory>/<name>/libtritoncache_<name>.so`. */
  name?: string;
  /** The cache's settings, given to it as JSON: `{ size: bytes }` for 'local'; `host`, `port`… for 'redis'. */
  config: Record<string, string | number | boolean>;
  /** Where cache libraries live (Triton's default: /opt/tritonserver/caches). */
  directory?: string;
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
  /**
   * How long into stop() a Python backend stub of this server may still run,
   * seconds (default 10; 0: no limit). Triton waits without a bound for a stub
   * to exit after it finalized; a stub still running then is killed, and a
   * TritonWarning names it (docs/troubleshooting.md).
   */
  pythonStubExitSeconds?: number;
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
  /** The lowest CUDA compute capability a GPU needs for Triton to use it (e.g. 7.0; Triton's default depends on its build). */
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
  /**
   * Read `configs/<name>.pbtxt` inside each model folder instead of
   * `config.pbtxt` where that file exists (Triton's custom model configs).
   */
  modelConfigName?: string;
  /** Triton's rate limiter (default: off). */
  rateLimiter?: RateLimiterOptions;
  /** Host policies by name, for instance groups' `host_policy`. */
  hostPolicy?: Record<string, HostPolicy>;
  /** Triton's response cache (default: none). */
  responseCache?: ResponseCacheOptions;
  /**
   * Lint each model before it loads (see `lint()`): 'off' (default); 'warn'
   * emits its errors and warnings as process warnings; 'error' also refuses
   * to load a model with an error finding (and `Server.create`, for models
   * loaded at startup).
   */
  lint?: LintMode;
}

/** The `lint` option of `Server.create`. */
export const LINT_MODES = ['off', 'warn', 'error'] as const;
export type LintMode = (typeof LINT_MODES)[number];

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
  pythonStubExitSeconds: true,
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
  modelConfigName: true,
  rateLimiter: true,
  hostPolicy: true,
  responseCache: true,
  lint: true,
} satisfies Record<keyof ServerOptions, true>);

const LOAD_MODEL_OPTION_KEYS = Object.keys({
  config: true,
  files: true,
  versions: true,
} satisfies Record<keyof LoadModelOptions, true>);

const METRICS_OPTION_KEYS = Object.keys({
  enabled: true,
  streaming: true,
  gpu: true,
  cpu: true,
  intervalMs: true,
} satisfies Record<keyof MetricsOptions, true>);

const RATE_LIMITER_KEYS = Object.keys({ mode: true, resources: true } satisfies Record<
  keyof RateLimiterOptions,
  true
>);
const RATE_LIMITER_RESOURCE_KEYS = Object.keys({ name: true, count: true, device: true } satisfies Record<
  keyof RateLimiterResource,
  true
>);
const HOST_POLICY_KEYS = Object.keys({ numaNode: true, cpuCores: true } satisfies Record<
  keyof HostPolicy,
  true
>);
const RESPONSE_CACHE_KEYS = Object.keys({ name: true, config: true, directory: true } satisfies Record<
  keyof ResponseCacheOptions,
  true
>);

/** Refuses a key of `value` that `keys` does not list, naming the option. */
function knownKeys(option: string, value: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) {
      throw new TypeError(`Unknown option '${option}.${key}' for Server.create (known: ${keys.join(', ')})`);
    }
  }
}

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

/** `log.logger`, checked: an object with info, warn and error functions. */
function logger(value: unknown): TritonLogger | undefined {
  if (value === undefined) return undefined;
  const shaped =
    objectLike(value) && ['info', 'warn', 'error'].every((level) => typeof value[level] === 'function');
  if (!shaped) throw optionError('log.logger', 'an object with info, warn and error functions', value);
  return value as unknown as TritonLogger;
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
  logger(log.logger);
  if (log.format !== undefined) {
    if (!is.oneOf(LOG_FORMATS, log.format))
      throw optionError('log.format', alternatives(LOG_FORMATS), log.format);
    out.format = LOG_FORMATS.indexOf(log.format);
  }
  return out;
}

/** A `server.updateLogSettings()` argument as the addon takes it (TypeError/RangeError naming the field). */
export function parseLogSettingsUpdate(value: unknown): Partial<Omit<NativeLogSettings, 'file'>> {
  if (!objectLike(value) || Array.isArray(value))
    throw optionError('the log settings update', 'an object', value);
  const out: Partial<Omit<NativeLogSettings, 'file'>> = {};
  for (const key of Object.keys(value)) {
    if (key === 'file')
      throw optionError('file', "no log file (it is set at start: Server.create's log.file)", value.file);
    if (!['info', 'warn', 'error', 'verbose', 'format'].includes(key))
      throw optionError(
        'the log settings update',
        "only 'info', 'warn', 'error', 'verbose' and 'format'",
        key,
      );
  }
  for (const key of ['info', 'warn', 'error'] as const) {
    if (value[key] !== undefined) out[key] = flag(key, value[key], false);
  }
  if (value.verbose !== undefined) out.verbose = whole('verbose', value.verbose, 0, NATIVE_INT32_MAX);
  if (value.format !== undefined) {
    if (!is.oneOf(LOG_FORMATS, value.format))
      throw optionError('format', alternatives(LOG_FORMATS), value.format);
    out.format = LOG_FORMATS.indexOf(value.format);
  }
  return out;
}

/** The addon's log settings as the API answers them. */
export function logSettingsOf(native: NativeLogSettings): LogSettings {
  return { ...native, format: LOG_FORMATS[native.format] ?? 'default' };
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
    checkBackendSettings(backend, settings as Record<string, string | number | boolean>);
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

interface ParsedMetrics {
  enabled: boolean;
  streaming: boolean;
  gpu?: boolean;
  cpu?: boolean;
  intervalMs?: number;
}

/** The `metrics` option: Triton's metrics on or off, their details, and stream histograms. */
function metricsOption(value: unknown): ParsedMetrics {
  if (value === undefined) return { enabled: true, streaming: false };
  if (is.bool(value)) return { enabled: value, streaming: false };
  if (!is.object(value)) {
    throw optionError('metrics', 'a boolean or { enabled?, streaming?, gpu?, cpu?, intervalMs? }', value);
  }
  for (const key of Object.keys(value)) {
    if (!METRICS_OPTION_KEYS.includes(key))
      throw new TypeError(`Unknown option 'metrics.${key}' for Server.create`);
  }
  const out: ParsedMetrics = {
    enabled: flag('metrics.enabled', value.enabled, true),
    streaming: flag('metrics.streaming', value.streaming, false),
  };
  if (value.gpu !== undefined) out.gpu = flag('metrics.gpu', value.gpu, true);
  if (value.cpu !== undefined) out.cpu = flag('metrics.cpu', value.cpu, true);
  if (value.intervalMs !== undefined) {
    const ms = whole('metrics.intervalMs', value.intervalMs, 2000);
    if (ms === 0) throw optionRangeError('metrics.intervalMs', 'at least 1', ms);
    out.intervalMs = ms;
  }
  return out;
}

function rateLimiterOption(value: unknown): NativeServerOptions['rateLimiter'] {
  if (!is.object(value))
    throw optionError('rateLimiter', "an object { mode: 'off' | 'execCount', resources? }", value);
  knownKeys('rateLimiter', value, RATE_LIMITER_KEYS);
  if (!is.oneOf(RATE_LIMITER_MODES, value.mode)) {
    throw optionError('rateLimiter.mode', alternatives(RATE_LIMITER_MODES), value.mode);
  }
  const list = value.resources ?? [];
  if (!is.array(list))
    throw optionError('rateLimiter.resources', 'an array of { name, count, device? }', list);
  const resources = list.map((r, i): [string, number, number] => {
    const where = `rateLimiter.resources[${i}]`;
    if (!is.object(r)) throw optionError(where, 'an object { name, count, device? }', r);
    knownKeys(where, r, RATE_LIMITER_RESOURCE_KEYS);
    const name = text(`${where}.name`, r.name);
    if (r.count === undefined) throw optionError(`${where}.count`, 'a non-negative integer', r.count);
    const count = whole(`${where}.count`, r.count, 0);
    const device = r.device === undefined ? -1 : whole(`${where}.device`, r.device, 0, NATIVE_INT32_MAX);
    return [name, count, device];
  });
  return { mode: RATE_LIMITER_MODES.indexOf(value.mode), resources };
}

/** Triton's own check of 'cpu-cores': comma-separated `low-high` ranges. */
const CPU_CORE_RANGES = /^\d+-\d+(,\d+-\d+)*$/;

function hostPolicyOption(value: unknown): Array<[string, string, string]> {
  if (value === undefined) return [];
  if (!is.object(value))
    throw optionError('hostPolicy', 'an object of { policyName: { numaNode?, cpuCores? } }', value);
  const out: Array<[string, string, string]> = [];
  for (const [policy, settings] of Object.entries(value)) {
    const where = `hostPolicy.${policy}`;
    text('hostPolicy key', policy);
    if (!is.object(settings)) throw optionError(where, 'an object { numaNode?, cpuCores? }', settings);
    knownKeys(where, settings, HOST_POLICY_KEYS);
    if (settings.numaNode !== undefined) {
      out.push([policy, 'numa-node', String(whole(`${where}.numaNode`, settings.numaNode, 0, 63))]);
    }
    if (settings.cpuCores !== undefined) {
      const cores = settings.cpuCores;
      if (!is.string(cores) || !CPU_CORE_RANGES.test(cores)) {
        throw optionError(
          `${where}.cpuCores`,
          "ranges of core ids such as '0-3' or '0-3,8-11' ('5-5' for one core)",
          cores,
        );
      }
      for (const range of cores.split(',')) {
        const [low, high] = range.split('-').map(Number) as [number, number];
        if (low > high)
          throw optionRangeError(`${where}.cpuCores`, 'ranges whose first core is not above the last', cores);
      }
      out.push([policy, 'cpu-cores', cores]);
    }
  }
  return out;
}

function responseCacheOption(value: unknown): NativeServerOptions['cache'] {
  if (!is.object(value))
    throw optionError(
      'responseCache',
      "an object { name?: 'local', config: { size: bytes }, directory? }",
      value,
    );
  knownKeys('responseCache', value, RESPONSE_CACHE_KEYS);
  const name = value.name === undefined ? 'local' : text('responseCache.name', value.name);
  if (name.includes('/')) throw optionError('responseCache.name', 'a cache name without "/"', name);
  const config = value.config;
  if (!is.object(config))
    throw optionError('responseCache.config', "the cache's settings, e.g. { size: 1048576 }", config);
  for (const [key, v] of Object.entries(config)) {
    if (!is.string(v) && !is.bool(v) && !(typeof v === 'number' && Number.isFinite(v))) {
      throw optionError(`responseCache.config.${key}`, 'a string, finite number or boolean', v);
    }
  }
  const out: NonNullable<NativeServerOptions['cache']> = {
    name,
    config: rawText('responseCache.config', JSON.stringify(config)),
  };
  if (value.directory !== undefined)
    out.directory = resolve(text('responseCache.directory', value.directory));
  return out;
}

/** Server.create's options, checked and resolved. */
export interface ParsedServerOptions {
  /** What the addon's createServer() takes; `backendDirectory` '' until the library is known. */
  native: NativeServerOptions;
  /** The `library` option, when given. */
  library: string | undefined;
  /** Record stream timing histograms. */
  streamingMetrics: boolean;
  /** Lint models before they load. */
  lint: LintMode;
  /** Seconds into stop() after which Python stubs still running are killed (0: never). */
  pythonStubExitSeconds: number;
  /** `log.logger`, when given. */
  logger: TritonLogger | undefined;
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
  if (o.hostPolicy !== undefined) native.hostPolicy = hostPolicyOption(o.hostPolicy);
  if (metrics.gpu !== undefined) native.gpuMetrics = metrics.gpu;
  if (metrics.cpu !== undefined) native.cpuMetrics = metrics.cpu;
  if (metrics.intervalMs !== undefined) native.metricsIntervalMs = metrics.intervalMs;
  if (o.modelConfigName !== undefined) native.modelConfigName = text('modelConfigName', o.modelConfigName);
  if (o.rateLimiter !== undefined) native.rateLimiter = rateLimiterOption(o.rateLimiter);
  if (o.responseCache !== undefined) native.cache = responseCacheOption(o.responseCache);
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
  const lint = o.lint ?? 'off';
  if (!is.oneOf(LINT_MODES, lint)) throw optionError('lint', alternatives(LINT_MODES), o.lint);
  const pythonStubExitSeconds = whole(
    'pythonStubExitSeconds',
    o.pythonStubExitSeconds,
    10,
    NATIVE_UINT32_MAX,
  );
  const log = objectLike(o.log) ? logger(o.log.logger) : undefined;
  return { native, library, streamingMetrics: metrics.streaming, lint, pythonStubExitSeconds, logger: log };
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
