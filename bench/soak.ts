/**
 * `triton-node soak` (`npm run soak`): a long run that shows whether memory
 * and live objects stay flat. 1,000,000 small identity requests with 64 in
 * flight, then 200 streams of 1,000 responses (square), then 20 rounds of
 * hostile worker threads attached to the server (one terminated with 10,000
 * requests in flight, one whose input is transferred away mid-request, one
 * that attaches twice with the same value, one that checks its answers),
 * sampling RSS, the V8 heap, ArrayBuffer memory and the live-object counters
 * (the addon's on any library, the fake engine's too on the fake) as it goes;
 * after stop(), attaching with the old value must be refused. Ends with one
 * line: `soak: PASS ...` or `soak: FAIL <reason>` (exit code 0 or 1).
 *
 * PASS: every request and stream gave the right answer (zero errors), every
 * Promise settled, RSS levelled off (in each phase, the median RSS of the
 * last quarter is at most --max-growth MiB above the middle half's), and
 * after stop() nothing of a request is left alive.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';

export interface SoakOptions {
  requests: number;
  concurrency: number;
  streams: number;
  responses: number;
  streamConcurrency: number;
  /** Rounds of hostile worker threads (0: none). */
  workerRounds: number;
  /** Samples per phase (about). */
  samples: number;
  /** Most RSS growth allowed in a phase (median of the last quarter over the middle half's), MiB. */
  maxGrowthMiB: number;
  /** A phase that makes no progress for this long fails, s. */
  stallSeconds: number;
  library: string;
  repository: string;
  backendDir?: string;
}

interface Sample {
  phase: 'requests' | 'streams' | 'workers' | 'stopped';
  done: number;
  seconds: number;
  rate: number;
  rss: number;
  heapUsed: number;
  arrayBuffers: number;
  external: number;
  pendingRequests: number;
  liveOutputBuffers: number;
  fake: { requests: number; responses: number; outputBuffers: number } | null;
}

/** The part of the API the soak uses (imported lazily: the CLI's other commands do not load the addon). */
type Api = typeof import('triton-node');
type Testing = typeof import('triton-node/testing');
type Native = { addon(): { addonStats(): import('triton-node/testing').AddonStats } };

const MiB = 1024 * 1024;
/** How long requests may take to drain after their worker ended or the server stopped. */
const DRAIN_MS = 120_000;

function exposeGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** Counts issued and settled Promises, and notices a phase that stops moving. */
class Progress {
  issued = 0;
  settled = 0;
  /** Anything that shows life: a settled Promise or a stream response. */
  moved = 0;
  #last = -1;
  #still = 0;

  /** Rejects when nothing moved for `seconds`. */
  watch(seconds: number, what: string): { stalled: Promise<never>; stop(): void } {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setInterval(() => {
        if (this.moved !== this.#last) {
          this.#last = this.moved;
          this.#still = 0;
          return;
        }
        if (++this.#still >= seconds) {
          reject(
            new Error(`${what} stalled: ${this.issued - this.settled} Promise(s) unsettled for ${seconds} s`),
          );
        }
      }, 1000);
    });
    stalled.catch(() => {});
    return { stalled, stop: () => clearInterval(timer) };
  }
}

/** Runs the soak; a setup failure (library, models) is a FAIL too. Returns the exit code. */
export async function soak(options: SoakOptions): Promise<number> {
  try {
    return await run(options);
  } catch (e) {
    const err = e as Error & { code?: string };
    process.stdout.write(`soak: FAIL ${err.code ?? err.name}: ${err.message.split('\n')[0]}\n`);
    return 1;
  }
}

/** Memory and live-object samples over the run; each one after a full GC. */
class Sampler {
  readonly samples: Sample[] = [];
  readonly start = performance.now();
  #lastDone = 0;
  #lastAt = this.start;

  constructor(
    private readonly gc: () => void,
    private readonly native: Native,
    private readonly testing: Testing,
  ) {}

  /** Rates are measured from here on (a new phase, or the end of the warm-up). */
  restart(): void {
    this.#lastDone = 0;
    this.#lastAt = performance.now();
  }

