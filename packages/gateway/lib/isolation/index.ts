/**
 * The isolating front: tenant groups, each served by a server process of its
 * own (its own Triton, models and GPUs), supervised by this process, which
 * embeds no Triton for them. Clients talk KServe v2 HTTP to the front; each
 * request goes to its group's process over a Unix socket, binary tensors
 * through shared memory. See docs/isolation.md.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { optionError } from 'triton-node/internal';
import { GatewayError, type Wording, badRequest, errorMessage, httpStatus } from '../errors.js';
import { Exchange } from '../exchange.js';
import type { GrpcServerLike } from '../grpc/service.js';
import type { AuditOutcome } from '../guard/types.js';
import { type HttpHandler, httpGuardContext } from '../http/server.js';
import { asAnswered } from '../kserve/absent.js';
import { OTHER, ROUTES, type RouteMatch, matchHttp } from '../routes.js';
import { Front } from './front.js';
import type { GroupProcess, GroupStatus } from './group.js';
import { addIsolatedGrpcService } from './grpc.js';
import { type IsolatedGatewayOptions, resolveIsolation } from './options.js';
import { forward } from './proxy.js';
import { groupMetrics, mergedDocument, visibleOnly } from './server-wide.js';

export type {
  IsolatedGatewayOptions,
  IsolatedGroupOptions,
  IsolationSharedMemoryOptions,
  RestartPolicy,
} from './options.js';
export type { GroupState, GroupStatus } from './group.js';

/** A front over isolated tenant groups. */
export interface IsolatedGateway {
  /** The KServe v2 HTTP routes as a `node:http` request listener (serve it once `start()` resolved). */
  readonly handler: HttpHandler;
  /**
   * Starts every group's process and resolves once all are ready; rejects
   * (with every process stopped) naming each group that could not start.
   */
  start(): Promise<void>;
  /**
   * Adds `inference.GRPCInferenceService` to a `@grpc/grpc-js` Server: each
   * RPC routed as over HTTP to the group's process (which serves gRPC on a
   * socket of its own), ModelStreamInfer by its first message; the shared
   * memory RPCs answer UNIMPLEMENTED. Needs `@grpc/grpc-js` and `@grpc/proto-loader`.
   */
  addToGrpcServer(grpcServer: GrpcServerLike): Promise<void>;
  /** Each group's state, process, restarts and transport counters. */
  groups(): GroupStatus[];
  /** Requests being served now. */
  readonly inFlight: number;
  /** True once `drain()` was called. */
  readonly draining: boolean;
  /**
   * Graceful shutdown: readiness turns false, new requests get 503, the
   * requests in flight finish (up to `timeoutMs`, default 30 s), then each
   * group's process gets SIGTERM (and SIGKILL after `stopTimeoutMs`).
   * Resolves once every process has exited, with whether the requests all
   * finished in time.
   */
  drain(options?: { timeoutMs?: number }): Promise<boolean>;
}

/** The groups' gateways serve the repository routes: the front's own answers (a hidden model's) say so as theirs do. */
const HTTP_WORDS: Wording = { protocol: 'http', repositoryControl: true };

function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (res.destroyed) return;
  const body = JSON.stringify({ error: errorMessage(err, HTTP_WORDS) });
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  };
  const retry = (err as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  if (typeof retry === 'number') headers['Retry-After'] = Math.max(1, Math.ceil(retry));
  res.writeHead(httpStatus(err), headers);
  res.end(body);
}

function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'Content-Length': 0 });
  res.end();
}

/** Routes the front answers itself; false when the request goes to one group. */
async function serverWide(
  front: Front,
  ex: Exchange,
  req: IncomingMessage,
  res: ServerResponse,
  group: GroupProcess | undefined,
): Promise<boolean> {
  const { route, path = '/' } = ex.match;
  if (route === ROUTES.live) {
    sendEmpty(res, 200);
    return true;
  }
  if (route === ROUTES.ready) {
    const groups = group === undefined ? front.groups : [group];
    sendEmpty(res, !front.draining && groups.every((g) => g.ready) ? 200 : 400);
    return true;
  }
  // Whatever route it is, nothing that names shared memory goes to a group.
  if (path.includes('sharedmemory')) {
    throw new GatewayError(
      501,
      'the shared memory extensions are not served by an isolating front (send the tensors in the body)',
      'UNSUPPORTED',
    );
  }
  if (route === ROUTES.metrics && group === undefined) {
    const text = await groupMetrics(front.groups);
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(text);
    return true;
  }
  if (route === ROUTES.index || route === ROUTES.allStats) {
    // Answered here, a group's too: its process has no guard, and tenants of
    // one group may see different models of it.
    if (group !== undefined) group.lease(); // 503 naming the exit while it restarts
    const groups = group === undefined ? front.groups : [group];
    const merged = await mergedDocument(groups, req, path, front.options.maxBodyBytes, ex.bodyCharge);
    const doc = visibleOnly(merged, ex.admission);
    const body = JSON.stringify(doc);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return true;
  }
  return false;
}

