/**
 * `bench --vs torch --models llm`: the GPU LLM of test/gpu/llm (a
 * Llama-shaped transformers model served by a decoupled Python model with
 * continuous batching) through triton-node, at each concurrency of streams,
 * beside transformers' own batched `generate` on the same GPU and weights
 * (bench/llm/driver.py, run first, in its own process).
 *
 * triton-node's side, per concurrency c (closed loops, `rounds` requests each):
 * - in-process: `model.stream()` from this thread, greedy, `tokens` new tokens;
 * - the OpenAI route streamed and not: the official `openai` client in a
 *   worker thread against the gateway on loopback (so this thread's event loop
 *   is the server's alone).
 * For each: aggregate tokens/s, TTFT and TPOT p50/p99, requests/s, and this
 * thread's event-loop delay p99 over the run. Then the issue's four goals,
 * each with its measured value. Results go to docs/llm.md by hand.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createGateway } from '@triton-node/gateway';
import { LLM, type LlmManifest, makeLlm } from '@triton-node/test-support/gpu/llm/llm.js';
import { torchMissing, torchPython } from '@triton-node/test-support/gpu/torch/models.js';
import { Server } from 'triton-node';

const DRIVER = fileURLToPath(new URL('./llm/driver.py', import.meta.url));
const WORKER = fileURLToPath(new URL('./llm/openai-worker.mjs', import.meta.url));

export interface LlmBenchOptions {
  concurrency: number[];
  /** New tokens per request. */
  tokens: number;
  /** Requests per loop at each concurrency (the first round of c=1 warms up). */
  rounds: number;
  library: string;
  backendDirectory?: string;
  modelsDir?: string;
  /** The model's gpu_memory_utilization when it is made here (default 0.85). */
  utilization: number;
  out: string;
  progress: (what: string) => void;
}

interface Request {
  start: number;
  first: number;
  end: number;
  tokens: number;
}