  sample(phase: Sample['phase'], done: number): Sample {
    this.gc();
    const mem = process.memoryUsage();
    const stats = this.native.addon().addonStats();
    const live = this.testing.fakeEngine.liveObjects();
    const now = performance.now();
    const s: Sample = {
      phase,
      done,
      seconds: (now - this.start) / 1000,
      rate: now > this.#lastAt ? ((done - this.#lastDone) * 1000) / (now - this.#lastAt) : 0,
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      arrayBuffers: mem.arrayBuffers,
      external: mem.external,
      pendingRequests: stats.pendingRequests,
      liveOutputBuffers: stats.liveOutputBuffers,
      fake:
        live === null
          ? null
          : { requests: live.requests, responses: live.responses, outputBuffers: live.outputBuffers },
    };
    this.#lastDone = done;
    this.#lastAt = now;
    this.samples.push(s);
    return s;
  }
}

/** What the phases share: the options, progress, sampler, and the errors they saw. */
interface Run {
  options: SoakOptions;
  progress: Progress;
  sampler: Sampler;
  errorCount: number;
  firstErrors: string[];
  /** Why a phase stopped early (a stall). */
  failure?: string;
}

function recordError(run: Run, message: string): void {
  if (++run.errorCount <= 5) run.firstErrors.push(message);
}

type SoakModel = ReturnType<Awaited<ReturnType<Api['Server']['create']>>['model']>;

/** Runs `workers` until done or a stall; a stall becomes `run.failure`. */
async function watched(run: Run, what: string, workers: Array<Promise<void>>): Promise<void> {
  const watch = run.progress.watch(run.options.stallSeconds, what);
  try {
    await Promise.race([Promise.all(workers), watch.stalled]);
  } catch (e) {
    run.failure = (e as Error).message;
  } finally {
    watch.stop();
  }
}

/** Phase 1, requests: closed loop, `concurrency` in flight, each answer checked. Returns how many completed. */
async function requestPhase(run: Run, identity: SoakModel): Promise<number> {
  const { options, progress, sampler } = run;
  const every = Math.max(1, Math.ceil(options.requests / options.samples));
  let next = 0;
  let completed = 0;
  const worker = async () => {
    while (next < options.requests) {
      const i = next++;
      const input = new Float32Array([i, -i, i / 2, 7]);
      progress.issued++;
      try {
        const r = await identity.infer({ inputs: { INPUT0: input } });
        const out = r.outputs.OUTPUT0?.data as Float32Array | undefined;
        if (out === undefined || out.length !== 4 || out[0] !== i || out[1] !== -i || out[2] !== i / 2) {
          recordError(
            run,
            `request ${i}: wrong output ${out === undefined ? 'none' : `[${Array.from(out)}]`}`,
          );
        }
      } catch (e) {
        recordError(run, `request ${i}: ${(e as Error).name}: ${(e as Error).message}`);
      } finally {
        progress.settled++;
        progress.moved++;
      }
      if (++completed % every === 0) sampler.sample('requests', completed);
    }
  };
  await watched(run, 'the request phase', Array.from({ length: options.concurrency }, worker));
  if (sampler.samples.at(-1)?.done !== completed) sampler.sample('requests', completed);
  return completed;
}

/** Phase 2, streams: `streamConcurrency` streams at a time, each counted and checked. Returns how many completed. */
async function streamPhase(run: Run, square: SoakModel): Promise<number> {
  const { options, progress, sampler } = run;
  sampler.restart();
  const every = Math.max(1, Math.ceil(options.streams / options.samples));
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < options.streams && run.failure === undefined) {
      const s = next++;
      progress.issued++;
      let got = 0;
      try {
        for await (const r of square.stream({ inputs: { IN: new Int32Array([options.responses]) } })) {
          const out = r.outputs.OUT?.data as Int32Array | undefined;
          if (out?.[0] !== options.responses) recordError(run, `stream ${s}: response ${got} is ${out?.[0]}`);
          got++;
          progress.moved++;
        }
        if (got !== options.responses)
          recordError(run, `stream ${s}: ${got} responses, expected ${options.responses}`);
      } catch (e) {
        recordError(run, `stream ${s}: ${(e as Error).name}: ${(e as Error).message} after ${got} responses`);
      } finally {
        progress.settled++;
        progress.moved++;
      }
      if (++done % every === 0) sampler.sample('streams', done);
    }
  };
  if (run.failure !== undefined) return done;
  await watched(run, 'the stream phase', Array.from({ length: options.streamConcurrency }, worker));
  const last = sampler.samples.at(-1);
  if (last?.phase !== 'streams' || last?.done !== done) sampler.sample('streams', done);
  return done;
}

