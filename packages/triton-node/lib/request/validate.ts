/**
 * Inference requests checked before anything reaches native code: their
 * public shape, and each input, output, parameter and setting against the
 * model's config. A request that Triton would refuse is refused here with a
 * message naming the input, what the model expects and what the request
 * gave; malformed arguments are TypeErrors. What passes is laid out as the
 * addon's submit() arguments by submit-layout.ts.
 */
import { MEMORY_TYPES, type NativeMemoryType, type NativeTensorData } from '../abi/binding.js';
import { type TritonError, describe, tritonError } from '../base/errors.js';
import { is } from '../base/is.js';
import {
  type DataType,
  type TypedArray,
  arrayFits,
  arrayNameOf,
  arrayTypeOf,
  countBytesElements,
  defaultDataType,
  elementSize,
  encodeBytes,
  isDataType,
} from '../config/datatypes.js';
import { CudaBuffer, HostBuffer } from '../tensor/cuda.js';
import { isTraceparent } from './otel.js';
import type { Batch, IoSpec, ModelIo } from './plan.js';
import type { InferRequest, OutputOptions, TensorInput } from './types.js';

function shapeText(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

function names(map: Map<string, IoSpec>): string {
  return [...map.keys()].join(', ') || '(none)';
}

function isDetached(view: ArrayBufferView): boolean {
  const buffer = view.buffer as ArrayBuffer & { detached?: boolean };
  if (buffer.detached === true) return true;
  if (view.byteLength !== 0 || buffer.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

interface Normalized {
  data: NativeTensorData;
  datatype?: DataType;
  shape?: readonly number[];
  /** Elements in the data; -1 where it cannot be known (BYTES in device memory). */
  count: number;
  /** What the data is, for messages. */
  what: string;
}

export interface Ctx {
  model: string;
  version: number;
  requestId?: string;
}

function invalid(ctx: Ctx, message: string, holder?: Error): TritonError {
  return tritonError('INVALID_ARG', message, ctx, holder);
}

function isElementList(value: unknown): value is ReadonlyArray<string | Uint8Array> | readonly boolean[] {
  return Array.isArray(value);
}

/** An input's value taken apart: the data, and the datatype and shape given with it. */
interface Unwrapped {
  data: unknown;
  datatype: DataType | undefined;
  shape: number[] | undefined;
}

function inputTypeError(where: string, value: unknown): TypeError {
  return new TypeError(
    `Expected a TypedArray, BYTES elements or { data, shape, datatype } for ${where} but received ${describe(value)}`,
  );
}

/** `{ data, shape, datatype }` or bare data; checks the datatype and shape given. */
function unwrap(where: string, value: unknown): Unwrapped {
  if (
    typeof value !== 'object' ||
    value === null ||
    ArrayBuffer.isView(value) ||
    Array.isArray(value) ||
    value instanceof HostBuffer ||
    value instanceof CudaBuffer
  ) {
    return { data: value, datatype: undefined, shape: undefined };
  }
  const t = value as TensorInput;
  if (!('data' in t)) throw inputTypeError(where, value);
  const { datatype, shape } = t as { datatype?: unknown; shape?: unknown };
  if (datatype !== undefined && !isDataType(datatype)) {
    throw new TypeError(
      `Expected a Triton datatype (FP32, INT64, BYTES, ...) for ${where}.datatype but received ${describe(datatype)}`,
    );
  }
  if (shape !== undefined) {
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new TypeError(
        `Expected an array of non-negative integers for ${where}.shape but received ${describe(shape)}`,
      );
    }
  }
  return { data: t.data, datatype, shape: shape as number[] | undefined };
}

/** Pinned or device memory: passed as is; it needs a shape. */
function fromBuffer(where: string, data: HostBuffer | CudaBuffer, u: Unwrapped, spec: IoSpec): Normalized {
  if (data.disposed) throw new TypeError(`${where}: the ${data.constructor.name} was disposed`);
  const type = u.datatype ?? spec.datatype;
  if (u.shape === undefined) throw new TypeError(`${where}: a ${data.constructor.name} input needs a shape`);
  const size = elementSize(type);
  return {
    data: data.native,
    datatype: type,
    shape: u.shape,
    count: size === 0 ? -1 : data.byteLength / size,
    what: data.constructor.name,
  };
}

/** booleans (BOOL), or strings and byte arrays (BYTES, encoded here). */
function fromElements(where: string, data: readonly unknown[], u: Unwrapped, spec: IoSpec): Normalized {
  const dt = u.datatype;
  if (data.length > 0 && data.every((e) => typeof e === 'boolean')) {
    const bools = Uint8Array.from(data as readonly boolean[], (b) => (b ? 1 : 0));
    return { data: bools, datatype: dt ?? 'BOOL', shape: u.shape, count: bools.length, what: 'boolean[]' };
  }
  const ctor = arrayTypeOf(dt ?? spec.datatype);
  if (
    ctor !== null &&
    spec.datatype !== 'BYTES' &&
    data.some((e) => typeof e === 'number' || typeof e === 'bigint')
  ) {
    // A plain array of numbers for a numeric input: say which TypedArray it takes.
    throw new TypeError(
      `${where} is ${dt ?? spec.datatype}: give its data as a ${ctor.name} (${ctor.name}.from([...])), not a plain array of ${typeof data.find((e) => typeof e === 'number' || typeof e === 'bigint')}s`,
    );
  }
  for (let i = 0; i < data.length; i++) {
    const e = data[i];
    if (typeof e !== 'string' && !(e instanceof Uint8Array)) {
      throw new TypeError(
        `Expected BYTES elements (strings or Uint8Arrays) for ${where} but element ${i} is ${describe(e)}; numbers go in a TypedArray`,
      );
    }
  }
  return {
    data: encodeBytes(data as ReadonlyArray<string | Uint8Array>),
    datatype: dt ?? (data.length === 0 && spec.datatype === 'BOOL' ? 'BOOL' : 'BYTES'),
    shape: u.shape,
    count: data.length,
    what: 'BYTES elements',
  };
}

/** Length-prefixed BYTES data in a Uint8Array. */
function fromBytesView(where: string, data: ArrayBufferView, u: Unwrapped, spec: IoSpec): Normalized {
  const what = data.constructor.name;
  if (!(data instanceof Uint8Array)) {
    throw new TypeError(
      `${where}: BYTES data must be string[], Uint8Array[] or a length-prefixed Buffer, not a ${what}`,
    );
  }
  const count = countBytesElements(data);
  if (count < 0) {
    throw new TypeError(
      `${where}: the ${what} is not valid length-prefixed BYTES data (4-byte LE length per element)`,
    );
  }
  const datatype = u.datatype ?? (spec.datatype === 'BYTES' ? 'BYTES' : defaultDataType(data));
  return { data, datatype, shape: u.shape, count, what };
}

/** A TypedArray or DataView, passed as is (no copy). */
function fromView(where: string, data: ArrayBufferView, u: Unwrapped, spec: IoSpec): Normalized {
  if (isDetached(data)) throw new TypeError(`${where}: the data's ArrayBuffer is detached`);
  const what = data.constructor.name;
  const dt = u.datatype;
  const type = dt ?? spec.datatype;
  if (type === 'BYTES') return fromBytesView(where, data, u, spec);
  if (data instanceof DataView) {
    const size = elementSize(type);
    if (data.byteLength % size !== 0) {
      throw new TypeError(
        `${where}: a DataView of ${data.byteLength} bytes is not a whole number of ${type} elements`,
      );
    }
    return { data, datatype: type, shape: u.shape, count: data.byteLength / size, what };
  }
  if (dt !== undefined && !arrayFits(data, dt)) {
    throw new TypeError(`${where}: a ${what} cannot hold ${dt} data (use ${arrayNameOf(dt)})`);
  }
  const resolved = dt ?? (arrayFits(data, spec.datatype) ? spec.datatype : defaultDataType(data));
  const count = data.byteLength / (data as TypedArray).BYTES_PER_ELEMENT;
  return { data, datatype: resolved, shape: u.shape, count, what };
}

/** Turns one input value into data + what it says about datatype/shape/count. */
function normalize(input: string, value: unknown, spec: IoSpec, ctx: Ctx): Normalized {
  const where = `input '${input}' of model '${ctx.model}'`;
  const u = unwrap(where, value);
  const data = u.data;
  if (data instanceof HostBuffer || data instanceof CudaBuffer) return fromBuffer(where, data, u, spec);
  if (isElementList(data)) return fromElements(where, data, u, spec);
  if (ArrayBuffer.isView(data)) return fromView(where, data, u, spec);
  throw inputTypeError(where, data);
}

/** Shape from the model's dims when the request gives none. */
function inferShape(spec: IoSpec, count: number, batching: boolean, ctx: Ctx): number[] {
  const dims = batching ? [1, ...spec.dims] : [...spec.dims];
  const free = dims.filter((d) => d < 0).length;
  const known = dims.reduce((p, d) => (d < 0 ? p : p * d), 1);
  if (free === 0) return dims;
  if (free === 1 && known > 0 && count >= 0 && count % known === 0) {
    return dims.map((d) => (d < 0 ? count / known : d));
  }
  if (free === 1 && known === 0) return dims.map((d) => (d < 0 ? 0 : d));
  throw new TypeError(
    `input '${spec.name}' of model '${ctx.model}': give { data, shape }; a shape cannot be inferred from ${count} elements for dims ${shapeText(dims)}`,
  );
}

/**
 * Checks an output placement (`memory`, named `what`, and the separate
 * `device` option, named `deviceWhat`) and resolves it to what the addon
 * takes. Throws a TypeError naming the option.
 */
export function placement(
  what: string,
  memory: unknown,
  deviceWhat: string,
  device: unknown,
): { memory?: NativeMemoryType; device?: number } {
  const expected = `'cpu', 'pinned', 'gpu' or { type: 'gpu', device }`;
  const deviceId = (name: string, d: unknown): number => {
    if (!(typeof d === 'number' && Number.isSafeInteger(d) && d >= 0)) {
      throw new TypeError(`Expected a non-negative integer device for ${name} but received ${describe(d)}`);
    }
    return d;
  };
  const out: { memory?: NativeMemoryType; device?: number } = {};
  if (device !== undefined) out.device = deviceId(deviceWhat, device);
  if (memory === undefined) return out;
  if (typeof memory === 'string') {
    if (!is.oneOf(MEMORY_TYPES, memory))
      throw new TypeError(`Expected ${expected} for ${what} but received ${describe(memory)}`);
    out.memory = memory;
    return out;
  }
  if (typeof memory !== 'object' || memory === null || Array.isArray(memory)) {
    throw new TypeError(`Expected ${expected} for ${what} but received ${describe(memory)}`);
  }
  const o = memory as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key !== 'type' && key !== 'device') throw new TypeError(`Unknown key '${key}' in ${what}`);
  }
  if (o.type !== 'gpu') {
    throw new TypeError(`Expected type 'gpu' in ${what} (${expected}) but received ${describe(o.type)}`);
  }
  const d = deviceId(`${what}.device`, o.device);
  if (out.device !== undefined && out.device !== d) {
    throw new TypeError(`${what} names device ${d} but ${deviceWhat} is ${out.device}`);
  }
  out.memory = 'gpu';
  out.device = d;
  return out;
}

