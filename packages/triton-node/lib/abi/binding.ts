/**
 * Typed view of the raw native addon (`build/Release/triton_node.node`).
 *
 * This file is the contract between `native/` (C++) and `lib/` (TypeScript).
 * Everything here is @internal: public classes in lib/ wrap it, validate
 * arguments before they get here, and turn native errors into TritonError.
 *
 * Conventions:
 * - Native errors are plain `Error`s carrying `code` (Triton's code name, e.g.
 *   'NOT_FOUND') and, for loader errors, `attempts`.
 * - Anything that may block on Triton (load, unload, stop, queries) returns a
 *   Promise and runs on a native thread of its own; the JS thread never waits.
 * - Inference completions arrive through ONE callback per server (`onEvents`),
 *   called on the JS thread with every event drained since the last call.
 * @internal
 * @packageDocumentation
 */

// First declaration: the file comment above is its leading comment, so
// stripInternal drops it from the published .d.ts. It must stay one that no
// public type uses (the lists below are public types' sources).
/** An error carried on a response event. */
export interface NativeErrorInfo {
  code: TritonErrorCode;
  message: string;
}

// Each enum-like set below is one `as const` list: its type is the list's
// element type, and its lookups (codes by name) are built from the list, so
// a name is written once. Where the addon exports its own copy (`constants`,
// `fakeLiveObjects()`), test/addon/contract.test.ts compares the two.

/** Triton's error codes by name, in TRITONSERVER_Error_Code's order. */
export const ERROR_CODES = [
  'UNKNOWN',
  'INTERNAL',
  'NOT_FOUND',
  'INVALID_ARG',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
  'CANCELLED',
] as const;
/** Triton's error codes, spelled as `TRITONSERVER_Error_Code` names them. */
export type TritonErrorCode = (typeof ERROR_CODES)[number];

/**
 * What the loader found at a library path: 'missing' (no file), 'dlopen'
 * (file there, dlopen failed), 'symbols' (not Triton's ABI: required symbols
 * absent), 'version' (API too old or another major), 'loaded'.
 */
/**
 * The Triton C API the addon accepts: the loader refuses another major or a
 * minor below `minMinor` (outcome 'version'); `minor` is the one its
 * declarations were written against (entry points newer than `minMinor` are
 * optional: the features that need them report UNSUPPORTED). The addon
 * exports its own copy (`constants.tritonApi`, from native/include/triton_capi.h).
 */
export const TRITON_API = { major: 1, minMinor: 30, minor: 34 } as const;

/** "1.30": the oldest C API the addon loads. */
export const MIN_TRITON_API = `${TRITON_API.major}.${TRITON_API.minMinor}`;

export const LOAD_OUTCOMES = ['missing', 'dlopen', 'symbols', 'version', 'loaded'] as const;
export type LoadOutcome = (typeof LOAD_OUTCOMES)[number];

/** One library path the loader looked at, and what it found there. */
export interface LoadAttempt {
  path: string;
  outcome: LoadOutcome;
  detail: string;
}

/** Facts about the loaded Triton library (the addon's loadLibrary()/libraryInfo()). */
export interface LibraryInfo {
  /** Absolute path of the library that was loaded. */
  path: string;
  apiMajor: number;
  apiMinor: number;
  /** True for triton-node's fake engine (tests and demos), false for Triton. */
  isFake: boolean;
  /** Optional (newer) entry points (TRITON_CAPI_OPTIONAL) and whether the library has each. */
  optional: Record<string, boolean>;
}

/** Where memory lives, in the order of the addon's memory codes (a type's index is its code). */
export const MEMORY_TYPES = ['cpu', 'pinned', 'gpu'] as const;
export type NativeMemoryType = (typeof MEMORY_TYPES)[number];

/** Codes by name: each name's index in `list`, plus `offset`. */
function codesOf<T extends string>(list: readonly T[], offset = 0): Readonly<Record<T, number>> {
  return Object.fromEntries(list.map((name, i) => [name, i + offset])) as Record<T, number>;
}

/**
 * Model control modes, in TRITONSERVER_ModelControlMode's order: a mode's
 * index is its code (NONE 0, POLL 1, EXPLICIT 2).
 */
