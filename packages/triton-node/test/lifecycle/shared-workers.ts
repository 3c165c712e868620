/**
 * Worker threads over a shared server (test/fixtures/shared-worker.mjs):
 * each attaches the value `share()` gave and does what its mode says,
 * reporting back by message.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { FIXTURES } from '@triton-node/test-support/helpers.js';
import type { SharedServer } from '../../lib/index.js';

const WORKER = `${FIXTURES}/shared-worker.mjs`;
// The workers run the built package (npm test builds it first); a copy
// without dist/ (npm run mutate's) runs the sources.
export const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const ENTRY = existsSync(BUILT) ? BUILT : fileURLToPath(new URL('../../lib/index.ts', import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: each mode reports its own fields
export type Report = Record<string, any>;

/** A worker in `mode` over `shared`; `next()` is its next report (it throws when the worker exits without one). */
export function startWorker(shared: SharedServer, mode: string, extra: object = {}) {
  const worker = new Worker(WORKER, { workerData: { shared, mode, entry: ENTRY, ...extra } });
  const reports: Report[] = [];
  const waiters: Array<() => void> = [];
  worker.on('message', (m: Report) => {
    reports.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  const errors: unknown[] = [];
  worker.on('error', (e) => errors.push(e));
  const next = async (): Promise<Report> => {
    while (reports.length === 0) {
      const failed = await Promise.race([
        new Promise<boolean>((r) => waiters.push(() => r(false))),
        exited.then(() => true),
      ]);
      if (failed && reports.length === 0)
        throw new Error(`worker exited without a report: ${String(errors[0])}`);
    }
    return reports.shift()!;
  };
  return { worker, next, exited, errors };
}
