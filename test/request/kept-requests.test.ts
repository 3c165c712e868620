// Released Triton requests kept for the next request of the same model and
// input shapes (native/request/spares.h): each reused request carries its
// own data, a reused request with the wrong byte size is still refused, and
// kept requests never hold a model that is unloaded or replaced, nor
// outlive the server. Conformance: the same on the fake and on real Triton.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { Server, TritonError } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';
import { runCases } from '../differential/generate.js';
import {
  MODELS,
  eventually,
  fakeOnly,
  library,
  rejection,
  requestsSettled,
  serverOptions,
  skipIf,
  useServer,
} from '../helpers.js';

const kept = () => addon().addonStats().keptRequests;
const without = (env: NodeJS.ProcessEnv, name: string) =>
  Object.fromEntries(Object.entries(env).filter(([k]) => k !== name));

describe('kept requests', () => {
  const server = useServer(['identity_fp32', 'identity_optional']);

  it('a request after a request of the same shape reuses it, with its own data each time', async () => {
    const model = server().model('identity_fp32');
    for (let i = 0; i < 200; i++) {
      const data = Float32Array.from({ length: 4 }, (_, j) => i * 10 + j);
      const r = await model.infer({ inputs: { INPUT0: data } });
      expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual(Array.from(data));
    }
    // One request in flight at a time: one or two kept requests serve them
    // all (a request's release may come after the next request was made),
    // once the last release came.
    expect(await requestsSettled()).toBe(true);
    expect(kept()).toBeGreaterThanOrEqual(1);
    expect(kept()).toBeLessThanOrEqual(2);
    if (!fakeOnly()) {
      // The engine holds those and no other request.
      expect(fakeEngine.liveObjects()).toMatchObject({ requests: 0, keptRequests: kept() });
    }
  });

  it('concurrent requests with different data and shapes each get their own outputs', async () => {
    const model = server().model('identity_fp32');
    const shapes = [
      [1, 4],
      [2, 4],
      [1, 4],
      [3, 2],
    ];
    const runs = Array.from({ length: 400 }, async (_, i) => {
      const shape = shapes[i % shapes.length]!;
      const data = Float32Array.from({ length: shape[0]! * shape[1]! }, (_, j) => i * 100 + j);
      const r = await model.infer({ inputs: { INPUT0: { data, shape } } });
      expect(r.outputs.OUTPUT0!.shape).toEqual(shape);
      expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual(Array.from(data));
    });
    await Promise.all(runs);
    // Never more kept than were in flight at once.
    // The release (where a request is kept) may come after the result.
    expect(await eventually(() => kept() > 0)).toBe(true);
    expect(kept()).toBeLessThanOrEqual(400);
  });

  it('requested outputs and optional inputs that change between requests are the ones answered', async () => {
    const model = server().model('identity_optional');
    const both = { INPUT0: new Float32Array([1, 2]), INPUT1: new Float32Array([3, 4]) };
    for (let round = 0; round < 3; round++) {
      const a = await model.infer({ inputs: both, outputs: ['OUTPUT0'] });
      expect(Object.keys(a.outputs)).toEqual(['OUTPUT0']);
      const b = await model.infer({ inputs: both, outputs: ['OUTPUT1'] });
      expect(Object.keys(b.outputs)).toEqual(['OUTPUT1']);
      expect(Array.from(b.outputs.OUTPUT1!.data as Float32Array)).toEqual([3, 4]);
      const c = await model.infer({ inputs: both });
      expect(Object.keys(c.outputs).sort()).toEqual(['OUTPUT0', 'OUTPUT1']);
      const d = await model.infer({ inputs: { INPUT0: new Float32Array([7]) }, outputs: ['OUTPUT0'] });
      expect(Array.from(d.outputs.OUTPUT0!.data as Float32Array)).toEqual([7]);
    }
  });

  it('a request whose data does not fill its shape is refused after a good one (Triton does not check a reused request again)', async () => {
    const model = server().model('identity_fp32');
    await model.infer({ inputs: { INPUT0: { data: new Float32Array(4), shape: [1, 4] } } });
    // The release (where a request is kept) may come after the result.
    expect(await eventually(() => kept() > 0)).toBe(true);
    for (const data of [new Float32Array(3), new Float32Array(5)]) {
      const err = await rejection(model.infer({ inputs: { INPUT0: { data, shape: [1, 4] } } }));
      expect(err.code).toBe('INVALID_ARG');
      expect(err.message).toContain('INPUT0');
    }
    const ok = await model.infer({
      inputs: { INPUT0: { data: new Float32Array([9, 8, 7, 6]), shape: [1, 4] } },
    });
    expect(Array.from(ok.outputs.OUTPUT0!.data as Float32Array)).toEqual([9, 8, 7, 6]);
  });

  it("the addon's own check, under the TS layer: bytes that do not fill the shape after a good request are refused by Triton, not run", async () => {
    // The TS layer refuses such data before the addon sees it; these go
    // straight to the native submit (as test/request/differential.test.ts
    // does), so the kept-request path's own byte check is what stands.
    const bytes = (n: number) => new Uint8Array(new Float32Array(n).buffer);
    const input = (n: number) => ({
      name: 'INPUT0',
      datatype: 'FP32' as const,
      shape: [1, 4],
      data: bytes(n),
    });
    const cases = [4, 3, 5, 4, 2, 4].map((n) => ({
      kind: 'kept',
      model: 'identity_fp32',
      version: -1,
      inputs: [input(n)],
    }));
    const outcomes = await runCases(cases);
    expect(outcomes.map((o) => (o.at === 'submit' ? o.code : 'ok'))).toEqual([
      'ok',
      'INVALID_ARG',
      'INVALID_ARG',
      'ok',
      'INVALID_ARG',
      'ok',
    ]);
    expect(outcomes[1]!.message).toContain('input byte size mismatch');
  });

  it('an unload deletes the kept requests of its model and completes; the model loads and serves again', async () => {
    const model = server().model('identity_fp32');
    await Promise.all(
      Array.from({ length: 8 }, () => model.infer({ inputs: { INPUT0: new Float32Array(4) } })),
    );
    // The release (where a request is kept) may come after the result.
    expect(await eventually(() => kept() > 0)).toBe(true);
    await server().unloadModel('identity_fp32');
    expect(await model.isReady()).toBe(false);
    expect(kept()).toBe(0);
    await server().loadModel('identity_fp32');
    const r = await model.infer({ inputs: { INPUT0: new Float32Array([1, 2, 3, 4]) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2, 3, 4]);
  });
});

describe('kept requests and ensembles', () => {
  const server = useServer(['ensemble_identity']);

  it("an ensemble's requests are never kept (Triton adds a release callback to one each time it runs it)", async () => {
    const before = kept();
    for (let i = 0; i < 5; i++) {
      const r = await server()
        .model('ensemble_identity')
        .infer({ inputs: { IN: new Float32Array([i, 2]) } });
      expect(Object.keys(r.outputs).length).toBeGreaterThan(0);
    }
    expect(await requestsSettled()).toBe(true);
    expect(kept()).toBe(before);
  });
});

describe('kept requests and versions', () => {
  const server = useServer([]);

  it('after a new version loads, the next request goes to it, not to the version its kept request was made for', async () => {
    const s = server();
    await s.loadModel('two_versions', { versions: [1] });
    const model = s.model('two_versions');
    const one = await model.infer({ inputs: { INPUT0: new Float32Array([1, 2]) } });
    expect(one.version).toBe(1);
    // The release (where a request is kept) may come after the result.
    expect(await eventually(() => kept() > 0)).toBe(true);
    await s.loadModel('two_versions', { versions: [2] });
    const two = await model.infer({ inputs: { INPUT0: new Float32Array([1, 2]) } });
    expect(two.version).toBe(2);
    await s.unloadModel('two_versions');
  });
});

describe('kept requests and the server', () => {
  it('stop() deletes them and resolves', async () => {
    const s = await Server.create(serverOptions({}));
    await s.loadModel('identity_fp32');
    await Promise.all(
      Array.from({ length: 4 }, () =>
        s.model('identity_fp32').infer({ inputs: { INPUT0: new Float32Array(4) } }),
      ),
    );
    // The release (where a request is kept) may come after the result.
    expect(await eventually(() => kept() > 0)).toBe(true);
    await s.stop();
    expect(kept()).toBe(0);
  });

  it('in POLL mode none are kept (Triton changes models on its own there)', async (ctx) => {
    skipIf(ctx, library().isFake ? 'the fake engine has no POLL mode' : false);
    const repo = mkdtempSync(path.join(os.tmpdir(), 'kept-poll-'));
    cpSync(path.join(MODELS, 'identity_fp32'), path.join(repo, 'identity_fp32'), { recursive: true });
    const poll = await Server.create(serverOptions({ modelRepository: repo, modelControlMode: 'poll' }));
    try {
      for (let i = 0; i < 3; i++) {
        const r = await poll
          .model('identity_fp32')
          .infer({ inputs: { INPUT0: new Float32Array([5, 6, 7, i]) } });
        expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([5, 6, 7, i]);
      }
      expect(kept()).toBe(0);
    } finally {
      await poll.stop();
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('a stopped server refuses a request with a typed error and keeps nothing', async () => {
    const s = await Server.create(serverOptions({}));
    await s.loadModel('identity_fp32');
    await s.model('identity_fp32').infer({ inputs: { INPUT0: new Float32Array(4) } });
    await s.stop();
    const err = await rejection(s.model('identity_fp32').infer({ inputs: { INPUT0: new Float32Array(4) } }));
    expect(err).toBeInstanceOf(TritonError);
    expect(kept()).toBe(0);
  });

  it('TRITON_NODE_KEEP_REQUESTS=0 keeps none', () => {
    const script = `
      import { Server } from './lib/index.ts';
      import { addon } from './lib/addon/load.ts';
      const s = await Server.create(${JSON.stringify(serverOptions({}))});
      await s.loadModel('identity_fp32');
      for (let i = 0; i < 20; i++) await s.model('identity_fp32').infer({ inputs: { INPUT0: new Float32Array([i, 1, 2, 3]) } });
      // The last release (where a request is kept) may follow its result.
      for (let i = 0; i < 200 && addon().addonStats().keptRequests === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const kept = addon().addonStats().keptRequests;
      await s.stop();
      console.log(JSON.stringify({ kept }));`;
    const run = (keep: string | undefined) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: path.join(MODELS, '../..'),
        encoding: 'utf8',
        env:
          keep === undefined
            ? without(process.env, 'TRITON_NODE_KEEP_REQUESTS')
            : { ...process.env, TRITON_NODE_KEEP_REQUESTS: keep },
        timeout: 60_000,
      });
    const off = run('0');
    expect(off.status, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout.trim().split('\n').at(-1)!)).toEqual({ kept: 0 });
    const on = run(undefined);
    expect(on.status, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout.trim().split('\n').at(-1)!).kept).toBeGreaterThanOrEqual(1);
  });
});
