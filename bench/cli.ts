#!/usr/bin/env node
/**
 * `triton-node bench`: the same closed-loop workloads through the Node API
 * and through the C++ driver on the C API, alternately in one run, with the
 * ratio Node / C++ per case. Results go to JSON and an SVG chart.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import {
  type BenchCase,
  byteSize,
  defaultCases,
  modelCases,
  parseDuration,
  parsePositiveList,
  parseShape,
  selectCases,
} from './cases.js';
import { type DriverSettings, runDriver } from './driver-side.js';
import { type LibraryFacts, NodeSide } from './node-side.js';
import { type CaseSummary, formatTable, libraryLabel, ratiosOf, renderChart } from './report.js';
import { type RunResult, type Side, medianRun } from './results.js';
import { benchThreads } from './threads.js';

/** The package root: dist/cli.js and bench/cli.ts both sit one level down. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface BenchOptions {
  model?: string;
  concurrency?: number[];
  duration: number;
  warmup: number;
  rounds: number;
  shape: number[];
  datatype: string;
  input?: string;
  responses?: number;
  library: string;
  repository: string;
  backendDir?: string;
  cases?: string;
  out: string;
  driver: string;
  sides: Side[];
  progress: boolean;
  vs?: string;
  models?: string;
  instances?: number;
  intraOpThreads: number;
  maxBatchSize?: number;
  maxQueueDelay: number;
  detSize: number;
  kind: 'cpu' | 'gpu';
  threads?: number[];
  gpuModels?: string;
  tokens?: number;
}

interface SoakCliOptions {
  requests: number;
  concurrency: number;
  streams: number;
  responses: number;
  streamConcurrency: number;
  workerRounds: number;
  samples: number;
  maxGrowth: number;
  stall: number;
  library: string;
  repository: string;
  backendDir?: string;
}

/** A whole number >= 0 (`count`) or >= 1 (`positive`) for `option`. */
function count(option: string): (text: string) => number {
  return (text) => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new TypeError(`Expected a whole number for ${option} but received '${text}'`);
    }
    return n;
  };
}

function positive(option: string): (text: string) => number {
  return (text) => {
    const n = count(option)(text);
    if (n === 0) throw new TypeError(`Expected a number above 0 for ${option} but received '${text}'`);
    return n;
  };
}

/** Commander parsers that turn our TypeErrors into its usage errors. */
function arg<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (e) {
      throw new InvalidArgumentError((e as Error).message);
    }
  };
}

function parseSides(text: string): Side[] {
  const sides = text.split(',').map((s) => s.trim());
  for (const s of sides) {
    if (s !== 'node' && s !== 'cpp' && s !== 'cpp-callback') {
      throw new TypeError(`Expected node, cpp or cpp-callback in --sides but received '${s}'`);
    }
  }
  return [...new Set(sides as Side[])];
}

function fileMustExist(file: string, what: string, fix: string): void {
  if (!existsSync(file)) {
    throw new Error(`${what} not found at ${file}\n  Possible solutions:\n${fix}`);
  }
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
}

function benchCases(opts: BenchOptions): BenchCase[] {
  return selectCases(
    opts.model === undefined
      ? defaultCases()
      : modelCases({
          model: opts.model,
          concurrency: opts.concurrency ?? [1, 8, 64],
          shape: opts.shape,
          datatype: opts.datatype,
          input: opts.input,
          responses: opts.responses,
        }),
    opts.cases,
  );
}

/** The run's settings, once the library, repository and (when needed) the driver are found. */
function benchSettings(opts: BenchOptions): DriverSettings {
  const library = path.resolve(opts.library);
  const repository = path.resolve(opts.repository);
  fileMustExist(
    library,
    'libtritonserver.so',
    '   - build the fake engine: npx node-gyp configure && make -C build fake_engine_layout\n' +
      '   - or point --library at a real Triton: /opt/tritonserver/lib/libtritonserver.so',
  );
  fileMustExist(repository, 'model repository', '   - pass --repository DIR (default bench/models)');
  if (opts.sides.some((s) => s !== 'node')) {
    fileMustExist(
      opts.driver,
      'C++ bench driver',
      '   - build it: (cd bench && npx node-gyp rebuild)\n' + '   - or leave it out: --sides node',
    );
  }
  return {
    driver: opts.driver,
    library,
    repository,
    backendDirectory: opts.backendDir,
    durationS: opts.duration,
    warmupS: opts.warmup,
  };
}