export const MODEL_CONTROL_MODES = ['none', 'poll', 'explicit'] as const;
export type ModelControlMode = (typeof MODEL_CONTROL_MODES)[number];
/** A mode's code: its index in MODEL_CONTROL_MODES. */
export type NativeModelControlMode = 0 | 1 | 2;

/** Largest value of a C++ `unsigned int` field (uint32_t). */
export const NATIVE_UINT32_MAX = 0xffff_ffff;
/** Largest value of a C++ `int` field (int32_t). */
export const NATIVE_INT32_MAX = 0x7fff_ffff;

/**
 * createServer()'s options, as lib/api/options.ts `parseServerOptions` builds
 * them. The TS side checks every field once, there: each field arrives with
 * the type and within the range of the C++ field it is read into (noted per
 * field), every string is free of NUL characters (Triton takes C strings),
 * and optional fields are either absent or valid. The native side
 * (native/server_wrap.cc `ParseOptions`) may therefore read them with plain
 * typed reads (`As<Napi::Number>()`, `As<Napi::String>()`, ...) and trust
 * these checks; a field that breaks this contract is a bug in lib/api/options.ts.
 */
export interface NativeServerOptions {
  /** Absolute paths; at least one. */
  modelRepositories: string[];
  /** TRITONSERVER_ModelControlMode: the index of the mode in MODEL_CONTROL_MODES. */
  modelControlMode: NativeModelControlMode;
  /** Non-empty model names. */
  startupModels: string[];
  strictModelConfig: boolean;
  /** `unsigned int`: an integer from 0 to NATIVE_UINT32_MAX. */
  exitTimeoutSeconds: number;
  /** `unsigned int`: an integer from 0 to NATIVE_UINT32_MAX. */
  modelLoadRetryCount: number;
  exitOnError: boolean;
  strictReadiness: boolean;
  /** `unsigned int` from 1 to NATIVE_UINT32_MAX when present (absent: Triton's default). */
  modelLoadThreads?: number;
  /** An absolute path, or '' for Triton's default. */
  backendDirectory: string;
  /** `uint64_t`: a non-negative safe integer. */
  pinnedMemoryPoolBytes?: number;
  /** [device, bytes] pairs: device an `int` from 0 to NATIVE_INT32_MAX, bytes a non-negative safe integer (`uint64_t`). */
  cudaMemoryPoolBytes?: Array<[number, number]>;
  /** `double`: finite, non-negative. */
  minComputeCapability?: number;
  /** [backend, setting, value] triples (any of them may be ''). */
  backendConfig: Array<[string, string, string]>;
  /** verbose: an `int` from 0 to NATIVE_INT32_MAX; file, when present, non-empty. */
  /** format, when present: TRITONSERVER_LogFormat, the index in LOG_FORMATS. */
  log: { verbose: number; info: boolean; warn: boolean; error: boolean; file?: string; format?: number };
  metrics: boolean;
  /** TRITONSERVER_ServerOptionsSetGpuMetrics / SetCpuMetrics, when present. */
  gpuMetrics?: boolean;
  cpuMetrics?: boolean;
  /** `uint64_t` milliseconds, at least 1, when present. */
  metricsIntervalMs?: number;
  /** Non-empty when present. */
  serverId?: string;
  /** Non-empty when present (an entry of TRITON_CAPI_OPTIONAL). */
  modelConfigName?: string;
  /** mode: TRITONSERVER_RateLimitMode (0 off, 1 exec count); resources: [name, count (`size_t`, a safe integer), device (`int`, -1 global)]. */
  rateLimiter?: { mode: number; resources: Array<[string, number, number]> };
  /** [policy, setting, value] triples, non-empty strings. */
  hostPolicy?: Array<[string, string, string]>;
  /** The one response cache: its name, its JSON config, and the directory of cache libraries when given. */
  cache?: { name: string; config: string; directory?: string };
}

/** One of submit()'s variable arguments: a name, a tensor's memory, an
 * absent `into`, or a parameter value (typed by NATIVE_PARAMETER_CODES: the
 * TS layer decides int vs double). */
export type NativeSubmitArg = string | NativeTensorData | undefined | number | bigint | boolean;

