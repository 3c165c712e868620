/**
 * One Triton, many JS threads: `server.share()` in this thread,
 * `Server.attach()` in workers (the built package), with completions on each
 * worker's own thread. What an attached server may do (and not: deploy,
 * roll back), how it follows the owner's pins, and what happens when the
 * owner stops (attaches refused from its stop() on, the workers' kept
 * requests deleted with its own, their requests cancelled with its own at
 * the exit timeout), a worker terminates mid-request, or a value is attached
 * twice, after the owner stopped, forged, or from another Triton library.
 * Messages another thread posts on the pins channel: test/hostile/shared-pins.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IDENTITY_DELAY_CONFIG } from '@triton-node/test-support/fixtures/delay-model.js';
import {
  BACKEND_DIR,
  LIBRARY_PATH,
  MODELS,
  collectGarbage,
  eventually,
  readUntil,
  rejection,
  requestsSettled,
  serverOptions,
  skipIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { Server, type SharedServer, cuda } from '../../lib/index.js';
import { BUILT, startWorker as start } from './shared-workers.js';

const server = useServer(['identity_fp32', 'identity_delay', 'repeat_int32']);
const kept = () => addon().addonStats().keptRequests;
const pending = () => addon().addonStats().pendingRequests;

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
      expect(r.rollbackError).toMatchObject({ name: 'TritonError', code: 'UNSUPPORTED' });
      expect(r.rollbackError.message).toMatch(/rollback\('identity_fp32'\) on an attached server/);
      expect(r.afterDetach).toMatchObject({ code: 'UNAVAILABLE' });
      expect(r.afterDetach.message).toMatch(/server is detached/);
      if (gpu) expect(r.pinned).toEqual({ placed: 'gpu', values: [1, 2, 3, 4] });
    }
    for (const w of workers) expect(await w.exited).toBe(0);
    // The workers' inferences are this server's statistics: one Triton.
    // Triton counts an inference after its response: read until they are in.
    const after = (
      await readUntil(
        () => server().model('identity_fp32').statistics(),
        (s) => s[0]!.inferenceCount - before >= 2 * 200,
      )
    )[0]!.inferenceCount;
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
    // Its requests are cancelled and released natively. Those already in the
    // batcher's queue run first (identity_fp32 has no queue policy): up to
    // 10,000 of them, which a busy machine can take more than 30 s over.
    expect(await eventually(() => addon().addonStats().pendingRequests === 0, 120_000)).toBe(true);
    expect((await calm.next()).ok).toBe(50);
    expect(await calm.exited).toBe(0);
    const r = await server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([5]) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([5]);
  }, 180_000);

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
    // A value shared over another Triton library: refused, naming both.
    const elsewhere = '/opt/another-triton/lib/libtritonserver.so';
    const foreign = await rejection(Server.attach({ ...shared, library: elsewhere }));
    expect(foreign).toMatchObject({ name: 'TritonError', code: 'NOT_FOUND' });
    expect(foreign.message).toContain(elsewhere);
    expect(foreign.message).toContain(server().library.path);
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

describe("the owner's pins in attached servers", () => {
  it('an attached server starts with the pin of the moment it attaches, and follows each later one', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'triton-node-shared-pins-'));
    cpSync(join(MODELS, 'two_versions'), join(repo, 'two_versions'), { recursive: true });
    const owner = await Server.create(serverOptions({ modelRepository: repo }));
    try {
      await owner.loadModel('two_versions', { versions: [1] });
      // Both versions loaded, 1 pinned: Triton's own choice would be 2.
      await owner.deploy('two_versions', { version: 2 });
      await owner.rollback('two_versions');
      expect(owner.pinnedVersion('two_versions')).toBe(1);
      const w = start(owner.share(), 'pins', { model: 'two_versions' });
      expect(await w.next()).toEqual({ pinned: 1, served: 1 });
      for (const to of [2, 1]) {
        await owner.rollback('two_versions', { to });
        w.worker.postMessage({ pinned: to });
        expect(await w.next()).toEqual({ reached: true, pinned: to, served: to });
      }
      expect(w.errors).toEqual([]);
      await w.worker.terminate();
    } finally {
      await owner.stop();
      rmSync(repo, { recursive: true, force: true });
    }
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

  it('an attach while the owner is stopping is refused', async () => {
    const owner = await Server.create(serverOptions());
    const shared = owner.share();
    // On the fake engine a load held back keeps the stop at its first step
    // (it waits for the operations inside Triton): the attach meets a stop
    // that has certainly not ended. Elsewhere the attach follows stop() at once.
    const hold = addon().fakeHoldModelLoads(1) !== null;
    const held = () => addon().fakeHoldModelLoads(-1);
    let loading: Promise<unknown> = Promise.resolve();
    let stopping: Promise<void>;
    try {
      if (hold) {
        loading = owner.loadModel('identity_fp32').catch((err: unknown) => err);
        expect(await eventually(() => held() === 1)).toBe(true);
      }
      stopping = owner.stop();
      const during = await rejection(Server.attach(shared));
      if (hold) expect(held(), 'the stop was still waiting for the load').toBe(1);
      expect(during.code).toBe('UNAVAILABLE');
      expect(during.message).toMatch(/cannot attach/);
    } finally {
      addon().fakeHoldModelLoads(0);
    }
    await loading;
    await stopping;
    const after = await rejection(Server.attach(shared));
    expect(after.code).toBe('UNAVAILABLE');
  });

  it("a worker's kept requests go with the owner's stop, before Triton's server does", async () => {
    expect(await requestsSettled()).toBe(true);
    const owner = await Server.create(serverOptions());
    await owner.loadModel('identity_fp32');
    const before = kept();
    const w = start(owner.share(), 'kept');
    expect((await w.next()).ok).toBe(8);
    // Its releases (where requests are kept) may follow its results.
    expect(await eventually(() => kept() > before)).toBe(true);
    await owner.stop();
    // The worker still runs: nothing of its own deleted them.
    expect(kept()).toBe(before);
    w.worker.postMessage('again');
    expect((await w.next()).ok).toBe(0);
    expect(kept()).toBe(before);
    await w.worker.terminate();
  });
});

// Last: the owner's stop times out, and its server stays undeleted until this
// process exits.
describe("when the owner's stop times out", () => {
  it("it cancels an attached worker's requests with its own: they settle instead of running the queue out", async () => {
    const owner = await Server.create(serverOptions({ exitTimeoutSeconds: 1 }));
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      await owner.loadModel('identity_delay', { config: IDENTITY_DELAY_CONFIG });
      // 300 requests of 20 ms, one at a time: 6 s of work, far past the exit timeout.
      const w = start(owner.share(), 'stop-times-out', { requests: 300 });
      expect((await w.next()).queued).toBe(300);
      await owner.stop();
      expect(await eventually(() => pending() === 0, 30_000)).toBe(true);
      w.worker.postMessage('count');
      const r = await w.next();
      for (const o of r.settled) expect(['ok', 'CANCELLED', 'UNAVAILABLE']).toContain(o);
      // 50 to 100 ran within the exit timeout; the cancelled rest never
      // ran (without the cancel the backend runs all 300).
      expect(r.ran).toBeGreaterThanOrEqual(r.ok);
      expect(r.ran).toBeLessThan(200);
      expect(await w.exited).toBe(0);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on a later tick
      expect(warnings.some((w) => /timeout/i.test(w))).toBe(true);
    } finally {
      process.off('warning', onWarning);
      await owner.stop();
    }
  });
});
