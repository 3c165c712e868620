/**
 * A checked request laid out as the addon's submit() arguments: one array of
 * numbers (SUBMIT_SLOTS' header, then per input its datatype code, byteLength,
 * rank and dims; per output its memory and device; per parameter its type)
 * and the positional arguments (model, id, correlationId, then [name, data]
 * per input, [name, into] per output, [name, value] per parameter), as
 * native/request/submit_layout.h reads them. The checks are validate.ts's;
 * input memory is passed on as is (no copy).
 */
import {
  NATIVE_DATATYPE_CODES,
  NATIVE_MEMORY_CODES,
  NATIVE_PARAMETER_CODES,
  type NativeSubmitArg,
  SUBMIT_SLOTS,
} from '../abi/binding.js';
import type { TypedArray } from '../config/datatypes.js';
import { CudaBuffer } from '../tensor/cuda.js';
import type { OutputDestination } from '../tensor/tensor.js';
import type { Batch, IoSpec, ModelIo } from './plan.js';
import type { InferRequest, OutputOptions } from './types.js';
import {
  type RequestCheck,
  checkInput,
  checkInputsGiven,
  checkOutput,
  correlationId,
  nonNegativeInteger,
  outputEntries,
  placement,
  requestParameters,
  sequenceFlags,
} from './validate.js';

/**
 * Validated request in the addon's positional form (`NativeServer.submit`),
 * plus the `into` destinations by output name.
 */
export interface BuiltRequest {
  model: string;
  version: number;
  id: string | undefined;
  /** submit()'s numbers (SUBMIT_SLOTS layout); the server copies them into its Float64Array. */
  nums: number[];
  /** submit()'s arguments after the numbers: model, id, correlationId, then per input, output and parameter. */
  args: [
    model: string,
    id: string | undefined,
    correlationId: number | bigint | string | undefined,
    ...rest: NativeSubmitArg[],
  ];
  destinations: Map<string, OutputDestination> | undefined;
  /** Outputs asked for in GPU memory (the request's outputMemory or an output's). */
  gpuOutputs: boolean;
}

/** The request being laid out: what it is checked against, and submit()'s numbers and arguments. */
interface Builder extends RequestCheck {
  nums: number[];
  args: BuiltRequest['args'];
}

/**
 * The common case, checked against the input's plan: a TypedArray of the
 * input's own class, not empty, no shape given, whose length fills the
 * model's dims. Appends it and returns its batch; false when the input needs
 * the general way (which then also words any error).
 */
function addPlannedInput(
  b: Builder,
  name: string,
  value: unknown,
  io: IoSpec,
  batch: Batch | undefined,
): Batch | undefined | false {
  const plan = io.plan;
  if (plan === undefined || plan.free === -2 || !ArrayBuffer.isView(value)) return false;
  if (Object.getPrototypeOf(value) !== plan.proto) return false;
  const count = (value as TypedArray).length;
  // Empty or detached, a batch of several: the general way says what is wrong.
  if (count === 0 || (batch !== undefined && batch.size !== 1)) return false;
  const { dims, free, known } = plan;
  let fill = -1;
  if (free >= 0) {
    if (known === 0 || count % known !== 0) return false;
    fill = count / known;
  } else if (count !== known) {
    return false;
  }
  const nums = b.nums;
  nums.push(plan.code, -1, dims.length);
  for (let i = 0; i < dims.length; i++) nums.push(i === free ? fill : dims[i]!);
  b.args.push(name, value as TypedArray);
  return b.spec.maxBatchSize > 0 ? plan.batch : batch;
}

/** Checks one input and appends it: datatype code, byteLength, rank, dims; name and data. */
function addInput(b: Builder, name: string, value: unknown, batch: Batch | undefined): Batch | undefined {
  const io = b.spec.inputs.get(name);
  if (io !== undefined) {
    const planned = addPlannedInput(b, name, value, io, batch);
    if (planned !== false) return planned;
  }
  const input = checkInput(b, name, value, io, batch);
  b.nums.push(NATIVE_DATATYPE_CODES[input.datatype], -1, input.shape.length);
  for (const d of input.shape) b.nums.push(d);
  b.args.push(name, input.data);
  return input.batch;
}

function addInputs(b: Builder, inputs: InferRequest['inputs']): void {
  let count = 0;
  let batch: Batch | undefined;
  for (const name of Object.keys(inputs)) {
    batch = addInput(b, name, inputs[name], batch);
    count++;
  }
  checkInputsGiven(b, inputs, count);
  b.nums[SUBMIT_SLOTS.inputCount] = count;
}