const SOAK_WORKER = new URL('./soak-worker.mjs', import.meta.url);

type WorkerReport = { flooding?: number; done?: boolean; errors?: string[]; errorCount?: number };

/** One worker of the hostile phase; its first message, or why it gave none. */
function soakWorker(shared: unknown, role: string, requests: number) {
  const worker = new Worker(SOAK_WORKER, { workerData: { shared, role, requests } });
  const first = new Promise<WorkerReport>((resolve) => {
    worker.once('message', resolve);
    worker.once('error', (e) =>
      resolve({ done: true, errors: [`${role} worker: ${e.message}`], errorCount: 1 }),
    );
    worker.once('exit', (code) =>
      resolve({ done: true, errors: [`${role} worker exited (${code}) before reporting`], errorCount: 1 }),
    );
  });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  return { worker, first, exited };
}

/**
 * Phase 3, hostile workers: each round posts one shared value to four
 * workers. One floods 10,000 requests and is terminated with them in flight,
 * one has an input transferred away mid-request, one attaches twice with the
 * value, one checks its answers; then every request of the round must be
 * released while this thread's server serves on. Returns the rounds done.
 */
async function workerPhase(
  run: Run,
  server: { share(): unknown },
  identity: SoakModel,
  native: Native,
): Promise<number> {
  const { options, progress, sampler } = run;
  sampler.restart();
  let done = 0;
  const rounds = async () => {
    for (let round = 0; round < options.workerRounds && run.failure === undefined; round++) {
      const shared = server.share();
      progress.issued++;
      try {
        const flood = soakWorker(shared, 'flood', 10_000);
        const others = ['detach', 'twice', 'checked'].map((role) => soakWorker(shared, role, 500));
        const flooding = await flood.first;
        if (flooding.flooding !== 10_000) {
          for (const e of flooding.errors ?? ['the flood worker did not flood']) recordError(run, e);
        }
        await flood.worker.terminate();
        for (const w of others) {
          const r = await w.first;
          for (const e of r.errors ?? []) recordError(run, `round ${round}: ${e}`);
          const code = await w.exited;
          if (code !== 0) recordError(run, `round ${round}: a worker exited with code ${code}`);
        }
        // The terminated worker's requests are cancelled and released natively
        // (those already queued run first): a bound, generous for a busy machine.
        const end = performance.now() + DRAIN_MS;
        while (native.addon().addonStats().pendingRequests > 0 && performance.now() < end) {
          await new Promise((r) => setTimeout(r, 20));
          progress.moved++;
        }
        const left = native.addon().addonStats().pendingRequests;
        if (left > 0)
          recordError(
            run,
            `round ${round}: ${left} request(s) still pending ${DRAIN_MS / 1000} s after the workers ended`,
          );
        // This thread's server serves on.
        const input = new Float32Array([round, 1, 2, 3]);
        const r = await identity.infer({ inputs: { INPUT0: input } });
        const out = r.outputs.OUTPUT0?.data as Float32Array | undefined;
        if (out?.[0] !== round) recordError(run, `round ${round}: the owner's request got a wrong answer`);
      } catch (e) {
        recordError(run, `round ${round}: ${(e as Error).name}: ${(e as Error).message}`);
      } finally {
        progress.settled++;
        progress.moved++;
      }
      sampler.sample('workers', ++done);
    }
  };
  if (run.failure !== undefined || options.workerRounds === 0) return done;
  await watched(run, 'the worker phase', [rounds()]);
  return done;
}

/** After stop(): a value shared before must be refused with a typed error. */
async function attachAfterStop(run: Run, api: Api, shared: unknown): Promise<void> {
  try {
    const late = await api.Server.attach(shared as Parameters<Api['Server']['attach']>[0]);
    await late.stop();
    recordError(run, 'Server.attach() after stop() was not refused');
  } catch (e) {
    if (!(e instanceof api.TritonError)) {
      recordError(run, `Server.attach() after stop(): not a TritonError: ${(e as Error).message}`);
    }
  }
}

/** Phase 4: stop, wait for the addon to release every request, and sample what is left. */
async function stopPhase(
  run: Run,
  server: { stop(): Promise<void> },
  native: Native,
  gc: () => void,
  streamsDone: number,
): Promise<Sample> {
  await server.stop();
  const drainEnd = performance.now() + DRAIN_MS;
  while (native.addon().addonStats().pendingRequests > 0 && performance.now() < drainEnd) {
    await new Promise((r) => setTimeout(r, 50));
  }
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return run.sampler.sample('stopped', streamsDone);
}