export interface LlmRun {
  way: 'in-process' | 'openai-stream' | 'openai';
  concurrency: number;
  requests: number;
  errors: number;
  firstError?: string;
  tokensPerSecond: number;
  requestsPerSecond: number;
  ttftP50Ms: number;
  ttftP99Ms: number;
  tpotP50Ms: number;
  tpotP99Ms: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

interface AnchorCase {
  batch: number;
  tokens: number;
  seconds: number;
  tokensPerSecond: number;
  firstTokenMs: number;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function summarize(
  way: LlmRun['way'],
  concurrency: number,
  requests: Request[],
  errors: number,
  firstError: string | undefined,
  loop: IntervalHistogram,
): LlmRun {
  const start = Math.min(...requests.map((r) => r.start));
  const end = Math.max(...requests.map((r) => r.end));
  const seconds = (end - start) / 1000;
  const tokens = requests.reduce((n, r) => n + r.tokens, 0);
  const ttft = requests.map((r) => r.first - r.start);
  const tpot = requests.filter((r) => r.tokens > 1).map((r) => (r.end - r.first) / (r.tokens - 1));
  return {
    way,
    concurrency,
    requests: requests.length,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    tokensPerSecond: tokens / seconds,
    requestsPerSecond: requests.length / seconds,
    ttftP50Ms: percentile(ttft, 50),
    ttftP99Ms: percentile(ttft, 99),
    tpotP50Ms: percentile(tpot, 50),
    tpotP99Ms: percentile(tpot, 99),
    eventLoopP99Ms: loop.percentile(99) / 1e6,
    eventLoopMaxMs: loop.max / 1e6,
  };
}

async function inProcess(
  server: Server,
  prompts: string[],
  c: number,
  opts: LlmBenchOptions,
): Promise<LlmRun> {
  const model = server.model(LLM);
  const requests: Request[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const sampling = JSON.stringify({ max_tokens: opts.tokens, temperature: 0 });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  await Promise.all(
    Array.from({ length: c }, async (_, slot) => {
      for (let i = 0; i < opts.rounds; i += 1) {
        const start = performance.now();
        let first: number | undefined;
        let tokens = 0;
        try {
          for await (const r of model.stream({
            inputs: {
              text_input: [prompts[(slot + i) % prompts.length]!],
              stream: [true],
              sampling_parameters: [sampling],
              return_num_output_tokens: [true],
            },
          })) {
            first ??= performance.now();
            tokens += Number((r.outputs.num_output_tokens!.data as Uint32Array)[0]);
          }
          const end = performance.now();
          requests.push({ start, first: first ?? end, end, tokens });
        } catch (e) {
          errors += 1;
          firstError ??= String((e as Error).message ?? e);
        }
      }
    }),
  );
  loop.disable();
  return summarize('in-process', c, requests, errors, firstError, loop);
}

async function openai(
  baseURL: string,
  prompts: string[],
  c: number,
  stream: boolean,
  opts: LlmBenchOptions,
): Promise<LlmRun> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const worker = new Worker(WORKER, {
    workerData: {
      baseURL,
      model: 'llm',
      prompts,
      maxTokens: opts.tokens,
      concurrency: c,
      rounds: opts.rounds,
      stream,
    },
  });
  const result = await new Promise<{ requests: Request[]; errors: number; firstError?: string }>(
    (resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    },
  );
  await worker.terminate();
  loop.disable();
  return summarize(
    stream ? 'openai-stream' : 'openai',
    c,
    result.requests,
    result.errors,
    result.firstError,
    loop,
  );
}

function anchor(dir: string, opts: LlmBenchOptions): { gpu: string; cases: AnchorCase[] } {
  const run = spawnSync(
    torchPython(),
    [DRIVER, '--repository', dir, '--batches', opts.concurrency.join(','), '--tokens', String(opts.tokens)],
    { encoding: 'utf8', timeout: 1_800_000, maxBuffer: 64 << 20 },
  );
  if (run.status !== 0) throw new Error(`bench/llm/driver.py failed: ${run.error?.message ?? run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { gpu: string; cases: AnchorCase[] };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** Every way at every concurrency, on a server over the model in `dir`. */
async function tritonSide(dir: string, prompts: string[], opts: LlmBenchOptions): Promise<LlmRun[]> {
  const server = await Server.create({
    modelRepository: dir,
    library: opts.library,
    ...(opts.backendDirectory === undefined ? {} : { backendDirectory: opts.backendDirectory }),
    exitTimeoutSeconds: 30,
  });
  const runs: LlmRun[] = [];
  try {
    await server.loadModel(LLM);
    const gateway = createGateway(server, { openai: { llm: { model: LLM } } });
    const listener = http.createServer(gateway.handler);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const baseURL = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/v1`;
    try {
      // Warm-up: the first requests compile kernels and fill caches.
      await inProcess(server, prompts, 4, { ...opts, rounds: 1, tokens: 8 });
      for (const c of opts.concurrency) {
        for (const way of ['in-process', 'openai-stream', 'openai'] as const) {
          opts.progress(`${way} at ${c} streams`);
          runs.push(
            way === 'in-process'
              ? await inProcess(server, prompts, c, opts)
              : await openai(baseURL, prompts, c, way === 'openai-stream', opts),
          );
        }
      }
    } finally {
      listener.closeAllConnections();
      listener.close();
      gateway.close();
    }
  } finally {
    await server.stop();
  }
  return runs;
}

/** The goals, each with its measured value, and the ratios to transformers. */
function goals(runs: LlmRun[], torch: { cases: AnchorCase[] }, concurrency: number[]): string[] {
  const at = (way: LlmRun['way'], c: number) => runs.find((r) => r.way === way && r.concurrency === c);
  const out: string[] = [];
  const one = at('in-process', 1);
  const many = at('in-process', 32);
  if (one && many) {
    const x = many.tokensPerSecond / one.tokensPerSecond;
    out.push(`aggregate tokens/s at 32 streams over 1 stream (in-process): ${f1(x)}× (goal ≥ 8×)`);
    const t = many.ttftP99Ms / one.ttftP99Ms;
    out.push(`TTFT p99 at 32 streams over c=1 (in-process): ${f2(t)}× (goal ≤ 3×)`);
  }
  for (const c of concurrency) {
    const s = at('openai-stream', c);
    const n = at('openai', c);
    if (s && n)
      out.push(
        `streaming over non-streaming requests/s at ${c} (OpenAI route): ${f2(s.requestsPerSecond / n.requestsPerSecond)} (goal ≥ 0.9)`,
      );
  }
  const worst = Math.max(...runs.map((r) => r.eventLoopP99Ms));
  out.push(`event loop p99 delay, worst run: ${f1(worst)} ms (goal ≤ 5 ms)`);
  for (const c of concurrency) {
    const r = at('in-process', c);
    const a = torch.cases.find((x) => x.batch === c);
    if (r && a)
      out.push(
        `tokens/s at ${c}: triton-node in-process over transformers batch ${c}: ${f2(r.tokensPerSecond / a.tokensPerSecond)}`,
      );
  }
  return out;
}

function table(title: string, runs: LlmRun[], torch: { cases: AnchorCase[] }): string[] {
  const lines = [
    title,
    '',
    'way            streams  tokens/s  req/s  TTFT p50  TTFT p99  TPOT p50  TPOT p99  loop p99  errors',
  ];
  for (const r of runs) {
    lines.push(
      `${r.way.padEnd(15)}${String(r.concurrency).padStart(7)}  ${f0(r.tokensPerSecond).padStart(8)}  ${f1(r.requestsPerSecond).padStart(5)}  ${f1(r.ttftP50Ms).padStart(8)}  ${f1(r.ttftP99Ms).padStart(8)}  ${f2(r.tpotP50Ms).padStart(8)}  ${f2(r.tpotP99Ms).padStart(8)}  ${f1(r.eventLoopP99Ms).padStart(8)}  ${r.errors}`,
    );
  }
  lines.push('', 'transformers generate (static batch, same GPU)  tokens/s  first token ms');
  for (const a of torch.cases) {
    lines.push(
      `  batch ${String(a.batch).padStart(3)}${f0(a.tokensPerSecond).padStart(42)}  ${f1(a.firstTokenMs).padStart(14)}`,
    );
  }
  return lines;
}

export async function benchLlm(opts: LlmBenchOptions): Promise<number> {
  const missing = torchMissing();
  if (missing !== false) throw new Error(missing);
  const dir = opts.modelsDir ?? mkdtempSync(path.join(os.tmpdir(), 'tn-bench-llm-'));
  opts.progress(`making the LLM in ${dir}`);
  const manifest: LlmManifest = await makeLlm(dir, { utilization: opts.utilization });
  const prompts = manifest.references.map((r) => r.prompt);
  opts.progress('transformers batched generate (the anchor)');
  const torch = anchor(dir, opts);
  const runs = await tritonSide(dir, prompts, opts);
  const title = `bench --vs torch --models llm: ${manifest.gpu}, ${manifest.parameters.toLocaleString('en')} parameters (${manifest.dtype}), ${opts.tokens} new tokens a request, ${opts.rounds} requests a stream`;
  const measured = goals(runs, torch, opts.concurrency);
  process.stdout.write(`${[...table(title, runs, torch), '', ...measured].join('\n')}\n`);
  await mkdir(opts.out, { recursive: true });
  const file = path.join(opts.out, `bench-llm-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(
    file,
    `${JSON.stringify({ title, manifest: { ...manifest, references: undefined }, runs, torch, goals: measured }, null, 2)}\n`,
  );
  process.stdout.write(`\nresults: ${file}\n`);
  return runs.some((r) => r.errors > 0) ? 1 : 0;
}
