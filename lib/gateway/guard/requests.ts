/**
 * What the guard is told about a KServe request: its route label, the model
 * and version it names, and the request id; for HTTP read from the path
 * (the same shapes http.ts routes on), for gRPC from the RPC and its message.
 * The admission of each request is kept beside it (a WeakMap keyed by the
 * response or the call) for the routes that filter what they list.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { elementSize, isDataType } from 'triton-node';
import { payForBody } from '../body.js';
import { GatewayError } from '../errors.js';
import type { Admission, GuardRequest } from './types.js';

const MODEL_ROUTE = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]*))?(?:\/([^/]+))?\/?$/;
const REPOSITORY_ROUTE = /^\/v2\/repository\/models\/([^/]+)\/(load|unload)\/?$/;

const MODEL_SUBROUTES: Record<string, string> = {
  ready: 'model_ready',
  config: 'model_config',
  stats: 'model_stats',
  infer: 'infer',
  generate: 'generate',
  generate_stream: 'generate_stream',
};

function decoded(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    // The route answers 400 for it; the guard names no model.
    return undefined;
  }
}

/** Route label, model and version of a KServe HTTP path. */
export function httpRoute(path: string): { route: string; model?: string; version?: string } {
  if (path.startsWith('/v2/health/')) return { route: 'health' };
  if (path === '/v2' || path === '/v2/') return { route: 'server' };
  if (path === '/metrics') return { route: 'metrics' };
  if (path === '/v2/models/stats' || path === '/v2/models/stats/') return { route: 'model_stats' };
  if (path === '/v2/repository/index' || path === '/v2/repository/index/')
    return { route: 'repository_index' };
  if (path.includes('sharedmemory')) return { route: 'shared_memory' };
  let m = REPOSITORY_ROUTE.exec(path);
  if (m !== null) return withModel(`repository_${m[2]}`, decoded(m[1]));
  m = MODEL_ROUTE.exec(path);
  if (m !== null) {
    const route = m[3] === undefined ? 'model_metadata' : (MODEL_SUBROUTES[m[3]] ?? 'model_other');
    return withModel(route, decoded(m[1]), decoded(m[2]));
  }
  return { route: 'other' };
}

function withModel(route: string, model: string | undefined, version?: string) {
  return {
    route,
    ...(model === undefined ? {} : { model }),
    ...(version === undefined || version === '' ? {} : { version }),
  };
}

/** A client's request id when it is a short printable token, else a new one. */
export function requestIdOf(given: unknown): string {
  if (typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given)) return given;
  return randomUUID();
}

/**
 * Charges the body of an admitted HTTP request that had no Content-Length
 * (chunked: the guard saw no size) once it is read: a 429 instead of the
 * request when the tenant's bytes buckets have no room for it.
 */
export function chargeBody(req: IncomingMessage, admission: Admission): void {
  if (admission.spendBytes === undefined) return;
  payForBody(req, (bytes, force) => {
    const check = (wait: number) => {
      if (wait > 0) {
        throw new GatewayError(
          429,
          `rate limit of tenant '${admission.tenant}' reached (a request body of ${bytes} bytes)`,
          'UNAVAILABLE',
          { grpcCode: 8, retryAfterSeconds: Math.max(1, Math.ceil(wait)) },
        );
      }
    };
    const wait = admission.spendBytes!(bytes, force);
    return typeof wait === 'number' ? check(wait) : wait.then(check);
  });
}

/** The guard's view of an HTTP request. */
export function httpGuardRequest(req: IncomingMessage, path: string): GuardRequest {
  const length = Number(req.headers['content-length']);
  return {
    protocol: 'http',
    ...httpRoute(path),
    headers: req.headers,
    ...(Number.isSafeInteger(length) && length >= 0 ? { bytesIn: length } : {}),
    ...(req.socket?.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress }),
    requestId: requestIdOf(req.headers['x-request-id']),
  };
}

const RPC_ROUTES: Record<string, string> = {
  ServerLive: 'health',
  ServerReady: 'health',
  ServerMetadata: 'server',
  ModelReady: 'model_ready',
  ModelMetadata: 'model_metadata',
  ModelConfig: 'model_config',
  ModelStatistics: 'model_stats',
  RepositoryIndex: 'repository_index',
  RepositoryModelLoad: 'repository_load',
  RepositoryModelUnload: 'repository_unload',
  ModelInfer: 'infer',
  ModelStreamInfer: 'stream_infer',
};

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

/** The part of a grpc-js call the guard reads. */
export interface GrpcCallLike {
  metadata?: { getMap(): Record<string, unknown> };
  getPeer?(): string;
}

/** The guard's view of a gRPC call (or of one message of a stream). */
export function grpcGuardRequest(
  rpc: string,
  msg: Record<string, unknown>,
  call: GrpcCallLike,
): GuardRequest {
  const headers: GuardRequest['headers'] = {};
  for (const [k, v] of Object.entries(call.metadata?.getMap() ?? {})) {
    if (typeof v === 'string') headers[k.toLowerCase()] = v;
  }
  const model = msg.model_name ?? msg.name;
  const version = msg.model_version ?? msg.version;
  const bytesIn =
    Array.isArray(msg.raw_input_contents) || Array.isArray(msg.inputs) ? grpcMessageBytes(msg) : undefined;
  let peer: string | undefined;
  try {
    peer = call.getPeer?.();
  } catch {
    // A call already closed has no peer.
  }
  return {
    protocol: 'grpc',
    route: RPC_ROUTES[rpc] ?? (rpc.includes('SharedMemory') ? 'shared_memory' : rpc),
    ...(typeof model === 'string' && model !== '' ? { model } : {}),
    ...(typeof version === 'string' && version !== '' ? { version } : {}),
    headers,
    ...(bytesIn === undefined ? {} : { bytesIn }),
    ...(peer === undefined ? {} : { remoteAddress: peer }),
    // The client's x-request-id names a unary call (a message's own id otherwise); in a stream each
    // message is a request of its own, named by its id where it has one.
    requestId: requestIdOf(
      rpc === 'ModelStreamInfer' ? msg.id || headers['x-request-id'] : headers['x-request-id'] || msg.id,
    ),
  };
}

/**
 * Sockets with a request the gateway is serving: a client error on one of
 * them (a body cut short) ends that request, whose own audit line says so.
 */
const serving = new WeakSet<object>();

/** Marks `socket` as carrying a request until `res` closes. */
export function servingOn(socket: object, res: { once(event: 'close', fn: () => void): unknown }): void {
  serving.add(socket);
  res.once('close', () => serving.delete(socket));
}

/** Whether a request is being served on `socket`. */
export function isServing(socket: object): boolean {
  return serving.has(socket);
}

const admissions = new WeakMap<object, Admission>();

/** Keeps a request's admission beside its response or call. */
export function keepAdmission(owner: object, admission: Admission): void {
  admissions.set(owner, admission);
}

/** Whether the request of `owner` may see `model` (true without a guard). */
export function visibleTo(owner: object, model: string): boolean {
  return admissions.get(owner)?.canSee(model) ?? true;
}