/**
 * Triton's datatype names (`TRITONSERVER_DataTypeString`), in
 * TRITONSERVER_DataType's order: a name's code is its index + 1 (0 is
 * TRITONSERVER_TYPE_INVALID).
 */
export const DATATYPE_NAMES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
  'BF16',
] as const;
export type DataType = (typeof DATATYPE_NAMES)[number];

/** Triton's datatype codes (TRITONSERVER_DataType), as `submit()` takes them. */
export const NATIVE_DATATYPE_CODES = codesOf(DATATYPE_NAMES, 1);

/** Memory kinds as `submit()` takes them (-1: not set). */
export const NATIVE_MEMORY_CODES = codesOf(MEMORY_TYPES);

/** Parameter types, in the order of the addon's parameter codes. */
export const PARAMETER_TYPES = ['string', 'int', 'double', 'bool'] as const;
export type NativeParameterType = (typeof PARAMETER_TYPES)[number];

/** Parameter types as `submit()` takes them. */
export const NATIVE_PARAMETER_CODES = codesOf(PARAMETER_TYPES);

/** Metric kinds of TRITONSERVER_MetricKind that custom metrics use. */
export const METRIC_KINDS = ['counter', 'gauge', 'histogram'] as const;
export type MetricKind = (typeof METRIC_KINDS)[number];

/** What the fake engine counts, in the order of its TRITONFAKE_LiveObjects counts. */
export const FAKE_LIVE_OBJECT_KINDS = [
  'requests',
  'responses',
  'errors',
  'messages',
  'allocators',
  'outputBuffers',
  'metrics',
  'parameters',
  'traces',
  'servers',
] as const;
/** Live object counts of the fake engine (requests, responses, buffers...). */
export type FakeLiveObjects = Record<(typeof FAKE_LIVE_OBJECT_KINDS)[number], number>;

/**
 * Layout of the numbers `submit()` takes (one Float64Array, which may be
 * longer than needed): the header slots below, then per input its datatype
 * code, byteLength (-1: the whole view/buffer), rank and dims; per requested
 * output its memory code and device (-1: the request's default); per
 * parameter its type code. "Not set" is -1 for every optional number.
 * Reading a request from objects by key costs ~40 property reads per
 * request in the addon; this form costs a few Node-API calls per input.
 */
export const SUBMIT_SLOTS = {
  /** -1: the highest ready version. */
  version: 0,
  priority: 1,
  timeoutMicroseconds: 2,
  flags: 3,
  /** Default placement of outputs without their own (-1: 'cpu'). */
  outputMemory: 4,
  outputDevice: 5,
  /** 1: attach a TIMESTAMPS trace and report timing on the final event. */
  timing: 6,
  inputCount: 7,
  /** 0: every output the model produces. */
  outputCount: 8,
  parameterCount: 9,
  /** Slots before the per-input numbers. */
  header: 10,
} as const;

/** Memory a tensor lives in, as the addon sees it. */
export type NativeTensorData =
  | ArrayBufferView // CPU memory of a TypedArray/Buffer/DataView: appended as is, no copy
  | NativeHostBuffer // pinned host memory (CPU_PINNED)
  | NativeCudaBuffer; // device memory (GPU, device id = buffer.device)

export interface NativeOutput {
  name: string;
  datatype: string;
  shape: number[];
  memoryType: NativeMemoryType;
  memoryTypeId: number;
  byteLength: number;
  /**
   * CPU outputs: an ArrayBuffer over the allocator's memory (external, freed
   * by a finalizer) or a copy (fallback), or the caller's own `into` buffer.
   * Pinned outputs: a NativeHostBuffer. GPU outputs: a NativeCudaBuffer.
   * BYTES outputs are CPU memory holding length-prefixed elements.
   */
  data: ArrayBuffer | NativeHostBuffer | NativeCudaBuffer;
  /** Byte offset of this output inside `data` when `data` is an ArrayBuffer. */
  byteOffset: number;
}

