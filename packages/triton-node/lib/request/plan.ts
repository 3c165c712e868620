/**
 * A model's inputs and outputs as request validation sees them, read once
 * from Triton's config JSON, with each input's hot-path plan compiled.
 */
import { NATIVE_DATATYPE_CODES } from '../abi/binding.js';
import { type DataType, arrayTypeOf, fromConfigType } from '../config/datatypes.js';

/** One input or output of a model, as its config declares it. */
export interface IoSpec {
  name: string;
  datatype: DataType;
  /** Dims without the batch dimension; -1 is variable. */
  dims: number[];
  optional: boolean;
  /** An input's fast path, compiled once per model (undefined for outputs). */
  plan?: InputPlan;
}

/**
 * What an input needs on the hot path, compiled once from the model config:
 * a TypedArray of exactly the class that holds the input's datatype, with no
 * shape given, is checked with a few comparisons and its shape filled in
 * from the dims (anything else goes the general way, which also words the
 * errors).
 */
export interface InputPlan {
  /** The prototype a TypedArray input must have (null: BYTES, no fast path). */
  proto: object | null;
  /** The addon's datatype code. */
  code: number;
  /** The shape with a batch of 1 where the model batches; -1 where it varies. */
  dims: number[];
  /** Index of the one variable dimension, -1 when none, -2 when several. */
  free: number;
  /** Product of the fixed dimensions. */
  known: number;
  /** The batch this input makes (size 1), shared by every request. */
  batch: Batch;
}

/** What validation needs from a model's config: its inputs and outputs, batching and decoupling. */
export interface ModelIo {
  name: string;
  version: number;
  maxBatchSize: number;
  decoupled: boolean;
  /** An ensemble (platform 'ensemble'): its requests are never kept for reuse. */
  ensemble: boolean;
  inputs: Map<string, IoSpec>;
  outputs: Map<string, IoSpec>;
  /** Inputs a request must give. */
  required: IoSpec[];
}

type Json = Record<string, unknown>;

function ioList(list: unknown): IoSpec[] {
  if (!Array.isArray(list)) return [];
  return list.map((raw) => {
    const io = raw as Json;
    const datatype = fromConfigType(String(io.data_type ?? ''));
    return {
      name: String(io.name),
      datatype: datatype ?? 'BYTES',
      dims: Array.isArray(io.dims) ? io.dims.map((d) => Number(d)) : [],
      optional: io.optional === true,
    };
  });
}

/** Reads the parts of Triton's model config JSON that validation uses. */
export function parseModelIo(configJson: string, name: string, version: number): ModelIo {
  const config = JSON.parse(configJson) as Json;
  const policy = config.model_transaction_policy as Json | undefined;
  const spec: ModelIo = {
    name,
    version,
    maxBatchSize: Number(config.max_batch_size ?? 0),
    decoupled: policy?.decoupled === true,
    ensemble: config.platform === 'ensemble',
    inputs: new Map(),
    outputs: new Map(),
    required: [],
  };
  for (const io of ioList(config.input)) {
    io.plan = inputPlan(io, spec.maxBatchSize > 0);
    spec.inputs.set(io.name, io);
    if (!io.optional) spec.required.push(io);
  }
  for (const io of ioList(config.output)) spec.outputs.set(io.name, io);
  return spec;
}

function inputPlan(io: IoSpec, batching: boolean): InputPlan {
  const ctor = arrayTypeOf(io.datatype);
  const dims = batching ? [1, ...io.dims] : [...io.dims];
  let free = -1;
  let known = 1;
  dims.forEach((d, i) => {
    if (d >= 0) known *= d;
    else free = free === -1 ? i : -2;
  });
  return {
    proto: ctor !== null && io.datatype !== 'BYTES' ? ctor.prototype : null,
    code: NATIVE_DATATYPE_CODES[io.datatype],
    dims,
    free,
    known,
    batch: { size: 1, input: io.name },
  };
}

/** How many requests' worth an input carries, and which input set it. */
export interface Batch {
  size: number;
  input: string;
}
