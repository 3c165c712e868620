/**
 * `tune()` and `triton-node tune`: Triton's dynamic-batching procedure run
 * in-process. Each configuration is a config-override reload (milliseconds,
 * no server restart) measured with closed-loop load from this process:
 * baseline without batching first, then for each instance count the
 * preferred batch size raised step by step until the latency SLA breaks,
 * then the queue-delay cap. The pick is the best throughput within the SLA,
 * measured again. The model's original config is always put back.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ModelMetadata } from '../api/model.js';
import type { Server } from '../api/server.js';
import { tritonError } from '../base/errors.js';
import { readRepositoryFileSync } from '../config/files.js';
import { type ModelConfig, formatModelConfig } from '../config/model-config.js';
import { parseModelConfigText } from '../config/pbtxt.js';
import { type ModelStatistics, statisticsDelta } from '../config/statistics.js';
import type { InputValue } from '../request/types.js';
import { noPickReason } from './report.js';
import type { TuneOptions, TunePoint, TuneProgress, TuneResult } from './types.js';

export type { TuneOptions, TunePoint, TuneProgress, TuneResult };

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

/** The settings of one run, resolved from the options and the model. */
interface Plan {
  inputs: Record<string, InputValue>;
  concurrency: number[];
  instances: number[];
  preferred: number[];
  delays: number[];
  durationMs: number;
  warmupMs: number;
  sla: number;
}

/** One run of the procedure: its plan, the points measured, the progress. */
class TuneRun {
  readonly points: TunePoint[] = [];
  /** Measurements taken. */
  done = 0;
  /** Steps left out (the SLA broke before them): counted as done, so the total stays put. */
  skipped = 0;
  readonly planned: number;
  readonly #model: ReturnType<Server['model']>;

  constructor(
    readonly server: Server,
    readonly name: string,
    readonly original: ModelConfig,
    readonly plan: Plan,
    readonly options: TuneOptions,
    /** The server's unload count of the model when the run began. */
    readonly unloads: number,
  ) {
    this.#model = server.model(name);
    // Every sweep at every concurrency, and the recheck of the pick.
    this.planned =
      plan.instances.length * (1 + plan.preferred.length + plan.delays.length) * plan.concurrency.length + 1;
  }

  /** Tells onProgress where the run is. */
  progress(what: string): void {
    this.options.onProgress?.({
      done: this.done + this.skipped,
      planned: this.planned,
      skipped: this.skipped,
      what,
    });
  }

  abortIfAsked(): void {
    if (this.options.signal?.aborted) {
      const err = tritonError('CANCELLED', `tune of '${this.name}' stopped`, { model: this.name });
      err.name = 'AbortError';
      throw err;
    }
  }

  /** True once the model was unloaded (by anyone) after the run began. */
  get unloaded(): boolean {
    return this.server._unloadCount(this.name) !== this.unloads;
  }

  /** Stops the run when the model was unloaded during it: tune never loads it back. */
  stopIfUnloaded(cause?: unknown): void {
    if (!this.unloaded) return;
    const err = tritonError(
      'UNAVAILABLE',
      `tune of '${this.name}' stopped: the model was unloaded during the run, and stays unloaded`,
      { model: this.name },
    );
    if (cause !== undefined) err.cause = cause;
    throw err;
  }

  /** The original config with `n` instances and the given batching. */
  configFor(n: number, p: number | null, delayUs: number): ModelConfig {
    const base = repositoryConfig(this.server, this.name) ?? this.original;
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
  }

