// `bench --threads` (bench/threads.ts): worker threads attached to one
// server. A short run prints one line per case and thread count, in the
// agreed form, with measured numbers and ratios that follow from them, and
// writes its JSON. The numbers themselves are never asserted (they are the
// benchmark's output, docs/benchmarks.md).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKEND_DIR, LIBRARY_PATH, runNode } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';

/** The repository: bench/ is its workspace. */
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const LINE =
  /^(identity-16B-c\d+) threads=(\d+) node (\d+\.\d) ratio-to-1 (\d+\.\d\d)x ratio-to-cpp-callback (\d+\.\d\d)x$/gm;
const out = mkdtempSync(path.join(os.tmpdir(), 'bench-threads-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('bench --threads', () => {
  it('prints `<case> threads=<N> node <req/s> ratio-to-1 <R>x ratio-to-cpp-callback <R>x` and writes its JSON', async () => {
    const args = [
      '--import',
      'tsx',
      'bench/cli.ts',
      'bench',
      '--threads',
      '1,2',
      '--cases',
      'identity-16B-c8',
    ];
    args.push('--rounds', '1', '--duration', '0.5s', '--warmup', '0.2s', '--no-progress');
    args.push('--library', LIBRARY_PATH, '--out', out);
    if (BACKEND_DIR !== undefined) args.push('--backend-dir', BACKEND_DIR);
    const { code, stdout, stderr } = await runNode(args, ROOT);
    expect(code, stderr).toBe(0);
    const lines = [...stdout.matchAll(LINE)];
    expect(lines.map((m) => [m[1], m[2]])).toEqual([
      ['identity-16B-c8', '1'],
      ['identity-16B-c8', '2'],
    ]);
    const one = Number(lines[0]![3]);
    expect(Number(lines[0]![4])).toBe(1);
    for (const m of lines) {
      expect(Number(m[3])).toBeGreaterThan(0);
      expect(Number(m[4])).toBeCloseTo(Number(m[3]) / one, 1);
      expect(Number(m[5])).toBeGreaterThan(0);
    }
    const json = readdirSync(out).find((f) => f.startsWith('bench-threads-') && f.endsWith('.json'))!;
    const record = JSON.parse(readFileSync(path.join(out, json), 'utf8'));
    expect(record.runs.map((r: { threads: number }) => r.threads)).toEqual([1, 2]);
    expect(record.cppCallback['identity-16B-c8']).toBeGreaterThan(0);
    for (const r of record.runs) expect(r.errors).toBe(0);
  }, 120_000);
});
