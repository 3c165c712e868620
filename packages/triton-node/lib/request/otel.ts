/**
 * OpenTelemetry spans from Triton's own timestamps (`request.trace`).
 *
 * `@opentelemetry/api` is an optional peer dependency: it is imported the
 * first time a request asks for spans, from wherever the application
 * installed it, and without it nothing is exported (as the API itself does
 * without an SDK). The spans go through whatever tracer provider the
 * application registered; they are made after the request ended, with
 * Triton's steady-clock timestamps moved onto the wall clock.
 */
import type { InferTiming, TimingTrace } from '../tensor/tensor.js';

/** The library's own optional peers, by what needs them (package.json lists them). */
export const LIBRARY_PEERS = {
  '@opentelemetry/api': 'request.trace: spans of Triton timestamps for OpenTelemetry',
} as const;

/** What of `@opentelemetry/api` is used here (its types stay out of the library's). */
interface Span {
  addEvent(name: string, attributes?: Record<string, unknown>, time?: HrTime): unknown;
  setAttribute(key: string, value: string | number): unknown;
  end(time?: HrTime): void;
}
type HrTime = [number, number];
interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: unknown;
}
interface Tracer {
  startSpan(
    name: string,
    options: { startTime: HrTime; kind: number; attributes?: Record<string, string | number> },
    context: unknown,
  ): Span;
}
interface OtelApi {
  context: { active(): unknown };
  ROOT_CONTEXT: unknown;
  SpanKind: { INTERNAL: number };
  trace: {
    getTracer(name: string): Tracer;
    setSpan(context: unknown, span: Span): unknown;
    setSpanContext(context: unknown, spanContext: SpanContext): unknown;
  };
}

let loading: Promise<OtelApi | undefined> | undefined;

/** `@opentelemetry/api`, or undefined when it is not installed (imported once). */
function loadApi(): Promise<OtelApi | undefined> {
  const name = Object.keys(LIBRARY_PEERS)[0]!;
  loading ??= import(name).then(
    (m: OtelApi & { default?: OtelApi }) => (m.trace !== undefined ? m : m.default),
    () => undefined,
  );
  return loading;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Whether `value` is a W3C traceparent header value this library accepts
 * (version 00, a trace id and span id not all zeros).
 */
export function isTraceparent(value: string): boolean {
  const m = TRACEPARENT.exec(value);
  return m !== null && !/^0+$/.test(m[1]!) && !/^0+$/.test(m[2]!);
}

/** Where a traced request's spans go: the API and the parent context. */
export interface SpanParent {
  api: OtelApi;
  context: unknown;
}

/**
 * The parent of a traced request's spans: the caller's active context
 * (`true`, read here, in the caller's async context) or the remote span of
 * a `traceparent`; undefined without `@opentelemetry/api`.
 */
export async function spanParent(trace: true | string): Promise<SpanParent | undefined> {
  const api = await loadApi();
  if (api === undefined) return undefined;
  if (trace === true) return { api, context: api.context.active() };
  const m = TRACEPARENT.exec(trace)!;
  const context = api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: Number.parseInt(m[3]!, 16),
    isRemote: true,
  });
  return { api, context };
}

/** Steady-clock nanoseconds (Triton's and libuv's clock) as wall-clock [s, ns]. */
function wallClock(offsetNs: bigint): (steadyNs: bigint) => HrTime {
  return (steadyNs) => {
    const ns = steadyNs + offsetNs;
    return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
  };
}

const ACTIVITIES = [
  ['REQUEST_START', 'requestStartNs'],
  ['QUEUE_START', 'queueStartNs'],
  ['COMPUTE_START', 'computeStartNs'],
  ['COMPUTE_INPUT_END', 'computeInputEndNs'],
  ['COMPUTE_OUTPUT_START', 'computeOutputStartNs'],
  ['COMPUTE_END', 'computeEndNs'],
  ['REQUEST_END', 'requestEndNs'],
] as const;

/**
 * Makes the spans of a request's traces under `parent`: per trace a span
 * named after its model (REQUEST_START to REQUEST_END, each activity an
 * event), with `queue` and `compute` (split into `compute_input`,
 * `compute_infer`, `compute_output`) below it; an ensemble step's trace is a
 * child of its ensemble's span.
 */
export function exportSpans(parent: SpanParent, timing: InferTiming): void {
  const { api } = parent;
  const tracer = api.trace.getTracer('triton-node');
  const kind = api.SpanKind.INTERNAL;
  const offset =
    BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6)) - process.hrtime.bigint();
  const at = wallClock(offset);
  const contexts = new Map<number, unknown>();
  for (const t of timing.traces) {
    const ts = t.timestampsBigNs;
    if (ts.requestStartNs === 0n || ts.requestEndNs === 0n) continue;
    const under = (t.parentId !== 0 ? contexts.get(t.parentId) : undefined) ?? parent.context;
    const span = tracer.startSpan(
      t.model,
      { startTime: at(ts.requestStartNs), kind, attributes: attributesOf(t) },
      under,
    );
    for (const [name, key] of ACTIVITIES) if (ts[key] !== 0n) span.addEvent(name, undefined, at(ts[key]));
    const inside = api.trace.setSpan(under, span);
    contexts.set(t.id, inside);
    const child = (name: string, from: bigint, to: bigint, context: unknown): unknown => {
      if (from === 0n || to === 0n) return undefined;
      const s = tracer.startSpan(name, { startTime: at(from), kind }, context);
      s.end(at(to));
      return api.trace.setSpan(context, s);
    };
    child('queue', ts.queueStartNs, ts.computeStartNs, inside);
    if (ts.computeStartNs !== 0n && ts.computeEndNs !== 0n) {
      const compute = tracer.startSpan('compute', { startTime: at(ts.computeStartNs), kind }, inside);
      const computeContext = api.trace.setSpan(inside, compute);
      child('compute_input', ts.computeStartNs, ts.computeInputEndNs, computeContext);
      child('compute_infer', ts.computeInputEndNs, ts.computeOutputStartNs, computeContext);
      child('compute_output', ts.computeOutputStartNs, ts.computeEndNs, computeContext);
      compute.end(at(ts.computeEndNs));
    }
    span.end(at(ts.requestEndNs));
  }
}

/** The attributes tritonserver gives a trace's span. */
function attributesOf(t: TimingTrace): Record<string, string | number> {
  return {
    'triton.model_name': t.model,
    'triton.model_version': t.version,
    'triton.trace_id': t.id,
    'triton.trace_parent_id': t.parentId,
  };
}
