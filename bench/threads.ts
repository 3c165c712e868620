/**
 * `bench --threads 1,2,4,8`: the small-request cases with N worker threads
 * attached to one server (Server.attach), the case's concurrency split
 * among them, against the C++ in-callback driver on the same library at the
 * same total concurrency. Prints one line per case and thread count.
 */
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
  type Report = { completed: number; errors: number; firstError?: string };
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
  await Promise.all(workers.map((w) => w.message()));
  const windowStart = performance.timeOrigin + performance.now() + warmupS * 1000;
  const windowEnd = windowStart + durationS * 1000;
  const done = workers.map((w) => w.message());
  for (const w of workers) w.worker.postMessage({ windowStart, windowEnd });
  const reports = await Promise.all(done);
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
    }
  }
  return { runs, cppCallback, failed };
}
