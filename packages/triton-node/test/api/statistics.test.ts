import { readUntil, requestsSettled, useServer } from '@triton-node/test-support/helpers.js';
// model.statistics() and statisticsDelta against a running server: counts
// move by exactly the requests sent, and durations agree with identity's
// execute_delay_ms (identity_delay sleeps 20 ms per execution).
import { describe, expect, it } from 'vitest';
import { type ModelStatistics, TritonError, statisticsDelta } from '../../lib/index.js';

const server = useServer([
  'identity_nobatch',
  'identity_fp32',
  'identity_delay',
  'repeat_int32',
  'square_int32',
]);

const DELAY_US = 20_000;

async function stats(model: string): Promise<ModelStatistics> {
  const list = await server().model(model, 1).statistics();
  expect(list).toHaveLength(1);
  return list[0]!;
}

/**
 * The delta since `before` once every request was released and the delta
 * satisfies `done`: Triton counts a request and its execution after the
 * response (identity before the release, repeat after it), so a delta read
 * at the response may be short. The caller asserts the counts exactly.
 */
async function settle(
  model: string,
  before: ModelStatistics,
  done: (d: ReturnType<typeof statisticsDelta>) => boolean,
) {
  expect(await requestsSettled()).toBe(true);
  return readUntil(async () => statisticsDelta(before, await stats(model)), done);
}

/** The microseconds from just before the first of `calls` to just after the last returned. */
function submissionSpreadUs(calls: Array<() => Promise<unknown>>): {
  pending: Array<Promise<unknown>>;
  spreadUs: number;
} {
  const t0 = performance.now();
  const pending = calls.map((call) => call());
  return { pending, spreadUs: (performance.now() - t0) * 1000 };
}

