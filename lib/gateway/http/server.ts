/**
 * The KServe v2 HTTP/REST routes, as a `node:http` request listener.
 *
 * Statuses follow Triton's HTTP server: errors carry `{"error": "..."}`
 * with the status of their Triton code (see errors.ts), health endpoints
 * answer 200 or 400 with no body, an unknown path 404, a wrong method 405.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferResult } from 'triton-node';
import { readBody, readJsonBody } from './body.js';
import {
  type DecodedInfer,
  decodeInferRequest,
  encodeInferResponse,
  inferenceHeaderLength,
  parseJsonHeader,
} from './codec.js';
import type { GatewayContext } from './context.js';
import { GatewayError, badRequest, errorMessage, httpStatus, wordingOf } from './errors.js';
import {
  type Admission,
  chargeBody,
  httpGuardRequest,
  keepAdmission,
  servingOn,
  visibleTo,
} from './guard/index.js';
import {
  indexDocument,
  modelMetadata,
  modelStatistics,
  parseVersion,
  serverMetadata,
  statisticsDocument,
} from './protocol.js';
import type { SharedMemoryRegistry } from './shared-memory.js';
import { handleGenerate, handleGenerateStream } from './streaming.js';

/** A `node:http` request listener. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

const JSON_TYPE = 'application/json';
const MODEL_ROUTE =
  /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]*))?(?:\/(ready|config|stats|infer|generate_stream|generate))?\/?$/;
const REPOSITORY_ROUTE = /^\/v2\/repository\/models\/([^/]+)\/(load|unload)\/?$/;
const SHM_ROUTE =
  /^\/v2\/(systemsharedmemory|cudasharedmemory)(?:\/region\/([^/]+))?\/(status|register|unregister)\/?$/;

function segment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest(`malformed percent-encoding in the path: '${text}'`);
  }
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = typeof value === 'string' ? value : JSON.stringify(value);
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendEmpty(res: ServerResponse, status: number): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Length': 0 });
  res.end();
}

export function sendError(ctx: GatewayContext, res: ServerResponse, err: unknown, what: string): void {
  const status = httpStatus(err);
  const message = errorMessage(err, wordingOf(ctx, 'http'));
  ctx.log(status >= 500 ? 'error' : 'info', { status, err: message, route: what }, 'request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof GatewayError && err.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(err.retryAfterSeconds));
  if (err instanceof GatewayError && err.challenge !== undefined)
    res.setHeader('WWW-Authenticate', err.challenge);
  sendJson(res, status, { error: message });
}

/** One method per route; anything else is 405 as Triton answers it. */
function allow(req: IncomingMessage, method: 'GET' | 'POST'): void {
  if (req.method !== method) throw new GatewayError(405, 'Method Not Allowed', 'UNSUPPORTED');
}

/** The `Inference-Header-Content-Length` of a binary request, when given. */

/** An optional JSON body (load, unload, index): `{}` when empty. */
async function optionalJson(
  ctx: GatewayContext,
  req: IncomingMessage,
  what: string,
): Promise<Record<string, unknown>> {
  return readJsonBody(req, ctx.options.maxBodyBytes, what, true);
}

