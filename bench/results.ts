/**
 * What one benchmark run measures, the same shape for both sides (Node and
 * the C++ driver), and the server-side breakdown from statistics deltas.
 */

export type Side = 'node' | 'cpp' | 'cpp-callback';

export const SIDE_LABELS: Readonly<Record<Side, string>> = {
  node: 'node',
  cpp: 'c++',
  'cpp-callback': 'c++ (in-callback)',
};

/** Means per request (per response for decoupled models), from the model's
 * statistics before and after the run. */
export interface ServerBreakdown {
  /** Successful requests Triton counted over the run (warm-up included). */
  requests: number;
  executions: number;
  queueUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
  /** Decoupled models: responses counted in response_stats. */
  responses?: number;
  /** Decoupled models: compute (infer + output) per response. */
  responseComputeUs?: number;
}

export interface LatencyUs {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface RunResult {
  side: Side;
  caseName: string;
  concurrency: number;
  /** Requests completed inside the measurement window. */
  requests: number;
  durationS: number;
  /** Requests per second. */
  throughput: number;
  latencyUs: LatencyUs;
  /** Stream cases: data responses per second. */
  responsesPerSec?: number;
  server: ServerBreakdown;
  errors: number;
  firstError?: string;
}

export const EMPTY_BREAKDOWN: ServerBreakdown = {
  requests: 0,
  executions: 0,
  queueUs: 0,
  computeInputUs: 0,
  computeInferUs: 0,
  computeOutputUs: 0,
};

/** The counters the breakdown needs, whatever form the statistics came in. */
interface Counters {
  success: number;
  executions: number;
  queueNs: number;
  inputNs: number;
  inferNs: number;
  outputNs: number;
  responses: number;
  responseNs: number;
}

type Loose = Record<string, unknown>;

function isObject(v: unknown): v is Loose {
  return typeof v === 'object' && v !== null;
}

function num(v: unknown): number {
  return typeof v === 'number'
    ? v
    : typeof v === 'string'
      ? Number(v)
      : typeof v === 'bigint'
        ? Number(v)
        : 0;
}

/** `{count, ns}` under either spelling (camelCase from lib/config/statistics.ts,
 * snake_case from Triton's JSON). */
function duration(parent: unknown, camel: string, snake: string): { count: number; ns: number } {
  if (!isObject(parent)) return { count: 0, ns: 0 };
  const d = parent[camel] ?? parent[snake];
  return isObject(d) ? { count: num(d.count), ns: num(d.ns) } : { count: 0, ns: 0 };
}

/** Accepts what `model.statistics()` returns (typed ModelStatistics, a list of
 * them, or Triton's raw JSON text / object) and sums every version in it. */
export function countersOf(stats: unknown): Counters {
  let value = stats;
  if (typeof value === 'string') value = JSON.parse(value);
  if (isObject(value) && Array.isArray(value.model_stats)) value = value.model_stats;
  const list = Array.isArray(value) ? value : [value];
  const c: Counters = {
    success: 0,
    executions: 0,
    queueNs: 0,
    inputNs: 0,
    inferNs: 0,
    outputNs: 0,
    responses: 0,
    responseNs: 0,
  };
  for (const s of list) {
    if (!isObject(s)) continue;
    const inference = s.inferenceStats ?? s.inference_stats;
    c.success += duration(inference, 'success', 'success').count;
    c.executions += num(s.executionCount ?? s.execution_count);
    c.queueNs += duration(inference, 'queue', 'queue').ns;
    c.inputNs += duration(inference, 'computeInput', 'compute_input').ns;
    c.inferNs += duration(inference, 'computeInfer', 'compute_infer').ns;
    c.outputNs += duration(inference, 'computeOutput', 'compute_output').ns;
    const responses = s.responseStats ?? s.response_stats;
    if (isObject(responses)) {
      for (const r of Object.values(responses)) {
        c.responses += duration(r, 'success', 'success').count;
        c.responseNs +=
          duration(r, 'computeInfer', 'compute_infer').ns + duration(r, 'computeOutput', 'compute_output').ns;
      }
    }
  }
  return c;
}

export function breakdown(before: unknown, after: unknown): ServerBreakdown {
  const b = countersOf(before);
  const a = countersOf(after);
  const requests = a.success - b.success;
  const per = (ns: number) => (requests > 0 ? ns / 1000 / requests : 0);
  const result: ServerBreakdown = {
    requests,
    executions: a.executions - b.executions,
    queueUs: per(a.queueNs - b.queueNs),
    computeInputUs: per(a.inputNs - b.inputNs),
    computeInferUs: per(a.inferNs - b.inferNs),
    computeOutputUs: per(a.outputNs - b.outputNs),
  };
  const responses = a.responses - b.responses;
  if (responses > 0) {
    result.responses = responses;
    result.responseComputeUs = (a.responseNs - b.responseNs) / 1000 / responses;
  }
  return result;
}

export function computeUs(s: ServerBreakdown): number {
  return s.computeInputUs + s.computeInferUs + s.computeOutputUs;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median of each metric over the rounds of one case on one side (each
 * metric on its own, so p99 is the median p99, not the p99 of the median
 * round). */
export function medianRun(runs: RunResult[]): RunResult | undefined {
  const first = runs[0];
  if (first === undefined) return undefined;
  const m = (f: (r: RunResult) => number) => median(runs.map(f));
  const result: RunResult = {
    side: first.side,
    caseName: first.caseName,
    concurrency: first.concurrency,
    requests: m((r) => r.requests),
    durationS: first.durationS,
    throughput: m((r) => r.throughput),
    latencyUs: {
      p50: m((r) => r.latencyUs.p50),
      p90: m((r) => r.latencyUs.p90),
      p99: m((r) => r.latencyUs.p99),
      max: m((r) => r.latencyUs.max),
      mean: m((r) => r.latencyUs.mean),
    },
    server: {
      requests: m((r) => r.server.requests),
      executions: m((r) => r.server.executions),
      queueUs: m((r) => r.server.queueUs),
      computeInputUs: m((r) => r.server.computeInputUs),
      computeInferUs: m((r) => r.server.computeInferUs),
      computeOutputUs: m((r) => r.server.computeOutputUs),
    },
    errors: runs.reduce((n, r) => n + r.errors, 0),
  };
  if (runs.every((r) => r.responsesPerSec !== undefined)) {
    result.responsesPerSec = m((r) => r.responsesPerSec ?? 0);
  }
  if (runs.every((r) => r.server.responses !== undefined)) {
    result.server.responses = m((r) => r.server.responses ?? 0);
    result.server.responseComputeUs = m((r) => r.server.responseComputeUs ?? 0);
  }
  const firstError = runs.find((r) => r.firstError !== undefined)?.firstError;
  if (firstError !== undefined) result.firstError = firstError;
  return result;
}
