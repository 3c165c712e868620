/**
 * Typed model statistics, parsed from the JSON that Triton's
 * `TRITONSERVER_ServerModelStatistics` returns, and deltas over an interval.
 *
 * Triton's document is `{"model_stats":[{name, version, last_inference,
 * inference_count, execution_count, inference_stats, response_stats,
 * batch_stats, memory_usage}]}` with snake_case keys, versions as strings and
 * every duration as `{count, ns}`. The public shape is camelCase with numeric
 * versions. Counters and nanosecond sums are plain numbers: they are exact up
 * to 2^53 (104 days of cumulative nanoseconds), and past that they lose only
 * the lowest digits, which no mean computed from them can show.
 *
 * What the counters count (observed on real Triton r25.07):
 * - `inferenceCount` counts batch elements of successful requests,
 *   `executionCount` counts backend executions (failed ones included);
 * - `inferenceStats.success.count` counts requests; `fail` counts requests
 *   that failed in the backend or were rejected by the scheduler; requests
 *   refused at submission (validation) are counted nowhere;
 * - decoupled models may report per-response statistics only
 *   (`responseStats`, keyed by response index) and no request statistics.
 * @packageDocumentation
 */

/** One cumulative duration: how many times it was recorded and the total. */
export interface StatisticsDuration {
  count: number;
  /** Total nanoseconds over `count` recordings. */
  ns: number;
}

/** Per-request statistics of one model version (cumulative since load). */
export interface InferenceStatistics {
  /** Successful requests; `ns` is their total request duration. */
  success: StatisticsDuration;
  /** Failed requests; `ns` is their total duration until failure. */
  fail: StatisticsDuration;
  /** Time spent waiting in the scheduler queue. */
  queue: StatisticsDuration;
  /** Time the backend spent preparing inputs. */
  computeInput: StatisticsDuration;
  /** Time the backend spent executing the model. */
  computeInfer: StatisticsDuration;
  /** Time the backend spent producing outputs. */
  computeOutput: StatisticsDuration;
  /** Response cache hits (and the time a lookup took). */
  cacheHit: StatisticsDuration;
  /** Response cache misses (lookup plus insertion time). */
  cacheMiss: StatisticsDuration;
}

/** Statistics of the n-th response of decoupled requests. */
export interface ResponseStatistics {
  computeInfer: StatisticsDuration;
  computeOutput: StatisticsDuration;
  success: StatisticsDuration;
  fail: StatisticsDuration;
  emptyResponse: StatisticsDuration;
  cancel: StatisticsDuration;
}

/** Statistics of the executions that ran with one batch size. */
export interface BatchStatistics {
  batchSize: number;
  computeInput: StatisticsDuration;
  computeInfer: StatisticsDuration;
  computeOutput: StatisticsDuration;
}

/** Memory a model version holds, as the backend reports it. */
export interface MemoryUsage {
  /** 'CPU', 'CPU_PINNED' or 'GPU'. */
  type: string;
  id: number;
  byteSize: number;
}

/** Statistics of one model version, cumulative since the version was loaded. */
export interface ModelStatistics {
  name: string;
  version: number;
  /** Wall-clock time of the last inference, ms since the Unix epoch; 0 before the first. */
  lastInference: number;
  /** Batch elements inferred by successful requests. */
  inferenceCount: number;
  /** Backend executions (one execution may carry a whole batch). */
  executionCount: number;
  inferenceStats: InferenceStatistics;
  /** Decoupled models: statistics per response index ('0', '1', ...). */
  responseStats: Record<string, ResponseStatistics>;
  batchStats: BatchStatistics[];
  memoryUsage: MemoryUsage[];
}

/** What changed between two statistics snapshots of the same model version(s). */
export interface StatisticsDelta {
  /** Requests that completed, successfully or not. */
  requests: number;
  successes: number;
  failures: number;
  /** Backend executions. */
  executions: number;
  /** Batch elements inferred by successful requests. */
  inferences: number;
  /** Mean total duration of a successful request, µs (0 when none succeeded). */
  meanRequestUs: number;
  /** Mean time a request waited in the queue, µs (0 when none completed). */
  meanQueueUs: number;
  /** Mean compute time per request (input + infer + output), µs. */
  meanComputeUs: number;
  meanComputeInputUs: number;
  meanComputeInferUs: number;
  meanComputeOutputUs: number;
  /** Mean batch size of the executions in the interval (0 when none ran). */
  meanBatchSize: number;
}

type Json = unknown;

function fail(path: string, expected: string, actual: Json): never {
  const shown = typeof actual === 'object' ? JSON.stringify(actual)?.slice(0, 80) : String(actual);
  throw new TypeError(`Model statistics: expected ${expected} at ${path}, got ${shown}`);
}

function object(value: Json, path: string): Record<string, Json> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object', value);
  return value as Record<string, Json>;
}

function count(value: Json, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    fail(path, 'a non-negative number', value);
  }
  return value;
}

