import type { DataType } from '../config/datatypes.js';
/**
 * Types that follow a model's datatypes: the array a datatype's data comes
 * in, and opt-in model specs (`server.model<Spec>('name')`) that type input
 * and output names and datatypes. Types only: nothing here exists at run time.
 *
 *     interface Classifier extends ModelSpec {
 *       inputs: { IMAGE: 'FP32'; MASK?: 'BOOL' };
 *       outputs: { SCORES: 'FP32'; LABELS: 'BYTES' };
 *     }
 *     const model = server.model<Classifier>('classifier');
 *     const r = await model.infer({ inputs: { IMAGE: pixels } });
 *     const scores: Float32Array = r.outputs.SCORES.data;
 *
 * `triton-node types --repository R` writes such specs from the configs.
 */
import type { CudaBuffer, HostBuffer } from '../tensor/cuda.js';
import type { MemoryType, OutputDestination, Tensor, TensorDataOf } from '../tensor/tensor.js';
import type { InferResult } from './result.js';
import type { InferRequest, OutputMemory, OutputOptions, TensorInput } from './types.js';

/** What a datatype's input data may be, besides `{ data, shape }` and device memory. */
export interface DataTypeInputs {
  BOOL: Uint8Array | readonly boolean[];
  UINT8: Uint8Array | Uint8ClampedArray;
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
  BYTES: ReadonlyArray<string | Uint8Array>;
  BF16: Uint16Array;
}

/** An input of datatype `D` with its shape (or its data in pinned or device memory). */
export interface TypedTensorInput<D extends DataType> extends Omit<TensorInput, 'data' | 'datatype'> {
  data: DataTypeInputs[D] | DataView | HostBuffer | CudaBuffer;
  datatype?: D;
}

/** What an input of datatype `D` accepts: its array (shape from the model's dims) or `{ data, shape }`. */
export type InputOf<D extends DataType> = DataTypeInputs[D] | TypedTensorInput<D>;

/**
 * A model's inputs and outputs by name and datatype. An optional input is an
 * optional property (`MASK?: 'BOOL'`).
 */
export interface ModelSpec {
  inputs: { [name: string]: DataType | undefined };
  outputs: { [name: string]: DataType };
}

/** True for the untyped spec (any name): then requests and results keep their general types. */
type IsUntyped<S extends ModelSpec> = string extends keyof S['inputs'] ? true : false;

/** The output names of a spec. */
type OutputName<S extends ModelSpec> = keyof S['outputs'] & string;

/** A request to a model of spec `S`: its inputs by name and datatype, its outputs by name. */
export interface TypedInferRequest<S extends ModelSpec> extends Omit<InferRequest, 'inputs' | 'outputs'> {
  inputs: { [K in keyof S['inputs']]: InputOf<NonNullable<S['inputs'][K]>> };
  outputs?: readonly OutputName<S>[] | { [K in OutputName<S>]?: OutputOptions | true };
}

/** The request type a Model of spec `S` takes. */
export type RequestOf<S extends ModelSpec> = IsUntyped<S> extends true ? InferRequest : TypedInferRequest<S>;

/** The output names a request asks for: the names listed, the keys given, or every output. */
type Requested<S extends ModelSpec, R> = R extends { outputs: ReadonlyArray<infer N> }
  ? N & OutputName<S>
  : R extends { outputs: infer O }
    ? keyof O & OutputName<S>
    : OutputName<S>;

/** The memory an `OutputMemory` value names. */
type MemoryNamed<M> = M extends MemoryType ? M : M extends { type: 'gpu' } ? 'gpu' : MemoryType;

/** The memory of a destination given as `into`. */
type MemoryOfDestination<I> = I extends HostBuffer ? 'pinned' : I extends CudaBuffer ? 'gpu' : 'cpu';

/** The memory one output's options ask for (undefined: the request's default). */
type MemoryOfOutput<O> = O extends { into: infer I extends OutputDestination }
  ? MemoryOfDestination<I>
  : O extends { memory: infer M extends OutputMemory }
    ? MemoryNamed<M>
    : undefined;

/** The memory output `K`'s own options ask for (undefined when they do not). */
type OwnMemory<R, K extends string> = R extends { outputs: infer O }
  ? O extends ReadonlyArray<unknown>
    ? undefined
    : K extends keyof O
      ? MemoryOfOutput<O[K]>
      : undefined
  : undefined;

/** The request's default placement (`outputMemory`), else the CPU. */
type DefaultMemory<R> = R extends { outputMemory: infer M extends OutputMemory } ? MemoryNamed<M> : 'cpu';

/** Where output `K` of request `R` is placed: its own options, else `outputMemory`, else the CPU. */
type OutputMemoryOf<R, K extends string> = Exclude<OwnMemory<R, K>, undefined> extends never
  ? DefaultMemory<R>
  : Exclude<OwnMemory<R, K>, undefined>;

/** The result of request `R` to a model of spec `S`: each output asked for, typed by datatype and memory. */
export interface TypedInferResult<S extends ModelSpec, R = TypedInferRequest<S>>
  extends Omit<InferResult, 'outputs'> {
  outputs: { [K in Requested<S, R>]: Tensor<S['outputs'][K], OutputMemoryOf<R, K>> };
}

/** The result type of request `R` to a Model of spec `S`. */
export type ResultOf<S extends ModelSpec, R> = IsUntyped<S> extends true
  ? InferResult
  : TypedInferResult<S, R>;
