/**
 * lint()'s gpu-memory-budget on this machine's GPUs: without gpuMemoryBytes
 * it measures each model's instances against the total memory CUDA reports
 * for each GPU. On a GPU (project gpu) and over the stand-in libcudart
 * (project gpu-stub: two 8 GiB "stub device"s). Weight files are sparse.
 */
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gpuSkipReason } from '@triton-node/test-support/gpu/gpu-env.js';
import { skipAllIf } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { lint } from '../../lib/index.js';

const GiB = 1024 ** 3;
const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-gpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A pytorch model with `count` instances on GPU 0 and model.pt of `bytes` (sparse). */
function model(name: string, bytes: number, count: number): void {
  mkdirSync(join(dir, name, '1'), { recursive: true });
  writeFileSync(
    join(dir, name, 'config.pbtxt'),
    `name: "${name}"\nbackend: "pytorch"\nmax_batch_size: 8\ninstance_group [ { count: ${count} kind: KIND_GPU gpus: [ 0 ] } ]\n`,
  );
  writeFileSync(join(dir, name, '1', 'model.pt'), '');
  truncateSync(join(dir, name, '1', 'model.pt'), bytes);
}

describe("gpu-memory-budget on this machine's GPUs", () => {
  skipAllIf(gpuSkipReason);
  const devices = addon().cuda.describe().devices;
  const total = devices[0]?.totalMemory ?? 0;

  it('within 90% of GPU 0 nothing; over its total an error naming the GPU and where its memory came from', () => {
    // One instance of weights + 20% at 45% of the memory.
    model('fits', Math.floor((total * 0.45) / 2.4) * 2, 1);
    expect(lint(dir).findings.filter((f) => f.rule === 'gpu-memory-budget')).toEqual([]);
    // Two more instances, each at 50% of the memory with its 20%: 145% with the first.
    model('too_big', Math.floor(total / 2.4), 2);
    const found = lint(dir).findings.filter((f) => f.rule === 'gpu-memory-budget');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ model: 'too_big', severity: 'error' });
    const gib = `${(total / GiB).toFixed(1)} GiB`;
    expect(found[0]!.message).toMatch(
      new RegExp(
        `^GPU 0: an estimated [\\d.]+ GiB of ${gib.replace('.', '\\.')} \\(1[0-9]{2}%\\): too_big 2 × `,
      ),
    );
    expect(found[0]!.message).toContain(`GPU memory from this machine's GPUs (${devices[0]!.name})`);
    // The explicit memory wins over the machine's.
    expect(
      lint(dir, { gpuMemoryBytes: 100 * total }).findings.filter((f) => f.rule === 'gpu-memory-budget'),
    ).toEqual([]);
  });
});
