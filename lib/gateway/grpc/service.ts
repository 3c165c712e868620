/**
 * The KServe v2 protocol over gRPC: `inference.GRPCInferenceService` from
 * proto/kserve_v2.proto, served with `@grpc/grpc-js`.
 *
 * `@grpc/grpc-js` and `@grpc/proto-loader` are optional peer dependencies:
 * loaded on first use, with an error naming the install command when they
 * are missing, so the library itself does not carry them.
 *
 * Inputs in `raw_input_contents` go to Triton as views of the received
 * message's bytes (no copy); outputs come back in `raw_output_contents`, as
 * Triton's gRPC server sends them.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CudaBuffer,
  type DataType,
  type InferRequest,
  type InferResult,
  type InferStream,
  type TensorInput,
  elementSize,
  isDataType,
} from 'triton-node';
import { describe } from '../base/errors.js';
import {
  type OutputPlan,
  binaryData,
  jsonData,
  outputPlans,
  product,
  requestParameters,
  shmReference,
  tensorBytes,
} from './codec.js';
import type { GatewayContext } from './context.js';
import { GatewayError, badRequest, errorMessage, grpcStatus, httpStatus, wordingOf } from './errors.js';
import { type Admission, grpcGuardRequest, isHiddenModel, keepAdmission, visibleTo } from './guard/index.js';
import { unload } from './http.js';
import { importPeers } from './peer.js';
import {
  indexDocument,
  modelMetadata,
  modelStatistics,
  parseVersion,
  serverMetadata,
  statisticsDocument,
} from './protocol.js';
import type { SharedMemoryRegistry } from './shared-memory.js';

/** The part of a `@grpc/grpc-js` Server the gateway uses. */
export interface GrpcServerLike {
  addService(service: unknown, implementation: Record<string, unknown>): void;
}

type Json = unknown;
type Params = Record<string, Record<string, Json>>;
type Callback = (err: { code: number; details: string } | null, value?: object) => void;
interface UnaryCall {
  request: Record<string, Json>;
  cancelled?: boolean;
  metadata?: { getMap(): Record<string, unknown> };
  getPeer?(): string;
  on(event: 'cancelled', listener: () => void): void;
}
interface DuplexCall {
  on(event: 'data', listener: (msg: Record<string, Json>) => void): void;
  on(event: 'end' | 'cancelled' | 'error' | 'close', listener: () => void): void;
  write(msg: object): boolean;
  end(): void;
  cancelled?: boolean;
  metadata?: { getMap(): Record<string, unknown> };
  getPeer?(): string;
}

/** Where proto/kserve_v2.proto is: beside dist/ in the package, two levels up from lib/gateway/. */
function protoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, '..', 'proto', 'kserve_v2.proto'),
    join(here, '..', '..', 'proto', 'kserve_v2.proto'),
  ];
  const found = candidates.find((p) => existsSync(p));
  if (found === undefined) throw new Error(`kserve_v2.proto not found; looked at ${candidates.join(', ')}`);
  return found;
}

interface ProtoLoader {
  loadSync(file: string, options: object): object;
}
interface GrpcModule {
  loadPackageDefinition(def: object): Record<string, Record<string, { service: unknown }>>;
}

/** The service definition of GRPCInferenceService, loaded once. */
let definition: Promise<unknown> | undefined;
export function serviceDefinition(): Promise<unknown> {
  definition ??= (async () => {
    const peers = await importPeers(['@grpc/grpc-js', '@grpc/proto-loader'], 'the gRPC gateway');
    const [grpc, loader] = peers as [GrpcModule, ProtoLoader];
    const def = loader.loadSync(protoPath(), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    return grpc.loadPackageDefinition(def).inference!.GRPCInferenceService!.service;
  })();
  definition.catch(() => {
    definition = undefined;
  });
  return definition;
}

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

function plainParameters(map: Json): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries((map ?? {}) as Params)) out[k] = parameterValue(v);
  return out;
}

