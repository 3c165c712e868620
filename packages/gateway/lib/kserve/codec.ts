import type { IncomingMessage } from 'node:http';
/**
 * The KServe v2 inference request and response bodies: JSON tensors and
 * Triton's binary tensor data extension (the JSON header, then each binary
 * tensor's bytes in the order the header lists them; the header's length in
 * `Inference-Header-Content-Length`).
 *
 * Binary inputs go to the library as views of the received body (a DataView,
 * or a Buffer for BYTES): no copy. Binary outputs are written from the
 * tensors' own memory (Triton's output buffers) and disposed once sent.
 */
import {
  CudaBuffer,
  DATATYPES,
  type DataType,
  type InferRequest,
  type InferResult,
  type ParameterValue,
  type Tensor,
  type TensorInput,
  elementSize,
  isDataType,
} from 'triton-node';
import { bfloat16ToNumber, describe, halfToNumber } from 'triton-node/internal';
import { GatewayError, badRequest } from '../errors.js';

/** A shared-memory reference of an input or output (`shared_memory_*` parameters). */
export interface ShmReference {
  region: string;
  offset: number;
  byteSize: number;
}

/** How one requested output comes back. */
export interface OutputPlan {
  name: string;
  binary: boolean;
  shm?: ShmReference;
}

/** A decoded inference request: the library's request and how to answer it. */
export interface DecodedInfer {
  request: InferRequest;
  /** The outputs the client named, in its order; undefined: every output. */
  outputs: OutputPlan[] | undefined;
  /** Outputs not named (or named without `binary_data`) come back as binary data. */
  binaryByDefault: boolean;
}

/** Reads a shared-memory input: its bytes, or CUDA memory (the gateway's region registry). */
export interface ShmReader {
  read(ref: ShmReference, what: string): Uint8Array | CudaBuffer;
}

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonNegativeInteger(v: Json, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw badRequest(`Expected a non-negative integer for ${what} but received ${describe(v)}`);
  }
  return v;
}

function bool(v: Json, what: string): boolean {
  if (typeof v !== 'boolean') throw badRequest(`Expected a boolean for ${what} but received ${describe(v)}`);
  return v;
}

/** Parses the JSON header of a request body. */
export function parseJsonHeader(text: string, what = 'the inference request'): Record<string, Json> {
  let value: Json;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`malformed JSON in ${what}: ${(err as Error).message}`);
  }
  if (!isObject(value))
    throw badRequest(`Expected a JSON object for ${what} but received ${describe(value)}`);
  return value;
}

/** The shared-memory parameters of an input or output, when it names a region. */
export function shmReference(params: Record<string, Json>, what: string): ShmReference | undefined {
  const region = params.shared_memory_region;
  const size = params.shared_memory_byte_size;
  if (region === undefined && size === undefined) {
    if (params.shared_memory_offset !== undefined) {
      throw badRequest(`${what}: 'shared_memory_offset' needs 'shared_memory_region'`);
    }
    return undefined;
  }
  if (typeof region !== 'string' || region === '') {
    throw badRequest(
      `${what}: Expected a region name for 'shared_memory_region' but received ${describe(region)}`,
    );
  }
  if (size === undefined) throw badRequest(`${what}: 'shared_memory_region' needs 'shared_memory_byte_size'`);
  return {
    region,
    byteSize: nonNegativeInteger(size, `${what} 'shared_memory_byte_size'`),
    offset:
      params.shared_memory_offset === undefined
        ? 0
        : nonNegativeInteger(params.shared_memory_offset, `${what} 'shared_memory_offset'`),
  };
}

function parameters(v: Json, what: string): Record<string, Json> {
  if (v === undefined) return {};
  if (!isObject(v)) throw badRequest(`Expected an object for ${what} but received ${describe(v)}`);
  return v;
}

/**
 * A shape as Triton's HTTP server reads it: each dimension an unsigned JSON
 * integer (anything else is INTERNAL, 500, in Triton's words), kept exact: a
 * bigint past 2^53 (the header is parsed again for it: parseExactShapes,
 * after which a number past 2^53 was written with a fraction or exponent).
 */
