/**
 * One request to the gateway, from its arrival to its audit line, as one
 * object filled as the request goes (sharp's baton): the route and the
 * path's parameters (matched once, routes.ts), the request id, the guard's
 * admission, the time its inference took in the library, and what its end
 * reports to the audit log and the metrics. Every route of every protocol
 * reads and writes the request's state here, nowhere else.
 */
import { randomUUID } from 'node:crypto';
import type { InferRequest, InferResult } from 'triton-node';
import { GatewayError } from './errors.js';
import type { Admission, AuditOutcome, Guard, GuardRequest } from './guard/types.js';
import type { GatewayMetrics } from './metrics.js';
import { type Protocol, type Route, type RouteMatch, metricLabel } from './routes.js';
import type { TraceSettings } from './trace/settings.js';

/**
 * Charges the bytes of a request body once they are read (the guard's
 * `bytesPerSecond`, for a body whose size was not known at admission);
 * throws (or rejects with) the error to answer instead: a 429.
 */
export type BodyCharge = (bytes: number, force?: boolean) => void | Promise<void>;

/** A client's request id when it is a short printable token, else a new one. */
export function requestIdOf(given: unknown): string {
  if (typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given)) return given;
  return randomUUID();
}

/** What a protocol tells the guard about a request besides its route: who sends it and how much. */
export interface GuardContext {
  headers: GuardRequest['headers'];
  bytesIn?: number;
  /** `bytesIn` is declared (an HTTP Content-Length), the body not read yet: it is charged as it is read. */
  bodyUnread?: boolean;
  remoteAddress?: string;
}

/** What the guard is told of a request: its route and what the route names, and `context`. */
export function guardRequest(
  protocol: Protocol,
  match: RouteMatch,
  requestId: string,
  context: GuardContext,
): GuardRequest {
  const { model, version } = match;
  return {
    protocol,
    route: match.route.name,
    ...(model === undefined ? {} : { model }),
    ...(version === undefined || version === '' ? {} : { version }),
    headers: context.headers,
    ...(context.bytesIn === undefined ? {} : { bytesIn: context.bytesIn }),
    ...(context.bodyUnread === true ? { bodyUnread: true } : {}),
    ...(context.remoteAddress === undefined ? {} : { remoteAddress: context.remoteAddress }),
    requestId,
  };
}

export class Exchange {
  readonly protocol: Protocol;
  readonly match: RouteMatch;
  readonly requestId: string;
  /** performance.now() at its arrival. */
  readonly arrived = performance.now();
  /** The guard's admission (undefined: no guard, or not admitted yet). */
  admission: Admission | undefined;
  /** Pays for the body when it is read: set when the guard did not charge it at admission (not read then). */
  bodyCharge: BodyCharge | undefined;
  /** How long its inference took in the library, µs: the overhead metric leaves it out. */
  inferUs: number | undefined;
  /** Triton's queue and compute time of its inference, µs (asked for when audited). */
  split: { queueUs: number; computeUs: number } | undefined;
  /** Tokens generated for it (the OpenAI routes), for the audit line. */
  tokens = 0;
  /** The model version that answered, when the audit line names it (the OpenAI routes). */
  modelVersion: string | undefined;
  /** Why it failed, for the audit line (the OpenAI routes, the isolating front). */
  error: string | undefined;
  /** The trace extension's settings, which decide whether its inference is traced (trace/settings.ts). */
  tracing: TraceSettings | undefined;
  /** Its W3C `traceparent` (HTTP header, gRPC metadata), when valid. */
  traceparent: string | undefined;
  readonly #metrics: GatewayMetrics | undefined;
  #ended = false;

  constructor(protocol: Protocol, match: RouteMatch, requestId: string, metrics?: GatewayMetrics) {
    this.protocol = protocol;
    this.match = match;
    this.requestId = requestId;
    this.#metrics = metrics;
  }

  get route(): Route {
    return this.match.route;
  }

