import { useServer } from '@triton-node/test-support/helpers.js';
// loadModel, unloadModel and infer on one model in three concurrent loops.
// On a real Triton r25.07 this crashed the process within seconds (the
// model deleter thread against a new model's creation) until the binding
// ran each model's loads and unloads one after another; on the fake an
// infer() could stay pending. Every call must settle, with a result or a
// TritonError, and the model must serve afterwards.
import { describe, expect, it } from 'vitest';
import { TritonError } from '../../lib/index.js';

const server = useServer(['identity_fp32']);

/** Rejects if `p` has not settled after `ms` (a hung Promise fails the test). */
function settleWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

describe('model control racing inference on one model', () => {
  it('every load, unload and infer settles; the model serves afterwards', async () => {
    const rounds = 40;
    const errors = new Map<string, number>();
    let served = 0;
    let control = true;
    const note = (what: string) => (err: unknown) => {
      expect(err).toBeInstanceOf(TritonError);
      const key = `${what}: ${(err as TritonError).code}`;
      errors.set(key, (errors.get(key) ?? 0) + 1);
    };
    const loads = (async () => {
      for (let i = 0; i < rounds; i++) {
        await settleWithin(server().loadModel('identity_fp32'), 30_000, 'loadModel').catch(note('load'));
      }
    })();
    const unloads = (async () => {
      for (let i = 0; i < rounds; i++) {
        await settleWithin(server().unloadModel('identity_fp32'), 30_000, 'unloadModel').catch(
          note('unload'),
        );
      }
    })();
    const infers = (async () => {
      for (let i = 0; control; i++) {
        // A request that fails at once (the model is away) settles in
        // microtasks: without a turn of the event loop, this loop would
        // starve the loads and unloads it races.
        await new Promise((r) => setImmediate(r));
        const input = new Float32Array([i, i + 1]);
        await settleWithin(
          server()
            .model('identity_fp32')
            .infer({ inputs: { INPUT0: input } }),
          30_000,
          'infer',
        ).then((r) => {
          expect([...(r.outputs.OUTPUT0!.data as Float32Array)]).toEqual([i, i + 1]);
          served++;
        }, note('infer'));
      }
    })();
    await Promise.all([loads, unloads]);
    control = false;
    await infers;
    // Only the model being away is an acceptable failure.
    for (const key of errors.keys()) expect(key).toMatch(/^infer: (NOT_FOUND|UNAVAILABLE)$|^(load|unload): /);
    await server().loadModel('identity_fp32');
    const r = await server()
      .model('identity_fp32')
      .infer({ inputs: { INPUT0: new Float32Array([5]) } });
    expect([...(r.outputs.OUTPUT0!.data as Float32Array)]).toEqual([5]);
    expect(served + [...errors.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });
});