function shapeOf(v: Json, what: string): Array<number | bigint> {
  if (!Array.isArray(v))
    throw badRequest(`Expected an array of dimensions for ${what} but received ${describe(v)}`);
  return v.map((d) => {
    if (
      typeof d === 'bigint'
        ? d < 0n || d > UINT64_MAX
        : typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0
    ) {
      throw new GatewayError(
        500,
        "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer",
        'INTERNAL',
      );
    }
    return d as number | bigint;
  });
}

const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** A dimension as Triton keeps it after reading it unsigned: an int64 (2^63 and past wrap negative). */
function asInt64(d: number | bigint): bigint {
  return BigInt.asIntN(64, BigInt(d));
}

/**
 * The element count of a JSON-data input's shape, checked as Triton's HTTP
 * server checks it (INVALID_ARG, 400, in its words): no negative dimension,
 * no count or byte size past INT64_MAX.
 */
function checkedCount(name: string, shape: Array<number | bigint>, datatype: DataType): bigint {
  const dims = shape.map(asInt64);
  const text = `[${dims.join(',')}]`;
  // Dimension by dimension, as Triton's GetElementCount: the first negative
  // or zero one decides.
  let count = 1n;
  for (const d of dims) {
    if (d < 0n) {
      throw badRequest(
        `invalid shape for input '${name}': shape ${text} contains one or more invalid dimensions`,
      );
    }
    if (d === 0n) return 0n;
    if (count > INT64_MAX / d) {
      throw badRequest(
        `invalid shape for input '${name}': shape ${text} causes total element count to exceed maximum size of ${INT64_MAX}`,
      );
    }
    count *= d;
  }
  const size = datatype === 'BYTES' ? 1n : BigInt(elementSize(datatype));
  if (size > 1n && count > INT64_MAX / size) {
    throw badRequest(
      `byte size overflow for input '${name}': element count (${count}) * data type size (${size}) exceeds maximum allowed size (${INT64_MAX})`,
    );
  }
  return count;
}

/** Integer literals past 2^53 in JSON text, outside strings (a string matches whole and stays). */
const BIG_INTEGER = /"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])-?\d{16,}(?![.eE\d])/g;

const MARK = 'triton-node-integer:';

/**
 * The header parsed again with its integer literals past 2^53 kept exact,
 * for the shapes that JSON.parse rounded: each such literal is read as a
 * marked string, and the marks in a shape become bigints.
 */
function parseExactShapes(text: string): Record<string, Json> {
  // In the JSON text the mark is the escape \u0000; parsed, a NUL character.
  const marked = text.replace(BIG_INTEGER, (t) => (t.startsWith('"') ? t : `"\\u0000${MARK}${t}"`));
  const json = JSON.parse(marked) as Record<string, Json>;
  const exact = (v: Json): Json =>
    typeof v === 'string' && v.startsWith(`\0${MARK}`) ? BigInt(v.slice(MARK.length + 1)) : v;
  for (const input of Array.isArray(json.inputs) ? json.inputs : []) {
    if (isObject(input) && Array.isArray(input.shape)) input.shape = input.shape.map(exact);
  }
  return json;
}

/** Whether a header has a shape JSON.parse may have rounded (an integer past 2^53). */
function hasRoundedShape(json: Record<string, Json>): boolean {
  if (!Array.isArray(json.inputs)) return false;
  return json.inputs.some(
    (input) =>
      isObject(input) &&
      Array.isArray(input.shape) &&
      input.shape.some((d) => typeof d === 'number' && Number.isInteger(d) && !Number.isSafeInteger(d)),
  );
}