/** Trace timestamps (ns, steady clock) of one request, TIMESTAMPS level. */
export interface NativeTiming {
  requestStartNs: bigint;
  queueStartNs: bigint;
  computeStartNs: bigint;
  computeInputEndNs: bigint;
  computeOutputStartNs: bigint;
  computeEndNs: bigint;
  requestEndNs: bigint;
  /**
   * Every trace of the request, its own first: [trace id, parent trace id
   * (0 for the request's own), model, version, then the 7 timestamps above in
   * that order (0 where Triton reported none)]. Ensemble steps are child traces.
   */
  traces: NativeTraceSpan[];
}

/** One trace of a request (NativeTiming.traces). */
export type NativeTraceSpan = [
  id: bigint,
  parentId: bigint,
  model: string,
  version: number,
  ...timestamps: bigint[],
];

/** One response (or a bare FINAL) of one submitted request. */
export interface NativeEvent {
  token: number;
  /** TRITONSERVER_RESPONSE_COMPLETE_FINAL was set: no more events for token. */
  final: boolean;
  /** Error from TRITONSERVER_InferenceResponseError, if any. */
  error?: NativeErrorInfo;
  /** Absent for a FINAL that came with a null response. */
  outputs?: NativeOutput[];
  parameters?: Record<string, string | number | boolean>;
  model?: string;
  version?: number;
  id?: string;
  /** Set on the final event when `timing` was requested and the trace ran. */
  timing?: NativeTiming;
}

/**
 * The bits of an encoded event's `flags`: which parts follow it (see
 * NativeEventDecoder). The addon exports its own copy
 * (`constants.eventEncoding.flags`).
 */
export const EVENT_FLAGS = { outputs: 1, error: 2, parameters: 4, model: 8, id: 16 } as const;

/**
 * A response parameter's type in the event encoding: Triton's
 * TRITONSERVER_ParameterType values (not NATIVE_PARAMETER_CODES, which are
 * submit()'s). The addon exports its own copy
 * (`constants.eventEncoding.parameterTypes`).
 */
export const EVENT_PARAMETER_TYPES = { string: 0, int: 1, bool: 2, double: 3 } as const;

/**
 * Turns the addon's flat encoding of a drain's events into NativeEvents and
 * hands them to `onEvents` in one call (or, without `onEvents`, returns them).
 * lib/addon/events.ts makes it; the addon asks `setEventDecoder`'s factory for
 * one per server and calls it once per drain. Building objects property by
 * property through Node-API costs far more per property than an object
 * literal in JS, so the addon writes numbers and the values that must be JS
 * values, and the decoder builds the objects.
 *
 * Arguments: the numbers are `nums`' first `end` (the array is kept from call
 * to call and may be longer); `strings` holds the server's interned names
 * (model and output names), indexed from `nums`; `slab` is an ArrayBuffer
 * holding the drain's small outputs (copied), from byte `base` on; the values
 * come in `list` when there are many, else as the arguments after it.
 *
 * Layout in `nums`, per event:
 * - `0`: an event decoded already: the next value.
 * - `1 token final flags ...`: final is 1 or 0; flags are EVENT_FLAGS bits;
 *   then, in this order, for each bit set:
 *   - error: the next value (a NativeErrorInfo);
 *   - outputs: their count, then per output: name (string index, or -1: the
 *     next value), datatype code (TRITONSERVER_DataType, 0 for an unknown
 *     type), memory code (NATIVE_MEMORY_CODES), memory type id, byteLength,
 *     inSlab (1: data is the slab and the byte offset counts from `base`;
 *     0: data is the next value), byte offset, rank, then the shape's dims;
 *   - parameters: their count, then per parameter: name (string index or -1:
 *     the next value), type (EVENT_PARAMETER_TYPES), value (string: the next
 *     value; int, double: the number; bool: 1 or 0; any other type: nothing,
 *     and the parameter is undefined);
 *   - model: name (string index or -1: the next value), version;
 *   - id: the next value.
 *
 * The addon sets `timing` itself, on an event decoded already.
 */
export type NativeEventDecoder = (
  onEvents: ((events: NativeEvent[]) => void) | undefined,
  nums: Float64Array,
  end: number,
  strings: readonly string[],
  slab: ArrayBuffer | undefined,
  base: number,
  list: readonly unknown[] | undefined,
  ...rest: unknown[]
) => NativeEvent[] | undefined;

