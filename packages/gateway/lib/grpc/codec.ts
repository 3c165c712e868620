/**
 * The KServe v2 gRPC messages: a ModelInferRequest decoded into the
 * library's request (inputs in `raw_input_contents` go to Triton as views of
 * the received message's bytes, no copy; typed `contents`; shared memory),
 * a result encoded as a ModelInferResponse (outputs in
 * `raw_output_contents`, as Triton's gRPC server sends them), and the tensor
 * bytes a message carries, as the guard charges them.
 */
import {
  CudaBuffer,
  type DataType,
  type InferRequest,
  type InferResult,
  type TensorInput,
  elementSize,
  isDataType,
} from 'triton-node';
import { describe } from 'triton-node/internal';
import { GatewayError, badRequest } from '../errors.js';
import {
  type OutputPlan,
  binaryData,
  jsonData,
  outputPlans,
  product,
  requestParameters,
  shmReference,
  tensorBytes,
} from '../kserve/codec.js';
import type { SharedMemoryRegistry } from '../kserve/shared-memory.js';
import { parseVersion } from '../routes.js';

export type Json = unknown;
export type Params = Record<string, Record<string, Json>>;

/** An InferParameter message's value. */
function parameterValue(p: Record<string, Json>): Json {
  const choice = p.parameter_choice as string | undefined;
  if (choice === undefined) return undefined;
  const v = p[choice];
  if (choice === 'int64_param' || choice === 'uint64_param') {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : String(v);
  }
  return v;
}

export function plainParameters(map: Json): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries((map ?? {}) as Params)) out[k] = parameterValue(v);
  return out;
}

/** A response parameter as an InferParameter message. */
export function toParameter(v: string | number | boolean): object {
  if (typeof v === 'boolean') return { bool_param: v };
  if (typeof v === 'string') return { string_param: v };
  return Number.isInteger(v) ? { int64_param: String(v) } : { double_param: v };
}

/** The typed contents field of each datatype. */
const CONTENTS: Record<DataType, string | undefined> = {
  BOOL: 'bool_contents',
  UINT8: 'uint_contents',
  UINT16: 'uint_contents',
  UINT32: 'uint_contents',
  UINT64: 'uint64_contents',
  INT8: 'int_contents',
  INT16: 'int_contents',
  INT32: 'int_contents',
  INT64: 'int64_contents',
  FP16: undefined,
  FP32: 'fp32_contents',
  FP64: 'fp64_contents',
  BYTES: 'bytes_contents',
  BF16: undefined,
};

export interface DecodedGrpcInfer {
  name: string;
  version: number;
  request: InferRequest;
  outputs: OutputPlan[] | undefined;
}

/** Decodes a ModelInferRequest message into the library's request. */
export function decodeGrpcRequest(
  msg: Record<string, Json>,
  shm: SharedMemoryRegistry | undefined,
): DecodedGrpcInfer {
  const name = msg.model_name;
  if (typeof name !== 'string' || name === '') throw badRequest('ModelInferRequest: model_name is empty');
  const version = parseVersion(msg.model_version as string);
  const request: InferRequest = { inputs: {} };
  if (typeof msg.id === 'string' && msg.id !== '') request.id = msg.id;
  requestParameters(plainParameters(msg.parameters), request);
  const inputs = (msg.inputs ?? []) as Array<Record<string, Json>>;
  const raw = (msg.raw_input_contents ?? []) as Buffer[];
  if (raw.length > 0 && raw.length !== inputs.length) {
    throw badRequest(
      `raw_input_contents has ${raw.length} entries for ${inputs.length} inputs; give one per input`,
    );
  }
  for (const [i, input] of inputs.entries()) {
    const inputName = input.name as string;
    const what = `input '${inputName}'`;
    if (!isDataType(input.datatype))
      throw badRequest(`Expected a datatype for ${what} but received ${describe(input.datatype)}`);
    const datatype = input.datatype;
    const shape = ((input.shape ?? []) as string[]).map(Number);
    if (shape.some((d) => !Number.isSafeInteger(d) || d < 0))
      throw badRequest(`${what}: invalid shape [${shape.join(',')}]`);
    const size = datatype === 'BYTES' ? -1 : product(shape) * elementSize(datatype);
    const ref = shmReference(plainParameters(input.parameters), what);
    // As Triton: typed contents go alone, never beside raw contents or shared memory.
    const typed = input.contents !== null && input.contents !== undefined;
    if (typed && ref !== undefined)
      throw badRequest(
        `unexpected 'contents' provided when using shared memory for input tensor '${inputName}' for model '${name}'`,
      );
    if (typed && raw.length > 0)
      throw badRequest(
        `contents field must not be specified when using raw_input_contents for '${inputName}' for model '${name}'`,
      );
    let data: TensorInput['data'];
    if (ref !== undefined) {
      if (shm === undefined)
        throw new GatewayError(501, 'shared memory is not enabled on this gateway', 'UNSUPPORTED');
      if (size >= 0 && ref.byteSize !== size) {
        throw badRequest(
          `${what}: shape [${shape.join(',')}] of ${datatype} needs ${size} bytes but 'shared_memory_byte_size' is ${ref.byteSize}`,
        );
      }
      const shared = shm.read(ref);
      data = shared instanceof CudaBuffer ? shared : binaryData(shared, datatype);
    } else if (raw.length > 0) {
      const bytes = raw[i]!;
      if (size >= 0 && bytes.length !== size) {
        throw badRequest(
          `${what}: shape [${shape.join(',')}] of ${datatype} needs ${size} bytes but raw_input_contents[${i}] has ${bytes.length}`,
        );
      }
      data = binaryData(bytes, datatype);
    } else {
      data = typedContents(input.contents as Record<string, Json[]> | undefined, datatype, shape, what);
    }
    request.inputs[inputName] = { data, shape, datatype };
  }
  const outputs = outputPlans(
    ((msg.outputs ?? []) as Array<Record<string, Json>>).map((o) => ({
      name: o.name,
      parameters: plainParameters(o.parameters),
    })),
    true,
  );
  if (outputs !== undefined && outputs.length > 0) request.outputs = outputs.map((o) => o.name);
  for (const o of outputs ?? []) if (o.shm !== undefined) shm?.check(o.shm);
  return { name, version, request, outputs: outputs?.length ? outputs : undefined };
}

