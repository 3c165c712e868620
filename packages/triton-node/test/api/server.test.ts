import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDENTITY_DELAY_CONFIG } from '@triton-node/test-support/fixtures/delay-model.js';
import { MODELS, eventually, library, serverOptions } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { Server, TritonError } from '../../lib/index.js';

describe('server lifecycle', () => {
  it('starts, is live and ready, reports metadata, stops', async () => {
    library();
    const server = await Server.create(serverOptions());
    expect(await server.isLive()).toBe(true);
    expect(await server.isReady()).toBe(true);
    const meta = await server.metadata();
    expect(typeof meta.name).toBe('string');
    expect(meta.name.length).toBeGreaterThan(0);
    expect(meta.version).toMatch(/^\d+\.\d+/);
    expect(Array.isArray(meta.extensions)).toBe(true);
    expect(server.stopped).toBe(false);
    await server.stop();
    expect(server.stopped).toBe(true);
  });

  it("names itself by the server id, 'triton' unless serverId says otherwise (as tritonserver)", async () => {
    const plain = await Server.create(serverOptions());
    const named = await Server.create({ ...serverOptions(), serverId: 'edge-7' });
    try {
      expect((await plain.metadata()).name).toBe('triton');
      expect((await named.metadata()).name).toBe('edge-7');
      // The fake's version is the release it imitates; it is told apart by its symbols
      // (server.triton.fake), never by its name.
      expect((await plain.metadata()).version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(plain.triton.fake).toBe(library().isFake);
    } finally {
      await Promise.all([plain.stop(), named.stop()]);
    }
  });

  it('stop() is idempotent: a second (and concurrent) stop resolves', async () => {
    const server = await Server.create(serverOptions());
    const a = server.stop();
    const b = server.stop();
    await Promise.all([a, b]);
    await expect(server.stop()).resolves.toBeUndefined();
  });

  it('every call after stop rejects with a TritonError UNAVAILABLE', async () => {
    const server = await Server.create(serverOptions());
    await server.loadModel('identity_fp32');
    await server.stop();
    const calls: Array<Promise<unknown>> = [
      server.isLive(),
      server.isReady(),
      server.metadata(),
      server.loadModel('identity_fp32'),
      server.unloadModel('identity_fp32'),
      server.modelIndex(),
      server.metrics(),
      server.model('identity_fp32').isReady(),
      server.model('identity_fp32').metadata(),
      server.model('identity_fp32').config(),
      server.model('identity_fp32').statistics(),
      server.model('identity_fp32').versions(),
      server.infer('identity_fp32', { inputs: { INPUT0: new Float32Array([1]) } }),
    ];
    for (const call of calls) {
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TritonError);
      expect((err as TritonError).code).toBe('UNAVAILABLE');
    }
    const stream = server.stream('repeat_int32', {
      inputs: { IN: new Int32Array([1]), DELAY: new Uint32Array([0]), WAIT: new Uint32Array([0]) },
    });
    await expect(stream.next()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('await using stops the server at the end of the scope', async () => {
    let outer: Server | undefined;
    {
      await using server = await Server.create(serverOptions());
      outer = server;
      expect(await server.isLive()).toBe(true);
    }
    expect(outer.stopped).toBe(true);
    await expect(outer.isLive()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('Symbol.asyncDispose stops the server', async () => {
    const server = await Server.create(serverOptions());
    await server[Symbol.asyncDispose]();
    expect(server.stopped).toBe(true);
  });

  it('stop() while a load is running: the load finishes or fails UNAVAILABLE, before stop() resolves', async () => {
    const server = await Server.create(serverOptions());
    const order: string[] = [];
    const load = server.loadModel('identity_delay').then(
      () => {
        order.push('load');
        return 'loaded';
      },
      (e: unknown) => {
        order.push('load');
        return e;
      },
    );
    await server.stop();
    order.push('stop');
    const outcome = await load;
    // The stop waited for the load (no operation outlives the server) ...
    expect(order).toEqual(['load', 'stop']);
    // ... which either completed or was refused because the server stopped.
    if (outcome !== 'loaded') {
      expect(outcome).toBeInstanceOf(TritonError);
      expect((outcome as TritonError).code).toBe('UNAVAILABLE');
    }
    await expect(server.model('identity_delay').isReady()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('stress: 50 rounds of loads and queries racing stop() all settle', async () => {
    // A hang here is a promise the addon dropped while the server stopped.
    const within = <T>(p: Promise<T>, what: string): Promise<T> =>
      Promise.race([
        p,
        new Promise<T>((_, reject) => {
          const t = setTimeout(() => reject(new Error(`${what} never settled`)), 30_000);
          t.unref();
        }),
      ]);
    for (let round = 0; round < 50; round++) {
      const server = await Server.create(serverOptions());
      const settle = (p: Promise<unknown>) =>
        p.then(
          () => 'ok',
          (e: unknown) => e,
        );
      const ops = [
        settle(server.loadModel('identity_fp32')),
        settle(server.loadModel('identity_delay')),
        settle(server.isReady()),
        settle(server.modelIndex()),
      ];
      // Vary where stop() lands relative to the loads' worker threads.
      if (round % 3 === 1) await new Promise((r) => setImmediate(r));
      if (round % 3 === 2) await new Promise((r) => setTimeout(r, round % 7));
      await within(server.stop(), `stop() in round ${round}`);
      const outcomes = await within(Promise.all(ops), `an op in round ${round}`);
      for (const o of outcomes) {
        if (o === 'ok') continue;
        expect(o).toBeInstanceOf(TritonError);
        // Only the stop can fail these: a loaded repository is valid.
        expect((o as TritonError).code).toBe('UNAVAILABLE');
      }
    }
  });

  it('stop() with inferences in flight: within the exit timeout each one completes with its own result', async () => {
    // 40 requests of 20 ms on one instance: ~0.8 s of work, well inside the
    // exit timeout (5 s), so stop() lets every one finish.
    const server = await Server.create(serverOptions());
    await server.loadModel('identity_delay');
    await server.infer('identity_delay', { inputs: { INPUT0: new Float32Array([0]) } });
    const calls = Array.from({ length: 40 }, (_, i) =>
      server.infer('identity_delay', { inputs: { INPUT0: new Float32Array([i]) } }).then(
        (r) => (r.outputs.OUTPUT0!.data as Float32Array)[0],
        (e: unknown) => e,
      ),
    );
    await server.stop();
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('stop() with inferences in flight past the exit timeout: the rest fail UNAVAILABLE, none hangs', async () => {
    // 60 requests of 20 ms (1.2 s) against an exit timeout of 0 s.
    const server = await Server.create(serverOptions({ exitTimeoutSeconds: 0 }));
    await server.loadModel('identity_delay');
    await server.infer('identity_delay', { inputs: { INPUT0: new Float32Array([0]) } });
    const calls = Array.from({ length: 60 }, (_, i) =>
      server.infer('identity_delay', { inputs: { INPUT0: new Float32Array([i]) } }).then(
        (r) => (r.outputs.OUTPUT0!.data as Float32Array)[0],
        (e: unknown) => e,
      ),
    );
    await server.stop();
    const outcomes = await Promise.all(calls);
    const failed = outcomes.filter((o) => typeof o !== 'number');
    outcomes.forEach((o, i) => {
      if (typeof o === 'number') expect(o).toBe(i);
      else expect(o).toMatchObject({ name: 'TritonError', code: 'UNAVAILABLE' });
    });
    // Not everything can have finished in no time at all.
    expect(failed.length).toBeGreaterThan(0);
  });

  it('a server with a missing repository fails to start with a TritonError', async () => {
    const err = await Server.create(
      serverOptions({ modelRepository: '/nonexistent/triton-node/models' }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).message).toContain('/nonexistent/triton-node/models');
  });

  it('serves models from several repositories', async () => {
    const extra = mkdtempSync(join(tmpdir(), 'triton-node-repo-'));
    try {
      mkdirSync(join(extra, 'second_repo_identity', '1'), { recursive: true });
      writeFileSync(
        join(extra, 'second_repo_identity', 'config.pbtxt'),
        readFileSync(join(MODELS, 'identity_nobatch', 'config.pbtxt'), 'utf8').replace(
          'name: "identity_nobatch"',
          'name: "second_repo_identity"',
        ),
      );
      const server = await Server.create(serverOptions({ modelRepository: [MODELS, extra] }));
      try {
        await server.loadModel('second_repo_identity');
        await server.loadModel('identity_nobatch');
        const r = await server.infer('second_repo_identity', { inputs: { INPUT0: new Float32Array([6]) } });
        expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([6]);
        expect(await server.model('identity_nobatch').isReady()).toBe(true);
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(extra, { recursive: true, force: true });
    }
  });

  it('keeps the caller stack on errors from native code', async () => {
    const server = await Server.create(serverOptions());
    try {
      const err = (await server.loadModel('no_such_model').then(
        () => undefined,
        (e: unknown) => e,
      )) as TritonError;
      expect(err).toBeInstanceOf(TritonError);
      expect(err.model).toBe('no_such_model');
      expect(err.stack).toContain('server.test.ts');
    } finally {
      await server.stop();
    }
  });
});

describe('a stop that times out', () => {
  const QUEUED = 1000;
  it('cancels the requests still in flight, which then settle instead of running the queue out', async () => {
    const server = await Server.create(serverOptions({ exitTimeoutSeconds: 1 }));
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      // 1,000 requests queue for ~20 s, far longer than the exit timeout.
      await server.loadModel('identity_delay', { config: IDENTITY_DELAY_CONFIG });
      const m = server.model('identity_delay');
      await m.infer({ inputs: { INPUT0: new Float32Array([0]) } });
      // Each request writes its output straight into its own destination,
      // which the addon keeps until Triton releases the request: a request
      // the backend ran leaves its value there even after stop() gave up on
      // it in JS.
      const into = Array.from({ length: QUEUED }, () => new Float32Array([-1]));
      const outcomes = into.map((dst, i) =>
        m.infer({ inputs: { INPUT0: new Float32Array([i]) }, outputs: { OUTPUT0: { into: dst } } }).then(
          () => 'ok',
          (e: TritonError) => e.code,
        ),
      );
      await server.stop();
      const settled = await Promise.all(outcomes);
      const ok = settled.filter((o) => o === 'ok').length;
      expect(ok).toBeGreaterThan(0);
      for (const o of settled) expect(['ok', 'CANCELLED', 'UNAVAILABLE']).toContain(o);
      // Once Triton has released every request, count the ones that ran:
      // 50 to 100 within the exit timeout (Triton looks once a second); the
      // cancelled rest never ran (without the cancel the backend runs them
      // all, which takes 20 s: a busy machine cannot stretch the stop that far).
      expect(await eventually(() => addon().addonStats().pendingRequests === 0)).toBe(true);
      const ran = into.filter((dst, i) => dst[0] === i).length;
      expect(ran).toBeGreaterThanOrEqual(ok);
      expect(ran).toBeLessThan(QUEUED);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on a later tick
      expect(warnings.some((w) => /timeout/i.test(w))).toBe(true);
    } finally {
      process.off('warning', onWarning);
      await server.stop();
    }
  });
});
