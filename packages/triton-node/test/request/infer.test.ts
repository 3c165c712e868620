import { spawnSync } from 'node:child_process';
import {
  FIXTURES,
  LIBRARY_PATH,
  MODELS,
  collectGarbage,
  eventually,
  fakeOnly,
  rejection,
  requestsSettled,
  skipIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import {
  type DataType,
  type InferResult,
  type Tensor,
  TritonError,
  type TypedArray,
  cuda,
} from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

const server = useServer([
  'identity_fp32',
  'identity_nobatch',
  'identity_all_types',
  'identity_bytes',
  'identity_multi',
  'identity_optional',
  'identity_fixed',
  'identity_delay',
  'repeat_int32',
]);

function values(t: Tensor | undefined): unknown[] {
  return Array.from(t!.data as ArrayLike<unknown>);
}

/** One input per datatype of identity_all_types (INPUTn ↔ OUTPUTn), each a different length. */
const ALL_TYPES: Array<[DataType, TypedArray | string[]]> = [
  ['BOOL', new Uint8Array([1, 0, 1])],
  ['UINT8', new Uint8Array([0, 1, 255, 128])],
  ['UINT16', new Uint16Array([0, 65535, 12345])],
  ['UINT32', new Uint32Array([0, 4294967295, 7])],
  ['UINT64', new BigUint64Array([0n, 18446744073709551615n, 1n << 40n])],
  ['INT8', new Int8Array([-128, 127, 0, -1, 5])],
  ['INT16', new Int16Array([-32768, 32767])],
  ['INT32', new Int32Array([-2147483648, 2147483647, 0])],
  ['INT64', new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n, 0n, -5n])],
  ['FP16', new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x7e00])],
  ['FP32', new Float32Array([1.5, -0, Number.POSITIVE_INFINITY, Number.NaN, 3.4e38])],
  ['FP64', new Float64Array([Math.PI, -1e308, 5e-324])],
  ['BYTES', ['a', '', 'ünïcødé 😀', 'x'.repeat(100)]],
  ['BF16', new Uint16Array([0x3f80, 0xbf80, 0x7f80, 0x0000])],
];

