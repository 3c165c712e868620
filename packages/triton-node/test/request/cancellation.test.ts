import { readUntil, requestsSettled, useServer } from '@triton-node/test-support/helpers.js';
/**
 * Cancellation reaches the backend: an aborted stream makes the model stop
 * sending, counted by Triton's own statistics. (Cancellation of single
 * requests, by AbortSignal and by timeout, is in infer.test.ts; of streams
 * by break and over the gateway, in stream.test.ts and test/gateway/.)
 */
import { describe, expect, it } from 'vitest';

const server = useServer([
  'identity_fp32',
  'identity_delay',
  'identity_nobatch',
  'identity_priority',
  'identity_echo',
  'square_int32',
]);

/** Responses square_int32 sent so far, by Triton's own count (per-response statistics). */
async function squareResponses(): Promise<number> {
  const [stats] = await server().model('square_int32', 1).statistics();
  let n = 0;
  for (const r of Object.values(stats!.responseStats)) n += r.success.count + r.fail.count;
  return n;
}

describe('cancellation', () => {
  it('aborting a 100,000-response stream stops the backend: it sends far fewer, then FINAL', async () => {
    const before = await squareResponses();
    const controller = new AbortController();
    const stream = server()
      .model('square_int32')
      .stream(
        { inputs: { IN: new Int32Array([100_000]) }, signal: controller.signal },
        { highWaterMark: 100_000 },
      );
    expect((await stream.next()).done).toBe(false);
    controller.abort();
    await expect(stream.next()).rejects.toMatchObject({ code: 'CANCELLED' });
    // FINAL came (nothing of the request is left); without the cancellation
    // it comes only after all 100,000 responses.
    expect(await requestsSettled(60_000)).toBe(true);
    // The statistics of the responses may land after FINAL: read until the
    // first one's did (later ones only add to a count that must stay low).
    const sent = await readUntil(squareResponses, (n) => n - before >= 1);
    expect(sent - before).toBeGreaterThanOrEqual(1);
    expect(sent - before).toBeLessThan(50_000);
  });
});
