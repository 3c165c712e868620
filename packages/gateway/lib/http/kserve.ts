/**
 * The KServe v2 HTTP/REST routes' handlers, one per route of the table
 * (routes.ts): health, metadata, readiness, config, statistics, inference,
 * the generate extension, the model repository, shared memory and
 * `/metrics`. Each checks what it checked when it had its own parser, in the
 * same order (the path's encoding and version, the method, then the rest),
 * so statuses stay as Triton's HTTP server gives them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferResult } from 'triton-node';
import type { GatewayContext } from '../context.js';
import { GatewayError, badRequest } from '../errors.js';
import type { Exchange } from '../exchange.js';
import { decodeInferRequest, encodeInferResponse, inferenceHeaderLength } from '../kserve/codec.js';
import {
  indexDocument,
  load,
  modelMetadata,
  modelStatistics,
  serverMetadata,
  statisticsDocument,
  unload,
} from '../kserve/protocol.js';
import { decodeRawInferRequest } from '../kserve/raw-input.js';
import type { SharedMemoryRegistry } from '../kserve/shared-memory.js';
import { ROUTES, type Route, methodOf, parseVersion } from '../routes.js';
import { readBody, readJsonBody, readLoadBody } from './body.js';
import { handleGenerate, handleGenerateStream } from './generate.js';
import { handleLogging } from './logging.js';
import { sendEmpty, sendJson } from './respond.js';
import { handleTraceSetting } from './trace.js';

/** One HTTP request to a KServe route: the gateway, the request's exchange, and the node:http pair. */
export interface HttpCall {
  ctx: GatewayContext;
  shm: SharedMemoryRegistry | undefined;
  ex: Exchange;
  req: IncomingMessage;
  res: ServerResponse;
}

type Handler = (call: HttpCall) => Promise<void>;

/** The route's method or 405, as Triton answers a wrong one. */
function allow({ ex, req }: HttpCall): void {
  if (req.method !== methodOf(ex.route)) throw new GatewayError(405, 'Method Not Allowed', 'UNSUPPORTED');
}

/** 400 for a path segment whose percent-encoding is malformed. */
function wellFormed({ ex }: HttpCall): void {
  const bad = ex.match.malformed;
  if (bad !== undefined) throw badRequest(`malformed percent-encoding in the path: '${bad}'`);
}

/** The model and version a model route names. */
function modelOf(call: HttpCall): { name: string; version: number } {
  wellFormed(call);
  return { name: call.ex.match.model!, version: parseVersion(call.ex.match.version) };
}

function refuseWhileDraining(ctx: GatewayContext): void {
  if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
}

/** An optional JSON body (load, unload, index, register): `{}` when empty. */
function optionalJson({ ctx, ex, req }: HttpCall, what: string): Promise<Record<string, unknown>> {
  return readJsonBody(req, ctx.options.maxBodyBytes, what, true, ex.bodyCharge);
}

async function infer(call: HttpCall): Promise<void> {
  const { ctx, shm, ex, req, res } = call;
  const { name, version } = modelOf(call);
  allow(call);
  refuseWhileDraining(ctx);
  const length = inferenceHeaderLength(req);
  const body = await readBody(req, ctx.options.maxBodyBytes, ex.bodyCharge);
  const decoded =
    length === 0
      ? decodeRawInferRequest(body, name, await ctx.server.model(name, version).config())
      : decodeInferRequest(body, length, shm);
  for (const o of decoded.outputs ?? []) {
    if (o.shm === undefined) continue;
    if (shm === undefined)
      throw new GatewayError(501, 'shared memory is not enabled on this gateway', 'UNSUPPORTED');
    shm.check(o.shm);
  }
  // A client that goes away cancels its request.
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort(new Error('the client closed the connection'));
  };
  res.once('close', onClose);
  decoded.request.signal = abort.signal;
  let result: InferResult;
  try {
    result = await ex.infer(decoded.request, (r) => ctx.server.model(name, version).infer(r));
  } finally {
    res.off('close', onClose);
  }
  // Binary parts are views of Triton's output memory: give it back once sent.
  res.once('close', () => result.dispose());
  const { header, parts } = encodeInferResponse(result, decoded, shm);
  if (res.destroyed) return;
  if (parts.length === 0) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': header.length });
    res.end(header);
    return;
  }
  let total = header.length;
  for (const p of parts) total += p.byteLength;
  res.writeHead(200, {
    'Content-Type': 'application/octet-stream',
    'Inference-Header-Content-Length': header.length,
    'Content-Length': total,
  });
  // One writev for the header and the parts: separate small writes would
  // each go out as a packet of their own.
  res.cork();
  res.write(header);
  for (const p of parts) res.write(p);
  res.end();
  res.uncork();
}

