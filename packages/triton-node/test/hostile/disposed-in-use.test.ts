import { requestsSettled, until, useServer } from '@triton-node/test-support/helpers.js';
// A caller that disposes an output while another request of its still reads
// it (as an input) or writes it (as `into`): the pooled memory under that
// output must not go to anyone else until the request is done with it.
// Before the fix, dispose() gave the block back at once, the next response of
// the same size got it, and the running request read another caller's data
// (input) or overwrote another caller's finished result (`into`).
import { beforeAll, describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import type { Tensor } from '../../lib/index.js';

const server = useServer(['identity_delay', 'identity_fp32']);

// Over the addon's 1 KiB small-output copy: the output is pooled memory.
const ELEMENTS = 4096;
const ROUNDS = 20;

function filled(value: number): Float32Array {
  return new Float32Array(ELEMENTS).fill(value);
}

/** The first index where `a` is not `value`, or -1. */
function firstOther(a: Float32Array, value: number): number {
  return a.findIndex((x) => x !== value);
}

async function pooledOutput(value: number): Promise<Tensor<'FP32'>> {
  const { outputs } = await server()
    .model('identity_fp32')
    .infer({ inputs: { INPUT0: filled(value) } });
  return outputs.OUTPUT0 as Tensor<'FP32'>;
}

describe('dispose() of an output that another request still uses', () => {
  beforeAll(async () => {
    // Configs fetched first, so that each request below goes straight to Triton.
    await server()
      .model('identity_delay')
      .infer({ inputs: { INPUT0: filled(0) } });
    await pooledOutput(0);
  });

  it('an output passed as an input and disposed mid-request is read intact; nobody else gets its memory meanwhile', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const first = await pooledOutput(1000 + round);
      // A request ahead of it on the one delayed instance keeps `second` queued.
      const blocker = server()
        .model('identity_delay')
        .infer({ inputs: { INPUT0: filled(-1) } });
      const second = server()
        .model('identity_delay')
        .infer({ inputs: { INPUT0: first.data } });
      const live = addon().addonStats().liveOutputBuffers;
      first.dispose();
      expect(first.data.length, 'the disposed output is detached at once').toBe(0);
      // Another caller's response of the same size: it must get other memory.
      const other = await pooledOutput(7);
      const otherData = (other.data as Float32Array).slice();
      const [, got] = await Promise.all([blocker, second]);
      const out = got.outputs.OUTPUT0!.data as Float32Array;
      expect(firstOther(out, 1000 + round), `round ${round}: the delayed request read other data`).toBe(-1);
      expect(
        firstOther(other.data as Float32Array, 7),
        `round ${round}: the other caller's result changed`,
      ).toBe(-1);
      expect(firstOther(otherData, 7)).toBe(-1);
      got.dispose();
      other.dispose();
      // Once Triton released the request (which may follow its answer), what was
      // live before dispose() is live no more: nothing kept after the request.
      expect(await requestsSettled(), 'every request released').toBe(true);
      expect(addon().addonStats().liveOutputBuffers).toBeLessThan(live + 1);
    }
  });

  it("an output passed as `into` and disposed mid-request never overwrites another caller's result", async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const first = await pooledOutput(2000 + round);
      const blocker = server()
        .model('identity_delay')
        .infer({ inputs: { INPUT0: filled(-1) } });
      const second = server()
        .model('identity_delay')
        .infer({ inputs: { INPUT0: filled(3) }, outputs: { OUTPUT0: { into: first.data } } });
      first.dispose();
      const other = await pooledOutput(9);
      const [, settled] = await Promise.all([
        blocker,
        second.then(
          () => undefined,
          (e: unknown) => e,
        ),
      ]);
      // The caller gave its destination up: the delayed request's output is lost, and says so.
      expect(settled).toBeInstanceOf(TypeError);
      expect(String(settled)).toMatch(/OUTPUT0.*detached/);
      expect(
        firstOther(other.data as Float32Array, 9),
        `round ${round}: another caller's result was overwritten`,
      ).toBe(-1);
      other.dispose();
    }
  });

  it('the deferred memory goes back to the pool once the request is done with it', async () => {
    const first = await pooledOutput(5);
    const before = addon().addonStats().liveOutputBuffers;
    const blocker = server()
      .model('identity_delay')
      .infer({ inputs: { INPUT0: filled(-1) } });
    const second = server()
      .model('identity_delay')
      .infer({ inputs: { INPUT0: first.data } });
    first.dispose();
    const [, got] = await Promise.all([blocker, second]);
    got.dispose();
    (await blocker).dispose();
    expect(await requestsSettled(), 'every request released').toBe(true);
    // `first` and both delayed outputs are back: fewer live buffers than before. The deferred return
    // runs on the JS thread after the release, so it may come a turn after the request settled.
    await until(
      'the deferred output to go back to the pool',
      () => addon().addonStats().liveOutputBuffers < before,
      () => ({ before, live: addon().addonStats().liveOutputBuffers }),
    );
  });
});
