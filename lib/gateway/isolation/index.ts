/**
 * The isolating front: tenant groups, each served by a server process of its
 * own (its own Triton, models and GPUs), supervised by this process, which
 * embeds no Triton for them. Clients talk KServe v2 HTTP to the front; each
 * request goes to its group's process over a Unix socket, binary tensors
 * through shared memory. See docs/isolation.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { optionError } from '../../base/errors.js';
import { GatewayError, type Wording, badRequest, errorMessage, httpStatus } from '../errors.js';
import type { GrpcServerLike } from '../grpc.js';
import { chargeBody } from '../guard/routes.js';
import type { Admission } from '../guard/types.js';
import type { HttpHandler } from '../http.js';
import { GroupProcess, type GroupStatus } from './group.js';
import { addIsolatedGrpcService } from './grpc.js';
import { type IsolatedGatewayOptions, type ResolvedIsolation, resolveIsolation } from './options.js';
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

const MODEL_ROUTE =
  /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]*))?(?:\/(ready|config|stats|infer|generate_stream|generate))?\/?$/;
/** The groups' gateways serve the repository routes: the front's own answers (a hidden model's) say so as theirs do. */
const HTTP_WORDS: Wording = { protocol: 'http', repositoryControl: true };

const REPOSITORY_ROUTE = /^\/v2\/repository\/models\/([^/]+)\/(load|unload)\/?$/;

/** What the front knows of a request before sending it on. */
export interface Target {
  route: string;
  model?: string;
  version?: string;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest(`malformed percent-encoding in the path: '${text}'`);
  }
}

/** The route label (as the guard names routes) and the model of a path. */
export function classify(path: string): Target {
  if (path === '/v2/models/stats') return { route: 'model_stats' };
  let m = MODEL_ROUTE.exec(path);
  if (m) {
    const route = m[3] === undefined ? 'model_metadata' : m[3] === 'infer' ? 'infer' : `model_${m[3]}`;
    const target: Target = { route, model: decode(m[1]!) };
    if (m[2] !== undefined && m[2] !== '') target.version = decode(m[2]);
    return target;
  }
  m = REPOSITORY_ROUTE.exec(path);
  if (m) return { route: `repository_${m[2]}`, model: decode(m[1]!) };
  if (path.startsWith('/v2/health/')) return { route: 'health' };
  if (path === '/metrics') return { route: 'metrics' };
  if (path === '/v2/repository/index') return { route: 'repository_index' };
  if (path.includes('sharedmemory')) return { route: 'shared_memory' };
  if (path === '/v2' || path === '/v2/') return { route: 'server' };
  return { route: 'other' };
}

/** The front's state: its groups, routing and the requests in flight. @internal */
export class Front {
  readonly options: ResolvedIsolation;
  readonly groups: GroupProcess[];
  readonly #byTenant = new Map<string, GroupProcess>();
  readonly #socketDir: string;
  #lastRefresh = 0;
  inFlight = 0;
  draining = false;
  #idle: Array<() => void> = [];

  constructor(options: ResolvedIsolation) {
    this.options = options;
    // A directory of this user's alone (mode 0700): no other local user can
    // reach a group's socket.
    this.#socketDir = mkdtempSync(join(tmpdir(), 'triton-node-isolation-'));
    const log = (group: string) => (event: string, detail: object) => {
      try {
        const level = event.startsWith('group ready') || event === 'group stopped' ? 'info' : 'warn';
        options.logger[level]?.({ group, ...detail }, event);
      } catch {
        // A failing logger must not stop the supervisor.
      }
    };
    this.groups = options.groups.map((g) => new GroupProcess(g, options, this.#socketDir, log(g.name)));
    for (const g of this.groups) for (const t of g.config.tenants) this.#byTenant.set(t, g);
  }

  async start(): Promise<void> {
    const results = await Promise.allSettled(this.groups.map((g) => g.start()));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [errorMessage(r.reason)] : []));
    if (failed.length === 0) return;
    await this.stop();
    throw new Error(`the isolated groups did not start: ${failed.join('; ')}`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.groups.map((g) => g.stop(this.options.stopTimeoutMs)));
    rmSync(this.#socketDir, { recursive: true, force: true });
  }

  begin(): () => void {
    this.inFlight++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
    };
  }

  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** The group a request goes to; undefined for a server-wide route with nothing to choose by. */
  choose(
    headers: Record<string, unknown>,
    admission: Admission | undefined,
    target: Target,
  ): GroupProcess | undefined {
    if (admission !== undefined) {
      const group = this.#byTenant.get(admission.tenant);
      // Health, metrics and server metadata may be open to callers of no group:
      // they see the whole front (server metadata: any group's, one library).
      const serverWide = target.route === 'health' || target.route === 'metrics' || target.route === 'server';
      if (group === undefined && serverWide) return undefined;
      if (group === undefined) {
        throw new GatewayError(403, `tenant '${admission.tenant}' is in no isolated group`, 'UNAVAILABLE');
      }
      return group;
    }
    const header = headers['x-triton-group'];
    if (this.options.groupHeader && typeof header === 'string') {
      const group = this.groups.find((g) => g.name === header);
      if (group === undefined) throw badRequest(`unknown group '${header}' in x-triton-group`);
      return group;
    }
    if (target.model === undefined) return undefined;
    const group = this.#byModel(target.model);
    if (group === undefined) {
      throw new GatewayError(404, `Request for unknown model: '${target.model}' is not found`, 'NOT_FOUND');
    }
    return group;
  }