/** A response parameter as an InferParameter message. */
function toParameter(v: string | number | boolean): object {
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

function fail(ctx: GatewayContext, callback: Callback, err: unknown, rpc: string): void {
  const code = grpcStatus(err);
  ctx.log(
    code === 13 || code === 2 ? 'error' : 'info',
    { rpc, err: errorMessage(err, wordingOf(ctx, 'grpc')), code },
    'rpc failed',
  );
  callback({ code, details: errorMessage(err, wordingOf(ctx, 'grpc')) });
}

/** A unary handler: counted in flight, its errors turned into gRPC statuses. */
function unary(
  ctx: GatewayContext,
  rpc: string,
  fn: (req: Record<string, Json>, call: UnaryCall) => Promise<object>,
) {
  const route = rpc === 'ModelInfer' ? 'infer' : rpc;
  return (call: UnaryCall, callback: Callback) => {
    const done = ctx.begin();
    const arrived = performance.now();
    const record = (status: string) =>
      ctx.metrics?.record(
        'grpc',
        route,
        status,
        (performance.now() - arrived) * 1000,
        ctx.inferTimes.get(call),
      );
    const denied = (err: unknown) => {
      done();
      // ModelReady answers an unknown model with ready: false, so a hidden one too.
      if (rpc === 'ModelReady' && isHiddenModel(err)) return callback(null, { ready: false });
      fail(ctx, callback, err, rpc);
      record(String(grpcStatus(err)));
    };
    const run = (admission: Admission | undefined) => {
      if (admission !== undefined) keepAdmission(call, admission);
      const inferUs = () => ctx.auditTiming(call);
      fn(call.request, call).then(
        (value) => {
          admission?.done({ status: 200, ...inferUs() });
          done();
          callback(null, value);
          record('OK');
        },
        (err) => {
          admission?.done({
            status: httpStatus(err),
            error: errorMessage(err, wordingOf(ctx, 'grpc')),
            ...inferUs(),
          });
          done();
          fail(ctx, callback, err, rpc);
          record(String(grpcStatus(err)));
        },
      );
    };
    if (ctx.guard === undefined) return run(undefined);
    const guard = ctx.guard;
    (async () => guard.admit(grpcGuardRequest(rpc, call.request, call)))().then(run, denied);
  };
}

function version(req: Record<string, Json>): number {
  return parseVersion(req.version as string | undefined);
}

function repositoryParameters(map: Json): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries((map ?? {}) as Params)) {
    const choice = v.parameter_choice as string | undefined;
    out[k] = choice === undefined ? undefined : v[choice];
  }
  return out;
}

/** RepositoryIndex, RepositoryModelLoad and RepositoryModelUnload. */
function repositoryRpcs(ctx: GatewayContext): Record<string, unknown> {
  const server = ctx.server;
  return {
    RepositoryIndex: unary(ctx, 'RepositoryIndex', async (req, call) => ({
      models: indexDocument(
        (await server.modelIndex({ readyOnly: req.ready === true })).filter((e) => visibleTo(call, e.name)),
      ),
    })),
    RepositoryModelLoad: unary(ctx, 'RepositoryModelLoad', async (req) => {
      if (!ctx.options.repositoryControl)
        throw new GatewayError(403, 'model repository control is disabled on this gateway', 'UNAVAILABLE');
      const params = repositoryParameters(req.parameters);
      const files: Record<string, Uint8Array> = {};
      let config: string | undefined;
      for (const [k, v] of Object.entries(params)) {
        if (k === 'config' && typeof v === 'string') config = v;
        else if (k.startsWith('file:') && v instanceof Uint8Array) files[k.slice(5)] = v;
        else
          throw badRequest(
            `unexpected parameter '${k}' of the load request (expected 'config' as a string or 'file:<path>' as bytes)`,
          );
      }
      await server.loadModel(req.model_name as string, {
        ...(config === undefined ? {} : { config }),
        ...(Object.keys(files).length === 0 ? {} : { files }),
      });
      return {};
    }),
    RepositoryModelUnload: unary(ctx, 'RepositoryModelUnload', async (req) => {
      if (!ctx.options.repositoryControl)
        throw new GatewayError(403, 'model repository control is disabled on this gateway', 'UNAVAILABLE');
      const params = repositoryParameters(req.parameters);
      await unload(ctx, req.model_name as string, params.unload_dependents === true);
      return {};
    }),
  };
}

