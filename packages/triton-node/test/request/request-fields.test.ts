import { fakeOnly, rejection, skipIf, useServer } from '@triton-node/test-support/helpers.js';
/**
 * What a request carries besides its inputs arrives at Triton with its type:
 * sequence flags and correlation ids, priority (a higher one overtakes queued
 * requests), timeouts and parameters; and each response's parameters are its
 * own.
 */
import { describe, expect, it } from 'vitest';
import type { Tensor } from '../../lib/index.js';

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
