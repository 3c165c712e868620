/**
 * `bench --vs onnxruntime-node`: real ONNX models (PaddleOCR detection and
 * direction classifier, Silero VAD) through triton-node (Triton's ONNX
 * Runtime backend) and through onnxruntime-node directly, in one process and
 * one run, with the same ONNX Runtime thread settings on both sides. Each
 * case is a closed loop at one concurrency; besides requests/s and latency it
 * records the event loop's p99 delay over the window
 * (perf_hooks.monitorEventLoopDelay): the cost a service pays on its one JS
 * thread for each way of running a model.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type RealModelFiles,
  type RealRepositoryOptions,
  makeRealModelRepository,
  realModelConfigs,
  realModelFiles,
} from '@triton-node/test-support/backends/real-models.js';
import type * as Ort from 'onnxruntime-node';
import { type Model, type Server, formatModelConfig } from 'triton-node';
import { type LoopRun, type Once, closedLoop } from './closed-loop.js';

export type OnnxModelName = 'ocr_det' | 'ocr_cls' | 'silero_vad';
export const ONNX_MODELS: readonly OnnxModelName[] = ['ocr_det', 'ocr_cls', 'silero_vad'];
export type OnnxSide = 'triton-node' | 'onnxruntime-node';
const SIDES: readonly OnnxSide[] = ['triton-node', 'onnxruntime-node'];

export interface OnnxBenchOptions {
  models: OnnxModelName[];
  concurrency: number[];
  durationS: number;
  warmupS: number;
  rounds: number;
  library: string;
  backendDirectory?: string;
  /** Triton side: instances per model; onnxruntime-node side: sessions per model (round robin). */
  instances: number;
  /** ONNX Runtime intra-op threads per Triton instance and per onnxruntime-node session. */
  intraOpThreads: number;
  /**
   * 'gpu': KIND_GPU instances on the Triton side and the CUDA execution
   * provider (then CPU) on the onnxruntime-node side, which needs a
   * libonnxruntime.so.1 with CUDA loaded first: the GPU Triton backend's.
   */
  kind: 'cpu' | 'gpu';
  /** Triton side: dynamic batching (ocr_det, ocr_cls) up to this batch size; 0: none (each request runs alone). */
  maxBatchSize: number;
  /** Triton side: the dynamic batcher's queue-delay cap, µs. */
  maxQueueDelayUs: number;
  /** ocr_det's input side (the image is square, a multiple of 32). */
  detSize: number;
  /** silero_vad: chunks per sequence (each slot runs one sequence after another). */
  vadSequenceLength: number;
  out: string;
  progress: (what: string) => void;
}

export interface OnnxRun extends LoopRun {
  side: OnnxSide;
  model: OnnxModelName;
}

export interface OnnxCase {
  model: OnnxModelName;
  concurrency: number;
  /** Median of each metric over the rounds, per side. */
  median: Partial<Record<OnnxSide, OnnxRun>>;
  rounds: Partial<Record<OnnxSide, OnnxRun[]>>;
  /** triton-node req/s over onnxruntime-node req/s. */
  ratio: number;
}

interface Workload {
  triton: Once;
  ort: Once;
  /** Per-concurrency state (VAD's sequences) is reset before each run. */
  reset(concurrency: number): void;
}

/** Pseudo-random values in [-1, 1): the same bytes on both sides, deterministic. */
function noise(length: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = ((x >>> 0) / 2 ** 32) * 2 - 1;
  }
  return out;
}

function sessionOptions(opts: OnnxBenchOptions): Ort.InferenceSession.SessionOptions {
  // What Triton's onnxruntime backend sets by default (ORT_ENABLE_ALL,
  // sequential execution) with the thread counts the Triton side is given.
  return {
    intraOpNumThreads: opts.intraOpThreads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    executionProviders: opts.kind === 'gpu' ? ['cuda', 'cpu'] : ['cpu'],
  };
}