function nativeDestination(what: string, into: unknown): NativeTensorData {
  if (into instanceof HostBuffer || into instanceof CudaBuffer) {
    if (into.disposed) throw new TypeError(`${what}: the ${into.constructor.name} was disposed`);
    return into.native;
  }
  if (ArrayBuffer.isView(into)) {
    if (isDetached(into)) throw new TypeError(`${what}: the ArrayBuffer is detached`);
    return into;
  }
  throw new TypeError(
    `Expected a TypedArray, HostBuffer or CudaBuffer for ${what} but received ${describe(into)}`,
  );
}

/** A parameter as Triton types it: int when a safe integer or a bigint, else double. */
export type Parameter =
  | [name: string, type: 'string', value: string]
  | [name: string, type: 'int', value: number | bigint]
  | [name: string, type: 'double', value: number]
  | [name: string, type: 'bool', value: boolean];

/**
 * The most request parameters one request may carry: each goes to the
 * addon as arguments of one call, and a call of hundreds of thousands of
 * arguments overflows the stack.
 */
export const MAX_REQUEST_PARAMETERS = 4096;

/** `request.parameters` as Triton types them. */
export function requestParameters(params: unknown): Parameter[] {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new TypeError(`Expected an object for parameters but received ${describe(params)}`);
  }
  const entries = Object.entries(params);
  if (entries.length > MAX_REQUEST_PARAMETERS) {
    throw new RangeError(
      `Expected at most ${MAX_REQUEST_PARAMETERS} request parameters but received ${entries.length}`,
    );
  }
  const out: Parameter[] = [];
  for (const [key, value] of entries) {
    if (typeof value === 'string') out.push([key, 'string', value]);
    else if (typeof value === 'boolean') out.push([key, 'bool', value]);
    else if (typeof value === 'bigint') out.push([key, 'int', value]);
    else if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) out.push([key, 'int', value]);
      else out.push([key, 'double', value]);
    } else {
      throw new TypeError(
        `Expected a string, number, bigint or boolean for parameters.${key} but received ${describe(value)}`,
      );
    }
  }
  return out;
}