/** The CudaSharedMemory calls. */
function cudaSharedMemoryRpcs(
  shm: SharedMemoryRegistry | undefined,
  ctx: GatewayContext,
): Record<string, unknown> {
  return {
    CudaSharedMemoryStatus: unary(ctx, 'CudaSharedMemoryStatus', async (req) => {
      const list = requireShm(shm).cudaStatus(req.name === '' ? undefined : (req.name as string));
      return { regions: Object.fromEntries(list.map((r) => [r.name, r])) };
    }),
    CudaSharedMemoryRegister: unary(ctx, 'CudaSharedMemoryRegister', async (req) => {
      const handle = req.raw_handle as Uint8Array;
      requireShm(shm).registerCuda(
        req.name as string,
        new Uint8Array(handle),
        Number(req.device_id),
        Number(req.byte_size),
      );
      return {};
    }),
    CudaSharedMemoryUnregister: unary(ctx, 'CudaSharedMemoryUnregister', async (req) => {
      requireShm(shm).unregisterCuda(req.name === '' ? undefined : (req.name as string));
      return {};
    }),
  };
}

/** The SystemSharedMemory calls. */
function sharedMemoryRpcs(
  shm: SharedMemoryRegistry | undefined,
  ctx: GatewayContext,
): Record<string, unknown> {
  return {
    SystemSharedMemoryStatus: unary(ctx, 'SystemSharedMemoryStatus', async (req) => {
      const registry = requireShm(shm);
      const list = registry.status(req.name === '' ? undefined : (req.name as string));
      return { regions: Object.fromEntries(list.map((r) => [r.name, r])) };
    }),
    SystemSharedMemoryRegister: unary(ctx, 'SystemSharedMemoryRegister', async (req) => {
      requireShm(shm).register(
        req.name as string,
        req.key as string,
        Number(req.offset),
        Number(req.byte_size),
      );
      return {};
    }),
    SystemSharedMemoryUnregister: unary(ctx, 'SystemSharedMemoryUnregister', async (req) => {
      requireShm(shm).unregister(req.name === '' ? undefined : (req.name as string));
      return {};
    }),
  };
}

/** The service's implementation over the gateway's context. */
export function grpcImplementation(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
): Record<string, unknown> {
  const server = ctx.server;
  const modelName = (req: Record<string, Json>) => {
    if (typeof req.name !== 'string' || req.name === '') throw badRequest('the request names no model');
    return req.name;
  };
  return {
    ServerLive: unary(ctx, 'ServerLive', async () => ({ live: await server.isLive() })),
    ServerReady: unary(ctx, 'ServerReady', async () => ({
      ready: !ctx.draining && (await server.isReady()),
    })),
    ModelReady: unary(ctx, 'ModelReady', async (req) => ({
      ready: await server.model(modelName(req), version(req)).isReady(),
    })),
    ServerMetadata: unary(ctx, 'ServerMetadata', () => serverMetadata(server)),
    ModelMetadata: unary(ctx, 'ModelMetadata', (req) => modelMetadata(server, modelName(req), version(req))),
    ModelConfig: unary(ctx, 'ModelConfig', async (req) => ({
      config: await server.model(modelName(req), version(req)).config(),
    })),
    ModelStatistics: unary(ctx, 'ModelStatistics', async (req, call) => {
      const stats = (await modelStatistics(server, (req.name as string) ?? '', version(req))).filter((s) =>
        visibleTo(call, s.name),
      );
      return { model_stats: stats.map(statisticsDocument) };
    }),
    ...repositoryRpcs(ctx),
    ...sharedMemoryRpcs(shm, ctx),
    ...cudaSharedMemoryRpcs(shm, ctx),
    ModelInfer: unary(ctx, 'ModelInfer', async (req, call) => {
      if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
      const decoded = decodeGrpcRequest(req, shm);
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort(new Error('the client cancelled the call')));
      decoded.request.signal = abort.signal;
      ctx.wantTiming(decoded.request);
      const started = performance.now();
      let result: InferResult;
      try {
        result = await server.model(decoded.name, decoded.version).infer(decoded.request);
        ctx.keepTiming(call, result);
      } finally {
        ctx.inferTimes.set(call, (performance.now() - started) * 1000);
      }
      try {
        return encodeGrpcResponse(result, decoded.outputs, shm);
      } finally {
        // grpc-js serializes the message within the callback: the views may go after.
        setImmediate(() => result.dispose());
      }
    }),
    ModelStreamInfer: (call: DuplexCall) => streamInfer(ctx, shm, call),
  };
}