class RoundRobin<T> {
  private next = 0;
  constructor(private readonly items: T[]) {}
  take(): T {
    const item = this.items[this.next % this.items.length]!;
    this.next++;
    return item;
  }
}

async function sessions(
  ort: typeof Ort,
  file: string,
  opts: OnnxBenchOptions,
): Promise<RoundRobin<Ort.InferenceSession>> {
  const list: Ort.InferenceSession[] = [];
  for (let i = 0; i < opts.instances; i++) {
    list.push(await ort.InferenceSession.create(file, sessionOptions(opts)));
  }
  return new RoundRobin(list);
}

/** An image-shaped model (ocr_det, ocr_cls): one float32 NCHW input `x`, batch 1. */
async function imageWorkload(
  ort: typeof Ort,
  model: Model,
  file: string,
  shape: number[],
  opts: OnnxBenchOptions,
): Promise<Workload> {
  const data = noise(
    shape.reduce((a, b) => a * b, 1),
    7,
  );
  const pool = await sessions(ort, file, opts);
  const tensor = new ort.Tensor('float32', data, shape);
  return {
    reset() {},
    async triton() {
      const result = await model.infer({ inputs: { x: { data, shape } } });
      for (const name in result.outputs) result.outputs[name]!.dispose?.();
    },
    async ort() {
      const outputs = await pool.take().run({ x: tensor });
      for (const name in outputs) outputs[name]!.dispose();
    },
  };
}

/**
 * Silero VAD: each slot is a stream of audio, one sequence of
 * `vadSequenceLength` 512-sample chunks after another. Triton keeps h and c
 * as implicit state of the sequence; onnxruntime-node's caller keeps them.
 */
async function vadWorkload(
  ort: typeof Ort,
  model: Model,
  file: string,
  opts: OnnxBenchOptions,
): Promise<Workload> {
  const chunk = noise(512, 11).map((v) => v * 0.1);
  const pool = await sessions(ort, file, opts);
  const input = new ort.Tensor('float32', chunk, [1, 512]);
  const sr = new ort.Tensor('int64', BigInt64Array.of(16000n), []);
  const zeros = () => new ort.Tensor('float32', new Float32Array(2 * 64), [2, 1, 64]);
  let states: { h: Ort.Tensor; c: Ort.Tensor }[] = [];
  let sequences: bigint[] = [];
  let nextSequence = 1n;
  const length = opts.vadSequenceLength;
  return {
    reset(concurrency) {
      states = Array.from({ length: concurrency }, () => ({ h: zeros(), c: zeros() }));
      sequences = Array.from({ length: concurrency }, () => 0n);
    },
    async triton(slot, i) {
      const start = i % length === 0;
      if (start) sequences[slot] = nextSequence++;
      const result = await model.infer({
        inputs: {
          input: { data: chunk, shape: [1, 512] },
          sr: { data: BigInt64Array.of(16000n), shape: [1] },
        },
        correlationId: sequences[slot]!,
        sequenceStart: start,
        sequenceEnd: i % length === length - 1,
      });
      for (const name in result.outputs) result.outputs[name]!.dispose?.();
    },
    async ort(slot, i) {
      const state = states[slot]!;
      if (i % length === 0) {
        state.h = zeros();
        state.c = zeros();
      }
      const out = await pool.take().run({ input, sr, h: state.h, c: state.c });
      state.h = out.hn!;
      state.c = out.cn!;
      out.output!.dispose();
    },
  };
}