/** The Node side, or why it cannot run (then only C++ is measured). */
async function startNodeSide(
  opts: BenchOptions,
  settings: DriverSettings,
  cases: BenchCase[],
): Promise<{ node?: NodeSide; nodeProblem?: string }> {
  if (!opts.sides.includes('node')) return {};
  try {
    return { node: await NodeSide.start(settings, [...new Set(cases.map((c) => c.model))]) };
  } catch (e) {
    const err = e as Error & { code?: string };
    const nodeProblem = `${err.code ?? err.name}: ${err.message}`;
    process.stderr.write(
      `triton-node bench: the Node side cannot run, measuring C++ only.\n  ${nodeProblem}\n`,
    );
    return { nodeProblem };
  }
}

type Rounds = Map<string, Partial<Record<Side, RunResult[]>>>;

/** Every case, round and side: each run's result, and how many runs failed. */
async function runRounds(
  opts: BenchOptions,
  settings: DriverSettings,
  cases: BenchCase[],
  sides: Side[],
  node: NodeSide | undefined,
): Promise<{ rounds: Rounds; failures: number }> {
  const plannedRuns = cases.length * opts.rounds * sides.length;
  const bar = new cliProgress.SingleBar(
    {
      format: 'bench {bar} {percentage}% | {value}/{total} runs | {stage}',
      hideCursor: true,
      stream: process.stderr,
      noTTYOutput: false,
    },
    cliProgress.Presets.shades_classic,
  );
  if (opts.progress) bar.start(plannedRuns, 0, { stage: 'starting' });
  let done = 0;
  const rounds: Rounds = new Map();
  let failures = 0;
  const runOne = async (c: BenchCase, side: Side, perSide: Partial<Record<Side, RunResult[]>>) => {
    let result: RunResult;
    try {
      result =
        side === 'node'
          ? await node!.run(c, { ...settings, durationS: opts.duration, warmupS: opts.warmup })
          : await runDriver(c, settings, side);
    } catch (e) {
      failures++;
      if (opts.progress) bar.stop();
      process.stderr.write(`triton-node bench: ${c.name} on ${side} failed: ${(e as Error).message}\n`);
      if (opts.progress) bar.start(plannedRuns, done, { stage: 'continuing' });
      done++;
      return;
    }
    if (result.errors > 0) failures++;
    const list = perSide[side] ?? [];
    list.push(result);
    perSide[side] = list;
    done++;
    if (opts.progress) bar.update(done);
  };
  try {
    for (const c of cases) {
      const perSide: Partial<Record<Side, RunResult[]>> = {};
      rounds.set(c.name, perSide);
      for (let round = 0; round < opts.rounds; round++) {
        // A then B, then B then A: neither side always runs on a machine the
        // other has just warmed (or heated).
        const order = round % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) {
          if (opts.progress)
            bar.update(done, { stage: `${c.name} ${side} round ${round + 1}/${opts.rounds}` });
          await runOne(c, side, perSide);
        }
      }
    }
  } finally {
    if (opts.progress) bar.stop();
  }
  return { rounds, failures };
}

function summarize(cases: BenchCase[], rounds: Rounds, sides: Side[]): CaseSummary[] {
  return cases.map((c) => {
    const perSide = rounds.get(c.name) ?? {};
    const median: CaseSummary['median'] = {};
    for (const side of sides) {
      const m = medianRun(perSide[side] ?? []);
      if (m !== undefined) median[side] = m;
    }
    return { case: c, median, rounds: perSide, ratios: ratiosOf(median.node, median.cpp) };
  });
}

