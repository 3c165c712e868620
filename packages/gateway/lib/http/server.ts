/**
 * The gateway's HTTP/REST side as a `node:http` request listener: each
 * request's path is matched once against the route table (routes.ts), its
 * Exchange made, admitted by the guard (the KServe routes here, the OpenAI
 * routes in their own router, after their route is known), and handed to
 * the route's handler (kserve.ts). When the response is done, the exchange
 * writes the audit line and the metrics.
 *
 * Statuses follow Triton's HTTP server: errors carry `{"error": "..."}`
 * with the status of their Triton code (kserve/errors.ts), health endpoints
 * answer 200 or 400 with no body, an unknown path 404, a wrong method 405.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { Exchange, type GuardContext, requestIdOf } from '../exchange.js';
import type { AuditOutcome } from '../guard/types.js';
import { asAnswered } from '../kserve/absent.js';
import type { SharedMemoryRegistry } from '../kserve/shared-memory.js';
import { matchHttp } from '../routes.js';
import { HANDLERS, type HttpCall } from './kserve.js';
import { sendEmpty, sendError } from './respond.js';

/** A `node:http` request listener. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The path of a request target, as WHATWG URL resolves it ('/' when unreadable: 404). */
function pathOf(url: string | undefined): string {
  try {
    return new URL(url ?? '/', 'http://gateway').pathname;
  } catch {
    // A request line Node accepted but URL does not.
    return '/';
  }
}

/** What the audit log records of a finished HTTP response (499: the client left before it). */
function httpOutcome(ex: Exchange, res: ServerResponse): AuditOutcome {
  const length = Number(res.getHeader('content-length'));
  return {
    status: res.headersSent ? res.statusCode : 499,
    ...(Number.isSafeInteger(length) ? { bytesOut: length } : {}),
    ...ex.timing(),
  };
}

/**
 * What the guard is told of an HTTP request besides its route: its headers,
 * its peer, and the size its Content-Length declares for a body the gateway
 * would read (at most `maxBodyBytes`: a larger one is answered 413 before a
 * byte is read, and costs the tenant nothing). The body is charged as it is
 * read, never for what it declares (`bodyUnread`).
 */
export function httpGuardContext(req: IncomingMessage, maxBodyBytes: number): GuardContext {
  const length = Number(req.headers['content-length']);
  const declared = Number.isSafeInteger(length) && length >= 0 && length <= maxBodyBytes;
  return {
    headers: req.headers,
    ...(declared ? { bytesIn: length, bodyUnread: true } : {}),
    ...(req.socket?.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress }),
  };
}

/** A KServe route's request: admitted (with a guard), then served by the route's handler. */
async function serveKServe(call: HttpCall): Promise<void> {
  const { ctx, ex, req, res } = call;
  const guard = ctx.guard;
  if (guard !== undefined) {
    res.setHeader('X-Request-Id', ex.requestId);
    let admitted: boolean;
    try {
      const context = httpGuardContext(req, ctx.options.maxBodyBytes);
      admitted = await ex.admit(guard, context, () => httpOutcome(ex, res));
    } catch (err) {
      throw asAnswered(err, ex.route.name);
    }
    // The client left while its credentials were checked: ended (and audited) there.
    if (!admitted) return;
  }
  const handler = HANDLERS.get(ex.route);
  if (handler === undefined) throw new GatewayError(404, 'Not Found', 'NOT_FOUND');
  await handler(call);
  if (!res.headersSent && !res.destroyed) sendEmpty(res, 200);
}

/** The request listener: counts the request in flight until its response is done, and answers every error. */
export function createHttpHandler(ctx: GatewayContext, shm: SharedMemoryRegistry | undefined): HttpHandler {
  return (req, res) => {
    const done = ctx.ledger.begin();
    const socket = req.socket;
    ctx.serving.add(socket);
    const path = pathOf(req.url);
    const match = matchHttp(path, ctx.openai !== undefined);
    const ex = new Exchange('http', match, requestIdOf(req.headers['x-request-id']), ctx.metrics);
    ctx.traceExchange(ex, req.headers.traceparent);
    res.once('close', () => {
      ctx.serving.delete(socket);
      // The OpenAI routes end their exchanges themselves (the audit line has their tokens).
      if (match.route.family === 'kserve') ex.end(httpOutcome(ex, res));
      done();
      ex.record(String(res.statusCode));
    });
    // While draining, clients are told to take their next request elsewhere.
    if (ctx.draining) res.setHeader('Connection', 'close');
    if (match.route.family === 'openai' && ctx.openai !== undefined) {
      void ctx.openai.handle(ex, req, res);
      return;
    }
    serveKServe({ ctx, shm, ex, req, res }).catch((err) => sendError(ctx, res, err, `${req.method} ${path}`));
  };
}
