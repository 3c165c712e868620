/**
 * Tensors coming back from Triton, and the conversion of the addon's plain
 * output descriptions into them.
 */
import type { NativeMemoryType, NativeOutput, NativeTiming, NativeTraceSpan } from '../abi/binding.js';
import { addon } from '../addon/load.js';
import { type DataType, type TypedArray, arrayTypeOf, decodeBytes, isDataType } from '../config/datatypes.js';
import { CudaBuffer, HostBuffer } from './cuda.js';

/** The array a datatype's CPU data comes in: FP16 and BF16 as their 16 bits, BOOL as bytes, BYTES as one Buffer per element. */
export interface DataTypeArrays {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Uint16Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BYTES: Buffer[];
  BF16: Uint16Array;
}

/** An output's `data` for datatype `D` in memory `M`: the datatype's array on the CPU, a HostBuffer when pinned, a CudaBuffer on a GPU. */
export type TensorDataOf<D extends DataType, M extends MemoryType = 'cpu'> = M extends 'pinned'
  ? HostBuffer
  : M extends 'gpu'
    ? CudaBuffer
    : DataTypeArrays[D];

/** Where an output's memory is. */
export type MemoryType = NativeMemoryType;

/**
 * What a tensor's `data` holds: a TypedArray of the datatype's type for CPU
 * outputs (Uint16Array for FP16/BF16, Uint8Array for BOOL), one Buffer per
 * element for BYTES, a HostBuffer for pinned outputs, a CudaBuffer for GPU ones.
 */
export type TensorData = TypedArray | Buffer[] | HostBuffer | CudaBuffer;

/**
 * One output tensor of an inference. `Tensor<D, M>` types `data` by datatype
 * and memory (see `TensorDataOf`): `Tensor<'FP32'>` is a CPU tensor whose
 * data is a Float32Array, `Tensor<'FP32', 'pinned'>` holds a HostBuffer; a
 * plain `Tensor` may be any of them.
 */
export class Tensor<
  D extends DataType = DataType,
  M extends MemoryType = DataType extends D ? MemoryType : 'cpu',