function requireShm(shm: SharedMemoryRegistry | undefined): SharedMemoryRegistry {
  if (shm === undefined)
    throw new GatewayError(501, 'shared memory is not enabled on this gateway', 'UNSUPPORTED');
  return shm;
}

/**
 * ModelStreamInfer: each request message starts a stream of its model (a
 * decoupled model answers any number of times); every response is written as
 * it comes, a request's error as `error_message`. The call ends once the
 * client ended its side and every request is done; a cancelled call cancels
 * its requests.
 */
function streamInfer(ctx: GatewayContext, shm: SharedMemoryRegistry | undefined, call: DuplexCall): void {
  const done = ctx.begin();
  const open = new Set<InferStream>();
  let clientEnded = false;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    for (const s of open) s.cancel();
    done();
  };
  const maybeEnd = () => {
    if (clientEnded && open.size === 0 && !finished) {
      call.end();
      finish();
    }
  };
  const cancelAll = () => finish();
  // A shutdown past its deadline: cancel the requests and end the call.
  const shutdown = () => {
    if (finished) return;
    finish();
    call.end();
  };
  ctx.cancels.add(shutdown);
  const run = async (msg: Record<string, Json>) => {
    let stream: InferStream | undefined;
    let admission: Admission | undefined;
    let status = 200;
    try {
      // Each message is a request of its own: admitted and audited alone.
      admission = await ctx.guard?.admit(grpcGuardRequest('ModelStreamInfer', msg, call));
      if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
      const decoded = decodeGrpcRequest(msg, shm);
      stream = ctx.server.model(decoded.name, decoded.version).stream(decoded.request);
      open.add(stream);
      for await (const result of stream) {
        if (finished) break;
        call.write({ infer_response: encodeGrpcResponse(result, decoded.outputs, shm) });
        setImmediate(() => result.dispose());
      }
    } catch (err) {
      status = httpStatus(err);
      if (!finished) call.write({ error_message: errorMessage(err, wordingOf(ctx, 'grpc')) });
      admission?.done({ status, error: errorMessage(err, wordingOf(ctx, 'grpc')) });
    } finally {
      admission?.done({ status });
      if (stream !== undefined) open.delete(stream);
      maybeEnd();
    }
  };
  call.on('data', (msg) => void run(msg));
  call.on('end', () => {
    clientEnded = true;
    maybeEnd();
  });
  call.on('cancelled', cancelAll);
  call.on('error', cancelAll);
  call.on('close', () => ctx.cancels.delete(shutdown));
}

/** Adds GRPCInferenceService to a `@grpc/grpc-js` Server. */
export async function addGrpcService(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
  grpcServer: GrpcServerLike,
): Promise<void> {
  const service = await serviceDefinition();
  grpcServer.addService(service, grpcImplementation(ctx, shm));
}