  #byModel(model: string): GroupProcess | undefined {
    const found = this.groups.find((g) => g.models.includes(model));
    if (found !== undefined) return found;
    // A model loaded since a process said what it has: ask again, at most once a second.
    if (Date.now() - this.#lastRefresh >= 1000) {
      this.#lastRefresh = Date.now();
      for (const g of this.groups) void g.refreshModels();
    }
    return undefined;
  }
}

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
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  group: GroupProcess | undefined,
  admission: Admission | undefined,
): Promise<boolean> {
  if (path === '/v2/health/live') {
    sendEmpty(res, 200);
    return true;
  }
  if (path === '/v2/health/ready') {
    const groups = group === undefined ? front.groups : [group];
    sendEmpty(res, !front.draining && groups.every((g) => g.ready) ? 200 : 400);
    return true;
  }
  if (path.includes('sharedmemory')) {
    throw new GatewayError(
      501,
      'the shared memory extensions are not served by an isolating front (send the tensors in the body)',
      'UNSUPPORTED',
    );
  }
  if (path === '/metrics' && group === undefined) {
    const text = await groupMetrics(front.groups);
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(text);
    return true;
  }
  if (path === '/v2/repository/index' || path === '/v2/models/stats') {
    // Answered here, a group's too: its process has no guard, and tenants of
    // one group may see different models of it.
    if (group !== undefined) group.lease(); // 503 naming the exit while it restarts
    const groups = group === undefined ? front.groups : [group];
    const doc = visibleOnly(await mergedDocument(groups, req, path, front.options.maxBodyBytes), admission);
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

/** Serves one request: admit, choose the group, answer or forward. */
async function serve(
  front: Front,
  req: IncomingMessage,
  res: ServerResponse,
  admitted: (a: Admission) => void,
): Promise<void> {
  // The path as the group's gateway will read it (WHATWG URL: dot segments,
  // `%2e%2e` and backslashes resolved), and that path is what is forwarded:
  // the route the front checks is the route the process serves.
  const parsed = requestUrl(req.url ?? '/');
  const path = parsed.pathname;
  const url = `${parsed.pathname}${parsed.search}`;
  const target = classify(path);
  const requestId = (req.headers['x-request-id'] as string | undefined) ?? randomUUID();
  const length = Number(req.headers['content-length']);
  const admission = await front.options.guard?.admit({
    protocol: 'http',
    route: target.route,
    ...(target.model === undefined ? {} : { model: target.model }),
    ...(target.version === undefined ? {} : { version: target.version }),
    headers: req.headers,
    ...(Number.isSafeInteger(length) ? { bytesIn: length } : {}),
    ...(req.socket.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress }),
    requestId,
  });
  if (admission !== undefined) {
    admitted(admission);
    chargeBody(req, admission);
  }
  if (front.draining && target.route !== 'health') {
    throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
  }
  let group = front.choose(req.headers, admission, target);
  if (await serverWide(front, req, res, path, group, admission)) return;
  if (group === undefined) {
    // Server metadata: any ready group's (they run the same library).
    group = front.groups.find((g) => g.ready) ?? front.groups[0]!;
  }
  await forward(group, req, res, {
    infer: target.route === 'infer',
    maxBodyBytes: front.options.maxBodyBytes,
    path: url,
  });
}

function handlerOf(front: Front): HttpHandler {
  return (req, res) => {
    const done = front.begin();
    let admission: Admission | undefined;
    let error: string | undefined;
    let closed = false;
    const outcome = () => {
      const bytesOut = Number(res.getHeader('content-length'));
      return {
        status: res.headersSent ? res.statusCode : 499,
        ...(Number.isSafeInteger(bytesOut) ? { bytesOut } : {}),
        ...(error === undefined ? {} : { error }),
      };
    };
    res.once('close', () => {
      closed = true;
      done();
      admission?.done(outcome());
    });
    if (front.draining) res.setHeader('Connection', 'close');
    serve(front, req, res, (a) => {
      // The client left while its credentials were checked: ended here.
      if (closed) a.done(outcome());
      else admission = a;
    }).catch((err) => {
      error = errorMessage(err, HTTP_WORDS);
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
      return front.inFlight;
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
        front.idle().then(() => true),
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
