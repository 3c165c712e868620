/**
 * Tiny ONNX models written at run time, for what the real models cannot
 * show: an FP16 or BF16 tensor, string tensors, a sequence model's control
 * inputs, an input with a default (an initializer
 * that is also a graph input: ONNX Runtime's "overridable initializer",
 * which Triton's config may mark `optional`), a run that fails for a given
 * input shape. Each is one graph of a few nodes, encoded here as the ONNX
 * protobuf (onnx.proto's ModelProto; only the fields these models need).
 */

/** ONNX element types (onnx.proto TensorProto.DataType). */
export const ONNX_TYPES = {
  FP32: 1,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FP16: 10,
  UINT64: 13,
  BF16: 16,
} as const;
export type OnnxTypeName = keyof typeof ONNX_TYPES;

/** A graph input or output: its name, element type and dims (a string is a symbolic dimension). */
export interface TinyTensor {
  name: string;
  type: OnnxTypeName;
  dims: Array<number | string>;
}

/** A constant of the graph: FP32 values with their dims. `input`: also a graph input (overridable). */
export interface TinyInitializer {
  name: string;
  dims: number[];
  values: number[];
  input?: boolean;
}

export interface TinyNode {
  op: string;
  inputs: string[];
  outputs: string[];
}

export interface TinyModel {
  inputs: TinyTensor[];
  outputs: TinyTensor[];
  nodes: TinyNode[];
  initializers?: TinyInitializer[];
  /** The default ONNX opset (default 13). */
  opset?: number;
}

// ---- protobuf wire format --------------------------------------------------