async function generate(call: HttpCall, stream: boolean): Promise<void> {
  const { name, version } = modelOf(call);
  allow(call);
  refuseWhileDraining(call.ctx);
  const { ctx, ex, req, res } = call;
  if (stream) await handleGenerateStream(ctx, ex, req, res, name, version);
  else await handleGenerate(ctx, ex, req, res, name, version);
}

/** A model route that answers a document of the library's (metadata, readiness, config, statistics). */
function modelRoute(answer: (call: HttpCall, name: string, version: number) => Promise<void>): Handler {
  return async (call) => {
    const { name, version } = modelOf(call);
    allow(call);
    await answer(call, name, version);
  };
}

/** A route without parameters: its method checked, then `answer`. */
function plainRoute(answer: (call: HttpCall) => Promise<void>): Handler {
  return async (call) => {
    allow(call);
    await answer(call);
  };
}

async function repository(call: HttpCall, action: 'load' | 'unload'): Promise<void> {
  const { ctx } = call;
  allow(call);
  if (!ctx.options.repositoryControl) {
    throw new GatewayError(403, 'model repository control is disabled on this gateway', 'UNAVAILABLE');
  }
  wellFormed(call);
  const name = call.ex.match.model!;
  // A load body may carry model files: one too large gets Triton's answer (readLoadBody).
  const body =
    action === 'load'
      ? await readLoadBody(call.req, ctx.options.maxBodyBytes, 'the load request', call.ex.bodyCharge)
      : await optionalJson(call, `the ${action} request`);
  const params = body.parameters ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw badRequest(`Expected an object for 'parameters' but received ${JSON.stringify(params)}`);
  }
  const p = params as Record<string, unknown>;
  if (action === 'unload') {
    const dependents = p.unload_dependents ?? false;
    if (typeof dependents !== 'boolean')
      throw badRequest("Unable to parse 'unload_dependents': expected a boolean");
    await unload(ctx.server, name, dependents);
    return sendEmpty(call.res, 200);
  }
  const files: Record<string, Uint8Array> = {};
  let config: string | undefined;
  for (const [key, value] of Object.entries(p)) {
    if (typeof value !== 'string')
      throw badRequest(`Expected a string for parameter '${key}' of the load request`);
    if (key === 'config') config = value;
    else if (key.startsWith('file:')) files[key.slice(5)] = Buffer.from(value, 'base64');
    else
      throw badRequest(`unknown parameter '${key}' of the load request (expected 'config' or 'file:<path>')`);
  }
  await load(ctx.server, name, config, files);
  return sendEmpty(call.res, 200);
}

/** A shared memory route: `cuda` for CUDA's, the action from the route. */
function sharedMemory(cuda: boolean, action: 'status' | 'register' | 'unregister'): Handler {
  return async (call) => {
    const shm = call.shm;
    if (shm === undefined) {
      const which = cuda ? 'cudasharedmemory' : 'systemsharedmemory';
      throw new GatewayError(501, `${which} is not enabled on this gateway`, 'UNSUPPORTED');
    }
    wellFormed(call);
    const region = call.ex.match.region;
    allow(call);
    const body = action === 'register' ? await optionalJson(call, 'the register request') : {};
    const answer = cuda ? await shm.handleCuda(action, region, body) : await shm.handle(action, region, body);
    sendJson(call.res, 200, answer);
  };
}