async function infer(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  version: number,
): Promise<void> {
  allow(req, 'POST');
  if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
  const length = inferenceHeaderLength(req);
  const body = await readBody(req, ctx.options.maxBodyBytes);
  const decoded: DecodedInfer = decodeInferRequest(body, length, shm?.resolver());
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
  ctx.wantTiming(decoded.request);
  let result: InferResult;
  const started = performance.now();
  try {
    result = await ctx.server.model(name, version).infer(decoded.request);
    ctx.keepTiming(res, result);
  } catch (err) {
    res.off('close', onClose);
    throw err;
  } finally {
    ctx.inferTimes.set(res, (performance.now() - started) * 1000);
  }
  res.off('close', onClose);
  // Binary parts are views of Triton's output memory: give it back once sent.
  res.once('close', () => result.dispose());
  const { header, parts } = encodeInferResponse(result, decoded, shm?.writer());
  if (res.destroyed) return;
  if (parts.length === 0) {
    res.writeHead(200, { 'Content-Type': JSON_TYPE, 'Content-Length': header.length });
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

async function modelRoute(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  match: RegExpExecArray,
): Promise<void> {
  const name = segment(match[1]!);
  const version = parseVersion(match[2] === undefined ? undefined : segment(match[2]));
  const server = ctx.server;
  switch (match[3]) {
    case undefined:
      allow(req, 'GET');
      return sendJson(res, 200, await modelMetadata(server, name, version));
    case 'ready': {
      allow(req, 'GET');
      const ready = await server.model(name, version).isReady();
      if (!ready) throw badRequest('Model version not ready');
      return sendEmpty(res, 200);
    }
    case 'config':
      allow(req, 'GET');
      return sendJson(res, 200, await server.model(name, version).config());
    case 'stats': {
      allow(req, 'GET');
      const stats = await modelStatistics(server, name, version);
      return sendJson(res, 200, { model_stats: stats.map(statisticsDocument) });
    }
    case 'infer':
      return infer(ctx, shm, req, res, name, version);
    case 'generate_stream':
      allow(req, 'POST');
      if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
      return handleGenerateStream(ctx, req, res, name, version);
    case 'generate':
      allow(req, 'POST');
      if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
      return handleGenerate(ctx, req, res, name, version);
    default:
      throw new GatewayError(
        501,
        `'${match[3]}' is not supported; use 'infer' or 'generate_stream'`,
        'UNSUPPORTED',
      );
  }
}

async function repositoryRoute(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  match: RegExpExecArray,
): Promise<void> {
  allow(req, 'POST');
  if (!ctx.options.repositoryControl) {
    throw new GatewayError(403, 'model repository control is disabled on this gateway', 'UNAVAILABLE');
  }
  const name = segment(match[1]!);
  const body = await optionalJson(ctx, req, `the ${match[2]} request`);
  const params = body.parameters ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw badRequest(`Expected an object for 'parameters' but received ${JSON.stringify(params)}`);
  }
  const p = params as Record<string, unknown>;
  if (match[2] === 'unload') {
    const dependents = p.unload_dependents ?? false;
    if (typeof dependents !== 'boolean')
      throw badRequest("Unable to parse 'unload_dependents': expected a boolean");
    await unload(ctx, name, dependents);
    return sendEmpty(res, 200);
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
  await ctx.server.loadModel(name, {
    ...(config === undefined ? {} : { config }),
    ...(Object.keys(files).length === 0 ? {} : { files }),
  });
  return sendEmpty(res, 200);
}

/**
 * Unloads a model. Triton answers success for a model of its repository that
 * is not loaded; the library's NOT_FOUND for that case becomes success here
 * too, while a name no repository has stays an error.
 */
export async function unload(ctx: GatewayContext, name: string, dependents: boolean): Promise<void> {
  try {
    await ctx.server.unloadModel(name, { unloadDependents: dependents });
  } catch (err) {
    if ((err as { code?: string }).code !== 'NOT_FOUND') throw err;
    const index = await ctx.server.modelIndex();
    if (!index.some((e) => e.name === name)) throw err;
  }
}

async function route(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const server = ctx.server;
  if (ctx.openai !== undefined && path.startsWith('/v1/')) return ctx.openai.handle(req, res, path);
  if (path === '/v2/health/live') {
    allow(req, 'GET');
    return sendEmpty(res, (await server.isLive()) ? 200 : 400);
  }
  if (path === '/v2/health/ready') {
    allow(req, 'GET');
    return sendEmpty(res, !ctx.draining && (await server.isReady()) ? 200 : 400);
  }
  if (path === '/v2' || path === '/v2/') {
    allow(req, 'GET');
    return sendJson(res, 200, await serverMetadata(server));
  }
  if (path === '/v2/models/stats') {
    allow(req, 'GET');
    const stats = (await modelStatistics(server, '', -1)).filter((s) => visibleTo(res, s.name));
    return sendJson(res, 200, { model_stats: stats.map(statisticsDocument) });
  }
  let match = MODEL_ROUTE.exec(path);
  if (match) return modelRoute(ctx, shm, req, res, match);
  if (path === '/v2/repository/index') {
    allow(req, 'POST');
    const body = await optionalJson(ctx, req, 'the repository index request');
    const ready = body.ready ?? false;
    if (typeof ready !== 'boolean') throw badRequest("Invalid value for 'ready': expected a boolean");
    const index = (await server.modelIndex({ readyOnly: ready })).filter((e) => visibleTo(res, e.name));
    return sendJson(res, 200, indexDocument(index));
  }
  match = REPOSITORY_ROUTE.exec(path);
  if (match) return repositoryRoute(ctx, req, res, match);
  match = SHM_ROUTE.exec(path);
  if (match) {
    if (shm === undefined)
      throw new GatewayError(501, `${match[1]} is not enabled on this gateway`, 'UNSUPPORTED');
    const region = match[2] === undefined ? undefined : segment(match[2]);
    const action = match[3]!;
    allow(req, action === 'status' ? 'GET' : 'POST');
    const body = action === 'register' ? await optionalJson(ctx, req, 'the register request') : {};
    const answer =
      match[1] === 'cudasharedmemory'
        ? await shm.handleCuda(action, region, body)
        : await shm.handle(action, region, body);
    return sendJson(res, 200, answer);
  }
  if (path === '/metrics') {
    allow(req, 'GET');
    const text = await server.metrics();
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, {
      'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
    return;
  }
  throw new GatewayError(404, 'Not Found', 'NOT_FOUND');
}

/** A route's name for metrics (few values: never a model name). */
function routeLabel(path: string): string {
  if (path.startsWith('/v1/')) return 'openai';
  if (path.endsWith('/infer')) return 'infer';
  if (path.endsWith('/generate_stream')) return 'generate_stream';
  if (path.endsWith('/generate')) return 'generate';
  if (path.startsWith('/v2/health/')) return 'health';
  if (path.startsWith('/v2/repository/')) return 'repository';
  if (path.includes('sharedmemory')) return 'shared_memory';
  if (path.startsWith('/v2/models/')) return 'model';
  if (path === '/v2' || path === '/v2/') return 'server';
  if (path === '/metrics') return 'metrics';
  return 'other';
}

/** What the audit log records of a finished HTTP response (499: the client left before it). */
function httpOutcome(ctx: GatewayContext, res: ServerResponse): Parameters<Admission['done']>[0] {
  const length = Number(res.getHeader('content-length'));
  return {
    status: res.headersSent ? res.statusCode : 499,
    ...(Number.isSafeInteger(length) ? { bytesOut: length } : {}),
    ...ctx.auditTiming(res),
  };
}

/** The request listener: counts the request in flight until its response is done, and answers every error. */
export function createHttpHandler(ctx: GatewayContext, shm: SharedMemoryRegistry | undefined): HttpHandler {
  return (req, res) => {
    const done = ctx.begin();
    servingOn(req.socket, res);
    const arrived = performance.now();
    let admission: Admission | undefined;
    let closed = false;
    res.once('close', () => {
      closed = true;
      admission?.done(httpOutcome(ctx, res));
      done();
      ctx.metrics?.record(
        'http',
        routeLabel(path),
        String(res.statusCode),
        (performance.now() - arrived) * 1000,
        ctx.inferTimes.get(res),
      );
    });
    // While draining, clients are told to take their next request elsewhere.
    if (ctx.draining) res.setHeader('Connection', 'close');
    let path = '/';
    try {
      path = new URL(req.url ?? '/', 'http://gateway').pathname;
    } catch {
      // A request line Node accepted but URL does not: 404 below.
    }
    const serve = async () => {
      // The OpenAI routes (/v1/) admit their requests themselves.
      if (ctx.guard !== undefined && !path.startsWith('/v1/')) {
        const request = httpGuardRequest(req, path);
        res.setHeader('X-Request-Id', request.requestId);
        const admitted = await ctx.guard.admit(request);
        // The client left while its credentials were checked: ended here.
        if (closed) return admitted.done(httpOutcome(ctx, res));
        admission = admitted;
        keepAdmission(res, admitted);
        if (request.bytesIn === undefined) chargeBody(req, admitted);
      }
      await route(ctx, shm, req, res, path);
      if (!res.headersSent && !res.destroyed) sendEmpty(res, 200);
    };
    serve().catch((err) => sendError(ctx, res, err, `${req.method} ${path}`));
  };
}
