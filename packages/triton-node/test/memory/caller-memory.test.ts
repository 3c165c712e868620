import { collectGarbage, useServer } from '@triton-node/test-support/helpers.js';
// A caller that touches its own memory while a request is in flight: detaches
// the ArrayBuffer under an input or a destination (and lets the new owner be
// collected), or shrinks a resizable one. Zero copy must not make that
// undefined behaviour: the request reads and writes memory the addon holds,
// and the caller gets a correct result or a TypeError naming the output.
// Inputs are 8 MiB so that freed memory goes back to the system (a read of
// it then faults) instead of staying in the heap.
import { beforeAll, describe, expect, it } from 'vitest';
import { type InferRequest, TritonError } from '../../lib/index.js';

const server = useServer(['identity_delay', 'identity_fp32', 'identity_bytes']);

const ELEMENTS = 2 * 1024 * 1024; // 8 MiB of FP32, within identity_delay's batch of 1

/** Compares big arrays bytewise (a deep equal of millions of elements is slow). */
function sameBytes(actual: unknown, expected: Float32Array): boolean {
  const a = actual as Float32Array;
  return (
    Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(expected.buffer)) === 0
  );
}

/** A resizable ArrayBuffer (ES2024; Node 20 has it, TypeScript's ES2023 lib does not). */
type Resizable = ArrayBuffer & { resize(byteLength: number): void };
function resizable(byteLength: number, maxByteLength: number): Resizable {
  const Ctor = ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => Resizable;
  return new Ctor(byteLength, { maxByteLength });
}

function pattern(n: number, seed: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i += 1) a[i] = (i * 7 + seed) % 1000;
  return a;
}

/** Detaches `buffer` by transferring it away, and drops the new owner. */
function detach(buffer: ArrayBuffer): void {
  structuredClone(buffer, { transfer: [buffer] });
}

async function settle(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => v,
    (e: unknown) => e,
  );
}

describe('memory that moves under an in-flight request', () => {
  // The first call to a model waits for its config before it submits; these
  // tests detach while the request is in Triton, so the config is fetched first.
  beforeAll(async () => {
    await server()
      .model('identity_delay')
      .infer({ inputs: { INPUT0: new Float32Array(1) } });
  });

  it('an input detached (and its new owner collected) while in flight still reaches Triton intact', async () => {
    const input = pattern(ELEMENTS, 1);
    const expected = input.slice();
    const p = server()
      .model('identity_delay')
      .infer({ inputs: { INPUT0: input }, outputs: ['OUTPUT0'] });
    detach(input.buffer as ArrayBuffer);
    expect(input.length).toBe(0);
    await collectGarbage();
    const result = await p;
    expect(result.outputs.OUTPUT0!.shape).toEqual([1, ELEMENTS]);
    expect(sameBytes(result.outputs.OUTPUT0!.data, expected)).toBe(true);
  });

  it('an `into` destination detached while in flight rejects with a TypeError naming the output', async () => {
    const into = new Float32Array(ELEMENTS);
    const p = settle(
      server()
        .model('identity_delay')
        .infer({ inputs: { INPUT0: pattern(ELEMENTS, 2) }, outputs: { OUTPUT0: { into } } }),
    );
    detach(into.buffer as ArrayBuffer);
    await collectGarbage();
    const err = await p;
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/output 'OUTPUT0'.*detached while the request was in flight/);
    // The server goes on serving.
    const again = await server()
      .model('identity_fp32')
      .infer({ inputs: { INPUT0: new Float32Array([1, 2]) } });
    expect([...(again.outputs.OUTPUT0!.data as Float32Array)]).toEqual([1, 2]);
  });

  it('an input on a resizable ArrayBuffer shrunk right after infer() still reaches Triton intact', async () => {
    const rab = resizable(ELEMENTS * 4, ELEMENTS * 4);
    const input = new Float32Array(rab, 0, ELEMENTS);
    input.set(pattern(ELEMENTS, 3));
    const expected = input.slice();
    const p = server()
      .model('identity_delay')
      .infer({ inputs: { INPUT0: input }, outputs: ['OUTPUT0'] });
    rab.resize(0);
    const result = await p;
    expect(sameBytes(result.outputs.OUTPUT0!.data, expected)).toBe(true);
  });

  it('refuses a resizable ArrayBuffer as a destination, naming the output', async () => {
    const rab = resizable(16, 64);
    const err = await settle(
      server()
        .model('identity_fp32')
        .infer({
          inputs: { INPUT0: new Float32Array(4) },
          outputs: { OUTPUT0: { into: new Float32Array(rab) } },
        }),
    );
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/output 'OUTPUT0'.*resizable ArrayBuffer/);
  });

  it('a detached input is refused before submission', async () => {
    const input = new Float32Array(4);
    detach(input.buffer as ArrayBuffer);
    const err = await settle(
      server()
        .model('identity_fp32')
        .infer({ inputs: { INPUT0: input } }),
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/INPUT0/);
  });
});

describe('strings and objects that would be cut or skipped', () => {
  it('refuses a NUL in a model name, request id, parameter or correlation id', async () => {
    const m = server().model('identity_fp32');
    const inputs = { INPUT0: new Float32Array([1]) };
    expect(() => server().model('identity_fp32\0')).toThrow(/NUL/);
    for (const request of <InferRequest[]>[
      { inputs, id: 'a\0b' },
      { inputs, parameters: { 'p\0q': 1 } },
      { inputs, parameters: { p: 'x\0y' } },
      { inputs, correlationId: 'c\0d' },
    ]) {
      const err = await settle(m.infer(request));
      expect(err, JSON.stringify(Object.keys(request))).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(/NUL/);
    }
    await expect(server().loadModel('identity_fp32\0x')).rejects.toThrow(/NUL/);
  });

  it('does not take inputs inherited through the prototype', async () => {
    const inputs = Object.create({ INPUT0: new Float32Array([1]) }) as Record<string, Float32Array>;
    const err = await settle(server().model('identity_fp32').infer({ inputs }));
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).code).toBe('INVALID_ARG');
    expect((err as Error).message).toMatch(/needs input 'INPUT0'/);
  });

  it('refuses an empty outputs list and an `into` of another element type', async () => {
    const m = server().model('identity_fp32');
    const inputs = { INPUT0: new Float32Array([1, 2]) };
    await expect(m.infer({ inputs, outputs: [] })).rejects.toThrow(/names no output/);
    await expect(m.infer({ inputs, outputs: {} })).rejects.toThrow(/names no output/);
    const err = await settle(m.infer({ inputs, outputs: { OUTPUT0: { into: new Int32Array(2) } } }));
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/Float32Array for request\.outputs\.OUTPUT0\.into.*FP32/);
  });

  it("a disposed BYTES tensor's strings() fails instead of returning empty strings", async () => {
    const long = 'x'.repeat(2000);
    const result = await server()
      .model('identity_bytes')
      .infer({ inputs: { INPUT0: [long, 'b'] } });
    const t = result.outputs.OUTPUT0!;
    expect(t.strings()).toEqual([long, 'b']);
    t.dispose();
    expect(() => t.strings()).toThrow(/disposed/);
  });
});
