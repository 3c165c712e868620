/**
 * The gateway's routes, once: each with its name (what the guard, its `open`
 * list and the audit log call it), its label in the gateway's metrics, its
 * HTTP method and path, and its gRPC method. The HTTP listener, the gRPC
 * service, the guard, the metrics, the audit log and the isolating front
 * all read routes from this table; a request's path is matched against it
 * once, and what the match found travels with the request (its Exchange).
 */
import { badRequest } from './errors.js';

/** How a request reached the gateway. */
export type Protocol = 'http' | 'grpc';

/** One route of the table. */
export interface Route {
  /** The route's name for the guard (`GuardRequest.route`, `guard.open`) and the audit log. */
  readonly name: string;
  /** Its `route` label in `triton_node_gateway_requests_total` over HTTP. */
  readonly metric: string;
  /**
   * `METHOD /path` over HTTP: `{model}`, `{version}`, `{region}` and `{id}`
   * name a segment, `[...]` is optional. Absent: not an HTTP route.
   */
  readonly http?: string;
  /** The method of `inference.GRPCInferenceService` (absent: not a gRPC route). */
  readonly rpc?: string;
  /** Which routes serve it over HTTP: the KServe v2 ones, or the OpenAI-compatible ones under `/v1/`. */
  readonly family: 'kserve' | 'openai';
}

/** A model route's path: the model and, optionally, its version (an empty version is the server's choice). */
const MODEL = '/v2/models/{model}[/versions/{version}]';

function kserve(name: string, metric: string, http?: string, rpc?: string): Route {
  return { name, metric, family: 'kserve', ...(http === undefined ? {} : { http }), ...(rpc ? { rpc } : {}) };
}

function openai(name: string, http: string): Route {
  return { name, metric: 'openai', http, family: 'openai' };
}

/**
 * Every route, in the order an HTTP path is matched against them (only
 * `/v2/models/stats` needs it: it would also be the metadata of a model
 * named "stats").
 */
export const ROUTES = {
  live: kserve('health', 'health', 'GET /v2/health/live', 'ServerLive'),
  ready: kserve('health', 'health', 'GET /v2/health/ready', 'ServerReady'),
  server: kserve('server', 'server', 'GET /v2[/]', 'ServerMetadata'),
  allStats: kserve('model_stats', 'model', 'GET /v2/models/stats'),
  modelMetadata: kserve('model_metadata', 'model', `GET ${MODEL}[/]`, 'ModelMetadata'),
  modelReady: kserve('model_ready', 'model', `GET ${MODEL}/ready[/]`, 'ModelReady'),
  modelConfig: kserve('model_config', 'model', `GET ${MODEL}/config[/]`, 'ModelConfig'),
  modelStats: kserve('model_stats', 'model', `GET ${MODEL}/stats[/]`, 'ModelStatistics'),
  infer: kserve('infer', 'infer', `POST ${MODEL}/infer[/]`, 'ModelInfer'),
  generateStream: kserve('generate_stream', 'generate_stream', `POST ${MODEL}/generate_stream[/]`),
  generate: kserve('generate', 'generate', `POST ${MODEL}/generate[/]`),
  streamInfer: kserve('stream_infer', 'stream_infer', undefined, 'ModelStreamInfer'),
  index: kserve('repository_index', 'repository', 'POST /v2/repository/index', 'RepositoryIndex'),
  load: kserve(
    'repository_load',
    'repository',
    'POST /v2/repository/models/{model}/load[/]',
    'RepositoryModelLoad',
  ),
  unload: kserve(
    'repository_unload',
    'repository',
    'POST /v2/repository/models/{model}/unload[/]',
    'RepositoryModelUnload',
  ),
  systemStatus: kserve(
    'shared_memory',
    'shared_memory',
    'GET /v2/systemsharedmemory[/region/{region}]/status[/]',
    'SystemSharedMemoryStatus',
  ),
  systemRegister: kserve(
    'shared_memory',
    'shared_memory',
    'POST /v2/systemsharedmemory[/region/{region}]/register[/]',
    'SystemSharedMemoryRegister',
  ),
  systemUnregister: kserve(
    'shared_memory',
    'shared_memory',
    'POST /v2/systemsharedmemory[/region/{region}]/unregister[/]',
    'SystemSharedMemoryUnregister',
  ),
  cudaStatus: kserve(
    'shared_memory',
    'shared_memory',
    'GET /v2/cudasharedmemory[/region/{region}]/status[/]',
    'CudaSharedMemoryStatus',
  ),
  cudaRegister: kserve(
    'shared_memory',
    'shared_memory',
    'POST /v2/cudasharedmemory[/region/{region}]/register[/]',
    'CudaSharedMemoryRegister',
  ),
  cudaUnregister: kserve(
    'shared_memory',
    'shared_memory',
    'POST /v2/cudasharedmemory[/region/{region}]/unregister[/]',
    'CudaSharedMemoryUnregister',
  ),
  metrics: kserve('metrics', 'metrics', 'GET /metrics'),
  // GET reads the settings, POST updates them (trace/http.ts checks the method).
  traceSetting: kserve('trace_setting', 'trace', 'GET /v2/trace/setting', 'TraceSetting'),
  modelTraceSetting: kserve('trace_setting', 'trace', `GET ${MODEL}/trace/setting`),
  // GET reads Triton's log settings, POST changes them (http/logging.ts checks the method).
  logging: kserve('logging', 'logging', 'GET /v2/logging', 'LogSettings'),
  // The OpenAI routes take one trailing slash after any of their paths.
  openaiModels: openai('openai_models', 'GET /v1/models'),
  openaiModel: openai('openai_models', 'GET /v1/models/{id}'),
  completions: openai('openai_completions', 'POST /v1/completions'),
  chat: openai('openai_chat', 'POST /v1/chat/completions'),
  embeddings: openai('openai_embeddings', 'POST /v1/embeddings'),
} as const satisfies Record<string, Route>;