/** Writes the JSON record and the chart next to each other; returns their common stem. */
async function writeResults(
  opts: BenchOptions,
  settings: DriverSettings,
  summaries: CaseSummary[],
  sides: Side[],
  title: string,
  extra: { libraryInfo: unknown; facts: LibraryFacts | undefined; nodeProblem: string | undefined },
): Promise<string> {
  await mkdir(opts.out, { recursive: true });
  const stem = path.join(opts.out, `bench-${timestamp()}`);
  const record = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
    },
    library: settings.library,
    libraryInfo: extra.libraryInfo,
    libraryFacts: extra.facts,
    repository: settings.repository,
    backendDirectory: opts.backendDir,
    durationS: opts.duration,
    warmupS: opts.warmup,
    rounds: opts.rounds,
    nodeProblem: extra.nodeProblem,
    cases: summaries.map((s) => ({
      ...s.case,
      inputBytes: byteSize(s.case),
      median: s.median,
      ratios: s.ratios,
      rounds: s.rounds,
    })),
  };
  await writeFile(`${stem}.json`, `${JSON.stringify(record, null, 2)}\n`);
  await writeFile(`${stem}.svg`, await renderChart(summaries, sides, title));
  return stem;
}

/** `--vs onnxruntime-node`: the real ONNX models against the anchor (bench/onnx.ts). */
async function benchVsAnchor(opts: BenchOptions, cmd: Command): Promise<number> {
  if (opts.vs === 'torch') return benchVsTorchAnchor(opts, cmd);
  if (opts.vs !== 'onnxruntime-node') {
    throw new TypeError(`Expected onnxruntime-node or torch for --vs but received '${opts.vs}'`);
  }
  const { ONNX_MODELS, benchVsOnnxruntime } = await import('./onnx.js');
  const models = (opts.models ?? 'ocr_det,ocr_cls').split(',').map((m) => m.trim());
  for (const m of models) {
    if (!(ONNX_MODELS as readonly string[]).includes(m)) {
      throw new TypeError(`Expected ${ONNX_MODELS.join(', ')} in --models but received '${m}'`);
    }
  }
  const library = path.resolve(opts.library);
  fileMustExist(
    library,
    'libtritonserver.so',
    '   - point --library (or TRITON_SERVER_LIB) at a Triton with the onnxruntime backend\n' +
      '   - or build the fake engine: npx node-gyp configure && make -C build fake_engine_layout',
  );
  // Commander's defaults of the identity bench do not fit here: 1,8,32 and 3 s.
  const given = (name: string) => cmd.getOptionValueSource(name) === 'cli';
  return benchVsOnnxruntime({
    models: models as Parameters<typeof benchVsOnnxruntime>[0]['models'],
    concurrency: opts.concurrency ?? [1, 8, 32],
    durationS: given('duration') ? opts.duration : 3,
    warmupS: opts.warmup,
    rounds: given('rounds') ? opts.rounds : 1,
    library,
    backendDirectory: opts.backendDir,
    instances: opts.instances ?? Math.max(1, os.cpus().length),
    intraOpThreads: opts.intraOpThreads,
    kind: opts.kind,
    maxBatchSize: opts.maxBatchSize ?? (opts.kind === 'gpu' ? 8 : 0),
    maxQueueDelayUs: opts.maxQueueDelay,
    detSize: opts.detSize,
    vadSequenceLength: 64,
    out: opts.out,
    progress: opts.progress ? (what) => process.stderr.write(`bench: ${what}\n`) : () => {},
  });
}

async function bench(opts: BenchOptions): Promise<number> {
  const cases = benchCases(opts);
  const settings = benchSettings(opts);
  const { node, nodeProblem } = await startNodeSide(opts, settings, cases);
  const sides = opts.sides.filter((s) => s !== 'node' || node !== undefined);
  let outcome: { rounds: Rounds; failures: number };
  try {
    outcome = await runRounds(opts, settings, cases, sides, node);
  } finally {
    await node?.stop();
  }
  const summaries = summarize(cases, outcome.rounds, sides);
  const title = `triton-node bench: ${libraryLabel(node?.facts, settings.library)} (${os.cpus().length} CPUs, median of ${opts.rounds})`;
  process.stdout.write(`\n${title}\n${formatTable(summaries, sides)}\n`);
  if (nodeProblem !== undefined) process.stdout.write(`\nNode side not measured: ${nodeProblem}\n`);
  const stem = await writeResults(opts, settings, summaries, sides, title, {
    libraryInfo: node?.libraryInfo,
    facts: node?.facts,
    nodeProblem,
  });
  process.stdout.write(`\nresults: ${stem}.json\nchart:   ${stem}.svg\n`);
  return outcome.failures > 0 || nodeProblem !== undefined ? 1 : 0;
}

