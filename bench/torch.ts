/**
 * `bench --vs torch`: real GPU models through triton-node (Triton's pytorch
 * and python backends) against the same model files driven by torch
 * directly (bench/torch/driver.py, a Python process on the same GPU, in the
 * same run), and ResNet-50 exported to ONNX through onnxruntime-node on the
 * CPU (the one in-process choice a Node service has without Triton).
 *
 * triton-node's side is a closed loop of single-item requests at each
 * concurrency, inputs from pageable host memory, pinned memory
 * (cuda.allocHost) or device memory (cuda.alloc), outputs back in host
 * memory; Triton's dynamic batcher forms the batches. torch's side is one
 * Python thread running batches of each size (its best batch is its
 * ceiling). Needs a GPU, real Triton with the pytorch and python backends,
 * and a Python with torch (the models are made by test/gpu/torch/make_models.py).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Manifest,
  makeGpuModels,
  maxAbsDiff,
  readF32,
  readTexts,
  row,
  torchMissing,
  torchPython,
} from '@triton-node/test-support/gpu/torch/models.js';
import type * as Ort from 'onnxruntime-node';
import { type CudaBuffer, type HostBuffer, Server, cuda } from 'triton-node';
import { type LoopRun, closedLoop } from './closed-loop.js';

const DRIVER = fileURLToPath(new URL('./torch/driver.py', import.meta.url));
const IMAGE = 3 * 224 * 224;

export type TorchPlacement = 'host' | 'pinned' | 'device';
const PLACEMENTS: TorchPlacement[] = ['host', 'pinned', 'device'];

export interface TorchBenchOptions {
  concurrency: number[];
  durationS: number;
  warmupS: number;
  library: string;
  backendDirectory?: string;
  /** Where the models are (made there when missing); a temporary folder when absent. */
  modelsDir?: string;
  /** Which triton-node models: resnet50_pt, resnet50_py, encoder. */
  models: string[];
  /** GPU instances of each model (default: the generated configs' 1). */
  instances?: number;
  /** The models' max_batch_size (default: the generated configs'). */
  maxBatchSize?: number;
  out: string;
  progress: (what: string) => void;
}

