import { useServer } from '@triton-node/test-support/helpers.js';
import {
  type HistogramSeries,
  findFamily,
  histogramSeries,
  parseExposition,
} from '@triton-node/test-support/metrics/prometheus.js';
// Streaming histograms (Server.create({ metrics: { streaming: true } })):
// every stream records its time to first response and the times between
// responses, per model and version, in Triton's Prometheus text.
import { describe, expect, it } from 'vitest';
import type { InferStream } from '../../lib/index.js';
import { STREAM_BETWEEN_RESPONSES_METRIC, STREAM_FIRST_RESPONSE_METRIC } from '../../lib/metrics/metrics.js';

const server = useServer(['repeat_int32', 'square_int32'], { metrics: { streaming: true } });

function repeat(values: number[], delayMs: number) {
  return {
    inputs: {
      IN: Int32Array.from(values),
      DELAY: Uint32Array.from(values.map(() => delayMs)),
      WAIT: Uint32Array.from([0]),
    },
  };
}

async function drain(stream: InferStream): Promise<number> {
  let n = 0;
  for await (const _ of stream) n++;
  return n;
}

async function series(name: string, model: string): Promise<HistogramSeries | undefined> {
  const text = await server().metrics();
  const family = findFamily(parseExposition(text), name);
  if (family) expect(family.type).toBe('HISTOGRAM');
  return histogramSeries(text, name, { model, version: '1' });
}

const count = (s: HistogramSeries | undefined) => s?.count ?? 0;
const sum = (s: HistogramSeries | undefined) => s?.sum ?? 0;

describe('streaming histograms', () => {
  it('record time to first response and between responses per model and version', async () => {
    const firstBefore = await series(STREAM_FIRST_RESPONSE_METRIC, 'repeat_int32');
    const betweenBefore = await series(STREAM_BETWEEN_RESPONSES_METRIC, 'repeat_int32');
    // 4 responses, each after 10 ms: first ≥ 10 ms, then 3 gaps of ≥ 10 ms.
    expect(
      await drain(
        server()
          .model('repeat_int32')
          .stream(repeat([1, 2, 3, 4], 10)),
      ),
    ).toBe(4);
    const first = await series(STREAM_FIRST_RESPONSE_METRIC, 'repeat_int32');
    const between = await series(STREAM_BETWEEN_RESPONSES_METRIC, 'repeat_int32');
    expect(count(first) - count(firstBefore)).toBe(1);
    expect(count(between) - count(betweenBefore)).toBe(3);
    // A lower bound only: the request took at least the backend's four delays
    // from start to last response. (How they split between the first response
    // and the gaps depends on when the JS thread woke: a late first response
    // shortens the first gap.)
    const firstMs = sum(first) - sum(firstBefore);
    expect(firstMs).toBeGreaterThan(0);
    expect(firstMs + sum(between) - sum(betweenBefore)).toBeGreaterThanOrEqual(4 * 10 * 0.9);
    // Buckets are cumulative and end at +Inf = count.
    expect(first!.buckets.at(-1)).toEqual([Number.POSITIVE_INFINITY, count(first)]);
    for (let i = 1; i < first!.buckets.length; i++) {
      expect(first!.buckets[i]![1]).toBeGreaterThanOrEqual(first!.buckets[i - 1]![1]);
    }
  });

  it('label each model separately and record nothing for a stream without responses', async () => {
    const before = await series(STREAM_FIRST_RESPONSE_METRIC, 'square_int32');
    expect(
      await drain(
        server()
          .model('square_int32')
          .stream({ inputs: { IN: Int32Array.of(3) } }),
      ),
    ).toBe(3);
    expect(
      await drain(
        server()
          .model('square_int32')
          .stream({ inputs: { IN: Int32Array.of(0) } }),
      ),
    ).toBe(0);
    const after = await series(STREAM_FIRST_RESPONSE_METRIC, 'square_int32');
    expect(count(after) - count(before)).toBe(1);
    const between = await series(STREAM_BETWEEN_RESPONSES_METRIC, 'square_int32');
    expect(count(between)).toBe(2);
  });
});