export interface NativeServer {
  isLive(): Promise<boolean>;
  isReady(): Promise<boolean>;
  /** JSON text from TRITONSERVER_ServerMetadata. */
  metadata(): Promise<string>;
  loadModel(name: string, config: string | undefined, files: Array<[string, Uint8Array]>): Promise<void>;
  unloadModel(name: string, unloadDependents: boolean): Promise<void>;
  /** JSON text from TRITONSERVER_ServerModelIndex. */
  modelIndex(readyOnly: boolean): Promise<string>;
  modelIsReady(name: string, version: number): Promise<boolean>;
  /** { decoupled, batchFirstDim } from the transaction and batch properties. */
  modelProperties(name: string, version: number): Promise<{ decoupled: boolean; batchFirstDim: boolean }>;
  modelMetadata(name: string, version: number): Promise<string>;
  modelConfig(name: string, version: number): Promise<string>;
  /** name '' = all models. */
  modelStatistics(name: string, version: number): Promise<string>;
  /** Prometheus text. */
  metrics(): Promise<string>;
  /**
   * Builds and submits one request. Returns its token at once; its responses
   * arrive as NativeEvents through `onEvents`. Throws (synchronously, an
   * Error with `code`) when Triton refuses the request at InferenceRequestNew
   * or ServerInferAsync: then no event will follow for it.
   * The JS objects behind input data and `into` destinations are kept alive
   * until Triton releases the request (RELEASE_ALL).
   *
   * Positional, for speed (see SUBMIT_SLOTS for `nums`): after the fixed
   * arguments come `name, data` per input (data as is: no copy; BYTES
   * already length-prefixed, 4-byte LE length + bytes per element), then
   * `name, into | undefined` per requested output (`into`: the caller's
   * destination; too small a destination fails the response with
   * INVALID_ARG naming the output), then `name, value` per parameter.
   */
  submit(
    nums: Float64Array,
    model: string,
    id: string | undefined,
    correlationId: number | bigint | string | undefined,
    ...rest: NativeSubmitArg[]
  ): number;
  /** Best-effort cancellation; a no-op once the request was released. */
  cancel(token: number): void;
  /** Number of submitted requests not yet released by Triton. */
  inflight(): number;
  /** Stops and deletes the server off the JS thread; idempotent. In-flight
   * requests finish or fail; their events are still delivered. */
  stop(): Promise<void>;
  /** The id `attachServer` takes (one per owner server, for its life); the
   * owner's for an attached server. Throws UNAVAILABLE once stopping. */
  share(): string;
  /** True for a server made by `attachServer`. */
  attached(): boolean;
  /**
   * Owner only: replaces the pins attached servers read (`pins`: a JSON list
   * of [model, version] pairs) and returns their new generation. Throws a
   * TypeError on an attached server.
   */
  setPins(pins: string): number;
  /** The owner's pins (an attached server reads its owner's): [generation (0: never set), JSON list]. */
  pins(): [number, string];
  createMetricFamily(kind: MetricKind, name: string, description: string): NativeMetricFamily;
}

export interface NativeMetricFamily {
  /** labels as [key, value] pairs; buckets only for histograms. */
  metric(labels: Array<[string, string]>, buckets?: number[]): NativeMetric;
  dispose(): void;
}

export interface NativeMetric {
  increment(value: number): void;
  set(value: number): void;
  observe(value: number): void;
  value(): number;
  dispose(): void;
}

/**
 * Pinned host memory (cudaHostAlloc), owned by this object.
 * copyFrom/copyTo (here and on NativeCudaBuffer) copy the whole source;
 * `offset` (default 0) is the byte offset in the destination. A copy that
 * does not fit throws a RangeError.
 */
export interface NativeHostBuffer {
  readonly kind: 'host';
  readonly byteLength: number;
  readonly disposed: boolean;
  /** An ArrayBuffer over the pinned memory; throws where the runtime forbids
   * external buffers (Electron), then use copyFrom/copyTo. */
  arrayBuffer(): ArrayBuffer;
  copyFrom(src: ArrayBufferView | NativeHostBuffer | NativeCudaBuffer, offset?: number): void;
  copyTo(dst: ArrayBufferView | NativeHostBuffer | NativeCudaBuffer, offset?: number): void;
  dispose(): void;
}

