// Released Triton requests kept for the next request of the same model and
// input shapes (native/request/kept_requests.h): each reused request carries
// its own data, a reused request with the wrong byte size is still refused, and
// kept requests never hold a model that is unloaded or replaced, nor
// outlive the server. Conformance: the same on the fake and on real Triton.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IDENTITY_DELAY_CONFIG } from '@triton-node/test-support/fixtures/delay-model.js';
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
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { type ModelConfig, Server, TritonError } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';
import { runCases } from '../differential/generate.js';

const kept = () => addon().addonStats().keptRequests;
/** Requests of this process that Triton has not released yet. */
const pending = () => addon().addonStats().pendingRequests;
/** How many explicit loads the fake engine holds back (null on a real Triton). */
const heldLoads = () => addon().fakeHoldModelLoads(-1);

/**
 * identity_fp32 whose batches close at two requests (or after 10 minutes):
 * a request alone stays in Triton's queue, unreleased, until a second one
 * comes. So a test decides when a request is released, without a clock.
 */
const PAIRED_CONFIG: ModelConfig = {
  name: 'identity_fp32',
  backend: 'identity',
  max_batch_size: 2,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  instance_group: [{ count: 1, kind: 'KIND_CPU' }],
  dynamic_batching: { preferred_batch_size: [2], max_queue_delay_microseconds: 600_000_000 },
};
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

describe('kept requests across a model change', () => {
  const server = useServer([]);
  const input = (v: number) => ({ inputs: { INPUT0: Float32Array.of(v, v + 1, v + 2, v + 3) } });
  const first = (r: { outputs: Record<string, { data: unknown }> }) =>
    (r.outputs.OUTPUT0!.data as Float32Array)[0];

  /** identity_fp32 in pairs, its config known (a first request waits for it), nothing of it in flight. */
  async function paired() {
    const s = server();
    await s.loadModel('identity_fp32', { config: PAIRED_CONFIG });
    const model = s.model('identity_fp32');
    await Promise.all([model.infer(input(0)), model.infer(input(0))]);
    expect(await requestsSettled()).toBe(true);
    return model;
  }

  it('a request built before a load or an unload and released after it is deleted at its release, not kept', async () => {
    const s = server();
    const model = await paired();
    for (const change of ['load', 'unload'] as const) {
      const held = model.infer(input(10));
      expect(await eventually(() => pending() === 1)).toBe(true);
      if (change === 'load') await s.loadModel('identity_int32');
      else await s.unloadModel('identity_int32');
      // Still in Triton's queue: built before the change, released after it.
      expect(pending(), `the ${change} ended with the request in flight`).toBe(1);
      const before = kept();
      const partner = model.infer(input(20));
      expect((await Promise.all([held, partner])).map(first)).toEqual([10, 20]);
      expect(await requestsSettled()).toBe(true);
      // The partner's request is kept; the one that may hold the version
      // the change replaced is not.
      expect(kept() - before, `kept after the ${change}`).toBe(1);
    }
  });

  it('requests built and released while a load runs are deleted, not kept', async (ctx) => {
    skipIf(ctx, fakeOnly("holds a load back with the fake engine's switch"));
    const s = server();
    const model = await paired();
    addon().fakeHoldModelLoads(1);
    let loading: Promise<void> | undefined;
    try {
      loading = s.loadModel('identity_int32');
      expect(await eventually(() => heldLoads() === 1)).toBe(true);
      const before = kept();
      expect((await Promise.all([model.infer(input(30)), model.infer(input(40))])).map(first)).toEqual([
        30, 40,
      ]);
      expect(await requestsSettled()).toBe(true);
      expect(heldLoads(), 'the load still waits').toBe(1);
      expect(kept()).toBe(before);
    } finally {
      addon().fakeHoldModelLoads(0);
      await loading;
    }
  });

  it('a request built while a load runs and released after it ended is deleted, not kept', async (ctx) => {
    skipIf(ctx, fakeOnly("holds a load back with the fake engine's switch"));
    const s = server();
    const model = await paired();
    addon().fakeHoldModelLoads(1);
    let loading: Promise<void> | undefined;
    let held: Promise<unknown> | undefined;
    try {
      loading = s.loadModel('identity_int32');
      expect(await eventually(() => heldLoads() === 1)).toBe(true);
      held = model.infer(input(50));
      expect(await eventually(() => pending() === 1)).toBe(true);
    } finally {
      addon().fakeHoldModelLoads(0);
      await loading;
    }
    expect(pending(), 'the load ended with the request in flight').toBe(1);
    const before = kept();
    const partner = model.infer(input(60));
    expect((await Promise.all([held, partner])).map((r) => first(r as never))).toEqual([50, 60]);
    expect(await requestsSettled()).toBe(true);
    expect(kept() - before).toBe(1);
  });

  it('a request with a timeout goes on a request of its own: Triton times it out in the queue, and the next plain request has no timeout', async () => {
    const s = server();
    // Real r25.07 applies a request's timeout only under a default one
    // (with none, it ignores the request's; the fake does not).
    await s.loadModel('identity_delay', {
      config: {
        ...IDENTITY_DELAY_CONFIG,
        dynamic_batching: {
          default_queue_policy: {
            timeout_action: 'REJECT',
            allow_timeout_override: true,
            default_timeout_microseconds: 600_000_000,
          },
        },
      },
    });
    const model = s.model('identity_delay');
    // Plain requests of this shape leave kept requests for the next ones.
    for (let i = 0; i < 3; i++) expect(first(await model.infer(input(i)))).toBe(i);
    expect(await eventually(() => kept() > 0)).toBe(true);
    // The one instance runs `busy` (20 ms) while the timed request waits
    // in the queue, far past its 1 ms.
    const busy = model.infer(input(70));
    const timed = rejection(model.infer({ ...input(80), timeoutMicroseconds: 1000 }));
    expect(first(await busy)).toBe(70);
    const err = await timed;
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.message).toMatch(/timeout expired/i);
    // The same wait for plain requests, on kept ones: no timeout came with them.
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([
        model.infer(input(90)),
        model.infer(input(91)),
        model.infer(input(92)),
      ]);
      expect(results.map(first)).toEqual([90, 91, 92]);
    }
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
      for (let i = 0; i < 3000 && addon().addonStats().keptRequests === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const kept = addon().addonStats().keptRequests;
      await s.stop();
      console.log(JSON.stringify({ kept }));`;
    const run = (keep: string | undefined) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
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
