/**
 * The library's promises, each checked where breaking it shows: inputs reach
 * Triton without a copy, outputs are Triton's memory (or the caller's very
 * own), cancellation reaches the backend, nothing grows over many requests,
 * and what a request carries besides its inputs (priority, correlation id,
 * parameters) arrives. `npm run mutate` breaks each on purpose and expects a
 * test here (or in the files it names) to fail.
 */
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { type InferResult, type Tensor, TritonError } from '../../lib/index.js';
import { collectGarbage, eventually, fakeOnly, requestsSettled, skipIf, useServer } from '../helpers.js';

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

async function rejection(p: Promise<unknown>): Promise<TritonError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TritonError);
  return err as TritonError;
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

/** Responses square_int32 sent so far, by Triton's own count (per-response statistics). */
async function squareResponses(): Promise<number> {
  const [stats] = await server().model('square_int32', 1).statistics();
  let n = 0;
  for (const r of Object.values(stats!.responseStats)) n += r.success.count + r.fail.count;
  return n;
}

describe('cancellation', () => {
  it('aborting a 100,000-response stream stops the backend: it sends far fewer, then FINAL', async () => {
    const before = await squareResponses();
    const controller = new AbortController();
    const stream = server()
      .model('square_int32')
      .stream(
        { inputs: { IN: new Int32Array([100_000]) }, signal: controller.signal },
        { highWaterMark: 100_000 },
      );
    expect((await stream.next()).done).toBe(false);
    controller.abort();
    await expect(stream.next()).rejects.toMatchObject({ code: 'CANCELLED' });
    // FINAL came (nothing of the request is left); without the cancellation
    // it comes only after all 100,000 responses.
    expect(await requestsSettled(60_000)).toBe(true);
    let sent = await squareResponses();
    // The statistics of the last responses may land just after FINAL.
    await eventually(async () => {
      const now = await squareResponses();
      const stable = now === sent;
      sent = now;
      return stable;
    });
    expect(sent - before).toBeGreaterThanOrEqual(1);
    expect(sent - before).toBeLessThan(50_000);
  });
});

describe('no growth', () => {
  it('2,000 requests with 64 KiB inputs leave arrayBuffers and RSS where they were', async () => {
    const elements = 16 * 1024; // 64 KiB of FP32
    const run = async (requests: number) => {
      for (let done = 0; done < requests; done += 16) {
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            server().infer('identity_nobatch', {
              inputs: { INPUT0: new Float32Array(elements).fill(done + i) },
            }),
          ),
        );
        for (const r of results) r.dispose();
      }
    };
    // Warm up: pools, caches and V8's heap reach their working size.
    await run(400);
    expect(await requestsSettled()).toBe(true);
    await collectGarbage(6);
    const before = process.memoryUsage();
    await run(2000);
    expect(await requestsSettled()).toBe(true);
    await collectGarbage(6);
    const after = process.memoryUsage();
    const mib = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
    // A leak of the inputs alone would be 125 MiB. arrayBuffers is exact;
    // RSS also moves with malloc's per-thread arenas (up to 66 MiB seen on a
    // 16-core host with no leak), so its bound only catches a leak that size.
    expect(mib(after.arrayBuffers - before.arrayBuffers)).toBeLessThan(16);
    expect(mib(after.rss - before.rss)).toBeLessThan(100);
  });
});