describe('inference', () => {
  it('round-trips every datatype through identity (values, shapes, array types)', async () => {
    const inputs: Record<string, TypedArray | string[]> = {};
    ALL_TYPES.forEach(([, data], i) => {
      inputs[`INPUT${i}`] = data;
    });
    const result = await server().model('identity_all_types').infer({ inputs });
    expect(result.model).toBe('identity_all_types');
    expect(result.version).toBe(1);
    ALL_TYPES.forEach(([datatype, data], i) => {
      const out = result.outputs[`OUTPUT${i}`]!;
      expect(out.name).toBe(`OUTPUT${i}`);
      expect(out.datatype).toBe(datatype);
      expect(out.shape).toEqual([data.length]);
      expect(out.memoryType).toBe('cpu');
      if (datatype === 'BYTES') {
        expect(out.strings()).toEqual(data);
      } else {
        expect(out.data).toBeInstanceOf((data as TypedArray).constructor);
        expect(values(out)).toEqual(Array.from(data as ArrayLike<unknown>));
      }
    });
  });

  it('takes explicit datatypes and shapes (FP16/BF16 as Uint16Array, BOOL as boolean[])', async () => {
    const inputs: Record<string, unknown> = {};
    ALL_TYPES.forEach(([datatype, data], i) => {
      inputs[`INPUT${i}`] = { data, datatype, shape: [data.length] };
    });
    inputs.INPUT0 = { data: [true, false, true], datatype: 'BOOL' };
    const result = await server()
      .model('identity_all_types')
      .infer({ inputs } as never);
    expect(values(result.outputs.OUTPUT0)).toEqual([1, 0, 1]);
    expect(result.outputs.OUTPUT9!.datatype).toBe('FP16');
    expect(values(result.outputs.OUTPUT9)).toEqual(Array.from(ALL_TYPES[9]![1] as Uint16Array));
    expect(result.outputs.OUTPUT13!.datatype).toBe('BF16');
  });

  it('round-trips BYTES: empty, Unicode and 1 MiB elements, as strings, bytes or a prefixed Buffer', async () => {
    const big = 'z'.repeat(1 << 20);
    const elements = ['', 'héllo wörld ✓ 你好 🚀', big, ''];
    const model = server().model('identity_bytes');
    const a = await model.infer({ inputs: { INPUT0: elements } });
    expect(a.outputs.OUTPUT0!.datatype).toBe('BYTES');
    expect(a.outputs.OUTPUT0!.shape).toEqual([4]);
    expect(a.outputs.OUTPUT0!.strings()).toEqual(elements);
    expect((a.outputs.OUTPUT0!.data as Buffer[])[2]!.byteLength).toBe(1 << 20);

    const binary = [new Uint8Array([0, 255, 1]), new Uint8Array(0), new Uint8Array(1 << 20).fill(7)];
    const b = await model.infer({ inputs: { INPUT0: binary } });
    const out = b.outputs.OUTPUT0!.data as Buffer[];
    expect(out.map((x) => Buffer.from(x))).toEqual(binary.map((x) => Buffer.from(x)));

    const prefixed = Buffer.concat([Buffer.from([2, 0, 0, 0]), Buffer.from('hi'), Buffer.from([0, 0, 0, 0])]);
    const c = await model.infer({ inputs: { INPUT0: prefixed } });
    expect(c.outputs.OUTPUT0!.strings()).toEqual(['hi', '']);

    const none = await model.infer({ inputs: { INPUT0: [] as string[] } });
    expect(none.outputs.OUTPUT0!.shape).toEqual([0]);
    expect(none.outputs.OUTPUT0!.strings()).toEqual([]);
  });

  it('sends several inputs of different types', async () => {
    const r = await server()
      .model('identity_multi')
      .infer({
        inputs: {
          INPUT0: new Float32Array([0.25, 0.5]),
          INPUT1: new Int32Array([-3, 4, 5]),
          INPUT2: ['x', 'yz'],
        },
      });
    expect(values(r.outputs.OUTPUT0)).toEqual([0.25, 0.5]);
    expect(values(r.outputs.OUTPUT1)).toEqual([-3, 4, 5]);
    expect(r.outputs.OUTPUT2!.strings()).toEqual(['x', 'yz']);
  });

  it('returns only the requested outputs', async () => {
    const inputs = { INPUT0: new Float32Array([1]), INPUT1: new Int32Array([2]), INPUT2: ['3'] };
    const r = await server()
      .model('identity_multi')
      .infer({ inputs, outputs: ['OUTPUT1'] });
    expect(Object.keys(r.outputs)).toEqual(['OUTPUT1']);
    expect(values(r.outputs.OUTPUT1)).toEqual([2]);
    const r2 = await server()
      .model('identity_multi')
      .infer({ inputs, outputs: { OUTPUT2: true, OUTPUT0: {} } });
    expect(Object.keys(r2.outputs).sort()).toEqual(['OUTPUT0', 'OUTPUT2']);
  });

  it('passes request parameters, id and priority without error', async () => {
    const r = await server().infer('identity_fp32', {
      inputs: { INPUT0: new Float32Array([9]) },
      parameters: { text: 'abc', int: 3, double: 1.5, flag: true, big: 5n },
      id: 'req-42',
      priority: 0,
      correlationId: 17,
    });
    expect(r.id).toBe('req-42');
    expect(values(r.outputs.OUTPUT0)).toEqual([9]);
  });

  it('a string correlationId: identity rejects it (its ID is read as an integer), INVALID_ARG', async () => {
    const err = (await rejection(
      server().infer('identity_fp32', {
        inputs: { INPUT0: new Float32Array([1]) },
        id: 'corr-str',
        correlationId: 'session-1',
      }),
      Error,
    )) as TritonError;
    expect(err).toBeInstanceOf(TritonError);
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toContain('[request id: corr-str] correlation ID in request is not an unsigned int');
    // The error names the sequence (Triton's text does not), as a field and in the message.
    expect(err.correlationId).toBe('session-1');
    expect(err.message).toMatch(/ \(sequence session-1\)$/);
    // An integer one (number or bigint) is fine.
    for (const correlationId of [5, 2n ** 64n - 1n]) {
      const ok = await server().infer('identity_fp32', {
        inputs: { INPUT0: new Float32Array([2]) },
        correlationId,
      });
      expect(values(ok.outputs.OUTPUT0)).toEqual([2]);
    }
  });

  it('an aborted or failed request of a sequence names its correlationId; one without names none', async () => {
    const controller = new AbortController();
    const pending = server().infer('identity_delay', {
      inputs: { INPUT0: new Float32Array([1]) },
      correlationId: 2n ** 63n + 5n,
      signal: controller.signal,
    });
    controller.abort();
    const aborted = (await rejection(pending, Error)) as TritonError;
    expect(aborted.name).toBe('AbortError');
    expect(aborted.correlationId).toBe(2n ** 63n + 5n);
    expect(aborted.message).toBe(
      `request to model 'identity_delay' was aborted (sequence ${2n ** 63n + 5n})`,
    );
    // A failure in Triton (the caller's destination is too small for the output).
    const tooSmall = (correlationId?: number) =>
      server().infer('identity_nobatch', {
        inputs: { INPUT0: new Float32Array([1, 2, 3]) },
        outputs: { OUTPUT0: { into: new Float32Array(2) } },
        ...(correlationId === undefined ? {} : { correlationId }),
      });
    const failed = (await rejection(tooSmall(8), Error)) as TritonError;
    expect(failed.code).toBe('INVALID_ARG');
    expect(failed.correlationId).toBe(8);
    expect(failed.message).toMatch(/ \(sequence 8\)$/);
    const plain = (await rejection(tooSmall(), Error)) as TritonError;
    expect(plain.code).toBe('INVALID_ARG');
    expect(plain.correlationId).toBeUndefined();
    expect(plain.message).not.toMatch(/\(sequence/);
  });

  it('batches along the first dimension up to max_batch_size', async () => {
    const data = Float32Array.from({ length: 24 }, (_, i) => i);
    const r = await server().infer('identity_fp32', { inputs: { INPUT0: { data, shape: [8, 3] } } });
    expect(r.outputs.OUTPUT0!.shape).toEqual([8, 3]);
    expect(values(r.outputs.OUTPUT0)).toEqual(Array.from(data));
    // A flat array on a batching model is one batch element.
    const one = await server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([1, 2, 3]) } });
    expect(one.outputs.OUTPUT0!.shape).toEqual([1, 3]);
    // Fixed dims are filled in from the model: 6 elements → [1, 2, 3].
    const fixed = await server().infer('identity_fixed', { inputs: { INPUT0: new Int32Array(6).fill(2) } });
    expect(fixed.outputs.OUTPUT0!.shape).toEqual([1, 2, 3]);
    const two = await server().infer('identity_fixed', {
      inputs: { INPUT0: { data: new Int32Array(12), shape: [2, 2, 3] } },
    });
    expect(two.outputs.OUTPUT0!.shape).toEqual([2, 2, 3]);
  });

  it('settles 10,000 concurrent requests, each with its own result', async () => {
    const n = 10_000;
    const calls: Array<Promise<InferResult>> = [];
    for (let i = 0; i < n; i++) {
      calls.push(server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([i, -i, i + 0.5]) } }));
    }
    const results = await Promise.all(calls);
    for (let i = 0; i < n; i++) {
      expect(values(results[i]!.outputs.OUTPUT0)).toEqual([i, -i, i + 0.5]);
    }
  });

  it('writes caller-provided outputs into the very same memory', async () => {
    const into = new Float32Array(3);
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: new Float32Array([1, 2, 3]) },
      outputs: { OUTPUT0: { into } },
    });
    expect(r.outputs.OUTPUT0!.data).toBe(into);
    expect((r.outputs.OUTPUT0!.data as Float32Array).buffer).toBe(into.buffer);
    expect(Array.from(into)).toEqual([1, 2, 3]);

    const bigger = new Float32Array(8);
    const r2 = await server().infer('identity_nobatch', {
      inputs: { INPUT0: new Float32Array([4, 5]) },
      outputs: { OUTPUT0: { into: bigger } },
    });
    expect((r2.outputs.OUTPUT0!.data as Float32Array).buffer).toBe(bigger.buffer);
    expect(values(r2.outputs.OUTPUT0)).toEqual([4, 5]);
  });

  it('rejects too small a caller-provided output with an error naming it', async () => {
    const err = (await rejection(
      server().infer('identity_nobatch', {
        inputs: { INPUT0: new Float32Array([1, 2, 3]) },
        outputs: { OUTPUT0: { into: new Float32Array(2) } },
      }),
      Error,
    )) as TritonError;
    expect(err).toBeInstanceOf(TritonError);
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toContain('OUTPUT0');
  });

  it('gives concurrent first calls to a missing model each their own error', async () => {
    const input = { INPUT0: new Float32Array(4) };
    const [a, b] = await Promise.allSettled([
      server().infer('never_loaded_model', { id: 'first', inputs: input }),
      server().infer('never_loaded_model', { id: 'second', inputs: input }),
    ]);
    expect(a.status).toBe('rejected');
    expect(b.status).toBe('rejected');
    const ea = (a as PromiseRejectedResult).reason as TritonError;
    const eb = (b as PromiseRejectedResult).reason as TritonError;
    expect(ea).not.toBe(eb);
    expect(ea.code).toBe('NOT_FOUND');
    expect([ea.requestId, eb.requestId]).toEqual(['first', 'second']);
  });

  it("keeps the caller's stack on rejections: Triton's errors, aborts and validation", async () => {
    // Named async callers: the stack must lead back to them (V8 appends the
    // awaiting functions to errors made after the inference's own await).
    async function inferTooSmall(): Promise<unknown> {
      return await server().infer('identity_nobatch', {
        inputs: { INPUT0: new Float32Array([1, 2, 3]) },
        outputs: { OUTPUT0: { into: new Float32Array(2) } },
      });
    }
    async function inferAborted(): Promise<unknown> {
      const controller = new AbortController();
      const pending = server().infer('identity_delay', {
        inputs: { INPUT0: new Float32Array([1]) },
        signal: controller.signal,
      });
      // Submitted (the model's config is known: the first request below),
      // and no answer can have reached this thread yet: an abort in flight.
      controller.abort();
      return await pending;
    }
    async function inferInvalid(): Promise<unknown> {
      return await server().infer('identity_fp32', { inputs: { INPUT0: new Int32Array([1]) } });
    }
    await server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([1]) } });
    for (const [caller, code] of [
      [inferTooSmall, 'INVALID_ARG'],
      [inferAborted, 'CANCELLED'],
      [inferInvalid, 'INVALID_ARG'],
    ] as const) {
      const err = (await rejection(caller(), Error)) as TritonError;
      expect(err).toBeInstanceOf(TritonError);
      expect(err.code).toBe(code);
      expect(err.stack).toContain(`${err.name}: ${err.message}`);
      expect(err.stack).toMatch(new RegExp(`at (async )?${caller.name} \\(.*infer\\.test\\.ts`));
    }
  });

  it('tensor.dispose() gives a large output back to the pool at once and detaches it', async () => {
    const native = addon();
    const input = { inputs: { INPUT0: Float32Array.from({ length: 1024 }, (_, i) => i) } };
    const result = await server().infer('identity_nobatch', input);
    const tensor = result.outputs.OUTPUT0!;
    expect(values(tensor)).toEqual(Array.from(input.inputs.INPUT0));
    const live = native.addonStats().liveOutputBuffers;
    const pooled = native.addonStats().pooledBytes;
    tensor.dispose();
    expect(tensor.disposed).toBe(true);
    expect((tensor.data as Float32Array).length).toBe(0);
    expect(native.addonStats().liveOutputBuffers).toBe(live - 1);
    expect(native.addonStats().pooledBytes).toBeGreaterThan(pooled);
    tensor.dispose(); // a second call does nothing
    expect(native.addonStats().liveOutputBuffers).toBe(live - 1);
    // Only the addon's own ArrayBuffers are released.
    expect(native.releaseOutput(new ArrayBuffer(8))).toBe(false);
  });

  it('result.dispose() disposes every output tensor; [Symbol.dispose] is the same', async () => {
    const native = addon();
    const n = 1024; // 4 KiB per output: pooled memory, not a copy
    const request = {
      inputs: {
        INPUT0: Float32Array.from({ length: n }, (_, i) => i),
        INPUT1: Int32Array.from({ length: n }, (_, i) => -i),
        INPUT2: ['x'],
      },
      outputs: ['OUTPUT0', 'OUTPUT1'],
    };
    for (const how of ['dispose', 'Symbol.dispose'] as const) {
      const result = await server().infer('identity_multi', request);
      expect(values(result.outputs.OUTPUT1)).toEqual(Array.from(request.inputs.INPUT1));
      const live = native.addonStats().liveOutputBuffers;
      if (how === 'dispose') result.dispose();
      else result[Symbol.dispose]();
      for (const name of ['OUTPUT0', 'OUTPUT1']) {
        expect(result.outputs[name]!.disposed).toBe(true);
        expect((result.outputs[name]!.data as Float32Array).length).toBe(0);
      }
      expect(native.addonStats().liveOutputBuffers).toBe(live - 2);
      result.dispose(); // a second call does nothing
      expect(native.addonStats().liveOutputBuffers).toBe(live - 2);
    }
  });

  it('tensor.dispose() leaves caller-provided destinations and small outputs alone', async () => {
    const into = new Float32Array(3);
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: new Float32Array([1, 2, 3]) },
      outputs: { OUTPUT0: { into } },
    });
    r.outputs.OUTPUT0!.dispose();
    expect(Array.from(into)).toEqual([1, 2, 3]);
    const small = await server().infer('identity_nobatch', { inputs: { INPUT0: new Float32Array([4, 5]) } });
    small.outputs.OUTPUT0!.dispose();
    expect(values(small.outputs.OUTPUT0)).toEqual([4, 5]);
  });

  it('copies outputs when external buffers are switched off (setCopyOutputs)', async () => {
    const native = addon();
    const input = { inputs: { INPUT0: Float32Array.from({ length: 1024 }, (_, i) => i) } };
    const before = native.addonStats().liveOutputBuffers;
    const held = await server().infer('identity_nobatch', input);
    expect(native.addonStats().liveOutputBuffers).toBeGreaterThan(before);
    native.setCopyOutputs(true);
    try {
      expect(native.copyOutputs()).toBe(true);
      const base = native.addonStats().liveOutputBuffers;
      const copied = await server().infer('identity_nobatch', input);
      expect(values(copied.outputs.OUTPUT0)).toEqual(Array.from(input.inputs.INPUT0));
      expect(native.addonStats().liveOutputBuffers).toBe(base);
    } finally {
      native.setCopyOutputs(false);
    }
    expect(values(held.outputs.OUTPUT0)).toEqual(Array.from(input.inputs.INPUT0));
  });

  it('copies outputs when TRITON_NODE_COPY_OUTPUTS=1 (child process)', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', `${FIXTURES}/copy-outputs.ts`], {
      env: { ...process.env, TRITON_NODE_COPY_OUTPUTS: '1', TEST_LIBRARY: LIBRARY_PATH, TEST_MODELS: MODELS },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout.trim().split('\n').at(-1)!)).toEqual({
      copyOutputs: true,
      values: [1, 2, 3],
    });
  });

  it('reports per-request timing only when asked', async () => {
    const plain = await server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([1]) } });
    expect(plain.timing).toBeUndefined();
    const timed = await server().infer('identity_delay', {
      inputs: { INPUT0: new Float32Array([1]) },
      timing: true,
    });
    const t = timed.timing!;
    expect(t).toBeDefined();
    const { timestampsNs, traces, ...intervals } = t;
    // One trace: the request's own (an ensemble adds its steps').
    expect(traces).toHaveLength(1);
    for (const v of [...Object.values(intervals), ...Object.values(timestampsNs)]) {
      expect(Number.isFinite(v)).toBe(true);
      expect(v).toBeGreaterThanOrEqual(0);
    }
    expect(t.queueUs + t.computeInputUs + t.computeInferUs + t.computeOutputUs).toBeLessThanOrEqual(
      t.totalUs + 1,
    );
    // identity_delay sleeps 20 ms in its execution.
    expect(t.computeInferUs).toBeGreaterThanOrEqual(15_000);
  });

  it('cancels with an AbortSignal: rejects at once with CANCELLED / AbortError', async () => {
    await server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([0]) } });
    const controller = new AbortController();
    const p = server().infer('identity_delay', {
      inputs: { INPUT0: new Float32Array([1]) },
      signal: controller.signal,
    });
    // The request is submitted (the model's config is known: the request
    // above) and takes 20 ms: aborted before this thread can see its answer, it must
    // reject before a callback of the next turn of the event loop runs.
    controller.abort(new Error('client went away'));
    const first = await Promise.race([
      p.then(
        () => 'resolved',
        () => 'rejected',
      ),
      new Promise((r) => setImmediate(() => r('a later turn'))),
    ]);
    expect(first).toBe('rejected');
    const err = (await rejection(p, Error)) as TritonError;
    expect(err).toBeInstanceOf(TritonError);
    expect(err.code).toBe('CANCELLED');
    expect(err.name).toBe('AbortError');
    expect((err.cause as Error).message).toBe('client went away');
    // The server keeps serving afterwards.
    const r = await server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([2]) } });
    expect(values(r.outputs.OUTPUT0)).toEqual([2]);
  });

  it('an already-aborted signal rejects without submitting; abort after completion is a no-op', async () => {
    // Earlier requests (an aborted one among them) may still be on their way out.
    expect(await requestsSettled()).toBe(true);
    const err = (await rejection(
      server().infer('identity_fp32', {
        inputs: { INPUT0: new Float32Array([1]) },
        signal: AbortSignal.abort(),
      }),
      Error,
    )) as TritonError;
    expect(err.code).toBe('CANCELLED');
    expect(addon().addonStats()).toMatchObject({ pendingRequests: 0, inflightRequests: 0 });
    const controller = new AbortController();
    const r = await server().infer('identity_fp32', {
      inputs: { INPUT0: new Float32Array([3]) },
      signal: controller.signal,
    });
    controller.abort();
    expect(values(r.outputs.OUTPUT0)).toEqual([3]);
  });
});