  /** Closed-loop load from `c` workers until `end`; latencies recorded while `record()` says so. */
  async #load(
    c: number,
    end: number,
    sample: { latencies: number[]; requests: number; errors: number } | undefined,
  ) {
    const inputs = this.plan.inputs;
    const worker = async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const r = await this.#model.infer({ inputs });
          r.dispose();
          sample?.latencies.push(performance.now() - t0);
        } catch {
          if (sample) sample.errors++;
        }
        if (sample) sample.requests++;
      }
    };
    await Promise.all(Array.from({ length: c }, worker));
  }

  /** Measures the loaded configuration at concurrency `c`. */
  async measure(n: number, p: number | null, delayUs: number, c: number): Promise<TunePoint> {
    this.abortIfAsked();
    const what = p === null ? 'no batching' : `preferred ${p}, queue delay ${delayUs} µs`;
    this.progress(`instances ${n}, ${what}, concurrency ${c}`);
    await this.#load(c, performance.now() + this.plan.warmupMs, undefined);
    const before = await this.#model.statistics();
    const sample = { latencies: [] as number[], requests: 0, errors: 0 };
    const start = performance.now();
    await this.#load(c, start + this.plan.durationMs, sample);
    const seconds = (performance.now() - start) / 1000;
    const delta = statisticsDelta(before, await this.#model.statistics());
    const gpu = gpuMemoryUsed(await this.server.metrics().catch(() => ''));
    const latencies = sample.latencies.sort((a, b) => a - b);
    // Batch elements per request, as Triton counted them.
    const batch = delta.successes > 0 ? delta.inferences / delta.successes : 1;
    const point: TunePoint = {
      instances: n,
      preferredBatchSize: p,
      queueDelayUs: p === null ? 0 : delayUs,
      concurrency: c,
      throughput: ((sample.requests - sample.errors) * batch) / seconds,
      p50Ms: percentile(latencies, 0.5),
      p90Ms: percentile(latencies, 0.9),
      p99Ms: percentile(latencies, 0.99),
      queueUs: delta.meanQueueUs,
      computeUs: delta.meanComputeUs,
      meanBatchSize: delta.meanBatchSize,
      requests: sample.requests,
      errors: sample.errors,
      ...(gpu === undefined ? {} : { gpuMemoryBytes: gpu }),
      meetsSla: false,
    };
    point.meetsSla = sample.errors === 0 && latencies.length > 0 && point.p99Ms <= this.plan.sla;
    this.points.push(point);
    this.done++;
    return point;
  }

  /** Loads a configuration and measures it at every concurrency. */
  async sweep(n: number, p: number | null, delayUs: number): Promise<TunePoint[]> {
    this.abortIfAsked();
    this.stopIfUnloaded();
    await this.server.loadModel(this.name, { config: this.configFor(n, p, delayUs) });
    const out: TunePoint[] = [];
    for (const c of this.plan.concurrency) out.push(await this.measure(n, p, delayUs, c));
    return out;
  }

  /** Raises the preferred size until no concurrency stays within the SLA; the best size. */
  async raisePreferred(n: number): Promise<number | undefined> {
    const { preferred, concurrency } = this.plan;
    let best: number | undefined;
    let bestThroughput = -1;
    for (const [i, p] of preferred.entries()) {
      const within = (await this.sweep(n, p, 0)).filter((x) => x.meetsSla);
      if (within.length === 0) {
        // The first breach: larger sizes only wait longer.
        this.skipped += (preferred.length - i - 1) * concurrency.length;
        break;
      }
      const top = Math.max(...within.map((x) => x.throughput));
      if (top > bestThroughput) {
        bestThroughput = top;
        best = p;
      }
    }
    return best;
  }

  /** The queue-delay caps for size `p`, until the SLA breaks. */
  async raiseDelay(n: number, p: number): Promise<void> {
    const { delays, concurrency } = this.plan;
    for (const [i, d] of delays.entries()) {
      if (!(await this.sweep(n, p, d)).some((x) => x.meetsSla)) {
        this.skipped += (delays.length - i - 1) * concurrency.length;
        return;
      }
    }
  }
}

/** The plan of a run, from the options and the model's config and metadata. */
async function planOf(
  server: Server,
  name: string,
  original: ModelConfig,
  options: TuneOptions,
): Promise<Plan> {
  const mbs = Number(original.max_batch_size ?? 0);
  const meta = await server.model(name).metadata();
  const preferred = options.preferredBatchSizes ?? [2, 4, 8, 16, 32, 64, 128, 256];
  return {
    inputs: options.inputs ?? defaultInputs(meta, mbs > 0),
    concurrency: [...(options.concurrency ?? [1, 8, 32])].sort((a, b) => a - b),
    instances: [...(options.instances ?? [1, 2])],
    preferred: mbs > 0 ? preferred.filter((p) => p <= mbs) : [],
    delays: [...(options.queueDelaysUs ?? [100, 500, 1000, 5000, 10000])],
    durationMs: options.durationMs ?? 3000,
    warmupMs: options.warmupMs ?? 300,
    sla: options.slaP99Ms,
  };
}