/** `--vs torch`: real GPU models against torch on the same GPU (bench/torch.ts). */
async function benchVsTorchAnchor(opts: BenchOptions, cmd: Command): Promise<number> {
  const { benchVsTorch } = await import('./torch.js');
  const models = (opts.models ?? 'resnet50_pt,resnet50_py,encoder').split(',').map((m) => m.trim());
  for (const m of models) {
    if (!['resnet50_pt', 'resnet50_py', 'encoder', 'llm'].includes(m)) {
      throw new TypeError(
        `Expected resnet50_pt, resnet50_py, encoder or llm in --models but received '${m}'`,
      );
    }
  }
  const given = (name: string) => cmd.getOptionValueSource(name) === 'cli';
  if (models.includes('llm')) {
    if (models.length > 1)
      throw new TypeError('Expected --models llm alone (the LLM takes the GPU to itself)');
    const { benchLlm } = await import('./llm.js');
    return benchLlm({
      concurrency: opts.concurrency ?? [1, 8, 32, 64],
      tokens: opts.tokens ?? 128,
      rounds: given('rounds') ? opts.rounds : 3,
      utilization: 0.85,
      library: path.resolve(opts.library),
      backendDirectory: opts.backendDir,
      modelsDir: opts.gpuModels,
      out: opts.out,
      progress: opts.progress ? (what) => process.stderr.write(`bench: ${what}\n`) : () => {},
    });
  }
  return benchVsTorch({
    concurrency: opts.concurrency ?? [1, 8, 32, 64],
    durationS: given('duration') ? opts.duration : 3,
    warmupS: opts.warmup,
    library: path.resolve(opts.library),
    backendDirectory: opts.backendDir,
    modelsDir: opts.gpuModels,
    models,
    ...(opts.instances === undefined ? {} : { instances: opts.instances }),
    ...(opts.maxBatchSize === undefined ? {} : { maxBatchSize: opts.maxBatchSize }),
    out: opts.out,
    progress: opts.progress ? (what) => process.stderr.write(`bench: ${what}\n`) : () => {},
  });
}

/** `--threads`: worker threads sharing one server, against the C++ in-callback driver. */
async function benchThreadsCommand(opts: BenchOptions): Promise<number> {
  const cases = benchCases(opts);
  const settings = benchSettings(opts);
  const node = await NodeSide.start(settings, [...new Set(cases.map((c) => c.model))]);
  const title = `triton-node bench --threads: ${libraryLabel(node.facts, settings.library)} (${os.cpus().length} CPUs, median of ${opts.rounds})`;
  process.stdout.write(`\n${title}\n`);
  let outcome: Awaited<ReturnType<typeof benchThreads>>;
  try {
    outcome = await benchThreads(node.shareable, cases, opts.threads!, settings, opts.rounds, (line) =>
      process.stdout.write(`${line}\n`),
    );
  } finally {
    await node.stop();
  }
  await mkdir(opts.out, { recursive: true });
  const file = path.join(opts.out, `bench-threads-${timestamp()}.json`);
  await writeFile(
    file,
    `${JSON.stringify({ title, facts: node.facts, cppCallback: outcome.cppCallback, runs: outcome.runs }, null, 2)}\n`,
  );
  process.stdout.write(`\nresults: ${file}\n`);
  return outcome.failed ? 1 : 0;
}

