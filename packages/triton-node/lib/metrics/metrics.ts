/**
 * Prometheus metrics: an HTTP handler serving Triton's text (optionally joined
 * with a prom-client registry), custom metrics over Triton's metric-family
 * API, and the streaming histograms recorded by `model.stream()`.
 *
 * Custom metrics live in Triton's own registry, so they appear in
 * `server.metrics()` next to Triton's `nv_*` families with no extra wiring.
 * @packageDocumentation
 */

import {
  METRIC_KINDS,
  type MetricKind,
  type NativeMetric,
  type NativeMetricFamily,
  type NativeServer,
} from '../abi/binding.js';
import { type TritonError, fromNativeError } from '../base/errors.js';
import { is } from '../base/is.js';

/** Content type of the Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A prom-client `Registry` (or anything with the same two members). */
export interface MetricsRegistry {
  metrics(): Promise<string> | string;
  contentType?: string;
}

/** The parts of `http.IncomingMessage` the handler reads (Express's `req` fits). */
export interface MetricsRequest {
  method?: string;
}

/** The parts of `http.ServerResponse` the handler writes (Express's `res` fits). */
export interface MetricsResponse {
  statusCode: number;
  readonly headersSent?: boolean;
  setHeader(name: string, value: string | number): unknown;
  end(body?: string): unknown;
}

export type MetricsHandler = (req: MetricsRequest, res: MetricsResponse) => void;

/** `# TYPE <name> <kind>` lines name every family in a text exposition. */
function familyNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) /gm)) names.add(match[1]!);
  return names;
}

/** Joins two expositions; a family in both would make the result invalid. */
export function joinExpositions(triton: string, other: string): string {
  if (other.trim() === '') return triton;
  const ours = familyNames(triton);
  for (const name of familyNames(other)) {
    if (ours.has(name)) {
      throw new Error(
        `metric family '${name}' is in both Triton's metrics and the registry's; rename the registry's metric`,
      );
    }
  }
  const head = triton === '' || triton.endsWith('\n') ? triton : `${triton}\n`;
  return head + (other.endsWith('\n') ? other : `${other}\n`);
}

/**
 * Builds a `(req, res)` handler for `node:http` or Express that serves
 * `getText()` (Triton's Prometheus text), followed by `registry.metrics()`
 * when a prom-client registry is given. GET and HEAD are served; other
 * methods get 405. Any failure (server stopped, registry error, a family
 * name in both) answers 500 with the message as text: the handler never
 * throws and never leaves a rejected Promise behind.
 */