interface TorchCase {
  model: string;
  placement: string;
  batch: number;
  calls: number;
  itemsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface TritonCase extends LoopRun {
  model: string;
  placement: TorchPlacement;
  /** Items per second (one item per request). */
  itemsPerSecond: number;
}

/** One printed comparison of triton-node with torch's anchor. */
export interface Comparison {
  model: string;
  placement: TorchPlacement;
  concurrency: number;
  triton: TritonCase;
  /** torch at batch 1 (c=1: latency) or its best batch (c > 1: throughput), same placement. */
  torch: TorchCase | undefined;
  /** c=1: torch's p50 over triton-node's (≥ 1 is as fast); else triton-node's items/s over torch's. */
  ratio: number | undefined;
}

function torchSide(
  dir: string,
  batches: number[],
  opts: TorchBenchOptions,
): { cases: TorchCase[]; gpu?: string } {
  const run = spawnSync(
    torchPython(),
    [
      DRIVER,
      '--repository',
      dir,
      '--batches',
      batches.join(','),
      '--duration',
      String(opts.durationS),
      '--warmup',
      String(Math.max(1, opts.warmupS)),
      '--models',
      opts.models.includes('encoder') ? 'resnet50,encoder' : 'resnet50',
    ],
    { encoding: 'utf8', timeout: 1_200_000, maxBuffer: 64 << 20 },
  );
  if (run.status !== 0) throw new Error(`bench/torch/driver.py failed: ${run.error?.message ?? run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { cases: TorchCase[]; gpu?: string };
}

/** Each slot's own input, in the placement asked for (disposed by the caller). */
function slotInputs(
  images: Float32Array,
  count: number,
  where: TorchPlacement,
): Array<Float32Array | HostBuffer | CudaBuffer> {
  const n = images.length / IMAGE;
  return Array.from({ length: count }, (_, slot) => {
    const values = images.slice((slot % n) * IMAGE, ((slot % n) + 1) * IMAGE);
    if (where === 'host') return values;
    const b = where === 'pinned' ? cuda.allocHost(values.byteLength) : cuda.alloc(values.byteLength);
    b.copyFrom(values);
    return b;
  });
}

async function tritonImages(
  server: Server,
  model: string,
  images: Float32Array,
  opts: TorchBenchOptions,
): Promise<TritonCase[]> {
  const input = model === 'resnet50_pt' ? 'INPUT__0' : 'INPUT0';
  const handle = server.model(model);
  const out: TritonCase[] = [];
  for (const placement of PLACEMENTS) {
    for (const c of opts.concurrency) {
      const inputs = slotInputs(images, c, placement);
      try {
        const run = await closedLoop(
          c,
          async (slot) => {
            const r = await handle.infer({
              inputs: { [input]: { data: inputs[slot]!, shape: [1, 3, 224, 224], datatype: 'FP32' } },
            });
            r.dispose();
          },
          opts,
        );
        const row: TritonCase = { model, placement, ...run, itemsPerSecond: run.throughput };
        opts.progress(
          `${model} ${placement} c=${c}: ${row.itemsPerSecond.toFixed(0)} items/s, p50 ${row.p50Ms.toFixed(2)} ms`,
        );
        out.push(row);
      } finally {
        for (const b of inputs) if (!(b instanceof Float32Array)) b.dispose();
      }
    }
  }
  return out;
}

async function tritonTexts(server: Server, texts: string[], opts: TorchBenchOptions): Promise<TritonCase[]> {
  const handle = server.model('encoder');
  const out: TritonCase[] = [];
  for (const c of opts.concurrency) {
    const run = await closedLoop(
      c,
      async (slot, i) => {
        const text = texts[(slot + i) % texts.length]!;
        const r = await handle.infer({
          inputs: { TEXT: { data: [text], shape: [1, 1], datatype: 'BYTES' } },
        });
        r.dispose();
      },
      opts,
    );
    out.push({ model: 'encoder', placement: 'host', ...run, itemsPerSecond: run.throughput });
    opts.progress(`encoder c=${c}: ${run.throughput.toFixed(0)} texts/s, p50 ${run.p50Ms.toFixed(2)} ms`);
  }
  return out;
}

interface OnnxAnchor {
  available: boolean;
  reason?: string;
  /** Largest |difference| of onnxruntime-node's CPU answers to torch's GPU answers (TF32 convolutions there). */
  maxAbsDiffToTorch?: number;
  runs?: LoopRun[];
}

async function onnxAnchor(dir: string, manifest: Manifest, opts: TorchBenchOptions): Promise<OnnxAnchor> {
  const file = path.join(dir, 'resnet50.onnx');
  if (!existsSync(file)) return { available: false, reason: 'no resnet50.onnx (see resnet50.onnx.missing)' };
  const ort = (await import('onnxruntime-node')) as typeof Ort;
  const session = await ort.InferenceSession.create(file, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Math.max(1, os.cpus().length),
  });
  const images = readF32(dir, manifest.resnet50.inputs);
  const single = readF32(dir, manifest.resnet50.single);
  let worst = 0;
  for (let i = 0; i < manifest.resnet50.images; i += 1) {
    const x = new ort.Tensor('float32', images.slice(i * IMAGE, (i + 1) * IMAGE), [1, 3, 224, 224]);
    const y = (await session.run({ input: x })).logits!.data as Float32Array;
    worst = Math.max(worst, maxAbsDiff(y, row(single, i, 1000)));
  }
  const runs: LoopRun[] = [];
  for (const c of opts.concurrency.filter((n) => n <= 8)) {
    const x = new ort.Tensor('float32', images.slice(0, IMAGE), [1, 3, 224, 224]);
    runs.push(await closedLoop(c, async () => void (await session.run({ input: x })), opts));
    opts.progress(`onnxruntime-node CPU c=${c}: ${runs.at(-1)!.throughput.toFixed(1)} images/s`);
  }
  await session.release();
  return { available: true, maxAbsDiffToTorch: worst, runs };
}

function compare(triton: TritonCase[], torch: TorchCase[]): Comparison[] {
  const torchModel = (m: string) => (m === 'encoder' ? 'encoder' : 'resnet50');
  return triton.map((t) => {
    const same = torch.filter((c) => c.model === torchModel(t.model) && c.placement === t.placement);
    let anchor: TorchCase | undefined;
    let ratio: number | undefined;
    if (t.concurrency === 1) {
      anchor = same.find((c) => c.batch === 1);
      ratio = anchor === undefined ? undefined : anchor.p50Ms / t.p50Ms;
    } else {
      anchor = same.reduce<TorchCase | undefined>(
        (best, c) => (best === undefined || c.itemsPerSecond > best.itemsPerSecond ? c : best),
        undefined,
      );
      ratio = anchor === undefined ? undefined : t.itemsPerSecond / anchor.itemsPerSecond;
    }
    return {
      model: t.model,
      placement: t.placement,
      concurrency: t.concurrency,
      triton: t,
      torch: anchor,
      ratio,
    };
  });
}

export function formatComparison(c: Comparison): string {
  const t = c.triton;
  const head = `${c.model.padEnd(12)} ${c.placement.padEnd(6)} c=${String(c.concurrency).padEnd(3)}`;
  const node = `triton-node ${t.itemsPerSecond.toFixed(0).padStart(6)} items/s p50 ${t.p50Ms.toFixed(2)} ms p99 ${t.p99Ms.toFixed(2)} ms loop p99 ${t.eventLoopP99Ms.toFixed(2)} ms`;
  if (c.torch === undefined) return `${head} ${node} | torch: none`;
  const what = c.concurrency === 1 ? 'latency' : 'throughput';
  const anchor = `torch batch ${c.torch.batch} ${c.torch.itemsPerSecond.toFixed(0)} items/s p50 ${c.torch.p50Ms.toFixed(2)} ms`;
  return `${head} ${node} | ${anchor} | ${what} ratio ${c.ratio?.toFixed(2)}`;
}

export async function benchVsTorch(opts: TorchBenchOptions): Promise<number> {
  if (!cuda.isAvailable()) throw new Error(`bench --vs torch needs a GPU: ${cuda.unavailableReason()}`);
  const missing = torchMissing();
  if (missing !== false) throw new Error(`bench --vs torch: ${missing}`);
  const dir = opts.modelsDir ?? mkdtempSync(path.join(os.tmpdir(), 'tn-bench-torch-'));
  opts.progress(`models in ${dir}`);
  const manifest = await makeGpuModels(dir, { onnx: true });
  const batches = [...new Set([...opts.concurrency, 16])].sort((a, b) => a - b);
  opts.progress(`torch side: batches ${batches.join(',')}`);
  const torch = torchSide(dir, batches, opts);

  const server = await Server.create({
    modelRepository: dir,
    library: opts.library,
    ...(opts.backendDirectory === undefined ? {} : { backendDirectory: opts.backendDirectory }),
    exitTimeoutSeconds: 30,
  });
  const triton: TritonCase[] = [];
  try {
    const images = readF32(dir, manifest.resnet50.inputs);
    for (const model of opts.models) {
      await server.loadModel(model);
      if (opts.instances !== undefined || opts.maxBatchSize !== undefined) {
        // The same model with other settings: its config, changed, loaded again.
        const config = { ...(await server.model(model).config()) } as Record<string, unknown>;
        if (opts.instances !== undefined) {
          config.instance_group = [{ kind: 'KIND_GPU', count: opts.instances, gpus: [0] }];
        }
        if (opts.maxBatchSize !== undefined) config.max_batch_size = opts.maxBatchSize;
        await server.loadModel(model, { config: config as never });
        opts.progress(
          `${model}: ${opts.instances ?? 1} instance(s), max_batch_size ${config.max_batch_size}`,
        );
      }
      if (model === 'encoder') triton.push(...(await tritonTexts(server, readTexts(dir, manifest), opts)));
      else triton.push(...(await tritonImages(server, model, images, opts)));
      await server.unloadModel(model);
    }
  } finally {
    await server.stop();
  }
  const onnx = await onnxAnchor(dir, manifest, opts).catch((e: unknown) => ({
    available: false,
    reason: e instanceof Error ? e.message : String(e),
  }));

  const comparisons = compare(triton, torch.cases);
  const title = `triton-node bench --vs torch: ${manifest.gpu}, torch ${manifest.torch}, ${os.cpus().length} CPUs`;
  process.stdout.write(`\n${title}\n`);
  for (const c of comparisons) process.stdout.write(`${formatComparison(c)}\n`);
  process.stdout.write('\ntorch direct (one Python thread, batch → GPU → host):\n');
  for (const c of torch.cases) {
    process.stdout.write(
      `  ${c.model.padEnd(9)} ${c.placement.padEnd(6)} batch ${String(c.batch).padEnd(3)} ${c.itemsPerSecond.toFixed(0).padStart(6)} items/s p50 ${c.p50Ms.toFixed(2)} ms p99 ${c.p99Ms.toFixed(2)} ms\n`,
    );
  }
  if (onnx.available) {
    const o = onnx as Required<OnnxAnchor>;
    process.stdout.write(
      `\nonnxruntime-node (CPU) resnet50: max |diff| to torch on the GPU ${o.maxAbsDiffToTorch.toExponential(2)}; ${o.runs.map((r) => `c=${r.concurrency} ${r.throughput.toFixed(1)} images/s p50 ${r.p50Ms.toFixed(1)} ms loop p99 ${r.eventLoopP99Ms.toFixed(1)} ms`).join('; ')}\n`,
    );
  } else process.stdout.write(`\nonnxruntime-node anchor not run: ${onnx.reason}\n`);
  await mkdir(opts.out, { recursive: true });
  const stem = path.join(opts.out, `torch-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  await writeFile(
    `${stem}.json`,
    `${JSON.stringify({ title, manifest, torch, triton, comparisons, onnx, options: { ...opts, progress: undefined } }, null, 2)}\n`,
  );
  process.stdout.write(`\nresults: ${stem}.json\n`);
  return triton.some((t) => t.errors > 0) ? 1 : 0;
}