export function nonNegativeInteger(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`Expected a non-negative integer for ${what} but received ${describe(value)}`);
  }
  return value;
}

const OUTPUT_OPTION_KEYS: ReadonlySet<string> = new Set(['into', 'memory', 'device']);

const REQUEST_KEYS: ReadonlySet<string> = new Set([
  'inputs',
  'outputs',
  'parameters',
  'id',
  'priority',
  'timeoutMicroseconds',
  'correlationId',
  'sequenceStart',
  'sequenceEnd',
  'version',
  'signal',
  'timing',
  'trace',
  'outputMemory',
  'outputDevice',
]);

/** Checks the parts of a request that need no model config. Throws TypeError. */
export function checkRequestShape(request: unknown): asserts request is InferRequest {
  if (typeof request !== 'object' || request === null) {
    throw new TypeError(`Expected a request object { inputs, ... } but received ${describe(request)}`);
  }
  for (const key of Object.keys(request)) {
    if (!REQUEST_KEYS.has(key)) throw new TypeError(`Unknown request option '${key}'`);
  }
  const r = request as InferRequest;
  if (typeof r.inputs !== 'object' || r.inputs === null || Array.isArray(r.inputs)) {
    throw new TypeError(
      `Expected an object of named inputs for request.inputs but received ${describe(r.inputs)}`,
    );
  }
  if (r.id !== undefined && typeof r.id !== 'string') {
    throw new TypeError(`Expected a string for request.id but received ${describe(r.id)}`);
  }
  if (r.version !== undefined && !(Number.isSafeInteger(r.version) && r.version >= -1)) {
    throw new TypeError(`Expected an integer >= -1 for request.version but received ${describe(r.version)}`);
  }
  if (r.signal !== undefined && !(r.signal instanceof AbortSignal)) {
    throw new TypeError(`Expected an AbortSignal for request.signal but received ${describe(r.signal)}`);
  }
  if (r.timing !== undefined && typeof r.timing !== 'boolean') {
    throw new TypeError(`Expected a boolean for request.timing but received ${describe(r.timing)}`);
  }
  if (
    r.trace !== undefined &&
    typeof r.trace !== 'boolean' &&
    !(typeof r.trace === 'string' && isTraceparent(r.trace))
  ) {
    throw new TypeError(
      `Expected a boolean or a W3C traceparent ('00-<32 hex>-<16 hex>-<2 hex>') for request.trace but received ${describe(r.trace)}`,
    );
  }
}