export function product(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Triton's HTTP server's limit on the nesting of an input's 'data' (its HTTP_MAX_JSON_NESTING_DEPTH). */
export const MAX_DATA_DEPTH = 100;

/**
 * Flattens nested JSON arrays (row-major), as the protocol allows either
 * form; as Triton, 400 for a value or array at depth 100 or deeper ('data'
 * itself is depth 0), in Triton's words.
 */
export function flatten(data: Json[]): Json[] {
  if (!data.some(Array.isArray)) return data;
  const out: Json[] = [];
  const tooDeep = () => badRequest(`JSON nesting depth exceeds maximum allowed limit (${MAX_DATA_DEPTH})`);
  const walk = (v: Json[], depth: number) => {
    if (depth >= MAX_DATA_DEPTH) throw tooDeep();
    for (const x of v) {
      if (Array.isArray(x)) walk(x, depth + 1);
      else if (depth + 1 >= MAX_DATA_DEPTH) throw tooDeep();
      else out.push(x);
    }
  };
  walk(data, 0);
  return out;
}

const INTEGER_RANGES: Partial<Record<DataType, [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffffffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x80000000, 0x7fffffff],
};

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** IEEE 754 half-precision bits of a number (round to nearest even). */
export function numberToHalf(value: number): number {
  scratch[0] = value;
  const x = scratchBits[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >> shift;
    const rest = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = mant >> 13;
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) {
    half++;
    if (half === 0x400) {
      half = 0;
      e++;
      if (e >= 0x1f) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | half;
}

/** bfloat16 bits of a number (round to nearest even). */
export function numberToBfloat16(value: number): number {
  scratch[0] = value;
  const x = scratchBits[0]!;
  if (Number.isNaN(value)) return 0x7fc0;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

/** JSON elements of one input, as the data the library takes for its datatype. */
export function jsonData(values: Json[], datatype: DataType, what: string): TensorInput['data'] {
  const bad = (i: number, expected: string): never => {
    throw badRequest(`Expected ${expected} for ${what} data[${i}] but received ${describe(values[i])}`);
  };
  const n = values.length;
  switch (datatype) {
    case 'BYTES':
      return values.map((v, i) => (typeof v === 'string' ? v : bad(i, 'a string')));
    case 'BOOL': {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++)
        out[i] = typeof values[i] === 'boolean' ? (values[i] ? 1 : 0) : bad(i, 'a boolean');
      return out;
    }
    case 'INT64':
    case 'UINT64': {
      const out = datatype === 'INT64' ? new BigInt64Array(n) : new BigUint64Array(n);
      const [lo, hi] = datatype === 'INT64' ? [-(2n ** 63n), 2n ** 63n - 1n] : [0n, 2n ** 64n - 1n];
      for (let i = 0; i < n; i++) {
        const v = values[i];
        let b: bigint | undefined;
        if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
        else if (typeof v === 'string' && /^-?\d+$/.test(v)) b = BigInt(v);
        if (b === undefined || b < lo || b > hi) bad(i, `an integer in the range of ${datatype}`);
        out[i] = b!;
      }
      return out;
    }
    case 'FP16':
    case 'BF16': {
      const out = new Uint16Array(n);
      const encode = datatype === 'FP16' ? numberToHalf : numberToBfloat16;
      for (let i = 0; i < n; i++)
        out[i] = typeof values[i] === 'number' ? encode(values[i] as number) : bad(i, 'a number');
      return out;
    }
    case 'FP32':
    case 'FP64': {
      const out = datatype === 'FP32' ? new Float32Array(n) : new Float64Array(n);
      for (let i = 0; i < n; i++)
        out[i] = typeof values[i] === 'number' ? (values[i] as number) : bad(i, 'a number');
      return out;
    }
    default: {
      const [lo, hi] = INTEGER_RANGES[datatype]!;
      const Ctor = {
        UINT8: Uint8Array,
        UINT16: Uint16Array,
        UINT32: Uint32Array,
        INT8: Int8Array,
        INT16: Int16Array,
        INT32: Int32Array,
      }[datatype as 'UINT8'];
      const out = new Ctor(n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi)
          bad(i, `an integer in the range of ${datatype}`);
        out[i] = v as number;
      }
      return out;
    }
  }
}

/** Reads the request-level parameters into the library's request fields. */
export function requestParameters(params: Record<string, Json>, request: InferRequest): boolean {
  let binaryByDefault = false;
  const rest: Record<string, ParameterValue> = {};
  for (const [key, v] of Object.entries(params)) {
    const what = `parameter '${key}'`;
    switch (key) {
      case 'sequence_id':
        if (typeof v === 'string') request.correlationId = v;
        else request.correlationId = nonNegativeInteger(v, what);
        break;
      case 'sequence_start':
        request.sequenceStart = bool(v, what);
        break;
      case 'sequence_end':
        request.sequenceEnd = bool(v, what);
        break;
      case 'priority':
        request.priority = nonNegativeInteger(v, what);
        break;
      case 'timeout':
        request.timeoutMicroseconds = nonNegativeInteger(v, what);
        break;
      case 'binary_data_output':
        binaryByDefault = bool(v, what);
        break;
      default:
        if (key.startsWith('triton_')) {
          throw badRequest(`parameter keys starting with 'triton_' are reserved for Triton: '${key}'`);
        }
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
          throw badRequest(`Expected a string, number or boolean for ${what} but received ${describe(v)}`);
        }
        rest[key] = v;
    }
  }
  if (Object.keys(rest).length > 0) request.parameters = rest;
  return binaryByDefault;
}