/** Device memory (cudaMalloc, an IPC-opened buffer, or an allocator output). */
export interface NativeCudaBuffer {
  readonly kind: 'cuda';
  readonly device: number;
  readonly byteLength: number;
  readonly disposed: boolean;
  /** True when opened from another process's IPC handle. */
  readonly imported: boolean;
  copyFrom(src: ArrayBufferView | NativeHostBuffer | NativeCudaBuffer, offset?: number): void;
  copyTo(dst: ArrayBufferView | NativeHostBuffer | NativeCudaBuffer, offset?: number): void;
  /** 64-byte cudaIpcMemHandle_t. */
  ipcHandle(): Uint8Array;
  dispose(): void;
}

export interface NativeCuda {
  isAvailable(): boolean;
  /** Why CUDA is unavailable ('' when available): paths tried, driver error. */
  unavailableReason(): string;
  deviceCount(): number;
  allocHost(byteLength: number): NativeHostBuffer;
  alloc(byteLength: number, device: number): NativeCudaBuffer;
  openIpcHandle(handle: Uint8Array, byteLength: number, device: number): NativeCudaBuffer;
  /** Tests: what CUDA says the memory is (cudaPointerGetAttributes); hostFlags
   * from cudaHostGetFlags, null where the memory is not page-locked. */
  pointerAttributes(buffer: ArrayBufferView | NativeHostBuffer | NativeCudaBuffer): {
    memoryType: 'unregistered' | 'host' | 'device' | 'managed' | 'unknown';
    device: number;
    hostFlags: number | null;
  };
  /** Tests: cudaMemGetInfo on a device, bytes. */
  memGetInfo(device: number): { free: number; total: number };
  /** cudaFree/cudaFreeHost calls that failed since the process started (each
   * also reported on stderr). */
  freeFailures(): number;
  /** What `triton-node doctor` reports; never throws. A field is null where
   * the runtime lacks the entry point or the call failed. */
  describe(): NativeCudaDescription;
}

/** One visible CUDA device as the runtime describes it (null: the query failed). */
export interface CudaDeviceInfo {
  index: number;
  name: string | null;
  /** Bytes. */
  totalMemory: number | null;
  /** 'major.minor', e.g. '9.0'. */
  computeCapability: string | null;
}

/** The CUDA runtime, the driver and each visible device (cuda.describe()). */
export interface NativeCudaDescription {
  available: boolean;
  /** Why CUDA is unavailable ('' when available). */
  reason: string;
  /** The libcudart file loaded ('' when none). */
  runtimePath: string;
  /** 1000 * major + 10 * minor (12080: CUDA 12.8). */
  runtimeVersion: number | null;
  /** The newest CUDA the driver supports, same encoding; 0: no driver. */
  driverVersion: number | null;
  devices: CudaDeviceInfo[];
}

/** Triton's logger (native/triton/log_settings.h): format is a TRITONSERVER_LogFormat. */
export interface NativeLogSettings {
  file: string;
  info: boolean;
  warn: boolean;
  error: boolean;
  verbose: number;
  format: number;
}