/** The closed loop: `concurrency` slots, each resubmitting as soon as its request completed. */
async function measure(
  side: OnnxSide,
  model: OnnxModelName,
  concurrency: number,
  once: Once,
  opts: OnnxBenchOptions,
): Promise<OnnxRun> {
  return { side, model, ...(await closedLoop(concurrency, once, opts)) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function medianRun(runs: OnnxRun[]): OnnxRun | undefined {
  const first = runs[0];
  if (first === undefined) return undefined;
  const m = (f: (r: OnnxRun) => number) => median(runs.map(f));
  const { firstError: _, ...rest } = first;
  const run: OnnxRun = {
    ...rest,
    requests: m((r) => r.requests),
    throughput: m((r) => r.throughput),
    p50Ms: m((r) => r.p50Ms),
    p99Ms: m((r) => r.p99Ms),
    eventLoopP99Ms: m((r) => r.eventLoopP99Ms),
    eventLoopMaxMs: m((r) => r.eventLoopMaxMs),
    eventLoopSamples: m((r) => r.eventLoopSamples),
    errors: runs.reduce((n, r) => n + r.errors, 0),
  };
  const firstError = runs.find((r) => r.firstError !== undefined)?.firstError;
  if (firstError !== undefined) run.firstError = firstError;
  return run;
}

function fixed(value: number | undefined, digits: number): string {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);
}

/** The case's line, `onnx <model> c=<N> triton-node <req/s> onnxruntime-node <req/s> ratio <R>x`, then the details. */
export function formatCase(c: OnnxCase): string {
  const t = c.median['triton-node'];
  const o = c.median['onnxruntime-node'];
  const line = `onnx ${c.model} c=${c.concurrency} triton-node ${fixed(t?.throughput, 1)} onnxruntime-node ${fixed(o?.throughput, 1)} ratio ${fixed(c.ratio, 2)}x`;
  const detail = (side: OnnxSide, r: OnnxRun | undefined) =>
    r === undefined
      ? `${side} not run`
      : `${side} p50 ${fixed(r.p50Ms, 2)} ms p99 ${fixed(r.p99Ms, 2)} ms event-loop p99 ${fixed(r.eventLoopP99Ms, 2)} ms` +
        (r.errors > 0 ? ` (${r.errors} errors: ${r.firstError})` : '');
  return `${line}\n    ${detail('triton-node', t)} | ${detail('onnxruntime-node', o)}`;
}

/** Latency (p50) against throughput per model, and the event loop's p99 delay per concurrency. */
export async function renderOnnxChart(cases: OnnxCase[], title: string): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const values = cases.flatMap((c) =>
    SIDES.flatMap((side) => {
      const r = c.median[side];
      if (r === undefined) return [];
      return [
        {
          model: c.model,
          side,
          concurrency: c.concurrency,
          label: `c=${c.concurrency}`,
          throughput: r.throughput,
          p50: r.p50Ms,
          eventLoopP99: r.eventLoopP99Ms,
        },
      ];
    }),
  );
  const latency = {
    x: { field: 'throughput', type: 'quantitative', title: 'requests/s', scale: { zero: true } },
    y: { field: 'p50', type: 'quantitative', title: 'p50 latency (ms)', scale: { type: 'log' } },
    color: { field: 'side', type: 'nominal', title: 'side' },
  } as const;
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: { values },
    vconcat: [
      {
        facet: { column: { field: 'model', type: 'nominal', title: null } },
        spec: {
          width: 240,
          height: 200,
          layer: [
            {
              mark: { type: 'line', point: { size: 60 } },
              encoding: { ...latency, order: { field: 'concurrency', type: 'quantitative' } },
            },
            {
              mark: { type: 'text', align: 'left', dx: 6, dy: -6, fontSize: 10 },
              encoding: { ...latency, text: { field: 'label', type: 'nominal' } },
            },
          ],
        },
        resolve: { scale: { x: 'independent', y: 'independent' } },
      },
      {
        facet: { column: { field: 'model', type: 'nominal', title: null } },
        spec: {
          width: 240,
          height: 160,
          mark: { type: 'bar' },
          encoding: {
            x: { field: 'label', type: 'nominal', title: 'concurrency', sort: { field: 'concurrency' } },
            xOffset: { field: 'side', type: 'nominal' },
            y: {
              field: 'eventLoopP99',
              type: 'quantitative',
              title: 'event loop p99 delay (ms)',
            },
            color: { field: 'side', type: 'nominal', title: 'side' },
          },
        },
        resolve: { scale: { y: 'independent' } },
      },
    ],
  };
  const compiled = vegaLite.compile(spec as unknown as Parameters<typeof vegaLite.compile>[0]);
  const view = new vega.View(vega.parse(compiled.spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
}

async function workloads(
  ort: typeof Ort,
  server: Server,
  files: RealModelFiles,
  opts: OnnxBenchOptions,
): Promise<Map<OnnxModelName, Workload>> {
  const out = new Map<OnnxModelName, Workload>();
  for (const name of opts.models) {
    const model = server.model(name);
    out.set(
      name,
      name === 'silero_vad'
        ? await vadWorkload(ort, model, files.sileroVad, opts)
        : name === 'ocr_det'
          ? await imageWorkload(ort, model, files.ocrDet, [1, 3, opts.detSize, opts.detSize], opts)
          : await imageWorkload(ort, model, files.ocrCls, [1, 3, 48, 192], opts),
    );
  }
  return out;
}

/**
 * The real models' repository (test/backends/real-models.ts) with the run's
 * instances and threads; the batching models' configs are then written again
 * with the run's max_batch_size, or without dynamic batching for 0.
 */
function writeRepository(dir: string, opts: OnnxBenchOptions): void {
  const options: RealRepositoryOptions = {
    models: opts.models,
    instances: opts.instances,
    intraOpThreads: opts.intraOpThreads,
    interOpThreads: 1,
    maxQueueDelayMicroseconds: opts.maxQueueDelayUs,
  };
  makeRealModelRepository(dir, options);
  const configs = realModelConfigs(options);
  for (const name of opts.models) {
    let config = configs[name];
    if (name !== 'silero_vad') {
      const { dynamic_batching, ...rest } = config;
      config =
        opts.maxBatchSize === 0 ? rest : { ...rest, dynamic_batching, max_batch_size: opts.maxBatchSize };
    }
    if (opts.kind === 'gpu')
      config = { ...config, instance_group: [{ kind: 'KIND_GPU', count: opts.instances }] };
    writeFileSync(path.join(dir, name, 'config.pbtxt'), formatModelConfig(config));
  }
}

/** Every round of both sides of one model at one concurrency: the case, its medians and ratio. */
async function runCase(
  model: OnnxModelName,
  concurrency: number,
  w: Workload,
  opts: OnnxBenchOptions,
): Promise<OnnxCase> {
  const rounds: Partial<Record<OnnxSide, OnnxRun[]>> = {};
  for (let round = 0; round < opts.rounds; round++) {
    // A then B, then B then A: neither side always runs second.
    for (const side of round % 2 === 0 ? SIDES : [...SIDES].reverse()) {
      opts.progress(`${model} c=${concurrency} ${side} round ${round + 1}/${opts.rounds}`);
      w.reset(concurrency);
      const run = await measure(side, model, concurrency, side === 'triton-node' ? w.triton : w.ort, opts);
      const list = rounds[side] ?? [];
      list.push(run);
      rounds[side] = list;
    }
  }
  const median: OnnxCase['median'] = {};
  for (const side of SIDES) {
    const r = medianRun(rounds[side] ?? []);
    if (r !== undefined) median[side] = r;
  }
  const t = median['triton-node']?.throughput ?? Number.NaN;
  const o = median['onnxruntime-node']?.throughput ?? Number.NaN;
  return { model, concurrency, median, rounds, ratio: o > 0 ? t / o : Number.NaN };
}

/** The libonnxruntime files mapped into this process (one, when the SONAME rule held). */
function onnxRuntimeFiles(): string[] {
  try {
    const maps = readFileSync('/proc/self/maps', 'utf8');
    return [...new Set([...maps.matchAll(/\s(\/\S*libonnxruntime\.so[^\s]*)$/gm)].map((m) => m[1]!))];
  } catch {
    return [];
  }
}

interface RunFacts {
  info: unknown;
  libraryName: string;
  ortVersions: unknown;
  ortVersion: string;
  loadBefore: number;
  onnxRuntimeFiles: string[];
}

/** The JSON record and the chart, side by side in --out. */
async function writeRecord(cases: OnnxCase[], facts: RunFacts, opts: OnnxBenchOptions): Promise<void> {
  const title = `triton-node vs onnxruntime-node ${facts.ortVersion}: ${facts.libraryName}, ${os.cpus().length} CPUs, ${opts.instances} ${opts.kind.toUpperCase()} instance(s) x ${opts.intraOpThreads} thread(s)`;
  await mkdir(opts.out, { recursive: true });
  const stem = path.join(opts.out, `onnx-${timestamp()}`);
  const { progress: _, out: __, models, concurrency, library, backendDirectory, ...settings } = opts;
  const record = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      // Other work on the machine skews every number; the 1-minute load before and after.
      loadAverage1m: { before: facts.loadBefore, after: os.loadavg()[0] },
    },
    library,
    backendDirectory,
    libraryInfo: facts.info,
    onnxruntimeNode: facts.ortVersions,
    // Which libonnxruntime.so.1 both sides ran on (the first loaded serves both).
    onnxRuntimeFiles: facts.onnxRuntimeFiles,
    models,
    concurrency,
    settings,
    cases,
  };
  await writeFile(`${stem}.json`, `${JSON.stringify(record, null, 2)}\n`);
  await writeFile(`${stem}.svg`, await renderOnnxChart(cases, title));
  process.stdout.write(`\n${title}\nresults: ${stem}.json\nchart:   ${stem}.svg\n`);
}