export function createMetricsHandler(
  getText: () => Promise<string>,
  registry?: MetricsRegistry,
): MetricsHandler {
  if (typeof getText !== 'function') {
    throw new TypeError(`createMetricsHandler: getText must be a function, got ${typeof getText}`);
  }
  if (registry !== undefined) {
    if (typeof registry !== 'object' || registry === null || typeof registry.metrics !== 'function') {
      throw new TypeError('metricsHandler: registry must have a metrics() method (a prom-client Registry)');
    }
    const type = registry.contentType;
    if (type !== undefined && !/^text\/plain\b/.test(type)) {
      // OpenMetrics text cannot be mixed with Triton's 0.0.4 text in one body.
      throw new TypeError(
        `metricsHandler: the registry's content type must be Prometheus text (text/plain; version=0.0.4), ` +
          `got '${type}'`,
      );
    }
  }

  const render = async (): Promise<string> => {
    const [triton, other] = await Promise.all([getText(), registry ? registry.metrics() : '']);
    if (typeof triton !== 'string') throw new Error('Triton returned no metrics text');
    if (typeof other !== 'string') throw new Error('the registry returned no metrics text');
    return joinExpositions(triton, other);
  };

  return (req, res) => {
    const method = (req?.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') {
      res.statusCode = 405;
      res.setHeader('Allow', 'GET, HEAD');
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end(`Method ${method} not allowed: use GET\n`);
      return;
    }
    render().then(
      (body) => {
        res.statusCode = 200;
        res.setHeader('Content-Type', PROMETHEUS_CONTENT_TYPE);
        res.setHeader('Content-Length', Buffer.byteLength(body));
        res.end(method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        try {
          if (res.headersSent) {
            res.end();
            return;
          }
          res.statusCode = 500;
          res.setHeader('Content-Type', 'text/plain; charset=utf-8');
          res.end(`Error collecting metrics: ${err instanceof Error ? err.message : String(err)}\n`);
        } catch {
          // The connection is gone; nothing left to tell anyone.
        }
      },
    );
  };
}

// ---------------------------------------------------------------------------
// Custom metrics
// ---------------------------------------------------------------------------

export type { MetricKind };

/** What `server.createMetric()` takes. */
export interface MetricSpec {
  kind: MetricKind;
  /** Prometheus metric name: [a-zA-Z_:][a-zA-Z0-9_:]*. */
  name: string;
  /** The family's HELP text. */
  description?: string;
  /** Label names and values of this series. */
  labels?: Record<string, string>;
  /** Histograms only: strictly increasing upper bounds (+Inf is implied). */
  buckets?: readonly number[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Native metric errors carry Triton's code; keep it and say which metric. */
function fromNative(err: unknown, what: string): TritonError {
  const out = fromNativeError(err);
  if (!out.message.startsWith(what)) out.message = `${what}: ${out.message}`;
  return out;
}

/**
 * One series of a custom metric family. Counters `increment`, gauges
 * `increment`/`set`, histograms `observe`; a wrong call is a TypeError naming
 * the metric. `dispose()` removes the series from the text; it is idempotent.
 */
export class Metric {
  readonly kind: MetricKind;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** @internal */
  readonly native: NativeMetric;
  #onDispose: (() => void) | undefined;
  #disposed = false;

  /** @internal */
  constructor(
    kind: MetricKind,
    name: string,
    labels: Record<string, string>,
    native: NativeMetric,
    onDispose?: () => void,
  ) {
    this.kind = kind;
    this.name = name;
    this.labels = Object.freeze({ ...labels });
    this.native = native;
    this.#onDispose = onDispose;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  #describe(): string {
    const labels = Object.entries(this.labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(',');
    return `${this.kind} '${this.name}${labels ? `{${labels}}` : ''}'`;
  }

  #check(method: string, value: unknown): number {
    if (this.#disposed) throw new TypeError(`${this.#describe()}: ${method}() after dispose()`);
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new TypeError(`${this.#describe()}: ${method}() needs a finite number, got ${String(value)}`);
    }
    return value;
  }

  /** Counter: adds a non-negative value. Gauge: adds any value. */
  increment(value = 1): void {
    this.#check('increment', value);
    if (this.kind === 'histogram') {
      throw new TypeError(`${this.#describe()}: a histogram cannot be incremented; use observe()`);
    }
    if (this.kind === 'counter' && value < 0) {
      throw new TypeError(`${this.#describe()}: a counter can only go up, got increment(${value})`);
    }
    try {
      this.native.increment(value);
    } catch (err) {
      throw fromNative(err, this.#describe());
    }
  }

  /** Gauge only: sets the value. */
  set(value: number): void {
    this.#check('set', value);
    if (this.kind !== 'gauge') {
      throw new TypeError(
        `${this.#describe()}: only a gauge can be set; ${this.kind === 'counter' ? 'use increment()' : 'use observe()'}`,
      );
    }
    try {
      this.native.set(value);
    } catch (err) {
      throw fromNative(err, this.#describe());
    }
  }

  /** Histogram only: records one observation. */
  observe(value: number): void {
    this.#check('observe', value);
    if (this.kind !== 'histogram') {
      throw new TypeError(`${this.#describe()}: only a histogram can observe; use increment() or set()`);
    }
    try {
      this.native.observe(value);
    } catch (err) {
      throw fromNative(err, this.#describe());
    }
  }

  /** Counter and gauge: the current value (histograms have none in Triton). */
  value(): number {
    if (this.#disposed) throw new TypeError(`${this.#describe()}: value() after dispose()`);
    if (this.kind === 'histogram') {
      throw new TypeError(`${this.#describe()}: a histogram has no single value; read server.metrics()`);
    }
    try {
      return this.native.value();
    } catch (err) {
      throw fromNative(err, this.#describe());
    }
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      this.native.dispose();
    } finally {
      const done = this.#onDispose;
      this.#onDispose = undefined;
      done?.();
    }
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * A custom metric family in Triton's registry. Triton shares a family between
 * every `MetricFamilyNew` of the same name and kind, and a family can only be
 * deleted once its metrics are; this wrapper keeps one native family per name
 * and server, counts its live metrics and deletes it after the last one.
 */
export class MetricFamily {
  readonly kind: MetricKind;
  readonly name: string;
  readonly description: string;
  /** @internal */
  readonly native: NativeMetricFamily;
  #live = 0;
  #disposed = false;
  #onEmpty: (() => void) | undefined;

  /** @internal */
  constructor(
    kind: MetricKind,
    name: string,
    description: string,
    native: NativeMetricFamily,
    onEmpty?: () => void,
  ) {
    this.kind = kind;
    this.name = name;
    this.description = description;
    this.native = native;
    this.#onEmpty = onEmpty;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** A series of this family with the given labels (and buckets, for histograms). */
  metric(labels: Record<string, string> = {}, buckets?: readonly number[]): Metric {
    if (this.#disposed) throw new TypeError(`metric family '${this.name}' was disposed`);
    const pairs = validateLabels(this.kind, this.name, labels);
    const bounds = validateBuckets(this.kind, this.name, buckets);
    let native: NativeMetric;
    try {
      native = this.native.metric(pairs, bounds);
    } catch (err) {
      throw fromNative(err, `${this.kind} '${this.name}'`);
    }
    this.#live++;
    return new Metric(this.kind, this.name, labels, native, () => {
      this.#live--;
      if (this.#live === 0 && this.#onEmpty) this.dispose();
    });
  }

  /** @internal Keeps the family alive without a metric (until `release()`). */
  retain(): void {
    if (this.#disposed) throw new TypeError(`metric family '${this.name}' was disposed`);
    this.#live++;
  }

  /** @internal Undoes `retain()`; the family goes once nothing holds it. */
  release(): void {
    if (this.#disposed || this.#live === 0) return;
    this.#live--;
    if (this.#live === 0 && this.#onEmpty) this.dispose();
  }

  /** Deletes the native family; its metrics must have been disposed first. */
  dispose(): void {
    if (this.#disposed) return;
    if (this.#live > 0) {
      throw new TypeError(`metric family '${this.name}': dispose its ${this.#live} metric(s) first`);
    }
    this.#disposed = true;
    try {
      this.native.dispose();
    } finally {
      this.#onEmpty?.();
      this.#onEmpty = undefined;
    }
  }
}

function validateName(name: unknown): string {
  if (typeof name !== 'string' || !METRIC_NAME.test(name)) {
    throw new TypeError(
      `createMetric: name must match [a-zA-Z_:][a-zA-Z0-9_:]* (a Prometheus metric name), got ${JSON.stringify(name)}`,
    );
  }
  return name;
}

function validateLabels(kind: MetricKind, name: string, labels: unknown): Array<[string, string]> {
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
    throw new TypeError(
      `createMetric '${name}': labels must be an object of string values, got ${String(labels)}`,
    );
  }
  const pairs: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(labels)) {
    if (!LABEL_NAME.test(k) || k.startsWith('__')) {
      throw new TypeError(
        `createMetric '${name}': label name ${JSON.stringify(k)} must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __`,
      );
    }
    if (kind === 'histogram' && k === 'le') {
      throw new TypeError(`createMetric '${name}': 'le' is reserved for histogram buckets`);
    }
    if (typeof v !== 'string') {
      throw new TypeError(`createMetric '${name}': label '${k}' must be a string, got ${typeof v}`);
    }
    pairs.push([k, v]);
  }
  return pairs;
}

function validateBuckets(kind: MetricKind, name: string, buckets: unknown): number[] | undefined {
  if (kind !== 'histogram') {
    if (buckets !== undefined)
      throw new TypeError(`createMetric '${name}': buckets are for histograms, not a ${kind}`);
    return undefined;
  }
  if (!Array.isArray(buckets)) {
    throw new TypeError(`createMetric '${name}': a histogram needs buckets (an array of upper bounds)`);
  }
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i];
    if (typeof b !== 'number' || !Number.isFinite(b)) {
      throw new TypeError(`createMetric '${name}': buckets[${i}] must be a finite number, got ${String(b)}`);
    }
    if (i > 0 && b <= buckets[i - 1]) {
      throw new TypeError(
        `createMetric '${name}': buckets must be strictly increasing, got ${buckets[i - 1]} then ${b} at buckets[${i}]`,
      );
    }
  }
  return [...buckets];
}

/** One family per (server, name): Triton shares them by name anyway. */
const familiesByServer = new WeakMap<NativeServer, Map<string, MetricFamily>>();

/** Gets or creates the server's family `name` of `kind`. */
export function getMetricFamily(
  server: NativeServer,
  kind: MetricKind,
  name: string,
  description = '',
): MetricFamily {
  if (!is.oneOf(METRIC_KINDS, kind)) {
    throw new TypeError(
      `createMetric: kind must be 'counter', 'gauge' or 'histogram', got ${JSON.stringify(kind)}`,
    );
  }
  validateName(name);
  if (typeof description !== 'string') {
    throw new TypeError(`createMetric '${name}': description must be a string, got ${typeof description}`);
  }
  if (/[\n\\]/.test(description)) {
    // Triton writes the HELP text as is: a newline or backslash would corrupt the exposition.
    throw new TypeError(`createMetric '${name}': description must not contain a newline or a backslash`);
  }
  let families = familiesByServer.get(server);
  if (!families) {
    families = new Map();
    familiesByServer.set(server, families);
  }
  const existing = families.get(name);
  if (existing && !existing.disposed) {
    if (existing.kind !== kind) {
      throw new TypeError(
        `createMetric '${name}': this name is already a ${existing.kind}, cannot make it a ${kind}`,
      );
    }
    return existing;
  }
  let native: NativeMetricFamily;
  try {
    native = server.createMetricFamily(kind, name, description);
  } catch (err) {
    throw fromNative(err, `${kind} family '${name}'`);
  }
  const map = families;
  const family = new MetricFamily(kind, name, description, native, () => {
    if (map.get(name) === family) map.delete(name);
  });
  families.set(name, family);
  return family;
}

/**
 * What `server.createMetric(spec)` returns: one series of a custom family,
 * created in Triton's registry. Disposing the last series of a family
 * deletes the family too.
 */
export function createCustomMetric(server: NativeServer, spec: MetricSpec): Metric {
  if (typeof spec !== 'object' || spec === null) {
    throw new TypeError(
      `createMetric: expected { kind, name, description?, labels?, buckets? }, got ${String(spec)}`,
    );
  }
  const name = validateName(spec.name);
  const kind = spec.kind;
  if (!is.oneOf(METRIC_KINDS, kind)) {
    throw new TypeError(
      `createMetric '${name}': kind must be 'counter', 'gauge' or 'histogram', got ${JSON.stringify(kind)}`,
    );
  }
  // Validate everything before the family exists, so a bad spec leaves nothing behind.
  validateLabels(kind, name, spec.labels ?? {});
  validateBuckets(kind, name, spec.buckets);
  const family = getMetricFamily(server, kind, name, spec.description ?? '');
  try {
    return family.metric(spec.labels ?? {}, spec.buckets);
  } catch (err) {
    if (!family.disposed) {
      try {
        disposeIfUnused(family);
      } catch {
        // Keep the original error.
      }
    }
    throw err;
  }
}

function disposeIfUnused(family: MetricFamily): void {
  try {
    family.dispose();
  } catch (err) {
    if (!(err instanceof TypeError)) throw err; // still has live metrics: keep it
  }
}

// ---------------------------------------------------------------------------
// Streaming histograms
// ---------------------------------------------------------------------------

/** Family names of the streaming histograms (ours, so they never clash with Triton's). */
export const STREAM_FIRST_RESPONSE_METRIC = 'triton_node_stream_first_response_ms';
export const STREAM_BETWEEN_RESPONSES_METRIC = 'triton_node_stream_between_responses_ms';

/** Bucket bounds in milliseconds: sub-millisecond to tens of seconds. */
export const STREAM_BUCKETS_MS: readonly number[] = [
  0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000,
];

export interface StreamMetrics {
  /** Time from submission to the first response of a stream, ms. */
  recordTimeToFirstResponse(model: string, version: number, ms: number): void;
  /** Time between two consecutive responses of a stream, ms. */
  recordTimeBetweenResponses(model: string, version: number, ms: number): void;
  /** Removes the series and families (call before the server stops). */
  dispose(): void;
}

/**
 * Histograms of stream timings per model and version, in Triton's registry
 * (so they show in `server.metrics()`): `triton_node_stream_first_response_ms`
 * and `triton_node_stream_between_responses_ms`, labelled `model` and
 * `version`. Series are created on first use. Recording never throws: a
 * failure (server stopping) drops the sample.
 */
export function createStreamMetrics(server: NativeServer): StreamMetrics {
  const first = getMetricFamily(
    server,
    'histogram',
    STREAM_FIRST_RESPONSE_METRIC,
    'Time from submitting a streamed request to its first response, milliseconds (triton-node)',
  );
  const between = getMetricFamily(
    server,
    'histogram',
    STREAM_BETWEEN_RESPONSES_METRIC,
    'Time between consecutive responses of a streamed request, milliseconds (triton-node)',
  );
  // Held for the server's life, so that a user's metric of the same name
  // coming and going cannot delete the family under the streams.
  first.retain();
  between.retain();
  const series = new Map<string, Metric>();
  let disposed = false;

  const record = (family: MetricFamily, model: string, version: number, ms: number) => {
    if (disposed || !Number.isFinite(ms) || ms < 0) return;
    const label = String(version);
    const k = `${family.name}\u0000${model}\u0000${label}`;
    try {
      let metric = series.get(k);
      if (!metric) {
        metric = family.metric({ model, version: label }, STREAM_BUCKETS_MS);
        series.set(k, metric);
      }
      metric.observe(ms);
    } catch {
      // Metrics must never break a stream; a lost sample is the lesser harm.
    }
  };

  return {
    recordTimeToFirstResponse: (model, version, ms) => record(first, model, version, ms),
    recordTimeBetweenResponses: (model, version, ms) => record(between, model, version, ms),
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const metric of series.values()) {
        try {
          metric.dispose();
        } catch {
          // The server may already be gone.
        }
      }
      series.clear();
      for (const family of [first, between]) {
        try {
          family.release();
        } catch {
          // Same.
        }
      }
    },
  };
}