/** A path no route has (404); the OpenAI routes answer theirs in their own shape. */
export const OTHER: Route = kserve('other', 'other');
const OPENAI_OTHER: Route = { name: 'other', metric: 'openai', family: 'openai' };

/**
 * A path that looks like a shared memory route but is none: named as one
 * (admin only), so that a tenant who may not use shared memory learns
 * nothing of it, and the isolating front never passes it on.
 */
const SHARED_MEMORY_OTHER: Route = kserve('shared_memory', 'shared_memory');

/** What matching a request found: its route and the path's parameters, percent-decoded. */
export interface RouteMatch {
  readonly route: Route;
  /** The HTTP path it was matched on. */
  readonly path?: string;
  readonly model?: string;
  /** The version as given ('' is the server's choice); parsed by the route (a bad one answers 400). */
  readonly version?: string;
  readonly region?: string;
  /** An OpenAI model id (`/v1/models/{id}`). */
  readonly id?: string;
  /** A segment whose percent-encoding is malformed: the route answers 400 for it (after admission). */
  readonly malformed?: string;
}

interface Compiled {
  route: Route;
  method: 'GET' | 'POST';
  pattern: RegExp;
  names: string[];
}

/** `{model}` and the like become capture groups, `[...]` an optional group, the rest is literal. */
function compile(route: Route): Compiled {
  const [method, template] = route.http!.split(' ') as ['GET' | 'POST', string];
  const names: string[] = [];
  const source = template
    .replace(/[.*+?^$()|\\]/g, '\\$&')
    .replace(/\[/g, '(?:')
    .replace(/\]/g, ')?')
    .replace(/\{(\w+)\}/g, (_, name: string) => {
      names.push(name);
      // A version may be empty; an OpenAI model id may hold slashes (`org/model`).
      return name === 'version' ? '([^/]*)' : name === 'id' ? '(.+?)' : '([^/]+)';
    });
  return { route, method, pattern: new RegExp(`^${source}${route.family === 'openai' ? '/?' : ''}$`), names };
}

const HTTP_ROUTES: Compiled[] = Object.values(ROUTES as Record<string, Route>)
  .filter((r) => r.http !== undefined)
  .map(compile);

/** The HTTP method of a route (undefined: not an HTTP route). */
export function methodOf(route: Route): 'GET' | 'POST' | undefined {
  return HTTP_ROUTES.find((c) => c.route === route)?.method;
}

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * The route of an HTTP path (already resolved: `new URL()`'s pathname) and
 * its parameters. `openai`: whether the OpenAI routes are served (else a
 * `/v1/` path is a KServe path like any other, which none has).
 */
export function matchHttp(path: string, openai: boolean): RouteMatch {
  const family = openai && path.startsWith('/v1/') ? 'openai' : 'kserve';
  for (const c of HTTP_ROUTES) {
    if (c.route.family !== family) continue;
    const m = c.pattern.exec(path);
    if (m === null) continue;
    const params: Record<string, string> = {};
    let malformed: string | undefined;
    for (const [i, name] of c.names.entries()) {
      const raw = m[i + 1];
      if (raw === undefined) continue;
      const text = decoded(raw);
      if (text === undefined) malformed ??= raw;
      else params[name] = text;
    }
    return { route: c.route, path, ...params, ...(malformed === undefined ? {} : { malformed }) };
  }
  if (family === 'openai') return { route: OPENAI_OTHER, path };
  return { route: path.includes('sharedmemory') ? SHARED_MEMORY_OTHER : OTHER, path };
}

const BY_RPC = new Map(
  Object.values(ROUTES as Record<string, Route>).flatMap((r) => (r.rpc === undefined ? [] : [[r.rpc, r]])),
);

/** The route of a gRPC method (one the table does not have is named by the method). */
export function routeOfRpc(rpc: string): Route {
  return BY_RPC.get(rpc) ?? kserve(rpc, rpc, undefined, rpc);
}

/**
 * The route and the model and version a gRPC message names
 * (`model_name`/`model_version` of an inference, `name`/`version` of the
 * others; empty strings name nothing).
 */
export function matchRpc(rpc: string, msg: Record<string, unknown>): RouteMatch {
  const model = msg.model_name ?? msg.name;
  const version = msg.model_version ?? msg.version;
  return {
    route: routeOfRpc(rpc),
    ...(typeof model === 'string' && model !== '' ? { model } : {}),
    ...(typeof version === 'string' && version !== '' ? { version } : {}),
  };
}

/**
 * A route's label in the gateway's metrics: over HTTP its `metric`; a gRPC
 * call is labelled by its method, but for ModelInfer, which shares the
 * label 'infer' with HTTP inference.
 */
export function metricLabel(route: Route, protocol: Protocol): string {
  if (protocol === 'http' || route === ROUTES.infer) return route.metric;
  return route.rpc ?? route.name;
}

/**
 * A version from a path or a message: empty (or none) means the server's
 * choice (-1), as Triton reads it. Parsed by the route, after admission
 * (the guard sees the version as given).
 */
export function parseVersion(text: string | undefined): number {
  if (text === undefined || text === '') return -1;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw badRequest(`failed to get model version from specified version string '${text}'`);
  }
  return Number(text);
}
