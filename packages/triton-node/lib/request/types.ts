/**
 * The public shape of an inference request: its inputs, the outputs it asks
 * for and where they go, parameters, and sequence and scheduling settings.
 */
import type { DataType, TypedArray } from '../config/datatypes.js';
import type { CudaBuffer, HostBuffer } from '../tensor/cuda.js';
import type { MemoryType, OutputDestination } from '../tensor/tensor.js';

/** Data of one input tensor. */
export type InputData =
  | TypedArray
  | DataView
  | HostBuffer
  | CudaBuffer
  /** BYTES: one string (UTF-8) or byte array per element. */
  | ReadonlyArray<string | Uint8Array>
  /** BOOL */
  | readonly boolean[];

/** An input with its shape (and datatype, where the data type alone does not say). */
export interface TensorInput {
  data: InputData;
  /** Defaults: from the model's dims, with a batch of 1 on batching models. */
  shape?: readonly number[];
  /** Defaults from the model's config (checked against the data's type). */
  datatype?: DataType;
}

/** An input: a 1-D TypedArray, BYTES elements, booleans (BOOL), or `{ data, shape, datatype }`. */
export type InputValue = TypedArray | ReadonlyArray<string | Uint8Array> | readonly boolean[] | TensorInput;

/**
 * Where Triton's allocator places an output: `'cpu'`, `'pinned'`, `'gpu'`
 * (device 0) or `{ type: 'gpu', device }`.
 */
export type OutputMemory = MemoryType | { type: 'gpu'; device: number };

/** Per-output options. */
export interface OutputOptions {
  /** Write the output straight into this memory (no copy); it must be large enough. */
  into?: OutputDestination;
  /** Where Triton's allocator places the output (default: the request's `outputMemory`). */
  memory?: OutputMemory;
  /** GPU id for memory 'gpu' (same as `memory: { type: 'gpu', device }`). */
  device?: number;
}

export type ParameterValue = string | number | boolean | bigint;

export interface InferRequest {
  /** Input tensors by name: TypedArrays (shape from the model's dims), BYTES elements, booleans, or `{ data, shape, datatype }`. */
  inputs: Record<string, InputValue>;
  /** Output names, or options per output (`true` for defaults). Default: every output. */
  outputs?: readonly string[] | Record<string, OutputOptions | true>;
  /** Request parameters for the backend. Integral numbers and bigints go as int, others as double. */
  parameters?: Record<string, ParameterValue>;
  /** The request's id: Triton's logs and traces name it, and the result and errors carry it. */
  id?: string;
  /** Scheduling priority: 1 is the highest; 0 (the default) is the model's default priority level. */
  priority?: number;
  /** Triton gives up on the request when it waited longer than this in the queue (0: no timeout). */
  timeoutMicroseconds?: number;
  /**
   * The sequence a request of a stateful (sequence-batched) model belongs to:
   * a non-negative integer (a bigint up to 2^64 - 1) or a string.
   */
  correlationId?: number | bigint | string;
  /** The first request of its sequence (Triton's SEQUENCE_START flag); needs `correlationId`. */
  sequenceStart?: boolean;
  /** The last request of its sequence (Triton's SEQUENCE_END flag); needs `correlationId`. */
  sequenceEnd?: boolean;
  /** Model version (default: the Model's version, else the highest ready one). */
  version?: number;
  /** Cancels the request (it rejects with a TritonError 'CANCELLED' named 'AbortError'). */
  signal?: AbortSignal;
  /** Report Triton's per-request timing on the result (`result.timing`). Off by default. */
  timing?: boolean;
  /**
   * Export Triton's timestamps of this inference as OpenTelemetry spans
   * (implies `timing`), through `@opentelemetry/api` when the application
   * installed it (an optional peer; without it nothing is exported): `true`
   * makes them children of the caller's active context, a W3C `traceparent`
   * header value (`00-<trace id>-<span id>-<flags>`) children of that remote
   * span. docs/observability.md. Off by default.
   */
  trace?: boolean | string;
  /** Default placement of outputs: 'cpu' (default), 'pinned', 'gpu' or `{ type: 'gpu', device }`. */
  outputMemory?: OutputMemory;
  /** GPU id for outputMemory 'gpu' (same as `outputMemory: { type: 'gpu', device }`). */
  outputDevice?: number;
}
