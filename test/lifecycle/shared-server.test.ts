/**
 * One Triton, many JS threads: `server.share()` in this thread,
 * `Server.attach()` in workers (the built package), with completions on each
 * worker's own thread. What an attached server may do, what it may not, and
 * what happens when the owner stops, a worker terminates mid-request, a value
 * is attached twice or after the owner stopped, or is forged.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { Server, type SharedServer, cuda } from '../../lib/index.js';
import {
  BACKEND_DIR,
  FIXTURES,
  LIBRARY_PATH,
  collectGarbage,
  eventually,
  rejection,
  serverOptions,
  skipIf,
  useServer,
} from '../helpers.js';

const WORKER = `${FIXTURES}/shared-worker.mjs`;
// The workers run the built package (npm test builds it first); a copy
// without dist/ (npm run mutate's) runs the sources.
const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const ENTRY = existsSync(BUILT) ? BUILT : fileURLToPath(new URL('../../lib/index.ts', import.meta.url));
const server = useServer(['identity_fp32', 'identity_delay', 'repeat_int32']);

// biome-ignore lint/suspicious/noExplicitAny: each mode reports its own fields
type Report = Record<string, any>;

function start(shared: SharedServer, mode: string, extra: object = {}) {
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

function gpuUsable(): boolean {
  try {
    cuda.alloc(16).dispose();
    return true;
  } catch {
    return false;
  }
}

describe('server.share() and Server.attach() in worker threads', () => {
  it('workers infer, stream, read metadata and statistics on the same Triton; they cannot deploy; stop() detaches', async () => {
    const shared = server().share();
    // Plain data: what postMessage and workerData carry.
    expect(structuredClone(shared)).toEqual(shared);
    const before = (await server().model('identity_fp32').statistics())[0]!.inferenceCount;
    const gpu = gpuUsable();
    // The same value, attached by two workers at once.
    const workers = [start(shared, 'infer', { gpu }), start(shared, 'infer', { gpu })];
    const reports = await Promise.all(workers.map((w) => w.next()));
    for (const r of reports) {
      expect(r.attachError).toBeUndefined();
      expect(r.ok).toBe(200);
      expect(r.stream).toEqual([7, 8, 9]);
      expect(r.ready).toBe(true);
      expect(r.attached).toBe(true);
      expect(r.name).toBe((await server().metadata()).name);
      expect(r.deployError).toMatchObject({ name: 'TritonError', code: 'UNSUPPORTED' });
      expect(r.deployError.message).toMatch(/deploy\('identity_fp32'\) on an attached server/);
      expect(r.afterDetach).toMatchObject({ code: 'UNAVAILABLE' });
      expect(r.afterDetach.message).toMatch(/server is detached/);
      if (gpu) expect(r.pinned).toEqual({ placed: 'gpu', values: [1, 2, 3, 4] });
    }
    for (const w of workers) expect(await w.exited).toBe(0);
    // The workers' inferences are this server's statistics: one Triton.
    const after = (await server().model('identity_fp32').statistics())[0]!.inferenceCount;
    expect(after - before).toBeGreaterThanOrEqual(2 * 200);
    // The owner serves on, unaffected by the detaches.
    const r = await server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([3]) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([3]);
    expect(server().attached).toBe(false);
  });

  it('a worker terminated with 10,000 requests in flight leaks nothing; the server serves the others', async () => {
    const shared = server().share();
    const flood = start(shared, 'flood', { requests: 10_000 });
    const calm = start(shared, 'infer', { requests: 50 });
    expect((await flood.next()).flooding).toBe(10_000);
    expect(await eventually(() => addon().addonStats().pendingRequests > 100)).toBe(true);
    expect(await flood.worker.terminate()).toBe(1);
    // Its requests are cancelled and released natively.
    expect(await eventually(() => addon().addonStats().pendingRequests === 0, 30_000)).toBe(true);
    expect((await calm.next()).ok).toBe(50);
    expect(await calm.exited).toBe(0);
    const r = await server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([5]) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([5]);
  });

  it('an input transferred away from a worker mid-request (and collected) still reaches Triton whole', async () => {
    const w = start(server().share(), 'detach');
    const moved = await w.next();
    expect(moved.moved).toBeInstanceOf(ArrayBuffer);
    moved.moved = undefined;
    await collectGarbage();
    const outcome = await w.next();
    expect(outcome, JSON.stringify(outcome)).toEqual({ ok: true, detached: true });
    expect(await w.exited).toBe(0);
  });

  it("the owner's unload deletes a worker's kept requests and completes; the worker serves again after the reload", async () => {
    const w = start(server().share(), 'kept');
    expect((await w.next()).ok).toBe(8);
    // Its releases (where requests are kept) may follow its results.
    expect(await eventually(() => addon().addonStats().keptRequests > 0)).toBe(true);
    await server().unloadModel('identity_fp32');
    expect(await server().model('identity_fp32').isReady()).toBe(false);
    expect(addon().addonStats().keptRequests).toBe(0);
    await server().loadModel('identity_fp32');
    w.worker.postMessage('again');
    expect((await w.next()).ok).toBe(8);
    w.worker.postMessage('stop');
    expect((await w.next()).stopped).toBe(true);
    await w.worker.terminate();
  });

  it('examples/workers.mjs (the built package) runs: every thread gets its own answers', async (ctx) => {
    skipIf(ctx, existsSync(BUILT) ? false : 'needs the built package (dist/)');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const env = { ...process.env, TRITON_SERVER_LIB: LIBRARY_PATH, TRITON_BACKEND_DIR: BACKEND_DIR ?? '' };
    const child = spawnSync(process.execPath, ['examples/workers.mjs', '3', '300'], {
      cwd: root,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const lines = child.stdout.trim().split('\n');
    expect(lines.filter((l) => /^thread \d: 300 requests in [\d.]+ s, 0 wrong$/.test(l))).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/^3 threads, one server: 900 requests, \d+ per second$/);
  });

  it('a forged or foreign value is refused with a typed error naming what is wrong', async () => {
    const shared = server().share();
    await expect(Server.attach({} as SharedServer)).rejects.toThrow(TypeError);
    await expect(Server.attach({ ...shared, id: 'x' })).rejects.toThrow(/shared\.id/);
    await expect(Server.attach({ ...shared, pins: [['m', -1]] } as unknown as SharedServer)).rejects.toThrow(
      /shared\.pins/,
    );
    const unknown = await rejection(Server.attach({ ...shared, id: '0'.repeat(32) }));
    expect(unknown).toMatchObject({ name: 'TritonError', code: 'NOT_FOUND' });
    expect(unknown.message).toMatch(/no shared server has this id/);
    // Attached in this same thread: allowed (a second server object over it).
    const again = await Server.attach(shared);
    expect(again.attached).toBe(true);
    const r = await again.infer('identity_fp32', { inputs: { INPUT0: new Float32Array([9]) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([9]);
    await again.stop();
  });
});

describe('when the owner stops', () => {
  it('in-flight requests of attached servers settle, later calls reject naming the owner, and attach after stop is refused', async () => {
    const owner = await Server.create(serverOptions());
    await owner.loadModel('identity_fp32');
    await owner.loadModel('identity_delay');
    const shared = owner.share();
    const w = start(shared, 'owner-stops');
    expect((await w.next()).waiting).toBe(true);
    await owner.stop();
    w.worker.postMessage('go');
    const report = await w.next();
    expect(report.settled).toHaveLength(50);
    for (const s of report.settled) expect(['ok', 'CANCELLED', 'UNAVAILABLE']).toContain(s);
    expect(report.after).toMatchObject({ code: 'UNAVAILABLE' });
    expect(report.after.message).toMatch(/the thread that created it stopped it/);
    expect(report.metadataAfter).toMatchObject({ code: 'UNAVAILABLE' });
    // Its worker exits on its own: nothing of the attachment holds its loop.
    expect(await w.exited).toBe(0);
    const late = await rejection(Server.attach(shared));
    expect(late).toMatchObject({ name: 'TritonError' });
    expect(['UNAVAILABLE', 'NOT_FOUND']).toContain(late.code);
    expect(() => owner.share()).toThrow(/cannot be shared/);
    expect(addon().addonStats().pendingRequests).toBe(0);
  });
});
