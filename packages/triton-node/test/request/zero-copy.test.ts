import { collectGarbage, eventually, useServer } from '@triton-node/test-support/helpers.js';
/**
 * Zero copy: inputs reach Triton from the caller's own memory, in every form
 * a request may give them, and CPU outputs are views of the memory Triton
 * wrote (or the caller's very own array with `into`). `npm run mutate`
 * breaks each on purpose and expects a test here to fail.
 */
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import type { InferResult, Tensor } from '../../lib/index.js';

const server = useServer([
  'identity_fp32',
  'identity_delay',
  'identity_nobatch',
  'identity_priority',
  'identity_echo',
  'square_int32',
]);

function floats(t: Tensor | undefined): number[] {
  return Array.from(t!.data as Float32Array);
}

describe('zero copy', () => {
  it('an input is read by the backend from the caller’s memory: a write right after infer() shows in the output', async () => {
    const model = server().model('identity_delay');
    // With the config cached, infer() submits before it returns; the backend
    // (execute_delay_ms 20) reads the input only after its delay.
    await model.infer({ inputs: { INPUT0: new Float32Array([0]) } });
    const input = new Float32Array([1, 2, 3]);
    const pending = model.infer({ inputs: { INPUT0: input } });
    input[0] = 99;
    expect(floats((await pending).outputs.OUTPUT0)).toEqual([99, 2, 3]);
  });

  it('so is an input given in any other form: { data, shape }, a view at an offset, a DataView', async () => {
    const model = server().model('identity_delay');
    await model.infer({ inputs: { INPUT0: new Float32Array([0]) } });
    // Each goes the general way (an explicit shape, a view into a larger
    // buffer whose class is not the input's own, raw bytes), not the fast one.
    const backing = new Float32Array([7, 1, 2, 3, 7]);
    const forms: Array<[unknown, Float32Array]> = [
      [{ data: backing.subarray(1, 4), shape: [1, 3] }, backing],
      [{ data: new DataView(backing.buffer, 4, 12), datatype: 'FP32', shape: [1, 3] }, backing],
    ];
    for (const [value, memory] of forms) {
      memory.set([7, 1, 2, 3, 7]);
      const pending = model.infer({ inputs: { INPUT0: value as Float32Array } });
      memory[1] = 99;
      expect(floats((await pending).outputs.OUTPUT0)).toEqual([99, 2, 3]);
    }
  });

  it('a CPU output is a view of the memory Triton wrote (one external pooled buffer), not a copy', async () => {
    const native = addon();
    const input = Float32Array.from({ length: 4096 }, (_, i) => i);
    await collectGarbage();
    const base = native.addonStats().liveOutputBuffers;
    const held: InferResult[] = [];
    for (let i = 0; i < 3; i++)
      held.push(await server().infer('identity_nobatch', { inputs: { INPUT0: input } }));
    // Each output is the allocator's buffer, handed to JS as is.
    expect(native.addonStats().liveOutputBuffers).toBe(base + 3);
    const tensor = held[0]!.outputs.OUTPUT0!;
    const data = tensor.data as Float32Array;
    expect(Array.from(data)).toEqual(Array.from(input));
    const alias = new Uint8Array(data.buffer);
    tensor.dispose();
    // The memory went back to the pool: every view of it is cut off, and
    // nothing else held a copy of it.
    expect(alias.byteLength).toBe(0);
    expect(data.length).toBe(0);
    expect(native.addonStats().liveOutputBuffers).toBe(base + 2);
    // The others go back when collected.
    held.length = 0;
    expect(
      await eventually(async () => {
        await collectGarbage(1);
        return native.addonStats().liveOutputBuffers === base;
      }),
    ).toBe(true);
  });

  it('`into` is written in place: the very same array comes back, its parent sees the values', async () => {
    const native = addon();
    const parent = new Float32Array(10).fill(-1);
    const into = parent.subarray(2, 6);
    const live = native.addonStats().liveOutputBuffers;
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: Float32Array.of(1, 2, 3, 4) },
      outputs: { OUTPUT0: { into } },
    });
    expect(r.outputs.OUTPUT0!.data).toBe(into);
    expect(Array.from(parent)).toEqual([-1, -1, 1, 2, 3, 4, -1, -1, -1, -1]);
    // No pooled buffer was handed out for it.
    expect(native.addonStats().liveOutputBuffers).toBe(live);
  });
});
