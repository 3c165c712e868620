import {
  AFTER_2_FAILED,
  AFTER_10_SUCCESS,
  DYN_AFTER_CONCURRENCY,
  SQUARE_AFTER_STREAM,
} from '@triton-node/test-support/fixtures/statistics.js';
// parseModelStatistics and statisticsDelta on documents captured from real
// Triton (no server needed).
import { describe, expect, it } from 'vitest';
import { type ModelStatistics, parseModelStatistics, statisticsDelta } from '../../lib/config/statistics.js';

function one(json: string): ModelStatistics {
  const list = parseModelStatistics(json);
  expect(list).toHaveLength(1);
  return list[0]!;
}

describe('parseModelStatistics', () => {
  it('maps every field of a Triton document to camelCase with a numeric version', () => {
    const s = one(AFTER_10_SUCCESS);
    expect(s).toEqual({
      name: 'identity_stats',
      version: 1,
      lastInference: 1795974143500,
      inferenceCount: 10,
      executionCount: 10,
      inferenceStats: {
        success: { count: 10, ns: 683412 },
        fail: { count: 0, ns: 0 },
        queue: { count: 10, ns: 274989 },
        computeInput: { count: 10, ns: 114147 },
        computeInfer: { count: 10, ns: 115611 },
        computeOutput: { count: 10, ns: 287 },
        cacheHit: { count: 0, ns: 0 },
        cacheMiss: { count: 0, ns: 0 },
      },
      responseStats: {},
      batchStats: [
        {
          batchSize: 1,
          computeInput: { count: 10, ns: 114147 },
          computeInfer: { count: 10, ns: 115611 },
          computeOutput: { count: 10, ns: 287 },
        },
      ],
      memoryUsage: [],
    });
  });

  it('keeps per-response statistics of decoupled models keyed by response index', () => {
    const s = one(SQUARE_AFTER_STREAM);
    expect(Object.keys(s.responseStats)).toEqual(['0', '1', '2']);
    expect(s.responseStats['1']).toEqual({
      computeInfer: { count: 1, ns: 120 },
      computeOutput: { count: 1, ns: 23475 },
      success: { count: 1, ns: 23595 },
      fail: { count: 0, ns: 0 },
      emptyResponse: { count: 0, ns: 0 },
      cancel: { count: 0, ns: 0 },
    });
    expect(s.batchStats).toEqual([]);
  });

  it('accepts the parsed object as well as the text', () => {
    expect(parseModelStatistics(JSON.parse(AFTER_10_SUCCESS))).toEqual(
      parseModelStatistics(AFTER_10_SUCCESS),
    );
  });

  it('reads memory usage entries', () => {
    const doc = JSON.parse(AFTER_10_SUCCESS);
    doc.model_stats[0].memory_usage = [{ type: 'GPU', id: 0, byte_size: 1024 }];
    expect(one(JSON.stringify(doc)).memoryUsage).toEqual([{ type: 'GPU', id: 0, byteSize: 1024 }]);
  });

  it('rejects malformed documents with a TypeError naming the field', () => {
    expect(() => parseModelStatistics('{')).toThrow(/not valid JSON/);
    expect(() => parseModelStatistics('{}')).toThrow(/model_stats/);
    const doc = JSON.parse(AFTER_10_SUCCESS);
    doc.model_stats[0].inference_stats.queue.ns = 'soon';
    expect(() => parseModelStatistics(doc)).toThrow(TypeError);
    expect(() => parseModelStatistics(doc)).toThrow(/model_stats\[0\]\.inference_stats\.queue\.ns/);
    const noName = JSON.parse(AFTER_10_SUCCESS);
    Reflect.deleteProperty(noName.model_stats[0], 'name');
    expect(() => parseModelStatistics(noName)).toThrow(/model_stats\[0\]\.name/);
    const badVersion = JSON.parse(AFTER_10_SUCCESS);
    badVersion.model_stats[0].version = 'one';
    expect(() => parseModelStatistics(badVersion)).toThrow(/version/);
  });
});

describe('statisticsDelta', () => {
  it('counts the failed requests and executions of an interval', () => {
    const d = statisticsDelta(one(AFTER_10_SUCCESS), one(AFTER_2_FAILED));
    expect(d.requests).toBe(2);
    expect(d.successes).toBe(0);
    expect(d.failures).toBe(2);
    expect(d.executions).toBe(2);
    expect(d.inferences).toBe(0);
    expect(d.meanQueueUs).toBe(0);
    expect(d.meanComputeUs).toBe(0);
    // Failed executions still ran with batch size 1.
    expect(d.meanBatchSize).toBe(1);
  });

  it('computes means per request from a zero baseline', () => {
    const after = one(AFTER_10_SUCCESS);
    const zero = parseModelStatistics(SQUARE_AFTER_STREAM)[0]!;
    const before: ModelStatistics = {
      ...zero,
      name: after.name,
      version: after.version,
      responseStats: {},
    };
    const d = statisticsDelta(before, after);
    expect(d.requests).toBe(10);
    expect(d.successes).toBe(10);
    expect(d.meanQueueUs).toBeCloseTo(27.4989, 6);
    expect(d.meanComputeInferUs).toBeCloseTo(11.5611, 6);
    expect(d.meanComputeUs).toBeCloseTo((114147 + 115611 + 287) / 10 / 1000, 6);
    expect(d.meanRequestUs).toBeCloseTo(68.3412, 6);
    expect(d.meanBatchSize).toBe(1);
  });

  it('takes the mean batch size from the batch statistics', () => {
    const after = one(DYN_AFTER_CONCURRENCY);
    // A version that appears only in `after` counts from zero.
    const d = statisticsDelta([], [after]);
    expect(d.executions).toBe(28);
    expect(d.inferences).toBe(190);
    expect(d.meanBatchSize).toBeCloseTo((4 * 1 + 6 * 15 + 8 * 12) / 28, 9);
  });

  it('is all zeros for identical snapshots', () => {
    const s = one(AFTER_10_SUCCESS);
    const d = statisticsDelta(s, s);
    expect(Object.values(d).every((v) => v === 0)).toBe(true);
  });

  it('refuses snapshots of different models, swapped snapshots and non-statistics', () => {
    const a = one(AFTER_10_SUCCESS);
    const sq = one(SQUARE_AFTER_STREAM);
    expect(() => statisticsDelta(a, sq)).toThrow(/identity_stats v1.*square_int32 v1/);
    expect(() => statisticsDelta(one(AFTER_2_FAILED), a)).toThrow(RangeError);
    expect(() => statisticsDelta({} as ModelStatistics, a)).toThrow(TypeError);
  });
});