describe('validation before native', () => {
  const fp32 = (data: number[]) => new Float32Array(data);

  async function invalid(p: Promise<unknown>, ...parts: string[]): Promise<void> {
    const err = (await rejection(p, Error)) as TritonError;
    expect(err).toBeInstanceOf(TritonError);
    expect(err.code).toBe('INVALID_ARG');
    for (const part of parts) expect(err.message).toContain(part);
  }

  it('unknown input', async () => {
    await invalid(
      server().infer('identity_fp32', { inputs: { INPUT0: fp32([1]), INPUT9: fp32([1]) } }),
      'INPUT9',
    );
  });

  it('missing input; an optional one may be left out', async () => {
    await invalid(
      server().infer('identity_multi', { inputs: { INPUT0: fp32([1]), INPUT2: ['a'] } }),
      "'INPUT1'",
      'identity_multi',
    );
    const r = await server()
      .model('identity_optional')
      .infer({ inputs: { INPUT0: fp32([5]) }, outputs: ['OUTPUT0'] });
    expect(values(r.outputs.OUTPUT0)).toEqual([5]);
    // Asking for the output of the optional input that was left out: Triton's
    // identity answers zeros of the input's config shape (-1 read as 1).
    const all = await server()
      .model('identity_optional')
      .infer({ inputs: { INPUT0: fp32([5, 6]) } });
    expect(Object.keys(all.outputs)).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(values(all.outputs.OUTPUT0)).toEqual([5, 6]);
    expect(all.outputs.OUTPUT1!.shape).toEqual([1]);
    expect(all.outputs.OUTPUT1!.datatype).toBe('FP32');
    expect(values(all.outputs.OUTPUT1)).toEqual([0]);
  });

  it('datatype mismatch (array type or explicit datatype)', async () => {
    await invalid(
      server().infer('identity_fp32', { inputs: { INPUT0: new Int32Array([1]) } }),
      'FP32',
      'INT32',
    );
    await invalid(
      server().infer('identity_all_types', {
        inputs: { INPUT0: { data: new Uint16Array([1]), datatype: 'UINT16' } } as never,
      }),
      'BOOL',
      'UINT16',
    );
    await expect(
      server().infer('identity_fp32', {
        inputs: { INPUT0: { data: new Int32Array([1]), datatype: 'FP32' } },
      }),
    ).rejects.toThrow(TypeError);
  });

  it('element count vs shape', async () => {
    await invalid(
      server().infer('identity_fp32', { inputs: { INPUT0: { data: fp32([1, 2, 3]), shape: [2, 2] } } }),
      '[2,2]',
      '3',
    );
  });

  it('rank and fixed dimensions', async () => {
    await invalid(
      server().infer('identity_nobatch', { inputs: { INPUT0: { data: fp32([1, 2]), shape: [1, 2] } } }),
      'expected shape [-1]',
      '[1,2]',
    );
    await invalid(
      server().infer('identity_fixed', { inputs: { INPUT0: { data: new Int32Array(8), shape: [1, 2, 4] } } }),
      '[-1,2,3]',
      '[1,2,4]',
    );
  });

  it('batch dimension vs max_batch_size', async () => {
    await invalid(
      server().infer('identity_fp32', { inputs: { INPUT0: { data: new Float32Array(9), shape: [9, 1] } } }),
      'batch size 9',
      'max_batch_size 8',
    );
    // An empty batch: Triton r25.07 reads batch 0 as "no batch size" (a byte size error for
    // [0,3], an output of shape [0] for [0,0]); refused the same way on every library.
    for (const shape of [
      [0, 3],
      [0, 0],
    ]) {
      await invalid(
        server().infer('identity_fp32', { inputs: { INPUT0: { data: new Float32Array(0), shape } } }),
        "input 'INPUT0'",
        'batch size 0',
      );
    }
    await invalid(
      server().infer('identity_fixed', { inputs: { INPUT0: { data: new Int32Array(0), shape: [0, 2, 3] } } }),
      'batch size 0',
    );
  });

  it('a zero batch dimension is INVALID_ARG naming the input, before Triton sees it', async () => {
    // Triton itself would reject [0,5] with a byte size mismatch and answer
    // [0,0] with a [0]-shaped output: neither means what the caller meant.
    const cases: Array<[string, number[], ArrayLike<number>]> = [
      ['identity_fp32', [0, 5], new Float32Array(0)],
      ['identity_fp32', [0, 0], new Float32Array(0)],
      ['identity_fixed', [0, 2, 3], new Int32Array(0)],
    ];
    for (const [model, shape, data] of cases) {
      const err = await rejection(
        server().infer(model, { inputs: { INPUT0: { data, shape } } } as never),
        Error,
      );
      expect(err).toBeInstanceOf(TritonError);
      expect((err as TritonError).code).toBe('INVALID_ARG');
      expect(err.message).toContain("input 'INPUT0'");
      expect(err.message).toContain('batch size 0');
    }
    // Zero elements in a batch of one are fine.
    const empty = await server().infer('identity_fp32', {
      inputs: { INPUT0: { data: new Float32Array(0), shape: [1, 0] } },
    });
    expect(empty.outputs.OUTPUT0!.shape).toEqual([1, 0]);
  });

  it('unknown output', async () => {
    await invalid(
      server().infer('identity_fp32', { inputs: { INPUT0: fp32([1]) }, outputs: ['OUTPUT9'] }),
      'OUTPUT9',
    );
  });

  it('malformed requests are TypeErrors naming the problem', async () => {
    const s = server();
    await expect(s.infer('identity_fp32', null as never)).rejects.toThrow(TypeError);
    await expect(s.infer('identity_fp32', { inputs: { INPUT0: 5 } } as never)).rejects.toThrow(/INPUT0/);
    await expect(
      s.infer('identity_fp32', { inputs: { INPUT0: fp32([1]) }, bogus: 1 } as never),
    ).rejects.toThrow(/bogus/);
    await expect(s.infer('identity_fp32', { inputs: { INPUT0: fp32([1]) }, priority: -1 })).rejects.toThrow(
      /priority/,
    );
    await expect(
      s.infer('identity_fp32', { inputs: { INPUT0: { data: fp32([1]), shape: [1, -1] } } }),
    ).rejects.toThrow(/shape/);
    await expect(
      s.infer('identity_bytes', { inputs: { INPUT0: Buffer.from([9, 0, 0, 0, 1]) } }),
    ).rejects.toThrow(/length-prefixed/);
    await expect(
      s.infer('identity_fp32', {
        inputs: { INPUT0: fp32([1]) },
        outputs: { OUTPUT0: { memory: 'disk' } },
      } as never),
    ).rejects.toThrow(/memory/);
    // A misspelt output option is refused, not ignored (found by test/request/fuzz.test.ts).
    const err = await rejection(
      s.infer('identity_fp32', {
        inputs: { INPUT0: fp32([1]) },
        outputs: { OUTPUT0: { intoo: new Float32Array(1) } },
      } as never),
      Error,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain("'intoo'");
    expect(err.message).toContain('request.outputs.OUTPUT0');
  });

  it('a detached input buffer is a TypeError at submission', async () => {
    const data = new Float32Array([1, 2]);
    structuredClone(data.buffer, { transfer: [data.buffer] });
    await expect(server().infer('identity_fp32', { inputs: { INPUT0: data } })).rejects.toThrow(/detached/);
  });

  it('infer() on a decoupled model points to stream()', async () => {
    const err = (await rejection(
      server().infer('repeat_int32', {
        inputs: { IN: new Int32Array([1]), DELAY: new Uint32Array([0]), WAIT: new Uint32Array([0]) },
      }),
      Error,
    )) as TritonError;
    expect(err.code).toBe('UNSUPPORTED');
    expect(err.message).toContain('stream()');
  });
});

describe('leaks', () => {
  it("nothing of 10,000 requests stays alive after a GC (the addon's counters; the fake's live objects too)", async () => {
    // Warm up so lazily created, long-lived objects are in the baseline.
    await server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([0]) } });
    await collectGarbage();
    expect(await requestsSettled()).toBe(true);
    const addonBaseline = addon().addonStats();
    const fakeBaseline = fakeEngine.liveObjects();
    expect(fakeBaseline === null).toBe(fakeOnly() !== false);
    for (let round = 0; round < 10; round++) {
      const calls: Array<Promise<InferResult>> = [];
      for (let i = 0; i < 1000; i++) {
        calls.push(
          server().infer('identity_fp32', {
            inputs: { INPUT0: new Float32Array([i, round]) },
            parameters: { round },
            timing: i % 2 === 0,
          }),
        );
      }
      const results = await Promise.all(calls);
      expect(values(results[999]!.outputs.OUTPUT0)).toEqual([999, round]);
    }
    // The addon's own counters, on any library: every request released and
    // settled, every output buffer handed to JS given back.
    expect(await requestsSettled()).toBe(true);
    expect(
      await eventually(async () => {
        await collectGarbage(2);
        return addon().addonStats().liveOutputBuffers === addonBaseline.liveOutputBuffers;
      }),
    ).toBe(true);
    if (fakeOnly()) return;
    const baseline = fakeBaseline!;
    const settled = await eventually(async () => {
      await collectGarbage(2);
      const now = fakeEngine.liveObjects()!;
      return (
        ['requests', 'responses', 'outputBuffers', 'errors', 'messages', 'parameters', 'traces'] as const
      ).every((k) => now[k] === baseline[k]);
    });
    const now = fakeEngine.liveObjects()!;
    const pick = (o: typeof now) => ({
      requests: o.requests,
      responses: o.responses,
      outputBuffers: o.outputBuffers,
      errors: o.errors,
      messages: o.messages,
      parameters: o.parameters,
      traces: o.traces,
    });
    expect(pick(now)).toEqual(pick(baseline));
    expect(settled).toBe(true);
    expect(now.requests).toBe(0);
    expect(now.responses).toBe(0);
  });
});