/** The options of `--vs onnxruntime-node` (bench/onnx.ts). */
function anchorOptions(benchCmd: Command): Command {
  return benchCmd
    .option(
      '--vs <anchor>',
      'onnxruntime-node: real ONNX models (ocr_det, ocr_cls, silero_vad) through triton-node and\n' +
        'through onnxruntime-node in one run; concurrency 1,8,32, 3 s windows, 1 round unless given.\n' +
        'torch: GPU models (ResNet-50 on the pytorch and python backends, a BERT-shaped encoder) through\n' +
        'triton-node from host, pinned and device memory, against torch on the same GPU (and\n' +
        'onnxruntime-node on the CPU); concurrency 1,8,32,64 unless given',
    )
    .option(
      '--models <list>',
      'with --vs: ocr_det,ocr_cls (default), silero_vad; with --vs torch: resnet50_pt,resnet50_py,encoder,\n' +
        'or llm alone (the GPU LLM of test/gpu/llm: streams at each concurrency, in-process and over the\n' +
        'OpenAI route, against transformers’ batched generate; --tokens new tokens, --rounds requests a stream)',
    )
    .option(
      '--tokens <n>',
      'with --models llm: new tokens a request (default 128)',
      arg(positive('--tokens')),
    )
    .option(
      '--gpu-models <dir>',
      'with --vs torch: where the GPU models are made (kept), else a temporary folder',
    )
    .option(
      '--instances <n>',
      'with --vs: Triton instances (and onnxruntime-node sessions) per model (default: CPUs)',
      arg(positive('--instances')),
    )
    .option(
      '--kind <cpu|gpu>',
      'with --vs: KIND_CPU instances, or KIND_GPU with the CUDA provider for onnxruntime-node',
      arg((v) => {
        if (v !== 'cpu' && v !== 'gpu')
          throw new TypeError(`Expected cpu or gpu for --kind but received '${v}'`);
        return v;
      }),
      'cpu',
    )
    .option(
      '--intra-op-threads <n>',
      'with --vs: ONNX Runtime intra-op threads per instance and per session',
      arg(positive('--intra-op-threads')),
      1,
    )
    .option(
      '--max-batch-size <n>',
      "with --vs: Triton's dynamic batching up to n (ocr_det, ocr_cls); 0: none\n" +
        '(default: 0 on CPU, where a batch runs on one instance while the others idle; 8 on GPU)',
      arg(count('--max-batch-size')),
    )
    .option(
      '--max-queue-delay <us>',
      "with --vs: the dynamic batcher's queue-delay cap, µs",
      arg(count('--max-queue-delay')),
      0,
    )
    .option(
      '--det-size <px>',
      "with --vs: ocr_det's input side, a multiple of 32",
      arg((v) => {
        const n = positive('--det-size')(v);
        if (n % 32 !== 0) throw new TypeError(`Expected a multiple of 32 for --det-size but received '${v}'`);
        return n;
      }),
      320,
    );
}

function benchCommand(cmd: Command): void {
  const benchCmd = cmd
    .command('bench')
    .description(
      'Benchmark triton-node against a C++ program on the C API of the same libtritonserver.so.\n' +
        'Without --model: identity 16 B at concurrency 1/8/64, identity 64 MiB, square 10k responses.',
    )
    .option('--model <name>', 'benchmark this model instead of the default cases')
    .option(
      '--concurrency <list>',
      'requests in flight, e.g. 1,8,64 (with --model)',
      arg((v) => parsePositiveList(v, '--concurrency')),
    )
    .option(
      '--duration <time>',
      'measurement window per run, e.g. 10s',
      arg((v) => parseDuration(v, '--duration')),
      2,
    )
    .option(
      '--warmup <time>',
      'warm-up before each window',
      arg((v) => parseDuration(v, '--warmup')),
      0.5,
    )
    .option(
      '--rounds <n>',
      'runs per side and case (the median is reported)',
      arg((v) => parsePositiveList(v, '--rounds')[0]!),
      3,
    )
    .option('--shape <dims>', 'input shape with --model, batch dimension included', arg(parseShape), [1, 4])
    .option('--datatype <type>', 'input datatype with --model', 'FP32')
    .option('--input <name>', 'input tensor name with --model (INPUT0; IN for streams)')
    .option(
      '--responses <n>',
      'with --model: a decoupled model asked for n responses per request (square)',
      arg((v) => parsePositiveList(v, '--responses')[0]!),
    )
    .option(
      '--library <path>',
      'libtritonserver.so to use (default: TRITON_SERVER_LIB, else the fake engine)',
      process.env.TRITON_SERVER_LIB || path.join(ROOT, 'packages/fake-engine/build/fake/libtritonserver.so'),
    )
    .option('--repository <dir>', 'model repository', path.join(ROOT, 'bench/models'))
    .option(
      '--backend-dir <dir>',
      "Triton backend directory (default: TRITON_BACKEND_DIR, else the library's own)",
      process.env.TRITON_BACKEND_DIR,
    )
    .option('--cases <list>', 'only the cases whose names start with these, e.g. identity-16B,square')
    .option(
      '--threads <list>',
      'the small-request cases with N worker threads attached to one server, e.g. 1,2,4,8',
      arg((v) => parsePositiveList(v, '--threads')),
    )
    .option(
      '--sides <list>',
      'node, cpp (driver hopping to a consumer thread), cpp-callback (resubmitting inside the callback)',
      arg(parseSides),
      ['node', 'cpp'] as Side[],
    )
    .option('--out <dir>', 'where the JSON and the chart go', path.join(ROOT, 'bench/results'))
    .option('--driver <path>', 'the C++ driver', path.join(ROOT, 'bench/build/Release/bench_driver'))
    .option('--no-progress', 'no progress bar');
  anchorOptions(benchCmd).action(async (opts: BenchOptions, command: Command) => {
    process.exitCode =
      opts.vs !== undefined
        ? await benchVsAnchor(opts, command)
        : opts.threads !== undefined
          ? await benchThreadsCommand(opts)
          : await bench(opts);
  });
}

