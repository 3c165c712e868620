// Per-request timing from Triton's trace timestamps (infer({ timing: true })):
// present only when asked, raw timestamps in Triton's order, parts equal to
// their raw (unclamped) differences and summing within the total, the total within what Node measured, and in line with
// identity_delay's 20 ms execution.
import { performance } from 'node:perf_hooks';
import {
  collectGarbage,
  eventually,
  fakeOnly,
  skipIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { type InferTiming, TritonError } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

const server = useServer(['identity_nobatch', 'identity_delay']);

const DELAY_US = 20_000;

const ORDER = [
  'requestStartNs',
  'queueStartNs',
  'computeStartNs',
  'computeInputEndNs',
  'computeOutputStartNs',
  'computeEndNs',
  'requestEndNs',
] as const;

function checkShape(t: InferTiming | undefined): InferTiming {
  expect(t).toBeDefined();
  const timing = t!;
  expect(Object.keys(timing).sort()).toEqual(
    [
      'computeInferUs',
      'computeInputUs',
      'computeOutputUs',
      'queueUs',
      'timestampsNs',
      'totalUs',
      'traces',
    ].sort(),
  );
  // Triton's raw timestamps, every activity present and in Triton's order.
  const ts = timing.timestampsNs;
  expect(Object.keys(ts).sort()).toEqual([...ORDER].sort());
  for (const k of ORDER) {
    expect(Number.isFinite(ts[k]), k).toBe(true);
    expect(ts[k], `${k} was reported`).toBeGreaterThan(0);
  }
  for (let i = 1; i < ORDER.length; i++) {
    const [a, b] = [ORDER[i - 1]!, ORDER[i]!];
    expect(ts[a] <= ts[b], `${a} (${ts[a]}) <= ${b} (${ts[b]})`).toBe(true);
  }
  // The intervals are the raw differences (nothing clamped), so with ordered
  // timestamps they are non-negative.
  // (Timestamps past 2^53 ns are rounded as numbers: compare to 0.01 µs.)
  const us = (a: number, b: number) => (b - a) / 1000;
  expect(timing.queueUs).toBeCloseTo(us(ts.queueStartNs, ts.computeStartNs), 2);
  expect(timing.computeInputUs).toBeCloseTo(us(ts.computeStartNs, ts.computeInputEndNs), 2);
  expect(timing.computeInferUs).toBeCloseTo(us(ts.computeInputEndNs, ts.computeOutputStartNs), 2);
  expect(timing.computeOutputUs).toBeCloseTo(us(ts.computeOutputStartNs, ts.computeEndNs), 2);
  expect(timing.totalUs).toBeCloseTo(us(ts.requestStartNs, ts.requestEndNs), 2);
  for (const [k, v] of Object.entries(timing)) {
    if (k === 'timestampsNs' || k === 'traces') continue;
    expect(Number.isFinite(v), k).toBe(true);
    expect(v, k).toBeGreaterThanOrEqual(0);
  }
  // The parts are consecutive intervals inside the request.
  const parts = timing.queueUs + timing.computeInputUs + timing.computeInferUs + timing.computeOutputUs;
  expect(parts).toBeLessThanOrEqual(timing.totalUs + 1e-6);
  // The request waited and ran for some time.
  expect(timing.queueUs).toBeGreaterThan(0);
  expect(timing.computeInferUs).toBeGreaterThan(0);
  return timing;
}

describe('per-request timing', () => {
  it('is absent unless asked for', async () => {
    const input = { INPUT0: new Float32Array([1, 2]) };
    expect((await server().infer('identity_nobatch', { inputs: input })).timing).toBeUndefined();
    expect(
      (await server().infer('identity_nobatch', { inputs: input, timing: false })).timing,
    ).toBeUndefined();
  });

  it('has ordered parts that sum within a total that fits inside the call', async () => {
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await server().infer('identity_nobatch', {
        inputs: { INPUT0: new Float32Array([1, 2, 3]) },
        timing: true,
      });
      const elapsedUs = (performance.now() - t0) * 1000;
      const t = checkShape(r.timing);
      // Triton's request starts after infer() was called and ends before it resolved.
      expect(t.totalUs).toBeLessThanOrEqual(elapsedUs + 50);
      expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2, 3]);
    }
  });

  it("shows identity_delay's 20 ms in compute infer", async () => {
    const r = await server().infer('identity_delay', {
      inputs: { INPUT0: new Float32Array([1]) },
      timing: true,
    });
    const t = checkShape(r.timing);
    expect(t.computeInferUs).toBeGreaterThanOrEqual(DELAY_US * 0.99);
    expect(t.totalUs).toBeGreaterThanOrEqual(t.computeInferUs);
  });

  it('shows queueing behind busy executions for concurrent requests', async () => {
    const t0 = performance.now();
    const pending = [0, 1, 2].map((i) =>
      server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([i]) }, timing: true }),
    );
    const spreadUs = (performance.now() - t0) * 1000;
    const results = await Promise.all(pending);
    const timings = results.map((r) => checkShape(r.timing));
    const queues = timings.map((t) => t.queueUs).sort((a, b) => a - b);
    // One instance, no dynamic batching: the last to run waited for two
    // executions, less how much later than the first it was submitted (a
    // busy machine can spread the submissions by milliseconds).
    expect(queues[2]).toBeGreaterThanOrEqual(2 * DELAY_US * 0.99 - spreadUs);
    for (const t of timings) expect(t.computeInferUs).toBeGreaterThanOrEqual(DELAY_US * 0.99);
  });

  it('goes only to the requests that asked, when mixed', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        server().infer('identity_nobatch', {
          inputs: { INPUT0: new Float32Array([i]) },
          timing: i % 3 === 0,
        }),
      ),
    );
    results.forEach((r, i) => {
      if (i % 3 === 0) checkShape(r.timing);
      else expect(r.timing).toBeUndefined();
      expect((r.outputs.OUTPUT0!.data as Float32Array)[0]).toBe(i);
    });
  });

  it('leaves the server working after a timed request fails', async () => {
    await expect(
      server().infer('identity_nobatch', {
        inputs: { INPUT0: new Float32Array([1, 2, 3]) },
        outputs: { OUTPUT0: { into: new Float32Array(1) } },
        timing: true,
      }),
    ).rejects.toBeInstanceOf(TritonError);
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: new Float32Array([5]) },
      timing: true,
    });
    checkShape(r.timing);
  });

  it('releases every trace (fake engine live-object count)', async (ctx) => {
    skipIf(ctx, fakeOnly());
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        server().infer('identity_nobatch', { inputs: { INPUT0: new Float32Array([i]) }, timing: true }),
      ),
    );
    await collectGarbage();
    expect(await eventually(() => fakeEngine.liveObjects()!.traces === 0)).toBe(true);
  });
});
