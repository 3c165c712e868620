/**
 * `tune()` and `triton-node tune`: Triton's dynamic-batching procedure run
 * in-process. Each configuration is a config-override reload (milliseconds,
 * no server restart) measured with closed-loop load from this process:
 * baseline without batching first, then for each instance count the
 * preferred batch size raised step by step until the latency SLA breaks,
 * then the queue-delay cap. The pick is the best throughput within the SLA,
 * measured again. The model's original config is always put back.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { TritonError, tritonError } from '../errors.js';
import { type ModelConfig, formatModelConfig } from '../model-config.js';
import type { ModelMetadata } from '../model.js';
import { parseModelConfigText } from '../pbtxt.js';
import type { Server } from '../server.js';
import { type ModelStatistics, statisticsDelta } from '../statistics.js';
import type { InputValue } from '../validate.js';

export interface TuneOptions {
  /** The latency SLA: the p99 a configuration must stay within, ms. */
  slaP99Ms: number;
  /** Requests in flight to measure each configuration at (default [1, 8, 32]). */
  concurrency?: readonly number[];
  /** Instance counts to try (default [1, 2]). */
  instances?: readonly number[];
  /** Preferred batch sizes, raised in this order (default: powers of 2 up to max_batch_size). */
  preferredBatchSizes?: readonly number[];
  /** Queue-delay caps tried for the best preferred size, µs, in this order (default 100, 500, 1000, 5000, 10000). */
  queueDelaysUs?: readonly number[];
  /** Measurement window per configuration and concurrency, ms (default 3000). */
  durationMs?: number;
  /** Load before each window, not measured, ms (default 300). */
  warmupMs?: number;
  /** The request's inputs (default: zeros of each input's dims, -1 as 16, batch 1). */
  inputs?: Record<string, InputValue>;
  /** Tune a decoupled model or an LLM backend anyway (they batch internally: Triton's batching rarely helps). */
  force?: boolean;
  /** Stops the run; the original config is put back and tune() rejects with an AbortError. */
  signal?: AbortSignal;
  /** Called before each measurement and once at the end. */
  onProgress?: (progress: TuneProgress) => void;
}

export interface TuneProgress {
  /** Measurements done and planned so far (the plan grows until the sweep stops). */
  done: number;
  planned: number;
  /** What is measured now. */
  what: string;
}

/** One measured configuration at one concurrency. */
export interface TunePoint {
  instances: number;
  /** null: no dynamic batching (the baseline). */
  preferredBatchSize: number | null;
  queueDelayUs: number;
  concurrency: number;
  /** Inferences (batch elements) per second. */
  throughput: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Per request, from Triton's statistics over the window, µs. */
  queueUs: number;
  computeUs: number;
  /** Mean batch size Triton executed. */
  meanBatchSize: number;
  requests: number;
  errors: number;
  /** GPU memory in use at the end of the window (from Triton's metrics; absent without GPU metrics). */
  gpuMemoryBytes?: number;
  meetsSla: boolean;
}

export interface TuneResult {
  model: string;
  slaP99Ms: number;
  points: TunePoint[];
  /** The best throughput within the SLA (undefined when no point met it). */
  best?: TunePoint;
  /** The pick measured again. */
  recheck?: TunePoint;
  /** The recommended config: the original with the pick's instance count and batching. */
  config?: ModelConfig;
  /** The recommendation as config.pbtxt text. */
  configText?: string;
  /** The original config (put back at the end). */
  original: ModelConfig;
  startedAt: string;
  finishedAt: string;
}

/** Backends that batch in flight themselves. */
const LLM_BACKENDS = new Set(['vllm', 'tensorrtllm']);

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * q) - 1))]!;
}

function checkOptions(options: TuneOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('tune: options must be an object');
  if (!(typeof options.slaP99Ms === 'number' && options.slaP99Ms > 0)) {
    throw new TypeError(`tune: slaP99Ms must be a positive number of ms, got ${String(options.slaP99Ms)}`);
  }
  const list = (name: string, v: readonly number[] | undefined, min: number) => {
    if (v === undefined) return;
    if (!Array.isArray(v) || v.length === 0 || !v.every((n) => Number.isInteger(n) && n >= min)) {
      throw new TypeError(`tune: ${name} must be a non-empty list of integers >= ${min}`);
    }
  };
  list('concurrency', options.concurrency, 1);
  list('instances', options.instances, 1);
  list('preferredBatchSizes', options.preferredBatchSizes, 1);
  list('queueDelaysUs', options.queueDelaysUs, 0);
  for (const k of ['durationMs', 'warmupMs'] as const) {
    const v = options[k];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0))
      throw new TypeError(`tune: ${k} must be a non-negative integer`);
  }
}