function typedContents(
  contents: Record<string, Json[]> | undefined,
  datatype: DataType,
  shape: number[],
  what: string,
): TensorInput['data'] {
  const field = CONTENTS[datatype];
  if (field === undefined) throw badRequest(`${what}: ${datatype} data must come in raw_input_contents`);
  const values = contents?.[field] ?? [];
  if (values.length !== product(shape)) {
    throw badRequest(
      `${what}: shape [${shape.join(',')}] has ${product(shape)} elements but contents.${field} has ${values.length}`,
    );
  }
  if (datatype === 'BYTES') return values as Buffer[];
  return jsonData(values, datatype, what);
}

/** A result as a ModelInferResponse message: raw output contents, or shared memory where asked. */
export function encodeGrpcResponse(
  result: InferResult,
  plans: OutputPlan[] | undefined,
  shm: SharedMemoryRegistry | undefined,
): object {
  const names = plans?.map((p) => p.name) ?? Object.keys(result.outputs);
  const outputs: object[] = [];
  const raw: Buffer[] = [];
  for (const name of names) {
    const tensor = result.outputs[name];
    if (tensor === undefined) continue;
    const bytes = tensorBytes(tensor);
    const plan = plans?.find((p) => p.name === name);
    const out = {
      name,
      datatype: tensor.datatype,
      shape: tensor.shape.map(String),
      parameters: {} as Record<string, object>,
    };
    if (plan?.shm !== undefined) {
      shm!.write(plan.shm, bytes, `output '${name}'`);
      out.parameters.shared_memory_region = { string_param: plan.shm.region };
      out.parameters.shared_memory_byte_size = { int64_param: String(bytes.byteLength) };
    } else {
      raw.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    }
    outputs.push(out);
  }
  const parameters: Record<string, object> = {};
  for (const [k, v] of Object.entries(result.parameters)) parameters[k] = toParameter(v);
  return {
    model_name: result.model,
    model_version: String(result.version),
    id: result.id,
    parameters,
    outputs,
    raw_output_contents: raw,
  };
}

/** Bytes of one element in each typed contents field when the datatype does not say (protobuf's widths). */
const FIELD_WIDTH: Record<string, number> = {
  bool_contents: 1,
  int_contents: 4,
  uint_contents: 4,
  int64_contents: 8,
  uint64_contents: 8,
  fp32_contents: 4,
  fp64_contents: 8,
};

/**
 * The tensor bytes a gRPC inference message carries, as `bytesPerSecond`
 * charges them: every `raw_input_contents` entry, and every typed `contents`
 * element at its datatype's size (a BYTES element: its length and a 4-byte
 * length prefix, as Triton serializes it).
 */
export function grpcMessageBytes(msg: Record<string, unknown>): number {
  let bytes = 0;
  if (Array.isArray(msg.raw_input_contents)) {
    for (const b of msg.raw_input_contents as unknown[]) if (b instanceof Uint8Array) bytes += b.byteLength;
  }
  if (!Array.isArray(msg.inputs)) return bytes;
  for (const input of msg.inputs as unknown[]) {
    if (typeof input !== 'object' || input === null) continue;
    const { contents, datatype } = input as { contents?: unknown; datatype?: unknown };
    if (typeof contents !== 'object' || contents === null) continue;
    const size =
      typeof datatype === 'string' && isDataType(datatype) && datatype !== 'BYTES'
        ? elementSize(datatype)
        : undefined;
    for (const [field, values] of Object.entries(contents as Record<string, unknown>)) {
      if (!Array.isArray(values)) continue;
      if (field === 'bytes_contents') {
        for (const v of values) bytes += 4 + (v instanceof Uint8Array ? v.byteLength : String(v).length);
      } else bytes += values.length * (size ?? FIELD_WIDTH[field] ?? 8);
    }
  }
  return bytes;
}
