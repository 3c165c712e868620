/**
 * `bench --threads 1,2,4,8`: the small-request cases with N worker threads
 * attached to one server (Server.attach), the case's concurrency split
 * among them, against the C++ in-callback driver on the same library at the
 * same total concurrency. Prints one line per case and thread count.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { BenchCase } from './cases.js';
import type { DriverSettings } from './driver-side.js';
import { runDriver } from './driver-side.js';

export interface ThreadsRun {
  caseName: string;
  threads: number;
  concurrency: number;
  requestsPerSec: number;
  errors: number;
  firstError?: string;
  /** Where the process's CPU time went during the window (Linux; absent elsewhere). */
  cpu?: ThreadsCpu;
}

/** CPU use of the process's threads over the measured window, in % of one core. */
export interface ThreadsCpu {
  /** The worker threads running JS (their event loops), in worker order. */
  js: number[];
  /** The busiest other threads: Triton's, libuv's, Node's own. */
  others: Array<{ name: string; tid: number; percent: number }>;
}

// ---- per-thread CPU time, from /proc (Linux) -------------------------------

type Ticks = Map<number, { name: string; ticks: number }>;

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime of every thread of this process, or null where /proc has none. */
function threadTicks(): Ticks | null {
  if (!existsSync('/proc/self/task')) return null;
  const out: Ticks = new Map();
  for (const entry of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      // After the name: state is field 3; utime and stime are fields 14 and 15.
      out.set(Number(entry), { name, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

function cpuOver(
  before: Ticks | null,
  after: Ticks | null,
  seconds: number,
  jsTids: number[],
): ThreadsCpu | undefined {
  if (before === null || after === null) return undefined;
  const percent = (tid: number) => {
    const a = after.get(tid);
    if (a === undefined) return 0;
    return ((a.ticks - (before.get(tid)?.ticks ?? 0)) / ticksPerSecond() / seconds) * 100;
  };
  const js = jsTids.map((t) => Math.round(percent(t)));
  const others = [...after.entries()]
    .filter(([tid]) => !jsTids.includes(tid))
    .map(([tid, t]) => ({ name: t.name, tid, percent: Math.round(percent(tid)) }))
    .filter((o) => o.percent > 0)
    .sort((a, b) => b.percent - a.percent)
    .slice(0, 6);
  return { js, others };
}

/** `  cpu: js 97% 96% | others: tritonserver_x 100%, ...` */
function cpuLine(cpu: ThreadsCpu): string {
  const others = cpu.others.map((o) => `${o.name}/${o.tid} ${o.percent}%`).join(', ');
  return `  cpu (% of a core): js ${cpu.js.map((p) => `${p}%`).join(' ')} | busiest others: ${others || 'none'}`;
}

interface Shareable {
  share(): unknown;
}

const WORKER = new URL('./thread-worker.mjs', import.meta.url);

/** One run: `threads` workers, `c.concurrency` requests in flight in total. */
async function runThreads(
  server: Shareable,
  c: BenchCase,
  threads: number,
  warmupS: number,
  durationS: number,
): Promise<ThreadsRun> {
  const shared = server.share();
  const per = Array.from(
    { length: threads },
    (_, i) => Math.floor(c.concurrency / threads) + (i < c.concurrency % threads ? 1 : 0),
  ).filter((n) => n > 0);
  type Report = { completed: number; errors: number; firstError?: string; tid?: number };
  const workers = per.map((concurrency) => {
    const worker = new Worker(WORKER, {
      workerData: { shared, model: c.model, shape: c.shape, concurrency },
    });
    const failed = new Promise<never>((_, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(new Error(`bench worker exited with code ${code} before reporting`)),
      );
    });
    const message = () =>
      Promise.race([new Promise<Report & { ready?: boolean }>((r) => worker.once('message', r)), failed]);
    return { worker, message };
  });
  // Every worker attached (and its code compiled) before the clock starts.
  const ready = await Promise.all(workers.map((w) => w.message()));
  const jsTids = ready.map((r) => r.tid ?? -1);
  const windowStart = performance.timeOrigin + performance.now() + warmupS * 1000;
  const windowEnd = windowStart + durationS * 1000;
  const done = workers.map((w) => w.message());
  for (const w of workers) w.worker.postMessage({ windowStart, windowEnd });
  // CPU time over the window: sampled from this (idle) thread at its ends.
  let before: Ticks | null = null;
  let after: Ticks | null = null;
  const sampler = (async () => {
    await new Promise((r) =>
      setTimeout(r, Math.max(0, windowStart - (performance.timeOrigin + performance.now()))),
    );
    before = threadTicks();
    await new Promise((r) => setTimeout(r, durationS * 1000));
    after = threadTicks();
  })();
  const reports = await Promise.all(done);
  await sampler;
  const cpu = cpuOver(before, after, durationS, jsTids);
  const completed = reports.reduce((n, r) => n + r.completed, 0);
  const errors = reports.reduce((n, r) => n + r.errors, 0);
  const firstError = reports.find((r) => r.firstError !== undefined)?.firstError;
  return {
    caseName: c.name,
    threads: per.length,
    concurrency: c.concurrency,
    requestsPerSec: completed / durationS,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    ...(cpu === undefined ? {} : { cpu }),
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/**
 * Every small case (identity, infer) for each thread count: the median of
 * `rounds` runs. Lines: `identity-16B-c64 threads=4 node 181234.5
 * ratio-to-1 2.61x ratio-to-cpp-callback 1.05x` (requests per second of
 * all threads together). Returns the runs and
 * whether any failed.
 */
export async function benchThreads(
  server: Shareable,
  cases: BenchCase[],
  threadCounts: number[],
  settings: DriverSettings,
  rounds: number,
  write: (line: string) => void,
): Promise<{ runs: ThreadsRun[]; cppCallback: Record<string, number>; failed: boolean }> {
  const small = cases.filter((c) => c.kind === 'infer' && c.family === 'identity-16B');
  const runs: ThreadsRun[] = [];
  const cppCallback: Record<string, number> = {};
  let failed = false;
  for (const c of small) {
    const cpp: number[] = [];
    for (let r = 0; r < rounds; r++) cpp.push((await runDriver(c, settings, 'cpp-callback')).throughput);
    cppCallback[c.name] = median(cpp);
    let one: number | undefined;
    for (const threads of threadCounts) {
      const results: ThreadsRun[] = [];
      for (let r = 0; r < rounds; r++) {
        results.push(await runThreads(server, c, threads, settings.warmupS, settings.durationS));
      }
      const mid = [...results].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[Math.floor(rounds / 2)]!;
      if (results.some((x) => x.errors > 0)) failed = true;
      runs.push(mid);
      one ??= mid.requestsPerSec;
      write(
        `${c.name} threads=${mid.threads} node ${mid.requestsPerSec.toFixed(1)} ratio-to-1 ${(mid.requestsPerSec / one).toFixed(2)}x ratio-to-cpp-callback ${(mid.requestsPerSec / cppCallback[c.name]!).toFixed(2)}x` +
          (mid.errors > 0 ? ` (${mid.errors} errors: ${mid.firstError})` : ''),
      );
      if (mid.cpu !== undefined) write(cpuLine(mid.cpu));
    }
  }
  return { runs, cppCallback, failed };
}