/** Zeros for each input: -1 dims as 16, a batch of 1 on batching models. */
function defaultInputs(meta: ModelMetadata, batching: boolean): Record<string, InputValue> {
  const out: Record<string, InputValue> = {};
  for (const input of meta.inputs) {
    const dims = input.shape.slice(batching ? 1 : 0).map((d) => (d < 0 ? 16 : d));
    const shape = batching ? [1, ...dims] : dims;
    const count = shape.reduce((a, b) => a * b, 1);
    if (input.datatype === 'BYTES')
      out[input.name] = { data: Array.from({ length: count }, () => 'x'), shape };
    else if (input.datatype === 'BOOL')
      out[input.name] = { data: Array.from({ length: count }, () => false), shape };
    else {
      const ctor =
        {
          UINT8: Uint8Array,
          UINT16: Uint16Array,
          UINT32: Uint32Array,
          UINT64: BigUint64Array,
          INT8: Int8Array,
          INT16: Int16Array,
          INT32: Int32Array,
          INT64: BigInt64Array,
          FP16: Uint16Array,
          BF16: Uint16Array,
          FP32: Float32Array,
          FP64: Float64Array,
        }[input.datatype] ?? Float32Array;
      out[input.name] = { data: new ctor(count), shape, datatype: input.datatype };
    }
  }
  return out;
}

/** GPU memory in use, summed over GPUs, from Triton's metrics text. */
function gpuMemoryUsed(metrics: string): number | undefined {
  let total: number | undefined;
  for (const m of metrics.matchAll(/^nv_gpu_memory_used_bytes\{[^}]*\}\s+([0-9.e+]+)/gm)) {
    total = (total ?? 0) + Number(m[1]);
  }
  return total;
}

/**
 * Runs the procedure on `name` (loaded, explicit model control) and returns
 * every point, the pick and the recommended config. The original config is
 * put back at the end, on an error and on `signal`.
 */
