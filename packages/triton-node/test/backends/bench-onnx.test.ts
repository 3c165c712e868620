// `bench --vs onnxruntime-node` (bench/onnx.ts): the line per case has the
// agreed form, and a short run on a library with an onnxruntime backend
// prints one per concurrency with measured numbers on both sides and writes
// its JSON and chart. The numbers themselves are never asserted (they are the
// benchmark's output, docs/benchmarks.md).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realModelFiles } from '@triton-node/test-support/backends/real-models.js';
import { BACKEND_DIR, LIBRARY_PATH, runNode } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { type OnnxCase, type OnnxRun, formatCase } from '../../../../bench/onnx.js';

/** The repository: bench/ is its workspace. */
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const LINE =
  /^onnx (\w+) c=(\d+) triton-node (\d+\.\d) onnxruntime-node (\d+\.\d) ratio (\d+\.\d\d)x\n {4}triton-node p50 [\d.]+ ms p99 [\d.]+ ms event-loop p99 ([\d.]+) ms \| onnxruntime-node p50 [\d.]+ ms p99 [\d.]+ ms event-loop p99 ([\d.]+) ms$/gm;
const out = mkdtempSync(path.join(os.tmpdir(), 'bench-onnx-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function run(side: OnnxRun['side'], throughput: number, loop: number): OnnxRun {
  return {
    side,
    model: 'ocr_det',
    concurrency: 8,
    requests: throughput * 3,
    throughput,
    p50Ms: 12.5,
    p99Ms: 40.25,
    eventLoopP99Ms: loop,
    eventLoopMaxMs: loop,
    eventLoopSamples: 100,
    errors: 0,
  };
}

describe('bench --vs onnxruntime-node', () => {
  it('prints a case as `onnx <model> c=<N> triton-node <req/s> onnxruntime-node <req/s> ratio <R>x`', () => {
    const c: OnnxCase = {
      model: 'ocr_det',
      concurrency: 8,
      median: {
        'triton-node': run('triton-node', 25.04, 3.5),
        'onnxruntime-node': run('onnxruntime-node', 10, 120),
      },
      rounds: {},
      ratio: 2.504,
    };
    const text = formatCase(c);
    expect(text.split('\n')[0]).toBe('onnx ocr_det c=8 triton-node 25.0 onnxruntime-node 10.0 ratio 2.50x');
    expect([...text.matchAll(LINE)]).toHaveLength(1);
    expect(text).toContain('event-loop p99 3.50 ms | onnxruntime-node');
  });

  it('measures both sides at each concurrency and writes the JSON and the chart', async (ctx) => {
    const files = realModelFiles();
    if (typeof files === 'string') ctx.skip(files);
    const args = ['--import', 'tsx', 'bench/cli.ts', 'bench', '--vs', 'onnxruntime-node'];
    args.push('--models', 'ocr_cls', '--concurrency', '1,4', '--duration', '0.5s', '--warmup', '0.2s');
    args.push('--instances', '1', '--no-progress', '--library', LIBRARY_PATH, '--out', out);
    if (BACKEND_DIR !== undefined) args.push('--backend-dir', BACKEND_DIR);
    const { code, stdout, stderr } = await runNode(args, ROOT);
    if (/unable to find backend library for backend 'onnxruntime'/.test(stderr)) {
      ctx.skip('the library has no onnxruntime backend');
    }
    expect(code, stderr).toBe(0);
    const cases = [...stdout.matchAll(LINE)];
    expect(cases.map((m) => [m[1], m[2]])).toEqual([
      ['ocr_cls', '1'],
      ['ocr_cls', '4'],
    ]);
    for (const m of cases) {
      expect(Number(m[3])).toBeGreaterThan(0);
      expect(Number(m[4])).toBeGreaterThan(0);
      expect(Number(m[5])).toBeCloseTo(Number(m[3]) / Number(m[4]), 1);
    }
    const written = readdirSync(out);
    const json = written.find((f) => f.endsWith('.json'))!;
    expect(written).toContain(json.replace(/\.json$/, '.svg'));
    const record = JSON.parse(readFileSync(path.join(out, json), 'utf8'));
    expect(record.settings).toMatchObject({ instances: 1, intraOpThreads: 1, maxBatchSize: 0, kind: 'cpu' });
    expect(record.cases).toHaveLength(2);
    expect(readFileSync(path.join(out, json.replace(/\.json$/, '.svg')), 'utf8')).toMatch(/^<svg/);
  }, 120_000);
});