interface Outcome {
  completed: number;
  streamsDone: number;
  workerRounds: number;
  baseline: Sample;
  end: Sample;
  /** Undefined: too few samples to judge (lastQuarterGrowth). */
  requestGrowth: number | undefined;
  streamGrowth: number | undefined;
  workerGrowth: number | undefined;
}

/** Why the soak fails; empty when it passes. */
function verdict(run: Run, o: Outcome): string[] {
  const { options, progress } = run;
  const { baseline, end } = o;
  const reasons: string[] = [];
  if (run.failure !== undefined) reasons.push(run.failure);
  if (progress.issued !== progress.settled) {
    reasons.push(`${progress.issued - progress.settled} Promise(s) never settled`);
  }
  if (run.errorCount > 0) reasons.push(`${run.errorCount} error(s), first: ${run.firstErrors.join('; ')}`);
  if (o.completed !== options.requests)
    reasons.push(`${o.completed} of ${options.requests} requests completed`);
  if (run.failure === undefined && o.streamsDone !== options.streams) {
    reasons.push(`${o.streamsDone} of ${options.streams} streams completed`);
  }
  if (run.failure === undefined && o.workerRounds !== options.workerRounds) {
    reasons.push(`${o.workerRounds} of ${options.workerRounds} worker rounds completed`);
  }
  const limit = options.maxGrowthMiB * MiB;
  for (const [what, growth] of [
    ['requests', o.requestGrowth],
    ['streams', o.streamGrowth],
    ['worker rounds', o.workerGrowth],
  ] as const) {
    if (growth !== undefined && growth > limit) {
      reasons.push(
        `RSS rose ${mib(growth)} MiB from the middle half of the ${what} to their last quarter (medians; limit ${options.maxGrowthMiB})`,
      );
    }
  }
  if (end.pendingRequests !== 0) reasons.push(`${end.pendingRequests} request(s) still pending after stop()`);
  if (end.liveOutputBuffers > baseline.liveOutputBuffers) {
    reasons.push(
      `${end.liveOutputBuffers} output buffer(s) alive after stop(), baseline ${baseline.liveOutputBuffers}`,
    );
  }
  if (
    end.fake !== null &&
    (end.fake.requests !== 0 || end.fake.responses !== 0 || end.fake.outputBuffers !== 0)
  ) {
    reasons.push(`the fake engine still holds ${JSON.stringify(end.fake)} after stop()`);
  }
  return reasons;
}

function summaryLine(run: Run, o: Outcome): string {
  const { options, sampler } = run;
  const { baseline, end } = o;
  const peak = Math.max(...sampler.samples.map((s) => s.rss));
  const seconds = ((performance.now() - sampler.start) / 1000).toFixed(1);
  return (
    `requests=${o.completed} streams=${o.streamsDone}x${options.responses} workers=${o.workerRounds}x4 errors=${run.errorCount} ` +
    `rss=${mib(baseline.rss)}->${mib(end.rss)} MiB peak=${mib(peak)} MiB ` +
    `last-quarter growth: requests ${growthText(o.requestGrowth)}, streams ${growthText(o.streamGrowth)}, workers ${growthText(o.workerGrowth)} ` +
    `live after stop: pending=${end.pendingRequests} outputBuffers=${end.liveOutputBuffers}` +
    (end.fake === null ? '' : ` fake=${end.fake.requests}/${end.fake.responses}/${end.fake.outputBuffers}`) +
    ` ${seconds} s`
  );
}

async function startServer(api: Api, options: SoakOptions) {
  const server = await api.Server.create({
    modelRepository: options.repository,
    library: options.library,
    ...(options.backendDir === undefined ? {} : { backendDirectory: options.backendDir }),
    exitTimeoutSeconds: 30,
  });
  try {
    await server.loadModel('identity_fp32');
    await server.loadModel('square_int32');
  } catch (e) {
    await server.stop();
    throw e;
  }
  return server;
}