  /**
   * Asks `guard` to admit the request and keeps the admission; a request
   * that ended meanwhile (its client left while its credentials were
   * checked) is audited at once with `outcome()`. Resolves with whether the
   * request goes on.
   */
  async admit(guard: Guard, context: GuardContext, outcome: () => AuditOutcome): Promise<boolean> {
    const admission = await guard.admit(guardRequest(this.protocol, this.match, this.requestId, context));
    if (this.#ended) {
      admission.done(outcome());
      return false;
    }
    this.admission = admission;
    // A body not read at admission is charged as it is read: one only declared was admitted on its size.
    const declared = context.bodyUnread === true;
    if (context.bytesIn === undefined || declared) this.bodyCharge = chargeOf(admission, declared);
    return true;
  }

  /** Whether the request's tenant may see `model` (true without a guard). */
  canSee(model: string): boolean {
    return this.admission?.canSee(model) ?? true;
  }

  /**
   * Runs the library's inference of `request` for this request: asks Triton
   * for its timing when the request is audited (the audit line has the
   * queue and compute time), and keeps how long it took.
   */
  async infer<R extends InferResult>(
    request: InferRequest,
    run: (r: InferRequest) => Promise<R>,
  ): Promise<R> {
    if (this.admission !== undefined && request.timing === undefined) request.timing = true;
    const traced = this.tracing?.sample(this.match.model ?? '', this.traceparent);
    traced?.prepare(request);
    const started = performance.now();
    try {
      const result = await run(request);
      traced?.done(result.timing, request.id);
      const t = result.timing;
      if (t !== undefined) {
        const computeUs = t.computeInputUs + t.computeInferUs + t.computeOutputUs;
        this.split = { queueUs: Math.round(t.queueUs), computeUs: Math.round(computeUs) };
      }
      return result;
    } finally {
      this.inferUs = (performance.now() - started) * 1000;
    }
  }

  /** What the audit line says of its inference's time: Triton's split when known, else its time in the library. */
  timing(): { queueUs?: number; computeUs?: number } {
    if (this.split !== undefined) return this.split;
    return this.inferUs === undefined ? {} : { computeUs: Math.round(this.inferUs) };
  }

  /** Ends the request: its audit line (once, with the admission it had), nothing after. */
  end(outcome: AuditOutcome): void {
    if (this.#ended) return;
    this.#ended = true;
    this.admission?.done(outcome);
  }

  /** Counts the answered request in the gateway's metrics (`status`: the HTTP status or the gRPC code). */
  record(status: string): void {
    const durationUs = (performance.now() - this.arrived) * 1000;
    this.#metrics?.record(
      this.protocol,
      metricLabel(this.route, this.protocol),
      status,
      durationUs,
      this.inferUs,
    );
  }
}

/**
 * The charge of a body the guard did not take at admission, or none: a
 * chunked HTTP body (refused with 429 when it does not fit), or one admitted
 * on its declared size (`declared`: taken whatever the buckets hold).
 */
function chargeOf(admission: Admission, declared: boolean): BodyCharge | undefined {
  if (admission.spendBytes === undefined) return undefined;
  return (bytes, force = declared) => {
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
  };
}

/**
 * The requests in flight of a gateway (or of an isolating front): what a
 * graceful shutdown waits for. `gauge` hears the count (the gateway's
 * in-flight metric).
 */
export class InFlight {
  #count = 0;
  #idle: Array<() => void> = [];
  readonly #gauge: { inFlight(count: number): void } | undefined;

  constructor(gauge?: { inFlight(count: number): void }) {
    this.#gauge = gauge;
  }

  get count(): number {
    return this.#count;
  }

  /** Counts a request in; the returned function (call it once) counts it out. */
  begin(): () => void {
    // Counted apart from the gauge: `gauge?.inFlight(++count)` would count nothing without one.
    this.#count++;
    this.#gauge?.inFlight(this.#count);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#count--;
      this.#gauge?.inFlight(this.#count);
      if (this.#count === 0) for (const wake of this.#idle.splice(0)) wake();
    };
  }

  /** Resolves once nothing is in flight. */
  idle(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }
}
