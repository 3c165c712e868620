import { collectGarbage, useServer } from '@triton-node/test-support/helpers.js';
// Small CPU outputs (up to 1 KiB) are copied into one ArrayBuffer that many
// results view, kept by the addon from one batch of responses to the next.
// Each result must keep its own bytes whatever comes after it, and a caller
// who detaches (transfers) that shared buffer must neither crash the process
// nor get wrong data from later requests.
import { describe, expect, it } from 'vitest';
import type { Tensor } from '../../lib/index.js';

const server = useServer(['identity_nobatch', 'identity_bytes']);

/** An input of `length` floats, every one `k` plus its index (k tells the requests apart). */
function input(k: number, length: number): Float32Array {
  return Float32Array.from({ length }, (_, i) => k + i / 1024);
}

async function infer(k: number, length: number): Promise<Tensor> {
  const r = await server().infer('identity_nobatch', { inputs: { INPUT0: input(k, length) } });
  return r.outputs.OUTPUT0!;
}

function expectValues(t: Tensor, k: number, length: number): void {
  const data = t.data as Float32Array;
  expect(data).toBeInstanceOf(Float32Array);
  expect(data.length).toBe(length);
  expect(Array.from(data)).toEqual(Array.from(input(k, length)));
}

describe('small outputs', () => {
  it('keep their own values over many results in a row (several shared buffers filled)', async () => {
    // Sizes up to 1 KiB, so that the shared buffer fills and is replaced.
    const lengths = [1, 3, 4, 17, 64, 255, 256];
    const held: Array<[Tensor, number, number]> = [];
    for (let k = 0; k < 400; k++) {
      const length = lengths[k % lengths.length]!;
      held.push([await infer(k, length), k, length]);
    }
    const buffers = new Set(held.map(([t]) => (t.data as Float32Array).buffer));
    expect(buffers.size).toBeGreaterThan(1);
    expect(buffers.size).toBeLessThan(held.length);
    for (const [t, k, length] of held) expectValues(t, k, length);
  });

  it('keep their own values when many arrive together, and are 16-byte aligned', async () => {
    const held = await Promise.all(Array.from({ length: 300 }, (_, k) => infer(k, 1 + (k % 9))));
    held.forEach((t, k) => {
      expectValues(t, k, 1 + (k % 9));
      expect((t.data as Float32Array).byteOffset % 16).toBe(0);
    });
  });

  it('a result written to by its holder leaves the others as they were', async () => {
    const a = await infer(1, 4);
    const b = await infer(2, 4);
    (a.data as Float32Array).fill(-1);
    expectValues(b, 2, 4);
    const c = await infer(3, 4);
    expectValues(c, 3, 4);
    expect(Array.from(a.data as Float32Array)).toEqual([-1, -1, -1, -1]);
  });

  it('survive a caller who detaches the shared buffer between requests', async () => {
    for (let round = 0; round < 5; round++) {
      const first = await infer(round, 8);
      const before = await infer(100 + round, 8);
      const shared = (first.data as Float32Array).buffer as ArrayBuffer;
      expect((before.data as Float32Array).buffer).toBe(shared);
      // Transferred: the memory now belongs to `moved`, and `shared` is detached.
      const moved = structuredClone(shared, { transfer: [shared] });
      expect(shared.byteLength).toBe(0);
      expect((first.data as Float32Array).length).toBe(0);
      const snapshot = new Uint8Array(moved).slice();
      const later: Tensor[] = [];
      for (let k = 0; k < 50; k++) later.push(await infer(1000 * (round + 1) + k, 1 + (k % 20)));
      later.push(...(await Promise.all(Array.from({ length: 50 }, (_, k) => infer(-k, 8)))));
      // Nothing was written into the memory the caller took.
      expect(Buffer.compare(new Uint8Array(moved), snapshot)).toBe(0);
      later.forEach((t, k) => {
        if (k < 50) expectValues(t, 1000 * (round + 1) + k, 1 + (k % 20));
        else expectValues(t, -(k - 50), 8);
        expect((t.data as Float32Array).buffer).not.toBe(shared);
      });
    }
  });

  it('survive a caller who detaches the shared buffer and lets its memory be collected', async () => {
    for (let round = 0; round < 3; round++) {
      const t = await infer(round, 4);
      const shared = (t.data as Float32Array).buffer as ArrayBuffer;
      structuredClone(shared, { transfer: [shared] });
      await collectGarbage();
      const bytes = await server().infer('identity_bytes', { inputs: { INPUT0: ['x', `round ${round}`] } });
      expect(bytes.outputs.OUTPUT0!.strings()).toEqual(['x', `round ${round}`]);
      for (let k = 0; k < 20; k++) expectValues(await infer(k + round, 5), k + round, 5);
    }
  });
});
