/**
 * Health probes over HTTP (Kubernetes liveness and readiness): a `(req, res)`
 * handler for `node:http` or Express, next to the metrics handler.
 */
import { describe } from '../base/errors.js';
import type { MetricsRequest, MetricsResponse } from '../metrics/metrics.js';

/** The request parts the health handler reads (`node:http` and Express requests fit). */
export interface HealthRequest extends MetricsRequest {
  url?: string;
}

export type HealthHandler = (req: HealthRequest, res: MetricsResponse) => void;

/** What `server.healthHandler()` checks. */
export interface HealthOptions {
  /** Models that must be ready for the server to be ready (each version the server serves by default). */
  models?: readonly string[];
}

/** The checks the handler runs: the server's own and per model. */
export interface HealthChecks {
  isLive(): Promise<boolean>;
  isReady(): Promise<boolean>;
  modelIsReady(name: string): Promise<boolean>;
}

/** What a probe answers, as JSON. */
export interface HealthReport {
  live?: boolean;
  ready?: boolean;
  /** Readiness per model (readiness probes). */
  models?: Record<string, boolean>;
  /** Why a check could not run (a stopped server, for one). */
  error?: string;
}

function modelList(options: HealthOptions): string[] {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `Expected an object { models } for healthHandler options but received ${describe(options)}`,
    );
  }
  const models = options.models ?? [];
  if (!Array.isArray(models) || !models.every((m) => typeof m === 'string' && m !== '')) {
    throw new TypeError(
      `Expected an array of model names for healthHandler options.models but received ${describe(models)}`,
    );
  }
  return [...models];
}

/** Models named in the query (`?model=a&model=b` or `?model=a,b`) besides the configured ones. */
function queriedModels(url: URL): string[] {
  return url.searchParams
    .getAll('model')
    .flatMap((v) => v.split(','))
    .filter((m) => m !== '');
}

async function probe(checks: HealthChecks, live: boolean, models: string[]): Promise<HealthReport> {
  if (live) return { live: await checks.isLive() };
  const [ready, ...each] = await Promise.all([
    checks.isReady(),
    ...models.map((m) => checks.modelIsReady(m)),
  ]);
  const report: HealthReport = { ready: ready === true && each.every((r) => r) };
  if (models.length > 0) report.models = Object.fromEntries(models.map((m, i) => [m, each[i] === true]));
  return report;
}

/**
 * Builds the handler. A path ending in `/live` answers liveness (Triton's
 * server is live); any other path answers readiness: the server is ready and
 * so is every model in `options.models` and in `?model=` of the request. 200
 * when the check passes, 503 when it does not or cannot run (a stopped
 * server), 405 for methods other than GET and HEAD; the body is a JSON
 * `HealthReport`. It never throws and leaves no rejected Promise behind.
 */
export function createHealthHandler(checks: HealthChecks, options: HealthOptions = {}): HealthHandler {
  const configured = modelList(options);
  return (req, res) => {
    const send = (status: number, body: string, type = 'application/json') => {
      try {
        res.statusCode = status;
        res.setHeader('Content-Type', type);
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Content-Length', Buffer.byteLength(body));
        res.end(method === 'HEAD' ? undefined : body);
      } catch {
        // The connection is gone; nothing left to tell anyone.
      }
    };
    const method = (req?.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(405, `Method ${method} not allowed: use GET\n`, 'text/plain; charset=utf-8');
      return;
    }
    let url: URL;
    try {
      url = new URL(req?.url ?? '/', 'http://probe');
    } catch {
      url = new URL('http://probe/');
    }
    const live = /\/live\/?$/.test(url.pathname);
    const models = [...new Set([...configured, ...queriedModels(url)])];
    probe(checks, live, models).then(
      (report) => send((live ? report.live : report.ready) ? 200 : 503, `${JSON.stringify(report)}\n`),
      (err: unknown) => {
        const report: HealthReport = live ? { live: false } : { ready: false };
        report.error = err instanceof Error ? err.message : String(err);
        send(503, `${JSON.stringify(report)}\n`);
      },
    );
  };
}