/** Where the binary tensors of a body are read from, input after input. */
interface BinaryCursor {
  body: Buffer;
  headerLength: number | undefined;
  pos: number;
}

/** One input of a request: JSON data, binary data from the body, or a shared-memory region. */
function decodeInput(
  input: Json,
  i: number,
  cursor: BinaryCursor,
  reader: ShmReader | undefined,
): [string, TensorInput] {
  if (!isObject(input))
    throw badRequest(`Expected an object for inputs[${i}] but received ${describe(input)}`);
  const name = input.name;
  if (typeof name !== 'string' || name === '') {
    throw badRequest(`Expected a name for inputs[${i}].name but received ${describe(name)}`);
  }
  const what = `input '${name}'`;
  const datatype = input.datatype;
  if (!isDataType(datatype)) {
    throw badRequest(
      `Expected one of ${DATATYPES.join(', ')} for ${what} datatype but received ${describe(datatype)}`,
    );
  }
  const exactShape = shapeOf(input.shape, `${what} shape`);
  const params = parameters(input.parameters, `${what} parameters`);
  const exactCount = checkedCount(name, exactShape, datatype);
  // Past 2^53 no body holds that many elements: the size and count checks below refuse it.
  const count = Number(exactCount);
  const shape = exactShape.map(Number);
  const shapeText = `[${exactShape.join(',')}]`;
  const size = datatype === 'BYTES' ? -1 : count * elementSize(datatype);
  const checkSize = (bytes: number, source: string) => {
    if (size >= 0 && bytes !== size) {
      throw badRequest(
        `${what}: shape ${shapeText} of ${datatype} needs ${size} bytes but ${source} has ${bytes}`,
      );
    }
  };
  const shm = shmReference(params, what);
  const tensor = (data: TensorInput['data']): [string, TensorInput] => [name, { data, shape, datatype }];
  if (params.binary_data_size !== undefined) {
    if (shm !== undefined)
      throw badRequest(`${what}: 'binary_data_size' and 'shared_memory_region' together`);
    if (input.data !== undefined) throw badRequest(`${what}: 'data' and 'binary_data_size' together`);
    if (cursor.headerLength === undefined) {
      throw badRequest(
        `${what} has 'binary_data_size': the Inference-Header-Content-Length header must give the JSON header's length`,
      );
    }
    const bytes = nonNegativeInteger(params.binary_data_size, `${what} 'binary_data_size'`);
    const left = cursor.body.length - cursor.pos;
    if (bytes > left) {
      throw badRequest(
        `unexpected size for ${what}: 'binary_data_size' is ${bytes} but only ${left} bytes of binary data are left`,
      );
    }
    checkSize(bytes, "'binary_data_size'");
    const view = cursor.body.subarray(cursor.pos, cursor.pos + bytes);
    cursor.pos += bytes;
    return tensor(binaryData(view, datatype));
  }
  if (shm !== undefined) {
    if (input.data !== undefined) throw badRequest(`${what}: 'data' and 'shared_memory_region' together`);
    if (reader === undefined)
      throw new GatewayError(400, `${what}: shared memory is not enabled`, 'UNSUPPORTED');
    checkSize(shm.byteSize, "'shared_memory_byte_size'");
    const data = reader.read(shm, what);
    return tensor(data instanceof CudaBuffer ? data : binaryData(data, datatype));
  }
  if (!Array.isArray(input.data)) {
    throw badRequest(
      `Expected an array for ${what} 'data' (or binary data) but received ${describe(input.data)}`,
    );
  }
  const values = flatten(input.data);
  if (values.length !== count || !Number.isSafeInteger(count)) {
    throw badRequest(
      `${what}: shape ${shapeText} has ${exactCount} elements but 'data' has ${values.length}`,
    );
  }
  return tensor(jsonData(values, datatype, what));
}

/**
 * Decodes an inference request: the JSON header (all of `body`, or its first
 * `headerLength` bytes), then the binary tensors after it. Throws a
 * GatewayError (400) naming the field for anything malformed.
 */