describe('model.statistics()', () => {
  it('returns typed statistics per version', async () => {
    const s = await stats('identity_nobatch');
    expect(s.name).toBe('identity_nobatch');
    expect(s.version).toBe(1);
    expect(typeof s.lastInference).toBe('number');
    for (const d of Object.values(s.inferenceStats)) {
      expect(Number.isInteger(d.count)).toBe(true);
      expect(Number.isInteger(d.ns)).toBe(true);
    }
    expect(Array.isArray(s.batchStats)).toBe(true);
    const all = await server().model('identity_nobatch').statistics();
    expect(all.map((x) => x.version)).toEqual([1]);
  });

  it('counts successes, backend failures and executions exactly; validation failures nowhere', async () => {
    const before = await stats('identity_nobatch');
    const successes = 10;
    const failures = 2;
    for (let i = 0; i < successes; i++) {
      await server().infer('identity_nobatch', { inputs: { INPUT0: new Float32Array([1, 2, 3, 4]) } });
    }
    for (let i = 0; i < failures; i++) {
      await expect(
        server().infer('identity_nobatch', {
          inputs: { INPUT0: new Float32Array([1, 2, 3, 4]) },
          outputs: { OUTPUT0: { into: new Float32Array(2) } },
        }),
      ).rejects.toBeInstanceOf(TritonError);
    }
    await expect(
      server().infer('identity_nobatch', { inputs: { INPUT0: new Int32Array([1, 2]) } }),
    ).rejects.toThrow();
    const d = await settle(
      'identity_nobatch',
      before,
      (x) => x.successes === successes && x.failures === failures && x.executions === successes + failures,
    );
    expect(d.requests).toBe(successes + failures);
    expect(d.successes).toBe(successes);
    expect(d.failures).toBe(failures);
    // Failed executions count as executions but not as inferences.
    expect(d.executions).toBe(successes + failures);
    expect(d.inferences).toBe(successes);
    expect(d.meanQueueUs).toBeGreaterThan(0);
    expect(d.meanComputeUs).toBeGreaterThan(0);
    expect(d.meanRequestUs).toBeGreaterThanOrEqual(d.meanQueueUs);
    const after = await stats('identity_nobatch');
    expect(after.lastInference).toBeGreaterThan(Date.now() - 60_000);
    expect(after.lastInference).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('counts batch elements as inferences and reports the batch size', async () => {
    const before = await stats('identity_fp32');
    // One request with a batch of 3 rows, sent alone: one execution.
    await server().infer('identity_fp32', {
      inputs: { INPUT0: { data: new Float32Array(12), shape: [3, 4] } },
    });
    const d = await settle('identity_fp32', before, (x) => x.executions === 1);
    expect(d.requests).toBe(1);
    expect(d.inferences).toBe(3);
    expect(d.executions).toBe(1);
    expect(d.meanBatchSize).toBe(3);
    const after = await stats('identity_fp32');
    expect(after.batchStats.some((b) => b.batchSize === 3 && b.computeInfer.count >= 1)).toBe(true);
  });

  it('agrees with execute_delay_ms: compute ≥ 20 ms per request, queueing behind busy executions', async () => {
    const before = await stats('identity_delay');
    // One at a time: no queueing to speak of, 20 ms of compute each.
    for (let i = 0; i < 3; i++) {
      await server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([i]) } });
    }
    const serial = await settle('identity_delay', before, (x) => x.executions === 3);
    expect(serial.successes).toBe(3);
    expect(serial.meanComputeInferUs).toBeGreaterThanOrEqual(DELAY_US * 0.99);
    expect(serial.meanComputeUs).toBeGreaterThanOrEqual(serial.meanComputeInferUs);
    expect(serial.meanQueueUs).toBeGreaterThan(0);

    // Four at once on one instance without dynamic batching: the k-th to
    // run waits for k executions of 20 ms, less how much later than the
    // first it was submitted (a busy machine can spread the submissions by
    // milliseconds): the mean queue time is at least
    // (0 + 20 + 40 + 60) / 4 = 30 ms less that spread.
    const mid = await stats('identity_delay');
    const { pending, spreadUs } = submissionSpreadUs(
      [0, 1, 2, 3].map(
        (i) => () => server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([i]) } }),
      ),
    );
    await Promise.all(pending);
    const concurrent = await settle('identity_delay', mid, (x) => x.successes === 4 && x.executions === 4);
    expect(concurrent.successes).toBe(4);
    expect(concurrent.meanComputeInferUs).toBeGreaterThanOrEqual(DELAY_US * 0.99);
    expect(concurrent.meanQueueUs).toBeGreaterThanOrEqual(((0 + 1 + 2 + 3) * DELAY_US * 0.99) / 4 - spreadUs);
  });

  it('counts a decoupled repeat stream as one request and one execution', async () => {
    const before = await stats('repeat_int32');
    const stream = server()
      .model('repeat_int32')
      .stream({
        inputs: { IN: Int32Array.of(1, 2, 3), DELAY: Uint32Array.of(5, 5, 5), WAIT: Uint32Array.of(30) },
      });
    let responses = 0;
    for await (const _ of stream) responses++;
    expect(responses).toBe(3);
    const d = await settle('repeat_int32', before, (x) => x.successes === 1 && x.executions === 1);
    expect(d.requests).toBe(1);
    expect(d.inferences).toBe(1);
    expect(d.executions).toBe(1);
    // repeat's execute function waits WAIT ms (while another thread sends
    // the responses); that wait is its compute time.
    expect(d.meanComputeInferUs).toBeGreaterThanOrEqual(30_000 * 0.99);
  });

  it('reports square per response index only (no request statistics)', async () => {
    const before = await stats('square_int32');
    let responses = 0;
    for await (const _ of server()
      .model('square_int32')
      .stream({ inputs: { IN: Int32Array.of(3) } }))
      responses++;
    expect(responses).toBe(3);
    expect(await requestsSettled()).toBe(true);
    const after = await readUntil(
      () => stats('square_int32'),
      (s) => (s.responseStats['2']?.success.count ?? 0) > (before.responseStats['2']?.success.count ?? 0),
    );
    for (const index of ['0', '1', '2']) {
      const was = before.responseStats[index]?.success.count ?? 0;
      expect(after.responseStats[index]?.success.count, `response ${index}`).toBe(was + 1);
    }
    const d = statisticsDelta(before, after);
    expect(d.requests).toBe(0);
    expect(d.executions).toBe(0);
    expect(d.inferences).toBe(0);
  });

  it('rejects statistics of an unknown model with a TritonError', async () => {
    const err = await server()
      .model('no_such_model')
      .statistics()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).message).toContain('no_such_model');
  });
});