/**
 * Runs every model, concurrency, round and side; prints a line per case;
 * writes JSON and SVG. Returns the exit code. The models load in Triton
 * before onnxruntime-node is imported: the backend's libonnxruntime.so.1
 * (a GPU Triton's has the CUDA and TensorRT providers) is then the one both
 * sides use, not the npm package's.
 */
export async function benchVsOnnxruntime(opts: OnnxBenchOptions): Promise<number> {
  const { Server, libraryInfo } = await import('triton-node');
  const files = realModelFiles();
  if (typeof files === 'string') throw new Error(`the real ONNX models are missing: ${files}`);
  const loadBefore = os.loadavg()[0]!;
  const repository = mkdtempSync(path.join(os.tmpdir(), 'triton-node-onnx-bench-'));
  writeRepository(repository, opts);
  const server = await Server.create({
    modelRepository: repository,
    library: opts.library,
    ...(opts.backendDirectory === undefined ? {} : { backendDirectory: opts.backendDirectory }),
    modelControlMode: 'explicit',
    log: { info: false, warn: false },
    exitTimeoutSeconds: 5,
  });
  const cases: OnnxCase[] = [];
  let ort: typeof Ort;
  try {
    for (const m of opts.models) await server.loadModel(m);
    ort = (await import('onnxruntime-node')) as typeof Ort;
    const work = await workloads(ort, server, files, opts);
    for (const model of opts.models) {
      for (const concurrency of opts.concurrency) {
        const c = await runCase(model, concurrency, work.get(model)!, opts);
        cases.push(c);
        process.stdout.write(`${formatCase(c)}\n`);
      }
    }
  } finally {
    await server.stop();
    rmSync(repository, { recursive: true, force: true });
  }
  const info = libraryInfo();
  await writeRecord(
    cases,
    {
      info,
      libraryName: info?.isFake ? 'fake engine' : path.basename(opts.library),
      ortVersions: ort.env.versions,
      ortVersion: ort.env.versions.node ?? '',
      loadBefore,
      onnxRuntimeFiles: onnxRuntimeFiles(),
    },
    opts,
  );
  const failures = cases.flatMap((c) => Object.values(c.rounds).flat()).filter((r) => r.errors > 0);
  return failures.length > 0 ? 1 : 0;
}