function requestUrl(raw: string): URL {
  try {
    return new URL(raw, 'http://front');
  } catch {
    throw badRequest(`malformed request target: '${raw}'`);
  }
}

/**
 * The route of a request and the target to forward: the path as the group's
 * gateway will read it (WHATWG URL: dot segments, `%2e%2e` and backslashes
 * resolved), and that path is what is forwarded: the route the front checks
 * is the route the process serves.
 */
function targetOf(req: IncomingMessage): { match: RouteMatch; url: string } {
  const parsed = requestUrl(req.url ?? '/');
  const path = parsed.pathname;
  const url = `${parsed.pathname}${parsed.search}`;
  const match = matchHttp(path, false);
  if (match.malformed !== undefined)
    throw badRequest(`malformed percent-encoding in the path: '${match.malformed}'`);
  return { match, url };
}

/** What the audit log records of a finished response at the front (499: the client left before it). */
function outcomeOf(ex: Exchange, res: ServerResponse): AuditOutcome {
  const bytesOut = Number(res.getHeader('content-length'));
  return {
    status: res.headersSent ? res.statusCode : 499,
    ...(Number.isSafeInteger(bytesOut) ? { bytesOut } : {}),
    ...(ex.error === undefined ? {} : { error: ex.error }),
  };
}

/** Serves one request: admit, choose the group, answer or forward. */
async function serve(front: Front, ex: Exchange, url: string, req: IncomingMessage, res: ServerResponse) {
  const guard = front.options.guard;
  if (guard !== undefined) {
    const context = httpGuardContext(req, front.options.maxBodyBytes);
    let admitted: boolean;
    try {
      admitted = await ex.admit(guard, context, () => outcomeOf(ex, res));
    } catch (err) {
      throw asAnswered(err, ex.route.name);
    }
    // The client left while its credentials were checked: ended (and audited) there.
    if (!admitted) return;
  }
  if (front.draining && ex.route.name !== ROUTES.live.name) {
    throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
  }
  let group = front.choose(req.headers, ex.admission, ex.match);
  if (await serverWide(front, ex, req, res, group)) return;
  if (group === undefined) {
    // Server metadata: any ready group's (they run the same library).
    group = front.groups.find((g) => g.ready) ?? front.groups[0]!;
  }
  await forward(group, req, res, {
    infer: ex.route === ROUTES.infer,
    maxBodyBytes: front.options.maxBodyBytes,
    path: url,
    charge: ex.bodyCharge,
  });
}

function handlerOf(front: Front): HttpHandler {
  return (req, res) => {
    const done = front.ledger.begin();
    let target: { match: RouteMatch; url: string } | undefined;
    let failure: unknown;
    try {
      target = targetOf(req);
    } catch (err) {
      failure = err;
    }
    const requestId = (req.headers['x-request-id'] as string | undefined) ?? randomUUID();
    const ex = new Exchange('http', target?.match ?? { route: OTHER }, requestId);
    res.once('close', () => {
      done();
      ex.end(outcomeOf(ex, res));
    });
    if (front.draining) res.setHeader('Connection', 'close');
    const served = target === undefined ? Promise.reject(failure) : serve(front, ex, target.url, req, res);
    served.catch((err) => {
      ex.error = errorMessage(err, HTTP_WORDS);
      // Unread request bodies are left; the connection closes after the answer.
      if (!req.complete) res.setHeader('Connection', 'close');
      sendError(res, err);
    });
  };
}

/**
 * Builds a front over isolated tenant groups: each group's Server runs in a
 * process of its own, forked and supervised by this one (restarted with
 * backoff when it dies). Call `start()` before serving `handler`. Option
 * mistakes throw a TypeError.
 *
 * ```ts
 * const front = createIsolatedGateway({
 *   groups: {
 *     a: { tenants: ['alice'], server: { modelRepository: '/models/a' }, env: { CUDA_VISIBLE_DEVICES: '0' } },
 *     b: { tenants: ['bob'], server: { modelRepository: '/models/b' }, env: { CUDA_VISIBLE_DEVICES: '1' } },
 *   },
 *   guard,
 * });
 * await front.start();
 * http.createServer(front.handler).listen(8000);
 * ```
 */
export function createIsolatedGateway(options: IsolatedGatewayOptions): IsolatedGateway {
  const front = new Front(resolveIsolation(options));
  let stopped: Promise<void> | undefined;
  return {
    handler: handlerOf(front),
    start: () => front.start(),
    addToGrpcServer: (grpcServer) => addIsolatedGrpcService(front, grpcServer),
    groups: () => front.groups.map((g) => g.status()),
    get inFlight() {
      return front.ledger.count;
    },
    get draining() {
      return front.draining;
    },
    async drain(drainOptions = {}) {
      const timeoutMs = drainOptions.timeoutMs ?? 30_000;
      if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
        throw optionError('drain timeoutMs', 'a non-negative number of milliseconds', timeoutMs);
      }
      front.draining = true;
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        front.ledger.idle().then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      stopped ??= front.stop();
      await stopped;
      return finished;
    },
  };
}