export interface NativeAddon {
  /** Loads libtritonserver once per process (later calls with another path
   * fail with ALREADY_EXISTS unless it is the same file). Throws an Error
   * with code 'NOT_FOUND' or 'UNSUPPORTED' and `attempts: LoadAttempt[]`. */
  loadLibrary(candidates: string[]): LibraryInfo;
  libraryInfo(): LibraryInfo | null;
  /** Triton's process-wide logger as this process last set it (throws UNAVAILABLE before loadLibrary). */
  logSettings(): NativeLogSettings;
  /**
   * Changes Triton's logger now (TRITONSERVER_ServerOptionsSetLog* on no
   * options object) and returns the new settings. verbose: an `int`;
   * format: a TRITONSERVER_LogFormat. Throws a TritonError when a setter fails.
   */
  updateLogSettings(update: Partial<Omit<NativeLogSettings, 'file'>>): NativeLogSettings;
  /** Per environment, before any createServer(): what makes each server's
   * event decoder (lib/addon/load.ts passes lib/addon/events.ts's). */
  setEventDecoder(create: () => NativeEventDecoder): void;
  /** Throws INTERNAL when no event decoder was set in this environment. */
  createServer(
    options: NativeServerOptions,
    onEvents: (events: NativeEvent[]) => void,
  ): Promise<NativeServer>;
  /** A server of this environment (a worker thread) over the one another
   * environment shared; its events reach `onEvents` on this thread. Throws
   * NOT_FOUND for an unknown id, UNAVAILABLE once the owner is stopping. */
  attachServer(id: string, onEvents: (events: NativeEvent[]) => void): NativeServer;
  /** Fake engine only (null on a real Triton): live object counts. */
  fakeLiveObjects(): FakeLiveObjects | null;
  /** Fake engine only: run inferences synchronously inside ServerInferAsync.
   * Returns false on a real Triton. */
  fakeSetSyncCallbacks(enabled: boolean): boolean;
  /** Fake engine only: stand-in backends, "<backend>=<mode>[,...]" ("" for
   * none); false (nothing done) on a real Triton; throws on a malformed spec. */
  fakeSetStandIns(spec: string): boolean;
  /** Fake engine only (null on a real Triton): how many explicit model loads
   * the fake holds back before they start; mode 1 holds them, 0 lets them go,
   * -1 only asks (tests of what happens while a model changes). */
  fakeHoldModelLoads(mode: -1 | 0 | 1): number | null;
  /** Fake engine only (null on a real Triton): the Triton release the fake
   * imitates after setting `name` (null only asks); TypeError for an unknown name. */
  fakeRelease(name: string | null): string | null;
  /** Per environment: true when external ArrayBuffers are refused (Electron)
   * or forced off by TRITON_NODE_COPY_OUTPUTS=1 / setCopyOutputs(true). */
  copyOutputs(): boolean;
  setCopyOutputs(enabled: boolean): void;
  /** Addon-side counters for leak tests: live output buffers handed to JS,
   * pooled bytes, requests awaiting release (all environments), and requests
   * of this environment's running servers not yet settled (released, FINAL
   * and trace released: a decoupled stream outlives its release), and
   * stopped servers kept undeleted while another server of the process runs
   * (all environments; Triton's process-wide memory managers go with any
   * deleted server). */
  addonStats(): {
    liveOutputBuffers: number;
    pooledBytes: number;
    pendingRequests: number;
    inflightRequests: number;
    /** Released Triton requests kept for the next request of their model and
     * input shapes (all environments); deleted when models change or the
     * server stops. */
    keptRequests: number;
    parkedServers: number;
  };
  /** Records the code the process exits with (main thread, from its exit event). */
  noteExitCode(code: number): void;
  /** Gives the pooled memory under an output's external ArrayBuffer back
   * now: detaches the ArrayBuffer and returns its buffer to the pool. False
   * (nothing done) for any other ArrayBuffer or one already released. */
  releaseOutput(buffer: ArrayBuffer): boolean;
  cuda: NativeCuda;
  /** The shared numbers as the addon defines them (test/addon/contract.test.ts compares them with the ones above). */
  constants: {
    submitSlots: Record<keyof typeof SUBMIT_SLOTS, number>;
    memoryCodes: Record<keyof typeof NATIVE_MEMORY_CODES, number>;
    parameterCodes: Record<keyof typeof NATIVE_PARAMETER_CODES, number>;
    datatypeCodes: Record<keyof typeof NATIVE_DATATYPE_CODES, number>;
    /** Triton's error code names by numeric code. */
    errorCodes: Record<TritonErrorCode, number>;
    /** The fake engine's live-object kinds, in TRITONFAKE_LiveObjects order. */
    liveObjectKinds: string[];
    /** The Triton C API the loader accepts (TRITON_NODE_API_* in native/include/triton_capi.h). */
    tritonApi: { major: number; minMinor: number; minor: number };
    /** The event encoding's flags and parameter types (NativeEventDecoder). */
    eventEncoding: {
      flags: Record<keyof typeof EVENT_FLAGS, number>;
      parameterTypes: Record<keyof typeof EVENT_PARAMETER_TYPES, number>;
    };
    /** The Node-API version the addon was built for (NAPI_VERSION in binding.gyp). */
    napiVersion: number;
  };
}