async function run(options: SoakOptions): Promise<number> {
  const gc = exposeGc();
  const api: Api = await import('triton-node');
  const testing: Testing = await import('triton-node/testing');
  const native: Native = { addon: () => ({ addonStats: testing.addonStats }) };
  const info = api.loadLibrary(options.library);
  const sampler = new Sampler(gc, native, testing);
  const server = await startServer(api, options);
  const identity = server.model('identity_fp32');
  const square = server.model('square_int32');
  process.stdout.write(
    `soak: ${info.isFake ? 'fake engine' : 'Triton'} ${info.path}, ${options.requests} requests ` +
      `(${options.concurrency} in flight), ${options.streams} streams of ${options.responses} responses ` +
      `(${options.streamConcurrency} at a time), ${options.workerRounds} rounds of hostile workers\n`,
  );

  // Warm-up (JIT, pools, lazily created objects), then the baseline.
  for (let i = 0; i < 2000; i++) await identity.infer({ inputs: { INPUT0: new Float32Array([i]) } });
  const baseline = sampler.sample('requests', 0);
  sampler.restart();
  const r: Run = { options, progress: new Progress(), sampler, errorCount: 0, firstErrors: [] };
  const completed = await requestPhase(r, identity);
  const streamsDone = await streamPhase(r, square);
  const workerRounds = await workerPhase(r, server, identity, native);
  const shared = server.share();
  const end = await stopPhase(r, server, native, gc, streamsDone);
  await attachAfterStop(r, api, shared);
  process.stdout.write(`\n${formatSamples(sampler.samples)}\n\n`);

  const phase = (p: Sample['phase']) => sampler.samples.filter((s) => s.phase === p);
  const outcome: Outcome = {
    completed,
    streamsDone,
    workerRounds,
    baseline,
    end,
    requestGrowth: lastQuarterGrowth(phase('requests')),
    streamGrowth: lastQuarterGrowth(phase('streams')),
    workerGrowth: lastQuarterGrowth(phase('workers')),
  };
  const reasons = verdict(r, outcome);
  const summary = summaryLine(r, outcome);
  if (reasons.length === 0) {
    process.stdout.write(`soak: PASS ${summary}\n`);
    return 0;
  }
  process.stdout.write(`soak: FAIL ${reasons.join('; ')} (${summary})\n`);
  return 1;
}

/**
 * Samples each window needs for a phase's growth to be judged: with one, the
 * "medians" are two single samples, and their difference is the swing of one
 * sample (a round of worker threads, whose new threads get malloc arenas of
 * their own, lifts RSS by 20-30 MiB in each of the first rounds).
 */
const MIN_WINDOW = 2;

/**
 * How much RSS rose from the middle half of a phase to its last quarter:
 * the median of the last quarter's samples minus the median of the middle
 * half's. RSS swings by tens of MiB from one sample to the next (malloc
 * arenas of Triton's threads, V8's heap), so single samples, even peaks,
 * say little; a leak lifts every sample, and the medians with them (by
 * 37.5% of the phase's total leak: the windows' centres are that far
 * apart). The first quarter is warm-up. Undefined (not judged) with fewer
 * than MIN_WINDOW samples in either window.
 */
function lastQuarterGrowth(list: Sample[]): number | undefined {
  const total = list.at(-1)?.done ?? 0;
  const middle = list.filter((s) => s.done >= total * 0.25 && s.done < total * 0.75).map((s) => s.rss);
  const last = list.filter((s) => s.done >= total * 0.75).map((s) => s.rss);
  if (middle.length < MIN_WINDOW || last.length < MIN_WINDOW) return undefined;
  return median(last) - median(middle);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function growthText(growth: number | undefined): string {
  return growth === undefined ? 'not judged (too few samples)' : `${mib(growth)} MiB`;
}

function mib(bytes: number): string {
  return (bytes / MiB).toFixed(1);
}

function formatSamples(samples: Sample[]): string {
  const head = [
    'phase',
    'done',
    's',
    'per s',
    'RSS MiB',
    'heap MiB',
    'arrayBuf MiB',
    'external MiB',
    'pending',
    'outBufs',
    'fake req/resp/buf',
  ];
  const rows = samples.map((s) => [
    s.phase,
    s.phase === 'stopped' ? '-' : String(s.done),
    s.seconds.toFixed(1),
    s.phase === 'stopped' ? '-' : s.rate.toFixed(0),
    mib(s.rss),
    mib(s.heapUsed),
    mib(s.arrayBuffers),
    mib(s.external),
    String(s.pendingRequests),
    String(s.liveOutputBuffers),
    s.fake === null ? '-' : `${s.fake.requests}/${s.fake.responses}/${s.fake.outputBuffers}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