/** What a request is checked against (the model's inputs and outputs), and where its errors point. */
export interface RequestCheck {
  spec: ModelIo;
  ctx: Ctx;
  holder: Error | undefined;
}

/** An input's shape (given or from the model's dims), checked against its data and the model. */
function inputShape(c: RequestCheck, name: string, io: IoSpec, n: Normalized): number[] {
  const { spec, ctx, holder } = c;
  const batching = spec.maxBatchSize > 0;
  const shape = n.shape ? [...n.shape] : inferShape(io, n.count, batching, ctx);
  if (n.count >= 0) {
    let product = 1;
    for (const d of shape) product *= d;
    if (product !== n.count) {
      throw invalid(
        ctx,
        `input '${name}' of model '${spec.name}': shape ${shapeText(shape)} holds ${product} elements but the data has ${n.count}`,
        holder,
      );
    }
  }
  const expected = batching ? [-1, ...io.dims] : io.dims;
  const rankOk = shape.length === expected.length;
  if (!rankOk || expected.some((d, i) => d >= 0 && d !== shape[i])) {
    throw invalid(
      ctx,
      `input '${name}' of model '${spec.name}': expected shape ${shapeText(expected)}${batching ? ' (batch dimension first)' : ''}, got ${shapeText(shape)}`,
      holder,
    );
  }
  return shape;
}