export function decodeInferRequest(
  body: Buffer,
  headerLength: number | undefined,
  shm?: ShmReader,
): DecodedInfer {
  if (headerLength !== undefined && headerLength > body.length) {
    throw badRequest(
      `Inference-Header-Content-Length is ${headerLength} but the body has only ${body.length} bytes`,
    );
  }
  const end = headerLength ?? body.length;
  const text = body.toString('utf8', 0, end);
  let json = parseJsonHeader(text);
  if (hasRoundedShape(json)) json = parseExactShapes(text);
  const request: InferRequest = { inputs: {} };
  if (json.id !== undefined) {
    if (typeof json.id !== 'string')
      throw badRequest(`Expected a string for 'id' but received ${describe(json.id)}`);
    if (json.id !== '') request.id = json.id;
  }
  const binaryByDefault = requestParameters(parameters(json.parameters, "'parameters'"), request);
  if (!Array.isArray(json.inputs)) {
    throw badRequest(`Expected an array for 'inputs' but received ${describe(json.inputs)}`);
  }
  const cursor: BinaryCursor = { body, headerLength, pos: end };
  for (const [i, input] of json.inputs.entries()) {
    const [name, tensor] = decodeInput(input, i, cursor, shm);
    if (Object.hasOwn(request.inputs, name)) throw badRequest(`input '${name}' is given twice`);
    request.inputs[name] = tensor;
  }
  if (cursor.pos !== body.length) {
    throw badRequest(
      `unexpected additional input data: ${body.length - cursor.pos} bytes after the last binary input`,
    );
  }
  const outputs = outputPlans(json.outputs, binaryByDefault);
  if (outputs !== undefined) request.outputs = outputs.map((o) => o.name);
  return { request, outputs, binaryByDefault };
}

/** Raw bytes of one tensor as the library takes them: a view, never a copy. */
export function binaryData(view: Uint8Array, datatype: DataType): TensorInput['data'] {
  if (datatype === 'BYTES') return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
  return new DataView(view.buffer, view.byteOffset, view.byteLength);
}

export function outputPlans(v: Json, binaryByDefault: boolean): OutputPlan[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw badRequest(`Expected an array for 'outputs' but received ${describe(v)}`);
  const seen = new Set<string>();
  return v.map((o, i) => {
    if (!isObject(o)) throw badRequest(`Expected an object for outputs[${i}] but received ${describe(o)}`);
    if (typeof o.name !== 'string' || o.name === '') {
      throw badRequest(`Expected a name for outputs[${i}].name but received ${describe(o.name)}`);
    }
    const what = `output '${o.name}'`;
    if (seen.has(o.name)) throw badRequest(`${what} is requested twice`);
    seen.add(o.name);
    const params = parameters(o.parameters, `${what} parameters`);
    if (params.classification !== undefined) {
      throw new GatewayError(501, `${what}: the classification extension is not supported`, 'UNSUPPORTED');
    }
    const plan: OutputPlan = {
      name: o.name,
      binary:
        params.binary_data === undefined
          ? binaryByDefault
          : bool(params.binary_data, `${what} 'binary_data'`),
    };
    const shm = shmReference(params, what);
    if (shm !== undefined) plan.shm = shm;
    return plan;
  });
}

// ---- responses ---------------------------------------------------------------

/** The raw bytes of a CPU tensor: a view of its memory (BYTES: length-prefixed, a view where contiguous). */
export function tensorBytes(tensor: Tensor): Uint8Array {
  const data = tensor.data;
  if (Array.isArray(data)) return bytesElements(data as Buffer[]);
  if (!ArrayBuffer.isView(data)) {
    throw new GatewayError(
      500,
      `output '${tensor.name}' is in ${tensor.memoryType} memory, not CPU memory`,
      'INTERNAL',
    );
  }
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** BYTES elements in the length-prefixed format: the response's own memory when the elements sit back to back. */
function bytesElements(elements: Buffer[]): Uint8Array {
  if (elements.length === 0) return new Uint8Array(0);
  const first = elements[0]!;
  let pos = first.byteOffset - 4;
  let contiguous = pos >= 0;
  for (const e of elements) {
    if (!contiguous) break;
    contiguous = e.buffer === first.buffer && e.byteOffset === pos + 4;
    pos = e.byteOffset + e.byteLength;
  }
  if (contiguous) return new Uint8Array(first.buffer, first.byteOffset - 4, pos - (first.byteOffset - 4));
  let total = 0;
  for (const e of elements) total += 4 + e.byteLength;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const e of elements) {
    out.writeUInt32LE(e.byteLength, at);
    out.set(e, at + 4);
    at += 4 + e.byteLength;
  }
  return out;
}