describe('fake engine only', () => {
  it('works with callbacks delivered synchronously inside ServerInferAsync', async (ctx) => {
    skipIf(ctx, fakeOnly('needs its switch for synchronous callbacks'));
    expect(fakeEngine.setSyncCallbacks(true)).toBe(true);
    try {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([i]) } }),
        ),
      );
      results.forEach((r, i) => expect(values(r.outputs.OUTPUT0)).toEqual([i]));
      const stream = server()
        .model('repeat_int32')
        .stream({
          inputs: { IN: new Int32Array([5, 6]), DELAY: new Uint32Array([0, 0]), WAIT: new Uint32Array([0]) },
        });
      const got: number[] = [];
      for await (const r of stream) got.push((r.outputs.OUT!.data as Int32Array)[0]!);
      expect(got).toEqual([5, 6]);
    } finally {
      fakeEngine.setSyncCallbacks(false);
    }
  });
});

describe('output placement (outputMemory)', () => {
  const input = { INPUT0: new Float32Array([1, 2, 3]) };
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown string', { outputMemory: 'device' }, /request\.outputMemory/],
    ['null', { outputMemory: null }, /request\.outputMemory/],
    [
      'a type other than gpu',
      { outputMemory: { type: 'pinned', device: 0 } },
      /type 'gpu'.*request\.outputMemory/,
    ],
    ['no device', { outputMemory: { type: 'gpu' } }, /request\.outputMemory\.device/],
    ['a negative device', { outputMemory: { type: 'gpu', device: -1 } }, /request\.outputMemory\.device/],
    ['a fractional device', { outputMemory: { type: 'gpu', device: 0.5 } }, /request\.outputMemory\.device/],
    [
      'an unknown key',
      { outputMemory: { type: 'gpu', device: 0, pool: true } },
      /'pool'.*request\.outputMemory/,
    ],
    [
      'two devices',
      { outputMemory: { type: 'gpu', device: 0 }, outputDevice: 1 },
      /request\.outputMemory.*request\.outputDevice/,
    ],
    ['a bad outputDevice', { outputMemory: 'gpu', outputDevice: '1' }, /request\.outputDevice/],
    [
      'a bad per-output memory',
      { outputs: { OUTPUT0: { memory: 'host' } } },
      /request\.outputs\.OUTPUT0\.memory/,
    ],
    [
      'a bad per-output device',
      { outputs: { OUTPUT0: { memory: { type: 'gpu', device: 'x' } } } },
      /request\.outputs\.OUTPUT0\.memory\.device/,
    ],
    [
      'two per-output devices',
      { outputs: { OUTPUT0: { memory: { type: 'gpu', device: 1 }, device: 0 } } },
      /request\.outputs\.OUTPUT0\.device/,
    ],
  ];
  for (const [what, extra, message] of bad) {
    it(`refuses ${what} with a TypeError naming the option`, async () => {
      const err = await rejection(
        server().infer('identity_nobatch', { inputs: input, ...extra } as never),
        Error,
      );
      expect(err).toBeInstanceOf(TypeError);
      expect(err.message).toMatch(message);
    });
  }

  it("accepts 'cpu' per request and per output", async () => {
    const r = await server().infer('identity_nobatch', {
      inputs: input,
      outputMemory: 'cpu',
      outputs: { OUTPUT0: { memory: 'cpu' } },
    });
    expect(r.outputs.OUTPUT0!.memoryType).toBe('cpu');
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2, 3]);
  });

  it("without CUDA, 'pinned' and 'gpu' placements fail with UNSUPPORTED saying why", async (ctx) => {
    skipIf(ctx, cuda.isAvailable() && 'this machine has CUDA (test/gpu covers placements there)');
    const placements: Array<Record<string, unknown>> = [
      { outputMemory: 'pinned' },
      { outputMemory: 'gpu' },
      { outputMemory: { type: 'gpu', device: 0 } },
      { outputs: { OUTPUT0: { memory: 'pinned' } } },
      { outputs: { OUTPUT0: { memory: { type: 'gpu', device: 0 } } } },
    ];
    for (const extra of placements) {
      const err = await rejection(
        server().infer('identity_nobatch', { inputs: input, ...extra } as never),
        Error,
      );
      expect(err).toBeInstanceOf(TritonError);
      expect((err as TritonError).code).toBe('UNSUPPORTED');
      expect(err.message).toMatch(/CUDA/);
    }
  });
});