function soakCommand(cmd: Command): void {
  cmd
    .command('soak')
    .description(
      'A long run that must keep memory and live objects flat: 1,000,000 small identity requests,\n' +
        'then 200 streams of 1,000 responses (square), then 20 rounds of hostile worker threads\n' +
        'attached to the server, RSS and live objects sampled. Prints a table\n' +
        'and one line, soak: PASS or soak: FAIL <reason> (exit code 0 or 1).',
    )
    .option('--requests <n>', 'identity requests', arg(count('--requests')), 1_000_000)
    .option('--concurrency <n>', 'requests in flight', arg(positive('--concurrency')), 64)
    .option('--streams <n>', 'square streams', arg(count('--streams')), 200)
    .option('--responses <n>', 'responses per stream', arg(positive('--responses')), 1000)
    .option('--stream-concurrency <n>', 'streams at a time', arg(positive('--stream-concurrency')), 8)
    .option(
      '--worker-rounds <n>',
      'rounds of hostile worker threads attached to the server (0: none)',
      arg(count('--worker-rounds')),
      20,
    )
    .option('--samples <n>', 'samples per phase', arg(positive('--samples')), 40)
    .option(
      '--max-growth <MiB>',
      "most RSS growth in a phase: median of its last quarter over the middle half's",
      arg(positive('--max-growth')),
      32,
    )
    .option('--stall <s>', 'fail when nothing moves for this long', arg(positive('--stall')), 60)
    .option(
      '--library <path>',
      'libtritonserver.so to use (default: TRITON_SERVER_LIB, else the fake engine)',
      process.env.TRITON_SERVER_LIB || path.join(ROOT, 'packages/fake-engine/build/fake/libtritonserver.so'),
    )
    .option(
      '--repository <dir>',
      'model repository (identity_fp32, square_int32)',
      path.join(ROOT, 'bench/models'),
    )
    .option(
      '--backend-dir <dir>',
      "Triton backend directory (default: TRITON_BACKEND_DIR, else the library's own)",
      process.env.TRITON_BACKEND_DIR,
    )
    .action(async (opts: SoakCliOptions) => {
      const { soak } = await import('./soak.js');
      process.exitCode = await soak({
        requests: opts.requests,
        concurrency: opts.concurrency,
        streams: opts.streams,
        responses: opts.responses,
        streamConcurrency: opts.streamConcurrency,
        workerRounds: opts.workerRounds,
        samples: opts.samples,
        maxGrowthMiB: opts.maxGrowth,
        stallSeconds: opts.stall,
        library: path.resolve(opts.library),
        repository: path.resolve(opts.repository),
        backendDir: opts.backendDir === undefined ? undefined : path.resolve(opts.backendDir),
      });
    });
}

function program(): Command {
  const cmd = new Command('triton-node').description('triton-node command-line tools');
  benchCommand(cmd);
  soakCommand(cmd);
  return cmd;
}

program()
  .parseAsync(process.argv)
  .catch((e: unknown) => {
    process.stderr.write(`triton-node bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  });