/** A tensor's elements as JSON array text (64-bit integers exact, FP16/BF16 decoded, BYTES as UTF-8). */
export function tensorJsonData(tensor: Tensor): string {
  const data = tensor.data;
  if (Array.isArray(data)) return JSON.stringify((data as Buffer[]).map((b) => b.toString('utf8')));
  if (!ArrayBuffer.isView(data)) {
    throw new GatewayError(
      500,
      `output '${tensor.name}' is in ${tensor.memoryType} memory, not CPU memory`,
      'INTERNAL',
    );
  }
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) return `[${data.join(',')}]`;
  const values = data as ArrayLike<number>;
  switch (tensor.datatype) {
    case 'BOOL':
      return JSON.stringify(Array.from(values, (v) => v !== 0));
    case 'FP16':
      return JSON.stringify(Array.from(values, halfToNumber));
    case 'BF16':
      return JSON.stringify(Array.from(values, bfloat16ToNumber));
    default:
      return JSON.stringify(Array.from(values));
  }
}

/** An encoded response: the JSON header and the binary parts that follow it. */
export interface EncodedResponse {
  header: Buffer;
  /** Binary tensors in the order of the header's outputs (empty: a JSON-only body). */
  parts: Uint8Array[];
}

/** Writes an output into its shared-memory region (the gateway's registry). */
export interface ShmWriter {
  write(ref: ShmReference, bytes: Uint8Array, what: string): void;
}

/**
 * Encodes a result: outputs in the order requested (or the result's), each as
 * JSON data or, where asked, binary data after the header; an output that
 * names a shared-memory region is written there and carries no data.
 */
export function encodeInferResponse(
  result: InferResult,
  decoded: Pick<DecodedInfer, 'outputs' | 'binaryByDefault'>,
  shm?: ShmWriter,
): EncodedResponse {
  const plans: OutputPlan[] =
    decoded.outputs ?? Object.keys(result.outputs).map((name) => ({ name, binary: decoded.binaryByDefault }));
  const parts: Uint8Array[] = [];
  const outputs: string[] = [];
  for (const plan of plans) {
    const tensor = result.outputs[plan.name];
    if (tensor === undefined) continue;
    const head = `{"name":${JSON.stringify(tensor.name)},"datatype":"${tensor.datatype}","shape":${JSON.stringify(tensor.shape)}`;
    if (plan.shm !== undefined) {
      const bytes = tensorBytes(tensor);
      shm!.write(plan.shm, bytes, `output '${plan.name}'`);
      outputs.push(
        `${head},"parameters":{"shared_memory_region":${JSON.stringify(plan.shm.region)},"shared_memory_byte_size":${bytes.byteLength}}}`,
      );
    } else if (plan.binary) {
      const bytes = tensorBytes(tensor);
      parts.push(bytes);
      outputs.push(`${head},"parameters":{"binary_data_size":${bytes.byteLength}}}`);
    } else {
      outputs.push(`${head},"data":${tensorJsonData(tensor)}}`);
    }
  }
  let text = `{"model_name":${JSON.stringify(result.model)},"model_version":"${result.version}"`;
  if (result.id !== '') text += `,"id":${JSON.stringify(result.id)}`;
  if (Object.keys(result.parameters).length > 0) text += `,"parameters":${JSON.stringify(result.parameters)}`;
  text += `,"outputs":[${outputs.join(',')}]}`;
  return { header: Buffer.from(text), parts };
}

/**
 * The JSON header's length a binary inference request declares
 * (`Inference-Header-Content-Length`), undefined for a JSON-only body, 0 for
 * a raw binary request (no header: the body is the only input's bytes). The
 * gateway and the isolating front parse it with this one function, so the
 * front reads a request's JSON header exactly as the group's process will.
 */
export function inferenceHeaderLength(req: IncomingMessage): number | undefined {
  const raw = req.headers['inference-header-content-length'];
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(', ') : raw;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw badRequest(`Unable to parse Inference-Header-Content-Length: '${text}'`);
  }
  return n;
}