async function metrics({ ctx, res }: HttpCall): Promise<void> {
  const text = await ctx.server.metrics();
  if (res.headersSent || res.destroyed) return;
  res.writeHead(200, {
    'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function repositoryIndex(call: HttpCall): Promise<void> {
  const body = await optionalJson(call, 'the repository index request');
  const ready = body.ready ?? false;
  if (typeof ready !== 'boolean') throw badRequest("Invalid value for 'ready': expected a boolean");
  const index = (await call.ctx.server.modelIndex({ readyOnly: ready })).filter((e) =>
    call.ex.canSee(e.name),
  );
  sendJson(call.res, 200, indexDocument(index));
}

/** The handler of each KServe route of the table. */
export const HANDLERS = new Map<Route, Handler>([
  [ROUTES.live, plainRoute(async ({ ctx, res }) => sendEmpty(res, (await ctx.server.isLive()) ? 200 : 400))],
  [
    ROUTES.ready,
    plainRoute(async ({ ctx, res }) =>
      sendEmpty(res, !ctx.draining && (await ctx.server.isReady()) ? 200 : 400),
    ),
  ],
  [ROUTES.server, plainRoute(async ({ ctx, res }) => sendJson(res, 200, await serverMetadata(ctx.server)))],
  [
    ROUTES.allStats,
    plainRoute(async ({ ctx, ex, res }) => {
      const stats = (await modelStatistics(ctx.server, '', -1)).filter((s) => ex.canSee(s.name));
      sendJson(res, 200, { model_stats: stats.map(statisticsDocument) });
    }),
  ],
  [
    ROUTES.modelMetadata,
    modelRoute(async ({ ctx, res }, name, version) =>
      sendJson(res, 200, await modelMetadata(ctx.server, name, version)),
    ),
  ],
  [
    ROUTES.modelReady,
    modelRoute(async ({ ctx, res }, name, version) => {
      const ready = await ctx.server.model(name, version).isReady();
      if (!ready) throw badRequest('Model version not ready');
      sendEmpty(res, 200);
    }),
  ],
  [
    ROUTES.modelConfig,
    modelRoute(async ({ ctx, res }, name, version) =>
      sendJson(res, 200, await ctx.server.model(name, version).config()),
    ),
  ],
  [
    ROUTES.modelStats,
    modelRoute(async ({ ctx, res }, name, version) => {
      const stats = await modelStatistics(ctx.server, name, version);
      sendJson(res, 200, { model_stats: stats.map(statisticsDocument) });
    }),
  ],
  [ROUTES.infer, infer],
  [ROUTES.generateStream, (call) => generate(call, true)],
  [ROUTES.generate, (call) => generate(call, false)],
  [ROUTES.index, plainRoute(repositoryIndex)],
  [ROUTES.load, (call) => repository(call, 'load')],
  [ROUTES.unload, (call) => repository(call, 'unload')],
  [ROUTES.systemStatus, sharedMemory(false, 'status')],
  [ROUTES.systemRegister, sharedMemory(false, 'register')],
  [ROUTES.systemUnregister, sharedMemory(false, 'unregister')],
  [ROUTES.cudaStatus, sharedMemory(true, 'status')],
  [ROUTES.cudaRegister, sharedMemory(true, 'register')],
  [ROUTES.cudaUnregister, sharedMemory(true, 'unregister')],
  [ROUTES.metrics, plainRoute(metrics)],
  [ROUTES.traceSetting, (call) => handleTraceSetting(call, '')],
  [ROUTES.modelTraceSetting, (call) => handleTraceSetting(call, modelOf(call).name)],
  [ROUTES.logging, handleLogging],
]);