/**
 * The batch size of a batching model's input (its first dimension), checked
 * against max_batch_size and the batch of the inputs before it.
 */
function checkBatch(c: RequestCheck, name: string, size: number, batch: Batch | undefined): Batch {
  const { spec, ctx, holder } = c;
  // Triton takes the batch size from the first dimension and reads 0 as
  // "not set": an empty batch then fails on byte sizes or comes back
  // without its batch dimension.
  if (size === 0) {
    throw invalid(
      ctx,
      `input '${name}' of model '${spec.name}': batch size 0; a batching model takes 1 to ${spec.maxBatchSize} (max_batch_size)`,
      holder,
    );
  }
  if (size > spec.maxBatchSize) {
    throw invalid(
      ctx,
      `input '${name}' of model '${spec.name}': batch size ${size} exceeds the model's max_batch_size ${spec.maxBatchSize}`,
      holder,
    );
  }
  if (batch !== undefined && batch.size !== size) {
    throw invalid(
      ctx,
      `input '${name}' of model '${spec.name}': batch size ${size} differs from input '${batch.input}' (${batch.size})`,
      holder,
    );
  }
  return { size, input: name };
}

/** One input as checked: its datatype, shape and data, and the request's batch with it. */
export interface CheckedInput {
  datatype: DataType;
  shape: number[];
  data: NativeTensorData;
  batch: Batch | undefined;
}

/**
 * Checks one input against the model's input `io` (undefined: the model has
 * none of that name): its datatype, shape and batch. The data is passed as
 * is (no copy) except BYTES elements, which are encoded.
 */
export function checkInput(
  c: RequestCheck,
  name: string,
  value: unknown,
  io: IoSpec | undefined,
  batch: Batch | undefined,
): CheckedInput {
  const { spec, ctx, holder } = c;
  if (io === undefined) {
    throw invalid(
      ctx,
      `model '${spec.name}' has no input '${name}' (its inputs: ${names(spec.inputs)})`,
      holder,
    );
  }
  const n = normalize(name, value, io, ctx);
  const datatype = n.datatype;
  if (datatype !== io.datatype) {
    throw invalid(
      ctx,
      `input '${name}' of model '${spec.name}': the model expects ${io.datatype} (${arrayNameOf(io.datatype)}), the request gives ${datatype ?? 'an unknown datatype'} (${n.what})`,
      holder,
    );
  }
  const shape = inputShape(c, name, io, n);
  const next = spec.maxBatchSize > 0 ? checkBatch(c, name, shape[0]!, batch) : batch;
  return { datatype, shape, data: n.data, batch: next };
}

/** After `count` inputs given, each one of the model's: none the model needs is missing. */
export function checkInputsGiven(c: RequestCheck, inputs: InferRequest['inputs'], count: number): void {
  const { spec, ctx, holder } = c;
  // Own properties only: an input inherited through the prototype is not sent.
  // Every input given is one of the model's (or checkInput threw): all of them given, none is missing.
  if (count !== spec.inputs.size && !spec.required.every((io) => Object.hasOwn(inputs, io.name))) {
    const missing = spec.required.filter((io) => !Object.hasOwn(inputs, io.name));
    const list = missing.map((io) => `'${io.name}'`).join(', ');
    throw invalid(
      ctx,
      `model '${spec.name}' needs input${missing.length > 1 ? 's' : ''} ${list}, missing from the request`,
      holder,
    );
  }
}

