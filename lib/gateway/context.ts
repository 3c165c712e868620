/**
 * What every part of the gateway shares: the server, the options, the
 * logger, and the ledger of requests in flight that a graceful shutdown
 * drains.
 */
import type { InferRequest, InferResult, Server } from 'triton-node';
import type { Guard } from './guard/types.js';
import type { GatewayMetrics } from './metrics.js';
import type { OpenAIRoutes } from './openai/routes.js';

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
}

export class GatewayContext {
  readonly server: Server;
  readonly options: ResolvedGatewayOptions;
  readonly logger: GatewayLogger;
  /** The gateway's own metrics (undefined when turned off). */
  readonly metrics: GatewayMetrics | undefined;
  /** Per response: how long its inference took in the library, µs (for the overhead metric). */
  readonly inferTimes = new WeakMap<object, number>();
  /** Per response: Triton's queue and compute time of its inference, µs (for the audit line; with a guard). */
  readonly inferSplits = new WeakMap<object, { queueUs: number; computeUs: number }>();
  /** Authentication, tenants, limits and audit (undefined: no auth, every model open to all). */
  guard?: Guard;
  /** Requests being served now (HTTP requests, gRPC calls, streams). */
  inFlight = 0;
  /** Set by drain(): readiness answers false and new inference is refused. */
  draining = false;
  /** Cancels each open stream (a shutdown past its deadline calls them). */
  readonly cancels = new Set<() => void>();
  /** The OpenAI-compatible routes under `/v1/` (undefined when `options.openai` is not set). */
  openai: OpenAIRoutes | undefined;
  #idle: Array<() => void> = [];

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
  }

  /**
   * With a guard, inferences ask Triton for their timing (a timestamps
   * trace), so that the audit line has the queue and compute time.
   */
  wantTiming(request: InferRequest): void {
    if (this.guard !== undefined && request.timing === undefined) request.timing = true;
  }

  /** Keeps a result's queue and compute time for `key`'s audit line. */
  keepTiming(key: object, result: InferResult): void {
    const t = result.timing;
    if (t === undefined) return;
    const computeUs = t.computeInputUs + t.computeInferUs + t.computeOutputUs;
    this.inferSplits.set(key, { queueUs: Math.round(t.queueUs), computeUs: Math.round(computeUs) });
  }

  /** What the audit line says of an inference's time: Triton's split when known, else its time in the library. */
  auditTiming(key: object): { queueUs?: number; computeUs?: number } {
    const split = this.inferSplits.get(key);
    if (split !== undefined) return split;
    const us = this.inferTimes.get(key);
    return us === undefined ? {} : { computeUs: Math.round(us) };
  }

  /** Counts a request in flight; the returned function (call it once) counts it out. */
  begin(): () => void {
    this.inFlight++;
    this.metrics?.inFlight(this.inFlight);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inFlight--;
      this.metrics?.inFlight(this.inFlight);
      if (this.inFlight === 0) {
        const waiting = this.#idle;
        this.#idle = [];
        for (const wake of waiting) wake();
      }
    };
  }

  /** Resolves once nothing is in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  log(level: keyof GatewayLogger, obj: object, msg: string): void {
    try {
      this.logger[level]?.(obj, msg);
    } catch {
      // A failing logger must not fail a request.
    }
  }
}