/** Missing durations read as zero: older or newer Triton versions add fields. */
function duration(value: Json, path: string): StatisticsDuration {
  if (value === undefined) return { count: 0, ns: 0 };
  const o = object(value, path);
  return { count: count(o.count ?? 0, `${path}.count`), ns: count(o.ns ?? 0, `${path}.ns`) };
}

function parseVersion(value: Json, path: string): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) fail(path, 'a version number', value);
  return n;
}

function parseEntry(raw: Json, path: string): ModelStatistics {
  const e = object(raw, path);
  if (typeof e.name !== 'string') fail(`${path}.name`, 'a string', e.name);
  const is = object(e.inference_stats ?? {}, `${path}.inference_stats`);
  const ip = `${path}.inference_stats`;
  const responseStats: Record<string, ResponseStatistics> = {};
  const rs = object(e.response_stats ?? {}, `${path}.response_stats`);
  for (const [index, value] of Object.entries(rs)) {
    const r = object(value, `${path}.response_stats.${index}`);
    const rp = `${path}.response_stats.${index}`;
    responseStats[index] = {
      computeInfer: duration(r.compute_infer, `${rp}.compute_infer`),
      computeOutput: duration(r.compute_output, `${rp}.compute_output`),
      success: duration(r.success, `${rp}.success`),
      fail: duration(r.fail, `${rp}.fail`),
      emptyResponse: duration(r.empty_response, `${rp}.empty_response`),
      cancel: duration(r.cancel, `${rp}.cancel`),
    };
  }
  const batches = e.batch_stats ?? [];
  if (!Array.isArray(batches)) fail(`${path}.batch_stats`, 'an array', batches);
  const memory = e.memory_usage ?? [];
  if (!Array.isArray(memory)) fail(`${path}.memory_usage`, 'an array', memory);
  return {
    name: e.name,
    version: parseVersion(e.version, `${path}.version`),
    lastInference: count(e.last_inference ?? 0, `${path}.last_inference`),
    inferenceCount: count(e.inference_count ?? 0, `${path}.inference_count`),
    executionCount: count(e.execution_count ?? 0, `${path}.execution_count`),
    inferenceStats: {
      success: duration(is.success, `${ip}.success`),
      fail: duration(is.fail, `${ip}.fail`),
      queue: duration(is.queue, `${ip}.queue`),
      computeInput: duration(is.compute_input, `${ip}.compute_input`),
      computeInfer: duration(is.compute_infer, `${ip}.compute_infer`),
      computeOutput: duration(is.compute_output, `${ip}.compute_output`),
      cacheHit: duration(is.cache_hit, `${ip}.cache_hit`),
      cacheMiss: duration(is.cache_miss, `${ip}.cache_miss`),
    },
    responseStats,
    batchStats: batches.map((b: Json, i: number) => {
      const bp = `${path}.batch_stats[${i}]`;
      const o = object(b, bp);
      return {
        batchSize: count(o.batch_size, `${bp}.batch_size`),
        computeInput: duration(o.compute_input, `${bp}.compute_input`),
        computeInfer: duration(o.compute_infer, `${bp}.compute_infer`),
        computeOutput: duration(o.compute_output, `${bp}.compute_output`),
      };
    }),
    memoryUsage: memory.map((m: Json, i: number) => {
      const mp = `${path}.memory_usage[${i}]`;
      const o = object(m, mp);
      if (typeof o.type !== 'string') fail(`${mp}.type`, 'a string', o.type);
      return {
        type: o.type,
        id: count(o.id ?? 0, `${mp}.id`),
        byteSize: count(o.byte_size ?? 0, `${mp}.byte_size`),
      };
    }),
  };
}

/**
 * Parses Triton's statistics document (the JSON text, or the object it
 * parses to) into one `ModelStatistics` per model version, in Triton's order.
 * A malformed document is a TypeError naming the field.
 */
export function parseModelStatistics(json: string | object): ModelStatistics[] {
  let doc: Json = json;
  if (typeof json === 'string') {
    try {
      doc = JSON.parse(json);
    } catch (err) {
      throw new TypeError(`Model statistics: not valid JSON (${(err as Error).message})`);
    }
  }
  const root = object(doc, 'the document');
  const stats = root.model_stats;
  if (!Array.isArray(stats)) fail('model_stats', 'an array', stats);
  return stats.map((entry: Json, i: number) => parseEntry(entry, `model_stats[${i}]`));
}

const ZERO: StatisticsDuration = { count: 0, ns: 0 };

function sub(a: StatisticsDuration, b: StatisticsDuration | undefined): StatisticsDuration {
  const base = b ?? ZERO;
  return { count: a.count - base.count, ns: a.ns - base.ns };
}

function meanUs(d: StatisticsDuration, per: number): number {
  return per > 0 ? d.ns / per / 1000 : 0;
}

function key(s: ModelStatistics): string {
  return `${s.name}\u0000${s.version}`;
}