function varint(value: number | bigint): number[] {
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n; // int64 as two's complement, ten bytes
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

const key = (field: number, wire: number) => varint((field << 3) | wire);
const intField = (field: number, value: number | bigint) => [...key(field, 0), ...varint(value)];
const bytesField = (field: number, bytes: number[] | Uint8Array) => [
  ...key(field, 2),
  ...varint(bytes.length),
  ...bytes,
];
const stringField = (field: number, text: string) => bytesField(field, [...Buffer.from(text, 'utf8')]);

// ---- ONNX messages -----------------------------------------------------------

function valueInfo(t: TinyTensor): number[] {
  const dims = t.dims.flatMap((d) =>
    bytesField(1, typeof d === 'number' ? intField(1, d) : stringField(2, d)),
  );
  const tensorType = [...intField(1, ONNX_TYPES[t.type]), ...bytesField(2, dims)];
  return [...stringField(1, t.name), ...bytesField(2, bytesField(1, tensorType))];
}

function initializer(i: TinyInitializer): number[] {
  const raw = Buffer.alloc(i.values.length * 4);
  i.values.forEach((v, k) => raw.writeFloatLE(v, k * 4));
  return [
    ...i.dims.flatMap((d) => intField(1, d)),
    ...intField(2, ONNX_TYPES.FP32),
    ...stringField(8, i.name),
    ...bytesField(9, raw),
  ];
}

function node(n: TinyNode, index: number): number[] {
  return [
    ...n.inputs.flatMap((name) => stringField(1, name)),
    ...n.outputs.flatMap((name) => stringField(2, name)),
    ...stringField(3, `node${index}`),
    ...stringField(4, n.op),
  ];
}

/** The model as the bytes of a .onnx file. */
export function tinyOnnxModel(m: TinyModel): Uint8Array {
  const inits = m.initializers ?? [];
  const overridable: TinyTensor[] = inits
    .filter((i) => i.input === true)
    .map((i) => ({ name: i.name, type: 'FP32', dims: i.dims }));
  const graph = [
    ...m.nodes.flatMap((n, i) => bytesField(1, node(n, i))),
    ...stringField(2, 'tiny'),
    ...inits.flatMap((i) => bytesField(5, initializer(i))),
    ...[...m.inputs, ...overridable].flatMap((t) => bytesField(11, valueInfo(t))),
    ...m.outputs.flatMap((t) => bytesField(12, valueInfo(t))),
  ];
  const opset = [...stringField(1, ''), ...intField(2, m.opset ?? 13)];
  return Uint8Array.from([
    ...intField(1, 8), // ir_version 8: initializers need not be inputs, those that are can be overridden
    ...stringField(2, 'triton-node tests'),
    ...bytesField(7, graph),
    ...bytesField(8, opset),
  ]);
}

// ---- the models the tests use ------------------------------------------------

/** y = x, FP16, [batch, 2]. */
export const IDENTITY_FP16 = tinyOnnxModel({
  inputs: [{ name: 'x', type: 'FP16', dims: ['batch', 2] }],
  outputs: [{ name: 'y', type: 'FP16', dims: ['batch', 2] }],
  nodes: [{ op: 'Identity', inputs: ['x'], outputs: ['y'] }],
});

/** y = x, BF16, [batch, 2]. */
export const IDENTITY_BF16 = tinyOnnxModel({
  inputs: [{ name: 'x', type: 'BF16', dims: ['batch', 2] }],
  outputs: [{ name: 'y', type: 'BF16', dims: ['batch', 2] }],
  nodes: [{ op: 'Identity', inputs: ['x'], outputs: ['y'] }],
});

/** The default of ADD_BIAS's `bias`. */
export const DEFAULT_BIAS = [10, 20, 30, 40];

/** y = x + bias, FP32, x [batch, 4]; `bias` [4] has a default (an overridable initializer). */
export const ADD_BIAS = tinyOnnxModel({
  inputs: [{ name: 'x', type: 'FP32', dims: ['batch', 4] }],
  outputs: [{ name: 'y', type: 'FP32', dims: ['batch', 4] }],
  nodes: [{ op: 'Add', inputs: ['x', 'bias'], outputs: ['y'] }],
  initializers: [{ name: 'bias', dims: [4], values: DEFAULT_BIAS, input: true }],
});

/**
 * y = x + c, FP32, x [batch, width] with a constant c of 4 values (y is
 * [batch, 4]): a run whose x is not 4 wide fails in ONNX Runtime (the shapes
 * do not broadcast).
 */
export const ADD_FOUR = tinyOnnxModel({
  inputs: [{ name: 'x', type: 'FP32', dims: ['batch', 'width'] }],
  outputs: [{ name: 'y', type: 'FP32', dims: ['batch', 4] }],
  nodes: [{ op: 'Add', inputs: ['x', 'c'], outputs: ['y'] }],
  initializers: [{ name: 'c', dims: [4], values: [1, 2, 3, 4] }],
});

/** y = x, strings, [batch, 3]: string tensors in and out. */
export const IDENTITY_STRING = tinyOnnxModel({
  inputs: [{ name: 'x', type: 'STRING', dims: ['batch', 3] }],
  outputs: [{ name: 'y', type: 'STRING', dims: ['batch', 3] }],
  nodes: [{ op: 'Identity', inputs: ['x'], outputs: ['y'] }],
});

/**
 * A sequence model that shows what the sequence batcher gives it: OUTPUT =
 * INPUT, and each control input (START INT32, END FP32, READY BOOL, CORRID
 * UINT64, each [batch, 1]) copied to an output of its own.
 */
export const SEQUENCE_CONTROLS = tinyOnnxModel({
  inputs: [
    { name: 'INPUT', type: 'INT32', dims: ['batch', 1] },
    { name: 'START', type: 'INT32', dims: ['batch', 1] },
    { name: 'END', type: 'FP32', dims: ['batch', 1] },
    { name: 'READY', type: 'BOOL', dims: ['batch', 1] },
    { name: 'CORRID', type: 'UINT64', dims: ['batch', 1] },
  ],
  outputs: [
    { name: 'OUTPUT', type: 'INT32', dims: ['batch', 1] },
    { name: 'START_OUT', type: 'INT32', dims: ['batch', 1] },
    { name: 'END_OUT', type: 'FP32', dims: ['batch', 1] },
    { name: 'READY_OUT', type: 'BOOL', dims: ['batch', 1] },
    { name: 'CORRID_OUT', type: 'UINT64', dims: ['batch', 1] },
  ],
  nodes: [
    { op: 'Identity', inputs: ['INPUT'], outputs: ['OUTPUT'] },
    { op: 'Identity', inputs: ['START'], outputs: ['START_OUT'] },
    { op: 'Identity', inputs: ['END'], outputs: ['END_OUT'] },
    { op: 'Identity', inputs: ['READY'], outputs: ['READY_OUT'] },
    { op: 'Identity', inputs: ['CORRID'], outputs: ['CORRID_OUT'] },
  ],
});

/**
 * A sequence model without batching whose CORRID control is a string: TEXT
 * (a string [1]) and CORRID copied to outputs.
 */
export const SEQUENCE_STRING_CORRID = tinyOnnxModel({
  inputs: [
    { name: 'TEXT', type: 'STRING', dims: [1] },
    { name: 'CORRID', type: 'STRING', dims: [1] },
  ],
  outputs: [
    { name: 'TEXT_OUT', type: 'STRING', dims: [1] },
    { name: 'CORRID_OUT', type: 'STRING', dims: [1] },
  ],
  nodes: [
    { op: 'Identity', inputs: ['TEXT'], outputs: ['TEXT_OUT'] },
    { op: 'Identity', inputs: ['CORRID'], outputs: ['CORRID_OUT'] },
  ],
});