/** Appends the requested outputs; returns the `into` destinations by name. */
function addOutputs(b: Builder, outputs: unknown): Map<string, OutputDestination> | undefined {
  let destinations: Map<string, OutputDestination> | undefined;
  let count = 0;
  const seen = new Set<string>();
  for (const [name, options] of outputEntries(outputs)) {
    const { memory, device, into } = checkOutput(b, name, options, seen);
    if (into !== undefined) {
      destinations ??= new Map();
      destinations.set(name, (options as OutputOptions).into!);
    }
    b.nums.push(memory === undefined ? -1 : NATIVE_MEMORY_CODES[memory], device ?? -1);
    b.args.push(name, into);
    count++;
  }
  b.nums[SUBMIT_SLOTS.outputCount] = count;
  return destinations;
}

function addParameters(b: Builder, params: unknown): void {
  const list = requestParameters(params);
  for (const [name, type, value] of list) {
    b.nums.push(NATIVE_PARAMETER_CODES[type]);
    b.args.push(name, value);
  }
  b.nums[SUBMIT_SLOTS.parameterCount] = list.length;
}

/** The header's request-wide settings: priority, timeout, correlation id, output placement, timing. */
function addSettings(b: Builder, request: InferRequest): void {
  const { nums } = b;
  if (request.priority !== undefined) {
    nums[SUBMIT_SLOTS.priority] = nonNegativeInteger('request.priority', request.priority);
  }
  if (request.timeoutMicroseconds !== undefined) {
    nums[SUBMIT_SLOTS.timeoutMicroseconds] = nonNegativeInteger(
      'request.timeoutMicroseconds',
      request.timeoutMicroseconds,
    );
  }
  if (request.correlationId !== undefined) b.args[2] = correlationId(request.correlationId);
  if (request.sequenceStart !== undefined || request.sequenceEnd !== undefined) {
    nums[SUBMIT_SLOTS.flags] = sequenceFlags(request);
  } else if (b.spec.ensemble) {
    // Flags set (to their default) make the request one the addon does not
    // keep (docs/threading.md#kept-requests): Triton's ensemble scheduler
    // adds an internal release callback to the request each time it runs it
    // and never removes one, so a kept ensemble request would be counted out
    // more than once and its model could never unload.
    nums[SUBMIT_SLOTS.flags] = 0;
  }
  if (request.timing === true || (request.trace !== undefined && request.trace !== false)) {
    nums[SUBMIT_SLOTS.timing] = 1;
  }
  if (request.outputMemory === undefined && request.outputDevice === undefined) return;
  const place = placement(
    'request.outputMemory',
    request.outputMemory,
    'request.outputDevice',
    request.outputDevice,
  );
  if (place.memory !== undefined) nums[SUBMIT_SLOTS.outputMemory] = NATIVE_MEMORY_CODES[place.memory];
  if (place.device !== undefined) nums[SUBMIT_SLOTS.outputDevice] = place.device;
}

/** Whether any output was asked for in GPU memory (the request's default or an output's own). */
function gpuOutputs(nums: number[], outputs: InferRequest['outputs']): boolean {
  if (nums[SUBMIT_SLOTS.outputMemory] === NATIVE_MEMORY_CODES.gpu) return true;
  if (outputs === undefined || Array.isArray(outputs)) return false;
  return Object.values(outputs as Record<string, OutputOptions | true>).some(
    (o) => o !== true && (o.memory === 'gpu' || o.into instanceof CudaBuffer),
  );
}

/**
 * Validates a request against the model and lays it out as the addon's
 * request. Input memory is passed as is (no copy) except BYTES elements,
 * which are encoded.
 */
export function buildRequest(
  spec: ModelIo,
  request: InferRequest,
  version: number,
  holder?: Error,
): BuiltRequest {
  const b: Builder = {
    spec,
    ctx: { model: spec.name, version, requestId: request.id },
    holder,
    // Header (SUBMIT_SLOTS; -1: not set), filled in below.
    nums: [version, -1, -1, -1, -1, -1, 0, 0, 0, 0],
    args: [spec.name, request.id, undefined],
  };
  addInputs(b, request.inputs);
  const destinations = request.outputs === undefined ? undefined : addOutputs(b, request.outputs);
  if (request.parameters !== undefined) addParameters(b, request.parameters);
  addSettings(b, request);
  const { nums, args } = b;
  return {
    model: spec.name,
    version,
    id: request.id,
    nums,
    args,
    destinations,
    gpuOutputs: gpuOutputs(nums, request.outputs),
  };
}

/**
 * Triton's error for a response, with a hint when the likely cause is the
 * output placement: a backend that writes its outputs with a plain memcpy
 * (repeat, square, many custom ones) fails "failed to create ... output
 * buffer in CPU memory" when the allocator hands it GPU memory.
 */
export function withPlacementHint<T extends { code: string; message: string }>(
  info: T,
  built: BuiltRequest,
): T {
  if (!built.gpuOutputs || !/failed to create .*output buffer/.test(info.message)) return info;
  return {
    ...info,
    message: `${info.message} (outputs were asked for in GPU memory (outputMemory 'gpu'), which this model's backend cannot write: ask for 'cpu' or 'pinned' and copy to the device)`,
  };
}