> {
  readonly name: string;
  readonly datatype: D;
  readonly shape: number[];
  readonly data: TensorDataOf<D, M>;
  /** Where `data` lives: 'cpu' memory, 'pinned' host memory, or a 'gpu'. */
  readonly memoryType: M;
  /** The device (GPU id) for 'gpu' memory, otherwise 0. */
  readonly device: number;
  /** What dispose() gives back: the addon's ArrayBuffer, or a pooled HostBuffer/CudaBuffer. */
  #owned: ArrayBuffer | HostBuffer | CudaBuffer | undefined;
  #disposed = false;

  /** @internal */
  constructor(
    name: string,
    datatype: DataType,
    shape: number[],
    data: TensorData,
    memoryType: MemoryType,
    device: number,
    owned?: ArrayBuffer | HostBuffer | CudaBuffer,
  ) {
    this.name = name;
    // The datatype and memory are what the response says; a typed Tensor's
    // parameters are the caller's spec of them.
    this.datatype = datatype as D;
    this.shape = shape;
    this.data = data as TensorDataOf<D, M>;
    this.memoryType = memoryType as M;
    this.device = device;
    this.#owned = owned;
  }

  /**
   * Gives the output's memory back to Triton's allocator now rather than when
   * `data` is garbage collected. Afterwards `data` is unusable: a CPU
   * TypedArray (and every view of its ArrayBuffer, BYTES elements included)
   * is detached (length 0), a pinned or GPU buffer is disposed. Call it once
   * done with a large output: the next response then reuses the warm memory
   * instead of fresh pages. A no-op for caller-provided (`into`)
   * destinations, for small outputs (copied into ordinary JS memory) and on a
   * second call.
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    const owned = this.#owned;
    this.#owned = undefined;
    if (owned instanceof ArrayBuffer) addon().releaseOutput(owned);
    else owned?.dispose();
  }

  /** True once dispose() was called. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /**
   * A plain, JSON-ready form: name, datatype, shape, where the data is, and
   * the data as a plain array (numbers; booleans for BOOL; UTF-8 strings for
   * BYTES; FP16 and BF16 decoded to numbers; INT64/UINT64 as numbers where
   * exact, else decimal strings). Pinned data is read in place; GPU data and
   * a disposed tensor's have no `data`. `JSON.stringify(tensor)` uses it.
   */
  toJSON(): TensorJSON {
    const json: TensorJSON = {
      name: this.name,
      datatype: this.datatype,
      shape: this.shape,
      memoryType: this.memoryType,
    };
    if (this.memoryType === 'gpu') json.device = this.device;
    if (this.#disposed) return json;
    const data = this.data as TensorData;
    if (Array.isArray(data)) json.data = data.map((b) => b.toString('utf8'));
    else if (data instanceof HostBuffer) json.data = hostValues(data, this.datatype, this.size);
    else if (!(data instanceof CudaBuffer)) json.data = plainValues(data, this.datatype);
    return json;
  }

  /** Number of elements (the product of the shape). */
  get size(): number {
    return elementCount(this.shape);
  }

  /** BYTES tensors: each element decoded as UTF-8. */
  strings(): string[] {
    if (this.#disposed) throw new TypeError(`Tensor '${this.name}' was disposed`);
    if (this.datatype !== 'BYTES' || !Array.isArray(this.data)) {
      throw new TypeError(`Tensor '${this.name}' is ${this.datatype}, not a BYTES tensor in CPU memory`);
    }
    return (this.data as Buffer[]).map((b) => b.toString('utf8'));
  }
}

/** What `Tensor.toJSON()` returns. */
export interface TensorJSON {
  name: string;
  datatype: DataType;
  shape: number[];
  memoryType: MemoryType;
  /** The GPU, for 'gpu' memory. */
  device?: number;
  /** The elements, flat (absent for GPU memory and after dispose()). */
  data?: Array<number | boolean | string>;
}

const bf16Bits = new Uint32Array(1);
const bf16Value = new Float32Array(bf16Bits.buffer);

/** An IEEE 754 half-precision value from its 16 bits. */
export function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** A bfloat16 value from its 16 bits (the high half of a float32). */
export function bfloat16ToNumber(bits: number): number {
  bf16Bits[0] = bits << 16;
  return bf16Value[0]!;
}

function plainValues(data: TypedArray, datatype: DataType): Array<number | boolean | string> {
  const out: Array<number | boolean | string> = new Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (typeof v === 'bigint') {
      const n = Number(v);
      out[i] = Number.isSafeInteger(n) ? n : v.toString();
    } else if (datatype === 'FP16') out[i] = halfToNumber(v);
    else if (datatype === 'BF16') out[i] = bfloat16ToNumber(v);
    else if (datatype === 'BOOL') out[i] = v !== 0;
    else out[i] = v;
  }
  return out;
}

/** Pinned memory is host memory: its elements are read in place. */
function hostValues(host: HostBuffer, datatype: DataType, count: number): Array<number | boolean | string> {
  const ctor = arrayTypeOf(datatype);
  if (host.disposed || ctor === null) return [];
  const bytes = host.view();
  const length = Math.min(count, Math.floor(bytes.byteLength / ctor.BYTES_PER_ELEMENT));
  return plainValues(new ctor(bytes.buffer, bytes.byteOffset, length) as TypedArray, datatype);
}

export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** CPU outputs up to this size arrive copied into ordinary JS memory (the
 * addon's kSmallOutputBytes): nothing for dispose() to give back. */
const SMALL_OUTPUT_BYTES = 1024;

/** A caller-provided destination for one output, as the request gave it. */
export type OutputDestination = ArrayBufferView | HostBuffer | CudaBuffer;

/**
 * Converts one output of a response. CPU data is viewed in place (the
 * allocator's memory, or the caller's `into` buffer, which comes back as the
 * very same object when it fits exactly); a misaligned view is the one case
 * copied, since TypedArrays need aligned offsets.
 */
export function toTensor(out: NativeOutput, into: OutputDestination | undefined): Tensor {
  const datatype: DataType = isDataType(out.datatype) ? out.datatype : 'BYTES';
  const shape = out.shape;
  const data = out.data as unknown;
  if (ArrayBuffer.isView(into) && into.byteLength === 0 && out.byteLength > 0) {
    // Triton wrote into memory the addon held; the caller's view of it is gone.
    throw new TypeError(
      `output '${out.name}': its destination (into) was detached while the request was in flight, so the output is lost`,
    );
  }
  if (
    data instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer !== 'undefined' && data instanceof SharedArrayBuffer)
  ) {
    const buffer = data as ArrayBuffer;
    // The addon's own memory (not the caller's `into`, not a shared copy):
    // what dispose() may give back early.
    const owned = into === undefined && out.byteLength > SMALL_OUTPUT_BYTES ? buffer : undefined;
    if (datatype === 'BYTES') {
      const bytes = new Uint8Array(buffer, out.byteOffset, out.byteLength);
      return new Tensor(out.name, datatype, shape, decodeBytes(bytes, elementCount(shape)), 'cpu', 0, owned);
    }
    const ctor = arrayTypeOf(datatype)!;
    if (
      into !== undefined &&
      ArrayBuffer.isView(into) &&
      into instanceof ctor &&
      into.buffer === buffer &&
      into.byteOffset === out.byteOffset &&
      into.byteLength === out.byteLength
    ) {
      return new Tensor(out.name, datatype, shape, into as TypedArray, 'cpu', 0);
    }
    const length = out.byteLength / ctor.BYTES_PER_ELEMENT;
    if (out.byteOffset % ctor.BYTES_PER_ELEMENT === 0) {
      return new Tensor(out.name, datatype, shape, new ctor(buffer, out.byteOffset, length), 'cpu', 0, owned);
    }
    const copy = new ctor(buffer.slice(out.byteOffset, out.byteOffset + out.byteLength));
    return new Tensor(out.name, datatype, shape, copy, 'cpu', 0);
  }
  const native = data as { kind?: string };
  if (native?.kind === 'host') {
    if (into instanceof HostBuffer && into.native === (data as HostBuffer['native'])) {
      return new Tensor(out.name, datatype, shape, into, 'pinned', 0);
    }
    const host = HostBuffer.fromNative(data as HostBuffer['native']);
    return new Tensor(out.name, datatype, shape, host, 'pinned', 0, host);
  }
  if (native?.kind === 'cuda') {
    if (into instanceof CudaBuffer && into.native === (data as CudaBuffer['native'])) {
      return new Tensor(out.name, datatype, shape, into, 'gpu', out.memoryTypeId);
    }
    const dev = CudaBuffer.fromNative(data as CudaBuffer['native']);
    return new Tensor(out.name, datatype, shape, dev, 'gpu', out.memoryTypeId, dev);
  }
  throw new TypeError(`output '${out.name}': the addon returned data of an unknown kind`);
}

/**
 * Triton's trace timestamps of one request, in nanoseconds on Triton's
 * clock (they compare with each other, not with Node's clocks). Numbers, so
 * that a result stays JSON-serializable; beyond 2^53 ns (about 104 days of
 * that clock) they lose nanosecond precision but keep their order.
 */
export interface TimingTimestamps {
  requestStartNs: number;
  queueStartNs: number;
  computeStartNs: number;
  computeInputEndNs: number;
  computeOutputStartNs: number;
  computeEndNs: number;
  requestEndNs: number;
}

/**
 * Per-request timing from Triton's trace timestamps, in microseconds. The
 * intervals are the raw differences: a negative one means the engine
 * reported its timestamps out of order (`timestampsNs` shows them).
 */
export interface InferTiming {
  /** Waiting in the scheduler queue. */
  queueUs: number;
  /** The backend preparing inputs. */
  computeInputUs: number;
  /** The backend executing the model. */
  computeInferUs: number;
  /** The backend producing outputs. */
  computeOutputUs: number;
  /** From the request's start in Triton to its end. */
  totalUs: number;
  /** The timestamps the intervals come from. */
  timestampsNs: TimingTimestamps;
  /**
   * Each of Triton's traces of the request: its own first, then one per
   * ensemble step (a child of the trace of the ensemble that ran it), in
   * the order Triton first reported them.
   */
  traces: TimingTrace[];
}

/** One of Triton's traces of a request (`timing.traces`). */
export interface TimingTrace {
  /** Triton's trace id. */
  id: number;
  /** The parent trace's id: 0 for the request's own trace, the ensemble's for a step. */
  parentId: number;
  /** The model and version the trace's request ran on. */
  model: string;
  version: number;
  /** Its timestamps (0 where Triton reported none: an ensemble has no compute of its own). */
  timestampsNs: TimingTimestamps;
  /** The same timestamps, exact (steady clock nanoseconds); not enumerable, so left out of JSON. */
  timestampsBigNs: Record<keyof TimingTimestamps, bigint>;
}

const ACTIVITY_KEYS = [
  'requestStartNs',
  'queueStartNs',
  'computeStartNs',
  'computeInputEndNs',
  'computeOutputStartNs',
  'computeEndNs',
  'requestEndNs',
] as const;

function toTrace(span: NativeTraceSpan): TimingTrace {
  const [id, parentId, model, version, ...ts] = span;
  const timestampsNs = {} as TimingTimestamps;
  const timestampsBigNs = {} as Record<keyof TimingTimestamps, bigint>;
  ACTIVITY_KEYS.forEach((key, i) => {
    const ns = ts[i] ?? 0n;
    timestampsBigNs[key] = ns;
    timestampsNs[key] = Number(ns);
  });
  const trace = { id: Number(id), parentId: Number(parentId), model, version, timestampsNs } as TimingTrace;
  // Not enumerable: a result with its timing stays JSON-serializable (bigints are not).
  Object.defineProperty(trace, 'timestampsBigNs', { value: timestampsBigNs, enumerable: false });
  return trace;
}

// Exact (bigint) differences, not clamped: hiding an out-of-order pair would
// hide an engine bug.
function us(from: bigint, to: bigint): number {
  return Number(to - from) / 1000;
}

export function toTiming(t: NativeTiming): InferTiming {
  return {
    queueUs: us(t.queueStartNs, t.computeStartNs),
    computeInputUs: us(t.computeStartNs, t.computeInputEndNs),
    computeInferUs: us(t.computeInputEndNs, t.computeOutputStartNs),
    computeOutputUs: us(t.computeOutputStartNs, t.computeEndNs),
    totalUs: us(t.requestStartNs, t.requestEndNs),
    timestampsNs: {
      requestStartNs: Number(t.requestStartNs),
      queueStartNs: Number(t.queueStartNs),
      computeStartNs: Number(t.computeStartNs),
      computeInputEndNs: Number(t.computeInputEndNs),
      computeOutputStartNs: Number(t.computeOutputStartNs),
      computeEndNs: Number(t.computeEndNs),
      requestEndNs: Number(t.requestEndNs),
    },
    traces: (t.traces ?? []).map(toTrace),
  };
}