/** Refuses what batches internally (decoupled models, LLM backends) unless forced. */
function refuseInternalBatching(name: string, original: ModelConfig, force: boolean | undefined): void {
  const backend = original.backend ?? '';
  if (force || (original.model_transaction_policy?.decoupled !== true && !LLM_BACKENDS.has(backend))) return;
  throw tritonError(
    'UNSUPPORTED',
    `tune: model '${name}' is ${LLM_BACKENDS.has(backend) ? `an LLM backend (${backend})` : 'decoupled'}: it batches internally, so Triton's batching rarely helps; pass force to tune it anyway`,
    { model: name },
  );
}

/**
 * Runs the procedure on `name` (loaded, explicit model control) and returns
 * every point, the pick and the recommended config. The original config is
 * put back at the end, on an error and on `signal`.
 */
export async function tune(server: Server, name: string, options: TuneOptions): Promise<TuneResult> {
  checkOptions(options);
  // Two runs on one model would reload each other's configurations and
  // measure each other's load: the second is refused while the first runs.
  const names = tuning.get(server) ?? new Set<string>();
  tuning.set(server, names);
  if (names.has(name)) {
    throw tritonError(
      'UNAVAILABLE',
      `tune: model '${name}' is already being tuned; wait for that run to end`,
      {
        model: name,
      },
    );
  }
  names.add(name);
  try {
    return await tuneOnce(server, name, options);
  } finally {
    names.delete(name);
  }
}

/** The models being tuned, per server. */
const tuning = new WeakMap<Server, Set<string>>();

async function tuneOnce(server: Server, name: string, options: TuneOptions): Promise<TuneResult> {
  const unloads = server._unloadCount(name);
  const startedAt = new Date().toISOString();
  const original = await server.model(name).config();
  refuseInternalBatching(name, original, options.force);
  const run = new TuneRun(
    server,
    name,
    original,
    await planOf(server, name, original, options),
    options,
    unloads,
  );
  let best: TunePoint | undefined;
  let recheck: TunePoint | undefined;
  try {
    for (const n of run.plan.instances) {
      await run.sweep(n, null, 0);
      const p = await run.raisePreferred(n);
      if (p === undefined) run.skipped += run.plan.delays.length * run.plan.concurrency.length;
      else await run.raiseDelay(n, p);
    }
    for (const p of run.points)
      if (p.meetsSla && (best === undefined || p.throughput > best.throughput)) best = p;
    if (best === undefined) run.skipped++;
    else {
      run.stopIfUnloaded();
      await server.loadModel(name, {
        config: run.configFor(best.instances, best.preferredBatchSize, best.queueDelayUs),
      });
      recheck = await run.measure(
        best.instances,
        best.preferredBatchSize,
        best.queueDelayUs,
        best.concurrency,
      );
      run.points.pop(); // the recheck is reported apart
    }
  } catch (err) {
    // A request or a statistics call failed because the model went: say why.
    run.stopIfUnloaded(err);
    throw err;
  } finally {
    // Put the original back: after the end, an error or an abort; not
    // after an unload, which stands.
    if (!run.unloaded) {
      await server.loadModel(name, { config: original });
    }
  }
  run.progress('done');
  const result: TuneResult = {
    model: name,
    slaP99Ms: run.plan.sla,
    points: run.points,
    original,
    startedAt,
    finishedAt: new Date().toISOString(),
  };
  if (best === undefined) result.reason = noPickReason(result);
  else {
    result.best = best;
    if (recheck !== undefined) result.recheck = recheck;
    result.config = run.configFor(best.instances, best.preferredBatchSize, best.queueDelayUs);
    result.configText = formatModelConfig(result.config);
  }
  return result;
}

/** The model's config.pbtxt from the server's repositories, when readable (undefined otherwise). */
function repositoryConfig(server: Server, name: string): ModelConfig | undefined {
  for (const repo of server.repositories) {
    const file = join(repo, name, 'config.pbtxt');
    if (!existsSync(file)) continue;
    try {
      return parseModelConfigText(readRepositoryFileSync(file)) as ModelConfig;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
