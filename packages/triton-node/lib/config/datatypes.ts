/**
 * Triton datatypes: names, element sizes, the TypedArray each one maps to, and
 * the BYTES wire format (per element: a 4-byte little-endian length, then the
 * bytes).
 */

import { DATATYPE_NAMES, type DataType } from '../abi/binding.js';

export type { DataType };

export type TypedArray =
  | Uint8Array
  | Uint8ClampedArray
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

type TypedArrayConstructor =
  | Uint8ArrayConstructor
  | Int8ArrayConstructor
  | Uint16ArrayConstructor
  | Int16ArrayConstructor
  | Uint32ArrayConstructor
  | Int32ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor;

/** Per datatype: element byte size (0 for BYTES) and the TypedArray that holds it. */
const TABLE: Record<DataType, { size: number; array: TypedArrayConstructor | null }> = {
  BOOL: { size: 1, array: Uint8Array },
  UINT8: { size: 1, array: Uint8Array },
  UINT16: { size: 2, array: Uint16Array },
  UINT32: { size: 4, array: Uint32Array },
  UINT64: { size: 8, array: BigUint64Array },
  INT8: { size: 1, array: Int8Array },
  INT16: { size: 2, array: Int16Array },
  INT32: { size: 4, array: Int32Array },
  INT64: { size: 8, array: BigInt64Array },
  FP16: { size: 2, array: Uint16Array },
  FP32: { size: 4, array: Float32Array },
  FP64: { size: 8, array: Float64Array },
  BYTES: { size: 0, array: null },
  BF16: { size: 2, array: Uint16Array },
};

/** Every datatype name, in Triton's order. */
export const DATATYPES: readonly DataType[] = DATATYPE_NAMES;

export function isDataType(value: unknown): value is DataType {
  return typeof value === 'string' && Object.hasOwn(TABLE, value);
}

/** Byte size of one element (0 for BYTES, whose elements vary). */
export function elementSize(datatype: DataType): number {
  return TABLE[datatype].size;
}

/** The TypedArray constructor for a datatype (null for BYTES). */
export function arrayTypeOf(datatype: DataType): TypedArrayConstructor | null {
  return TABLE[datatype].array;
}

/** Name of the TypedArray class a datatype maps to, for error messages. */
export function arrayNameOf(datatype: DataType): string {
  if (datatype === 'BYTES') return 'string[], Uint8Array[] or a length-prefixed Buffer';
  return TABLE[datatype].array!.name;
}

/** Whether a TypedArray may carry a datatype (Uint16Array carries UINT16, FP16 and BF16). */
export function arrayFits(array: ArrayBufferView, datatype: DataType): boolean {
  if (datatype === 'BYTES') return array instanceof Uint8Array;
  const ctor = TABLE[datatype].array!;
  if (ctor === Uint8Array) return array instanceof Uint8Array || array instanceof Uint8ClampedArray;
  return array instanceof ctor;
}

/**
 * The datatype a TypedArray stands for when none is given: the unambiguous
 * one (Uint16Array → UINT16, Uint8Array → UINT8). Undefined for DataView.
 */
export function defaultDataType(array: ArrayBufferView): DataType | undefined {
  if (array instanceof Float32Array) return 'FP32';
  if (array instanceof Int32Array) return 'INT32';
  if (array instanceof Uint8Array || array instanceof Uint8ClampedArray) return 'UINT8';
  if (array instanceof Float64Array) return 'FP64';
  if (array instanceof BigInt64Array) return 'INT64';
  if (array instanceof BigUint64Array) return 'UINT64';
  if (array instanceof Int8Array) return 'INT8';
  if (array instanceof Int16Array) return 'INT16';
  if (array instanceof Uint16Array) return 'UINT16';
  if (array instanceof Uint32Array) return 'UINT32';
  return undefined;
}

/** Config spelling (`TYPE_FP32`, `TYPE_STRING`) → datatype name. */
export function fromConfigType(type: string): DataType | undefined {
  const name = type.startsWith('TYPE_') ? type.slice(5) : type;
  if (name === 'STRING') return 'BYTES';
  return isDataType(name) ? name : undefined;
}

/** Datatype name → config spelling. */
export function toConfigType(datatype: DataType): string {
  return datatype === 'BYTES' ? 'TYPE_STRING' : `TYPE_${datatype}`;
}

const encoder = new TextEncoder();

/**
 * Encodes BYTES elements into Triton's format. Strings are written as UTF-8.
 * One copy into one Buffer: Triton needs the elements contiguous.
 */
export function encodeBytes(elements: ReadonlyArray<string | Uint8Array>): Buffer {
  const parts: Uint8Array[] = new Array(elements.length);
  let total = 0;
  for (let i = 0; i < elements.length; i++) {
    const el = elements[i];
    const bytes = typeof el === 'string' ? encoder.encode(el) : el!;
    parts[i] = bytes;
    total += 4 + bytes.byteLength;
  }
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  for (const bytes of parts) {
    out.writeUInt32LE(bytes.byteLength, pos);
    pos += 4;
    out.set(bytes, pos);
    pos += bytes.byteLength;
  }
  return out;
}

/**
 * Counts the elements of length-prefixed BYTES data; -1 when the data does not
 * parse (a length running past the end, or a partial length prefix).
 */
export function countBytesElements(data: Uint8Array): number {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let pos = 0;
  let count = 0;
  while (pos < data.byteLength) {
    if (pos + 4 > data.byteLength) return -1;
    const len = view.getUint32(pos, true);
    pos += 4 + len;
    if (pos > data.byteLength) return -1;
    count++;
  }
  return count;
}

/**
 * Splits length-prefixed BYTES data into its elements. Each element is a
 * Buffer over the same memory (no copy).
 */
export function decodeBytes(data: Uint8Array, expected?: number): Buffer[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out: Buffer[] = [];
  let pos = 0;
  while (pos + 4 <= data.byteLength && (expected === undefined || out.length < expected)) {
    const len = view.getUint32(pos, true);
    pos += 4;
    const end = Math.min(pos + len, data.byteLength);
    out.push(Buffer.from(data.buffer, data.byteOffset + pos, end - pos));
    pos = end;
  }
  return out;
}
