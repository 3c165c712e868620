/**
 * What every part of the gateway shares: the server, the options, the
 * logger, the guard and the metrics, and the ledger of requests in flight
 * that a graceful shutdown drains. A request's own state is its Exchange
 * (exchange.ts), never kept here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from 'triton-node';
import { isTraceparent } from 'triton-node/internal';
import { type Exchange, InFlight } from './exchange.js';
import type { Guard } from './guard/types.js';
import type { GatewayMetrics } from './metrics.js';
import type { ResolvedStreamOptions } from './slow-client.js';
import { type TraceOptions, TraceSettings } from './trace/settings.js';

/** The logger the gateway writes to: pino's shape (`logger.info({ ... }, 'message')`), any subset of levels. */
export interface GatewayLogger {
  debug?(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
  warn?(obj: object, msg?: string): void;
  error?(obj: object, msg?: string): void;
}

/** The gateway's settings once defaults are filled in. */
export interface ResolvedGatewayOptions {
  maxBodyBytes: number;
  repositoryControl: boolean;
  sharedMemory: boolean;
  metrics: boolean;
  /** What a streamed answer may hold for a slow client, and how long it waits for one (slow-client.ts). */
  streams: ResolvedStreamOptions;
  /** The trace extension's global setting at start (trace/settings.ts). */
  trace?: TraceOptions;
}

/** Routes served beside the KServe ones, by path family (the OpenAI routes under `/v1/`). */
export interface ExtraRoutes {
  /** Serves one request; answers every error itself (never rejects). */
  handle(exchange: Exchange, req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export class GatewayContext {
  readonly server: Server;
  readonly options: ResolvedGatewayOptions;
  readonly logger: GatewayLogger;
  /** The gateway's own metrics (undefined when turned off). */
  readonly metrics: GatewayMetrics | undefined;
  /** Authentication, tenants, limits and audit (undefined: no auth, every model open to all). */
  guard?: Guard;
  /** The requests being served now (HTTP requests, gRPC calls, streams): what a drain waits for. */
  readonly ledger: InFlight;
  /** Set by drain(): readiness answers false and new inference is refused. */
  draining = false;
  /** Cancels each open stream (a shutdown past its deadline calls them). */
  readonly cancels = new Set<() => void>();
  /** Sockets with an HTTP request being served: a client error on one is that request's (the guard's clientError). */
  readonly serving = new WeakSet<object>();
  /** The OpenAI-compatible routes under `/v1/` (undefined when `options.openai` is not set). */
  openai: ExtraRoutes | undefined;
  /** The trace extension's settings (trace/settings.ts). */
  readonly trace: TraceSettings;

  constructor(
    server: Server,
    options: ResolvedGatewayOptions,
    logger: GatewayLogger,
    metrics: GatewayMetrics | undefined,
  ) {
    this.server = server;
    this.options = options;
    this.logger = logger;
    this.metrics = metrics;
    this.ledger = new InFlight(metrics);
    this.trace = new TraceSettings(options.trace);
  }

  /** Lets the trace settings decide whether `ex`'s inference is traced, under `traceparent` when valid. */
  traceExchange(ex: Exchange, traceparent: unknown): void {
    ex.tracing = this.trace;
    if (typeof traceparent === 'string' && isTraceparent(traceparent)) ex.traceparent = traceparent;
  }

  /** Requests being served now (HTTP requests, gRPC calls, streams). */
  get inFlight(): number {
    return this.ledger.count;
  }

  log(level: keyof GatewayLogger, obj: object, msg: string): void {
    try {
      this.logger[level]?.(obj, msg);
    } catch {
      // A failing logger must not fail a request.
    }
  }
}
