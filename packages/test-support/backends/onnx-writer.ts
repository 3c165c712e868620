/**
 * ONNX model files written at test time: a protobuf writer for the few
 * messages of onnx.proto a small graph needs (ModelProto, GraphProto,
 * NodeProto with a tensor attribute, TensorProto with raw or external data,
 * ValueInfoProto), so that the hostile-model tests build exactly the model
 * they need instead of committing binaries.
 */

/** ONNX element types (TensorProto.DataType) the tests use. */
export const ONNX_TYPE = { FLOAT: 1, UINT8: 2, INT32: 6 } as const;

/** A graph input or output: a number is a fixed dimension, a string a symbolic one. */
export interface OnnxValueSpec {
  name: string;
  type: number;
  dims: ReadonlyArray<number | string>;
}

/** An initializer: its bytes in the file, or at an external `location` (TensorProto.external_data). */
export interface OnnxInitializerSpec {
  name: string;
  type: number;
  dims: readonly number[];
  raw?: Uint8Array;
  location?: string;
}

export interface OnnxGraphSpec {
  inputs: readonly OnnxValueSpec[];
  outputs: readonly OnnxValueSpec[];
  /** A node's `tensor`: a TENSOR attribute named `value` (a Constant node's). */
  nodes: ReadonlyArray<{
    op: string;
    inputs: readonly string[];
    outputs: readonly string[];
    tensor?: OnnxInitializerSpec;
  }>;
  initializers?: readonly OnnxInitializerSpec[];
  /** Default opset 13. */
  opset?: number;
}

function varint(n: number): number[] {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new RangeError(`varint: ${n} is not a safe non-negative integer`);
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/** Fields of one message, in the order given. */
class Message {
  readonly #bytes: number[] = [];

  number(field: number, value: number): this {
    this.#bytes.push(...varint(field * 8), ...varint(value));
    return this;
  }

  bytes(field: number, value: Uint8Array | string | Message): this {
    const b =
      value instanceof Message
        ? value.done()
        : typeof value === 'string'
          ? new TextEncoder().encode(value)
          : value;
    this.#bytes.push(...varint(field * 8 + 2), ...varint(b.length));
    for (const x of b) this.#bytes.push(x);
    return this;
  }

  done(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}

function valueInfo(v: OnnxValueSpec): Message {
  const shape = new Message();
  for (const d of v.dims) {
    shape.bytes(1, typeof d === 'number' ? new Message().number(1, d) : new Message().bytes(2, d));
  }
  const tensor = new Message().number(1, v.type).bytes(2, shape);
  return new Message().bytes(1, v.name).bytes(2, new Message().bytes(1, tensor));
}

function initializer(t: OnnxInitializerSpec): Message {
  const m = new Message();
  for (const d of t.dims) m.number(1, d);
  m.number(2, t.type).bytes(8, t.name);
  if (t.raw !== undefined) m.bytes(9, t.raw);
  if (t.location !== undefined) {
    m.bytes(13, new Message().bytes(1, 'location').bytes(2, t.location));
    m.number(14, 1); // data_location: EXTERNAL
  }
  return m;
}

/** The bytes of a `.onnx` file holding the graph (IR version 8). */
export function onnxModel(spec: OnnxGraphSpec): Uint8Array {
  const graph = new Message();
  spec.nodes.forEach((n, i) => {
    const node = new Message();
    for (const x of n.inputs) node.bytes(1, x);
    for (const x of n.outputs) node.bytes(2, x);
    node.bytes(3, `node${i}`).bytes(4, n.op);
    // AttributeProto: name, t, type TENSOR (4).
    if (n.tensor !== undefined)
      node.bytes(5, new Message().bytes(1, 'value').bytes(5, initializer(n.tensor)).number(20, 4));
    graph.bytes(1, node);
  });
  graph.bytes(2, 'graph');
  for (const t of spec.initializers ?? []) graph.bytes(5, initializer(t));
  for (const v of spec.inputs) graph.bytes(11, valueInfo(v));
  for (const v of spec.outputs) graph.bytes(12, valueInfo(v));
  return new Message()
    .number(1, 8)
    .bytes(2, 'triton-node tests')
    .bytes(7, graph)
    .bytes(8, new Message().bytes(1, '').number(2, spec.opset ?? 13))
    .done();
}

/**
 * A model whose output OUT (UINT8, [bytes]) is an initializer read from
 * `location`: what a hostile model file does to read a file of the server
 * (an unused input IN, UINT8 [1], as Triton wants one).
 */
export function externalDataModel(location: string, bytes: number): Uint8Array {
  return onnxModel({
    inputs: [{ name: 'IN', type: ONNX_TYPE.UINT8, dims: [1] }],
    outputs: [{ name: 'OUT', type: ONNX_TYPE.UINT8, dims: [bytes] }],
    nodes: [{ op: 'Identity', inputs: ['W'], outputs: ['OUT'] }],
    initializers: [{ name: 'W', type: ONNX_TYPE.UINT8, dims: [bytes], location }],
  });
}