export async function tune(server: Server, name: string, options: TuneOptions): Promise<TuneResult> {
  checkOptions(options);
  const startedAt = new Date().toISOString();
  const model = server.model(name);
  const original = await model.config();
  const backend = original.backend ?? '';
  if (
    !options.force &&
    (original.model_transaction_policy?.decoupled === true || LLM_BACKENDS.has(backend))
  ) {
    throw tritonError(
      'UNSUPPORTED',
      `tune: model '${name}' is ${LLM_BACKENDS.has(backend) ? `an LLM backend (${backend})` : 'decoupled'}: it batches internally, so Triton's batching rarely helps; pass force to tune it anyway`,
      { model: name },
    );
  }
  const mbs = Number(original.max_batch_size ?? 0);
  const meta = await model.metadata();
  const inputs = options.inputs ?? defaultInputs(meta, mbs > 0);
  const concurrency = [...(options.concurrency ?? [1, 8, 32])].sort((a, b) => a - b);
  const instances = [...(options.instances ?? [1, 2])];
  const preferred =
    mbs > 0
      ? [...(options.preferredBatchSizes ?? [2, 4, 8, 16, 32, 64, 128, 256].filter((p) => p <= mbs))].filter(
          (p) => p <= mbs,
        )
      : [];
  const delays = [...(options.queueDelaysUs ?? [100, 500, 1000, 5000, 10000])];
  const durationMs = options.durationMs ?? 3000;
  const warmupMs = options.warmupMs ?? 300;
  const sla = options.slaP99Ms;
  const points: TunePoint[] = [];
  let done = 0;
  let planned = instances.length * (1 + preferred.length + delays.length) * concurrency.length;

  const abortIfAsked = () => {
    if (options.signal?.aborted) {
      const err = tritonError('CANCELLED', `tune of '${name}' stopped`, { model: name });
      err.name = 'AbortError';
      throw err;
    }
  };

  /** The original config with `instances` instances and the given batching. */
  const configFor = (n: number, p: number | null, delayUs: number): ModelConfig => {
    const base = repositoryConfig(server, name) ?? original;
    const groups = base.instance_group?.length ? base.instance_group : [{ kind: 'KIND_AUTO' as const }];
    const { dynamic_batching: batching, ...rest } = base;
    const config: ModelConfig = { ...rest, instance_group: groups.map((g) => ({ ...g, count: n })) };
    if (p !== null) {
      config.dynamic_batching = {
        ...(batching ?? {}),
        preferred_batch_size: [p],
        max_queue_delay_microseconds: delayUs,
      };
    }
    return config;
  };

  const measure = async (n: number, p: number | null, delayUs: number, c: number): Promise<TunePoint> => {
    abortIfAsked();
    options.onProgress?.({
      done,
      planned,
      what: `instances ${n}, ${p === null ? 'no batching' : `preferred ${p}, queue delay ${delayUs} µs`}, concurrency ${c}`,
    });
    const latencies: number[] = [];
    let errors = 0;
    let requests = 0;
    let measuring = false;
    let before: ModelStatistics[] = [];
    const run = async (until: () => boolean) => {
      while (!until()) {
        const t0 = performance.now();
        try {
          const r = await model.infer({ inputs });
          r.dispose();
          if (measuring) latencies.push(performance.now() - t0);
        } catch {
          if (measuring) errors++;
        }
        if (measuring) requests++;
      }
    };
    const warmEnd = performance.now() + warmupMs;
    await Promise.all(Array.from({ length: c }, () => run(() => performance.now() >= warmEnd)));
    before = await model.statistics();
    measuring = true;
    const start = performance.now();
    const end = start + durationMs;
    await Promise.all(Array.from({ length: c }, () => run(() => performance.now() >= end)));
    const seconds = (performance.now() - start) / 1000;
    measuring = false;
    const delta = statisticsDelta(before, await model.statistics());
    const gpu = gpuMemoryUsed(await server.metrics().catch(() => ''));
    latencies.sort((a, b) => a - b);
    // Batch elements per request, as Triton counted them.
    const batch = delta.successes > 0 ? delta.inferences / delta.successes : 1;
    const point: TunePoint = {
      instances: n,
      preferredBatchSize: p,
      queueDelayUs: p === null ? 0 : delayUs,
      concurrency: c,
      throughput: ((requests - errors) * batch) / seconds,
      p50Ms: percentile(latencies, 0.5),
      p90Ms: percentile(latencies, 0.9),
      p99Ms: percentile(latencies, 0.99),
      queueUs: delta.meanQueueUs,
      computeUs: delta.meanComputeUs,
      meanBatchSize: delta.meanBatchSize,
      requests,
      errors,
      ...(gpu === undefined ? {} : { gpuMemoryBytes: gpu }),
      meetsSla: false,
    };
    point.meetsSla = errors === 0 && latencies.length > 0 && point.p99Ms <= sla;
    points.push(point);
    done++;
    return point;
  };

  /** Loads a configuration and measures it at every concurrency. */
  const sweep = async (n: number, p: number | null, delayUs: number): Promise<TunePoint[]> => {
    abortIfAsked();
    await server.loadModel(name, { config: configFor(n, p, delayUs) });
    const out: TunePoint[] = [];
    for (const c of concurrency) out.push(await measure(n, p, delayUs, c));
    return out;
  };

  let best: TunePoint | undefined;
  let recheck: TunePoint | undefined;
  try {
    for (const n of instances) {
      await sweep(n, null, 0);
      let bestPreferred: number | undefined;
      let bestThroughput = -1;
      for (const p of preferred) {
        const pts = await sweep(n, p, 0);
        const within = pts.filter((x) => x.meetsSla);
        if (within.length === 0) {
          // The first breach: larger sizes only wait longer.
          planned -= (preferred.length - preferred.indexOf(p) - 1) * concurrency.length;
          break;
        }
        const top = Math.max(...within.map((x) => x.throughput));
        if (top > bestThroughput) {
          bestThroughput = top;
          bestPreferred = p;
        }
      }
      if (bestPreferred === undefined) {
        planned -= delays.length * concurrency.length;
        continue;
      }
      for (const d of delays) {
        const pts = await sweep(n, bestPreferred, d);
        if (!pts.some((x) => x.meetsSla)) {
          planned -= (delays.length - delays.indexOf(d) - 1) * concurrency.length;
          break;
        }
      }
    }
    for (const p of points)
      if (p.meetsSla && (best === undefined || p.throughput > best.throughput)) best = p;
    if (best !== undefined) {
      planned++;
      await server.loadModel(name, {
        config: configFor(best.instances, best.preferredBatchSize, best.queueDelayUs),
      });
      recheck = await measure(best.instances, best.preferredBatchSize, best.queueDelayUs, best.concurrency);
      points.pop(); // the recheck is reported apart
    }
  } finally {
    // Put the original back: after the end, an error or an abort.
    await server.loadModel(name, { config: original }).catch((err: unknown) => {
      throw err instanceof TritonError
        ? err
        : tritonError('INTERNAL', `tune: restoring '${name}' failed: ${String(err)}`);
    });
  }
  options.onProgress?.({ done, planned: done, what: 'done' });
  const result: TuneResult = {
    model: name,
    slaP99Ms: sla,
    points,
    original,
    startedAt,
    finishedAt: new Date().toISOString(),
  };
  if (best !== undefined) {
    result.best = best;
    if (recheck !== undefined) result.recheck = recheck;
    const config = configFor(best.instances, best.preferredBatchSize, best.queueDelayUs);
    result.config = config;
    result.configText = formatModelConfig(config);
  }
  return result;
}

/** The model's config.pbtxt from the server's repositories, when readable (undefined otherwise). */
function repositoryConfig(server: Server, name: string): ModelConfig | undefined {
  for (const repo of server.repositories) {
    const file = join(repo, name, 'config.pbtxt');
    if (!existsSync(file)) continue;
    try {
      return parseModelConfigText(readFileSync(file, 'utf8')) as ModelConfig;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