describe('what a request carries besides its inputs', () => {
  it('sequenceStart and sequenceEnd go to Triton as its request flags, with the correlation id', async () => {
    // identity_fp32 is not a sequence model: Triton (real and fake) accepts the flags and answers.
    for (const flags of [
      { sequenceStart: true },
      { sequenceEnd: true },
      { sequenceStart: true, sequenceEnd: true },
    ]) {
      const r = await server().infer('identity_fp32', {
        inputs: { INPUT0: Float32Array.of(4) },
        correlationId: 9n,
        ...flags,
      });
      expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([4]);
    }
    const bad = (extra: Record<string, unknown>) =>
      server().infer('identity_fp32', { inputs: { INPUT0: Float32Array.of(4) }, ...extra } as never);
    await expect(bad({ sequenceStart: 1, correlationId: 1 })).rejects.toThrow(
      /Expected a boolean for request.sequenceStart but received/,
    );
    await expect(bad({ sequenceEnd: true })).rejects.toThrow(
      /request.sequenceEnd needs request.correlationId/,
    );
    // false is no flag, and needs nothing.
    await expect(bad({ sequenceStart: false, sequenceEnd: false })).resolves.toBeDefined();
  });

  it('the flags arrive as Triton’s bits: SEQUENCE_START 1, SEQUENCE_END 2 (echo model)', async (ctx) => {
    skipIf(
      ctx,
      fakeOnly("identity_echo echoes only on the fake: no backend of Triton's test set reads request flags"),
    );
    const flagsOf = async (extra: Record<string, unknown>) =>
      (
        await server().infer('identity_echo', {
          inputs: { INPUT0: Float32Array.of(1) },
          correlationId: 3,
          ...extra,
        })
      ).parameters['request.flags'];
    expect(await flagsOf({})).toBe('uint:0');
    expect(await flagsOf({ sequenceStart: true })).toBe('uint:1');
    expect(await flagsOf({ sequenceEnd: true })).toBe('uint:2');
    expect(await flagsOf({ sequenceStart: true, sequenceEnd: true })).toBe('uint:3');
    expect(await flagsOf({ sequenceStart: false })).toBe('uint:0');
  });

  it('priority reaches the scheduler: a priority-1 request overtakes queued default-priority ones', async () => {
    // identity_priority: one instance, one request per execution (50 ms),
    // two priority levels, default 2.
    const model = server().model('identity_priority');
    await model.infer({ inputs: { INPUT0: new Float32Array([0]) } });
    const order: string[] = [];
    const send = (label: string, priority?: number) =>
      model
        .infer({ inputs: { INPUT0: new Float32Array([1]) }, ...(priority === undefined ? {} : { priority }) })
        .then(() => order.push(label));
    const labels = ['A', 'B1', 'B2', 'B3', 'B4', 'B5', 'B6'];
    const calls = labels.map((l) => send(l, l === 'B6' ? 2 : undefined));
    calls.push(send('C', 1));
    await Promise.all(calls);
    // In arrival order C would be last. Queued behind A (and at most one
    // request the scheduler took before C arrived), C goes next.
    expect(order.indexOf('C')).toBeLessThan(order.indexOf('B3'));
    expect(order.slice(-4)).toEqual(['B3', 'B4', 'B5', 'B6']);
  });

  it('the correlation id reaches the backend: identity reads it as an integer, so a string one fails there', async () => {
    const input = { INPUT0: Float32Array.of(5) };
    for (const correlationId of [17, 2n ** 64n - 1n]) {
      const r = await server().infer('identity_nobatch', { inputs: input, correlationId });
      expect(floats(r.outputs.OUTPUT0)).toEqual([5]);
    }
    const err = await rejection(
      server().infer('identity_nobatch', { inputs: input, id: 'corr', correlationId: 'session-1' }),
    );
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toContain('correlation ID in request is not an unsigned int');
    expect(err.requestId).toBe('corr');
  });

  it('parameters, correlation id, priority and timeout arrive with their types (echo model)', async (ctx) => {
    skipIf(
      ctx,
      fakeOnly(
        "identity_echo echoes only on the fake: no backend of Triton's test set reads request parameters",
      ),
    );
    const r = await server().infer('identity_echo', {
      inputs: { INPUT0: Float32Array.of(1) },
      parameters: { text: 'abc', int: 3, double: 1.5, whole: 3e20, flag: true, big: 2n ** 62n, neg: -7 },
      correlationId: 17,
      priority: 3,
      timeoutMicroseconds: 123_456,
    });
    expect(r.parameters).toMatchObject({
      'request.text': 'string:abc',
      'request.int': 'int:3',
      'request.double': 'double:1.5',
      'request.whole': 'double:3e+20',
      'request.flag': 'bool:true',
      'request.big': `int:${2n ** 62n}`,
      'request.neg': 'int:-7',
      'request.correlation_id': 'uint:17',
      'request.priority': 'uint:3',
      'request.timeout_us': 'uint:123456',
    });
    const s = await server().infer('identity_echo', {
      inputs: { INPUT0: Float32Array.of(1) },
      correlationId: 2n ** 64n - 1n,
    });
    expect(s.parameters['request.correlation_id']).toBe(`uint:${2n ** 64n - 1n}`);
  });

  it('response parameters: each result has its own names and values, whatever the responses before it had (echo model)', async (ctx) => {
    skipIf(
      ctx,
      fakeOnly(
        "identity_echo echoes only on the fake: no backend of Triton's test set reads request parameters",
      ),
    );
    // Lists of names that change from response to response, names that need
    // escaping in source text, and names of Object.prototype's members.
    const lists: Array<Record<string, string>> = [
      { a: '1', b: '2' },
      { a: '3' },
      { b: '4', a: '5' },
      { 'q"uote\\back\nline': '6', '\u2028': '7' },
      { constructor: '8', toString: '9', hasOwnProperty: '10' },
      { a: '11', b: '12' },
    ];
    for (let round = 0; round < 3; round++) {
      for (const list of lists) {
        const r = await server().infer('identity_echo', {
          inputs: { INPUT0: Float32Array.of(1) },
          parameters: list,
        });
        const echoed = Object.fromEntries(
          Object.entries(r.parameters).filter(
            ([k]) => k.startsWith('request.') && !/correlation_id|priority|timeout_us|flags/.test(k),
          ),
        );
        const expected = Object.fromEntries(
          Object.entries(list).map(([k, v]) => [`request.${k}`, `string:${v}`]),
        );
        expect(echoed).toStrictEqual(expected);
        expect(Object.getPrototypeOf(r.parameters)).toBe(Object.prototype);
      }
    }
  });
});