/** `request.outputs` as [name, options] pairs. */
export function outputEntries(outputs: unknown): Array<[string, OutputOptions | true]> {
  let entries: Array<[string, OutputOptions | true]>;
  if (Array.isArray(outputs)) {
    entries = (outputs as readonly unknown[]).map((n) => {
      if (typeof n !== 'string') {
        throw new TypeError(`Expected output names (strings) in request.outputs but received ${describe(n)}`);
      }
      return [n, true];
    });
  } else if (typeof outputs === 'object' && outputs !== null) {
    entries = Object.entries(outputs as Record<string, OutputOptions | true>);
  } else {
    throw new TypeError(`Expected an array or object for request.outputs but received ${describe(outputs)}`);
  }
  if (entries.length === 0) {
    throw new TypeError(
      'request.outputs names no output: list at least one, or leave it out to get every output',
    );
  }
  return entries;
}

/** One output as checked: its memory and device (undefined: not set) and `into` destination. */
export interface CheckedOutput {
  memory: NativeMemoryType | undefined;
  device: number | undefined;
  into: NativeTensorData | undefined;
}

/** One output's options, checked against the model's output `io`. */
function outputOptions(name: string, options: unknown, io: IoSpec): CheckedOutput {
  const out: CheckedOutput = { memory: undefined, device: undefined, into: undefined };
  if (options === true) return out;
  const what = `request.outputs.${name}`;
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `Expected true or { into, memory, device } for ${what} but received ${describe(options)}`,
    );
  }
  // A misspelt option ('intoo') would otherwise be ignored in silence.
  for (const key of Object.keys(options)) {
    if (!OUTPUT_OPTION_KEYS.has(key)) {
      throw new TypeError(`Unknown option '${key}' in ${what} (expected into, memory or device)`);
    }
  }
  const o = options as OutputOptions;
  const place = placement(`${what}.memory`, o.memory, `${what}.device`, o.device);
  out.memory = place.memory;
  out.device = place.device;
  if (o.into !== undefined) {
    out.into = nativeDestination(`${what}.into`, o.into);
    // A DataView is raw bytes for any datatype; a TypedArray must be the output's own kind.
    const view = o.into;
    if (ArrayBuffer.isView(view) && !(view instanceof DataView) && !arrayFits(view, io.datatype)) {
      throw new TypeError(
        `Expected a ${io.datatype === 'BYTES' ? 'Uint8Array' : arrayTypeOf(io.datatype)!.name} for ${what}.into (output '${name}' is ${io.datatype}) but received ${describe(o.into)}`,
      );
    }
  }
  return out;
}

/**
 * Checks one requested output: one of the model's, not named before (`seen`,
 * to which it is added), with valid options.
 */
export function checkOutput(
  c: RequestCheck,
  name: string,
  options: unknown,
  seen: Set<string>,
): CheckedOutput {
  const { spec, ctx, holder } = c;
  const io = spec.outputs.get(name);
  if (io === undefined) {
    throw invalid(
      ctx,
      `model '${spec.name}' has no output '${name}' (its outputs: ${names(spec.outputs)})`,
      holder,
    );
  }
  // Refused here on every release: r26.06 refuses it, r25.07 answered it
  // (docs/releases.md).
  if (seen.has(name)) {
    throw invalid(
      ctx,
      `request.outputs names output '${name}' of model '${spec.name}' twice: list each output once`,
      holder,
    );
  }
  seen.add(name);
  return outputOptions(name, options, io);
}

export function correlationId(c: unknown): number | bigint | string {
  if (
    !(
      typeof c === 'string' ||
      typeof c === 'bigint' ||
      (typeof c === 'number' && Number.isSafeInteger(c) && c >= 0)
    )
  ) {
    throw new TypeError(
      `Expected a string, bigint or non-negative integer for request.correlationId but received ${describe(c)}`,
    );
  }
  return c;
}

/** Triton's request flags: SEQUENCE_START (1) and SEQUENCE_END (2). */
export function sequenceFlags(request: InferRequest): number {
  let flags = 0;
  for (const [key, bit] of [
    ['sequenceStart', 1],
    ['sequenceEnd', 2],
  ] as const) {
    const value = request[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') {
      throw new TypeError(`Expected a boolean for request.${key} but received ${describe(value)}`);
    }
    if (value && request.correlationId === undefined) {
      throw new TypeError(
        `request.${key} needs request.correlationId: it names the sequence the request starts or ends`,
      );
    }
    if (value) flags |= bit;
  }
  return flags;
}