/** statisticsDelta's arguments as lists, checked: ModelStatistics, and one model version against the same one. */
function snapshotLists(
  before: ModelStatistics | readonly ModelStatistics[],
  after: ModelStatistics | readonly ModelStatistics[],
): [readonly ModelStatistics[], readonly ModelStatistics[]] {
  const b = Array.isArray(before) ? (before as readonly ModelStatistics[]) : [before as ModelStatistics];
  const a = Array.isArray(after) ? (after as readonly ModelStatistics[]) : [after as ModelStatistics];
  for (const [list, what] of [
    [b, 'before'],
    [a, 'after'],
  ] as const) {
    for (const s of list) {
      if (typeof s !== 'object' || s === null || typeof s.name !== 'string' || !s.inferenceStats) {
        throw new TypeError(`statisticsDelta: '${what}' must be ModelStatistics (from model.statistics())`);
      }
    }
  }
  if (!Array.isArray(before) && !Array.isArray(after)) {
    const bs = before as ModelStatistics;
    const as = after as ModelStatistics;
    if (bs.name !== as.name || bs.version !== as.version) {
      throw new TypeError(
        `statisticsDelta: 'before' is ${bs.name} v${bs.version} but 'after' is ${as.name} v${as.version}`,
      );
    }
  }
  return [b, a];
}

/**
 * What happened between two snapshots taken with `model.statistics()` (or
 * `parseModelStatistics`): request counts and mean durations over the
 * interval. Each argument is one model version or a list of them; entries are
 * matched by model name and version, and a version that appears only in
 * `after` (loaded during the interval) counts from zero. Counters that went
 * down (the model was reloaded in between) are a RangeError: the interval has
 * no meaning then.
 */
export function statisticsDelta(
  before: ModelStatistics | readonly ModelStatistics[],
  after: ModelStatistics | readonly ModelStatistics[],
): StatisticsDelta {
  const [b, a] = snapshotLists(before, after);
  const byKey = new Map(b.map((s) => [key(s), s]));

  let successes = 0;
  let failures = 0;
  let executions = 0;
  let inferences = 0;
  const totals = {
    success: { ...ZERO },
    queue: { ...ZERO },
    input: { ...ZERO },
    infer: { ...ZERO },
    output: { ...ZERO },
  };
  let batchElements = 0;
  let batchExecutions = 0;
  const add = (into: StatisticsDuration, d: StatisticsDuration) => {
    into.count += d.count;
    into.ns += d.ns;
  };

  for (const s of a) {
    const prev = byKey.get(key(s));
    const pi = prev?.inferenceStats;
    const si = s.inferenceStats;
    const d = {
      success: sub(si.success, pi?.success),
      fail: sub(si.fail, pi?.fail),
      queue: sub(si.queue, pi?.queue),
      input: sub(si.computeInput, pi?.computeInput),
      infer: sub(si.computeInfer, pi?.computeInfer),
      output: sub(si.computeOutput, pi?.computeOutput),
    };
    const exec = s.executionCount - (prev?.executionCount ?? 0);
    const inf = s.inferenceCount - (prev?.inferenceCount ?? 0);
    if (Object.values(d).some((x) => x.count < 0 || x.ns < 0) || exec < 0 || inf < 0) {
      throw new RangeError(
        `statisticsDelta: counters of ${s.name} v${s.version} went down between the snapshots ` +
          '(was the model reloaded, or are the arguments swapped?)',
      );
    }
    successes += d.success.count;
    failures += d.fail.count;
    executions += exec;
    inferences += inf;
    add(totals.success, d.success);
    add(totals.queue, d.queue);
    add(totals.input, d.input);
    add(totals.infer, d.infer);
    add(totals.output, d.output);
    const prevBatches = new Map((prev?.batchStats ?? []).map((x) => [x.batchSize, x]));
    for (const bs of s.batchStats) {
      const n = bs.computeInfer.count - (prevBatches.get(bs.batchSize)?.computeInfer.count ?? 0);
      batchExecutions += n;
      batchElements += n * bs.batchSize;
    }
  }

  const computeNs = totals.input.ns + totals.infer.ns + totals.output.ns;
  // Requests that reached the backend: compute counts are per request.
  const computed = totals.infer.count;
  return {
    requests: successes + failures,
    successes,
    failures,
    executions,
    inferences,
    meanRequestUs: meanUs(totals.success, totals.success.count),
    meanQueueUs: meanUs(totals.queue, totals.queue.count),
    meanComputeUs: computed > 0 ? computeNs / computed / 1000 : 0,
    meanComputeInputUs: meanUs(totals.input, totals.input.count),
    meanComputeInferUs: meanUs(totals.infer, totals.infer.count),
    meanComputeOutputUs: meanUs(totals.output, totals.output.count),
    // batch_stats counts every execution by its size; fall back to the
    // request counters for backends that report no batch statistics.
    meanBatchSize:
      batchExecutions > 0 ? batchElements / batchExecutions : executions > 0 ? inferences / executions : 0,
  };
}
