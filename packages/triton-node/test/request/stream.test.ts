import {
  eventually,
  fakeOnly,
  requestsSettled,
  serverOptions,
  until,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { type InferResult, type InferStream, Server, TritonError } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

const server = useServer(['repeat_int32', 'square_int32', 'identity_fp32']);

function repeat(values: number[], delays: number[] | number, wait = 0) {
  const d = typeof delays === 'number' ? values.map(() => delays) : delays;
  return {
    inputs: { IN: Int32Array.from(values), DELAY: Uint32Array.from(d), WAIT: Uint32Array.from([wait]) },
  };
}

function first(r: InferResult, name: string): number {
  return (r.outputs[name]!.data as Int32Array | Uint32Array)[0]!;
}

async function collect(stream: InferStream): Promise<InferResult[]> {
  const out: InferResult[] = [];
  for await (const r of stream) out.push(r);
  return out;
}

async function failure(stream: InferStream): Promise<{ got: number; err: TritonError }> {
  let got = 0;
  try {
    for await (const _ of stream) got++;
  } catch (err) {
    expect(err).toBeInstanceOf(TritonError);
    return { got, err: err as TritonError };
  }
  throw new Error(`the stream ended without an error after ${got} responses`);
}

/**
 * Whether `p` settles before a callback of the event loop's next turn
 * (setImmediate) runs: at once, from this thread alone, without waiting for
 * Triton or a timer, however busy the machine is.
 */
async function settlesAtOnce(p: Promise<unknown>): Promise<boolean> {
  const settled = p.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, new Promise<boolean>((r) => setImmediate(() => r(false)))]);
}

/**
 * Nothing of a request outlives it: on any library, the addon has every
 * request released and settled (FINAL came); on the fake, the engine holds
 * no request or response either.
 */
async function released(): Promise<void> {
  expect(await requestsSettled()).toBe(true);
  if (fakeOnly()) return;
  const ok = await eventually(() => {
    const live = fakeEngine.liveObjects()!;
    return live.requests === 0 && live.responses === 0;
  });
  expect(fakeEngine.liveObjects()).toMatchObject({ requests: 0, responses: 0 });
  expect(ok).toBe(true);
}

describe('streams from decoupled models', () => {
  it('repeat with 0 responses ends at once', async () => {
    const stream = server().model('repeat_int32').stream(repeat([], []));
    expect(await collect(stream)).toEqual([]);
    expect(stream.ended).toBe(true);
    expect(stream.stats).toEqual({
      responses: 0,
      timeToFirstResponseMs: null,
      meanTimeBetweenResponsesMs: null,
    });
  });

  it('repeat with 1 response', async () => {
    const stream = server()
      .model('repeat_int32')
      .stream(repeat([42], [5]));
    const got = await collect(stream);
    expect(got.map((r) => [first(r, 'OUT'), first(r, 'IDX')])).toEqual([[42, 0]]);
    expect(got[0]!.model).toBe('repeat_int32');
    expect(stream.stats.responses).toBe(1);
    expect(stream.stats.timeToFirstResponseMs).toBeGreaterThanOrEqual(0);
    expect(stream.stats.meanTimeBetweenResponsesMs).toBeNull();
  });

  it('a string correlationId reaches repeat, which never reads it', async () => {
    const got = await collect(
      server()
        .model('repeat_int32')
        .stream({ ...repeat([7, 8], 0), correlationId: 'session-1' }),
    );
    expect(got.map((r) => first(r, 'OUT'))).toEqual([7, 8]);
  });

  it('repeat answers OUT and IDX in every response, whichever outputs were asked for', async () => {
    const got = await collect(
      server()
        .model('repeat_int32')
        .stream({ ...repeat([3], 0), outputs: ['OUT'] }),
    );
    expect(got.length).toBe(1);
    expect(Object.keys(got[0]!.outputs).sort()).toEqual(['IDX', 'OUT']);
  });

  it('repeat with 1,000 responses and per-response delays, in order', async () => {
    const values = Array.from({ length: 1000 }, (_, i) => i * 3 - 500);
    const delays = values.map((_, i) => (i % 100 === 0 ? 2 : 0));
    const stream = server().model('repeat_int32').stream(repeat(values, delays));
    const got = await collect(stream);
    expect(got.length).toBe(1000);
    got.forEach((r, i) => {
      expect(first(r, 'OUT')).toBe(values[i]);
      expect(first(r, 'IDX')).toBe(i);
      expect(r.outputs.OUT!.shape).toEqual([1]);
    });
    const stats = stream.stats;
    expect(stats.responses).toBe(1000);
    expect(stats.timeToFirstResponseMs).toBeGreaterThanOrEqual(0);
    expect(stats.meanTimeBetweenResponsesMs).toBeGreaterThanOrEqual(0);
  });

  it('square with 0 and 5,000 responses', async () => {
    const zero = await collect(
      server()
        .model('square_int32')
        .stream({ inputs: { IN: new Int32Array([0]) } }),
    );
    expect(zero).toEqual([]);
    const stream = server()
      .model('square_int32')
      .stream({ inputs: { IN: new Int32Array([5000]) } });
    const got = await collect(stream);
    expect(got.length).toBe(5000);
    expect(got.every((r) => first(r, 'OUT') === 5000)).toBe(true);
    expect(stream.maxBuffered).toBeLessThanOrEqual(stream.highWaterMark);
  });

  it('a non-decoupled model streams its one response', async () => {
    const got = await collect(
      server().stream('identity_fp32', { inputs: { INPUT0: new Float32Array([1, 2]) } }),
    );
    expect(got.length).toBe(1);
    expect(Array.from(got[0]!.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2]);
  });

  it('breaking out of for-await cancels the request, which is then released', async () => {
    const stream = server()
      .model('repeat_int32')
      .stream(repeat([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 100));
    const got: number[] = [];
    for await (const r of stream) {
      got.push(first(r, 'OUT'));
      if (got.length === 2) break;
    }
    expect(got).toEqual([1, 2]);
    expect(stream.ended).toBe(true);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    await released();
  });

  it('an AbortSignal mid-stream ends it at once with CANCELLED, and the request is released', async () => {
    const controller = new AbortController();
    const stream = server()
      .model('square_int32')
      .stream(
        { inputs: { IN: new Int32Array([100_000]) }, signal: controller.signal },
        { highWaterMark: 100_000 },
      );
    const { value } = await stream.next();
    expect(first(value as InferResult, 'OUT')).toBe(100_000);
    controller.abort();
    const ending = failure(stream);
    expect(await settlesAtOnce(ending)).toBe(true);
    const { err } = await ending;
    expect(err.code).toBe('CANCELLED');
    expect(err.name).toBe('AbortError');
    await released();
  });

  it('cancel mid-stream on repeat (which ignores cancellation) settles at once; released later', async () => {
    const controller = new AbortController();
    const stream = server()
      .model('repeat_int32')
      .stream({ ...repeat([1, 2, 3, 4, 5, 6, 7, 8], 150), signal: controller.signal });
    const { value } = await stream.next();
    expect(first(value as InferResult, 'OUT')).toBe(1);
    const pending = stream.next();
    controller.abort();
    expect(await settlesAtOnce(pending)).toBe(true);
    await expect(pending).rejects.toMatchObject({ code: 'CANCELLED' });
    await released();
  });

  it('an already-aborted signal throws from the iterator without submitting', async () => {
    expect(await requestsSettled()).toBe(true);
    const stream = server()
      .model('repeat_int32')
      .stream({ ...repeat([1], [0]), signal: AbortSignal.abort() });
    const { got, err } = await failure(stream);
    expect(got).toBe(0);
    expect(err.code).toBe('CANCELLED');
    expect(addon().addonStats()).toMatchObject({ pendingRequests: 0, inflightRequests: 0 });
  });

  it('return() before the request was submitted submits nothing', async () => {
    expect(await requestsSettled()).toBe(true);
    const stream = server()
      .model('repeat_int32')
      .stream(repeat([1, 2, 3], 50));
    const returned = stream.return();
    expect(addon().addonStats()).toMatchObject({ pendingRequests: 0, inflightRequests: 0 });
    await returned;
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    // Past the microtask where a submission would happen.
    await new Promise((r) => setTimeout(r, 20));
    expect(addon().addonStats()).toMatchObject({ pendingRequests: 0, inflightRequests: 0 });
  });

  it('an invalid request throws from the iterator', async () => {
    const stream = server()
      .model('repeat_int32')
      .stream({ inputs: { IN: new Int32Array([1]) } });
    const { err } = await failure(stream);
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toContain('DELAY');
  });

  it('a slow consumer never holds more than highWaterMark responses', async () => {
    const values = Array.from({ length: 40 }, (_, i) => i);
    const stream = server().model('repeat_int32').stream(repeat(values, 2), { highWaterMark: 4 });
    let got = 0;
    let error: TritonError | undefined;
    try {
      for await (const r of stream) {
        expect(first(r, 'IDX')).toBe(got);
        got++;
        expect(stream.buffered).toBeLessThanOrEqual(4);
        // The slowest consumer: it reads on only once the stream gave up on it.
        await until(
          'the stream to end',
          () => stream.ended,
          () => stream.buffered,
        );
      }
    } catch (err) {
      error = err as TritonError;
    }
    expect(stream.maxBuffered).toBeLessThanOrEqual(4);
    expect(error).toBeInstanceOf(TritonError);
    expect(error!.code).toBe('UNAVAILABLE');
    expect(error!.message).toContain('highWaterMark');
    expect(got).toBeLessThan(40);
    await released();
  });

  it('a slow consumer never holds more than highWaterMarkBytes of outputs', async () => {
    // repeat_int32 answers with OUT (INT32) and IDX (UINT32): 8 bytes per response.
    const values = Array.from({ length: 40 }, (_, i) => i);
    const stream = server()
      .model('repeat_int32')
      .stream(repeat(values, 2), { highWaterMark: 1000, highWaterMarkBytes: 40 });
    let most = 0;
    let got = 0;
    const { err } = await (async () => {
      try {
        for await (const _ of stream) {
          got++;
          most = Math.max(most, stream.bufferedBytes);
          // The slowest consumer: it reads on only once the stream gave up on it.
          await until(
            'the stream to end',
            () => stream.ended,
            () => stream.bufferedBytes,
          );
          most = Math.max(most, stream.bufferedBytes);
        }
      } catch (err) {
        return { err: err as TritonError };
      }
      throw new Error(`the stream ended without an error after ${got} responses`);
    })();
    expect(err).toBeInstanceOf(TritonError);
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.message).toContain('highWaterMarkBytes');
    expect(most).toBeLessThanOrEqual(40);
    expect(got).toBeLessThan(40);
    await released();
  });

  it('a tight consumer of 20,000 responses never trips the default marks', async () => {
    const stream = server()
      .model('square_int32')
      .stream({ inputs: { IN: new Int32Array([20_000]) } });
    let n = 0;
    for await (const _ of stream) n++;
    expect(n).toBe(20_000);
    expect(stream.maxBuffered).toBeLessThanOrEqual(stream.highWaterMark);
  });

  it('highWaterMarkBytes must be a positive integer', () => {
    expect(() =>
      server()
        .model('repeat_int32')
        .stream(repeat([1], [0]), { highWaterMarkBytes: -1 }),
    ).toThrow(/highWaterMarkBytes/);
  });

  it('highWaterMark must be a positive integer', () => {
    expect(() =>
      server()
        .model('repeat_int32')
        .stream(repeat([1], [0]), { highWaterMark: 0 }),
    ).toThrow(/highWaterMark/);
  });
});

describe('stop with open streams', () => {
  it('ends every open stream with an error, never a hang', async () => {
    const own = await Server.create(serverOptions({ exitTimeoutSeconds: 2 }));
    await own.loadModel('repeat_int32');
    const slow = () => repeat([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 300);
    const streams = [
      own.model('repeat_int32').stream(slow()),
      own.model('repeat_int32').stream(slow()),
      own.model('repeat_int32').stream(slow()),
    ];
    // One is being read; the others wait (a single model instance runs requests in turn).
    expect((await streams[0]!.next()).done).toBe(false);
    const endings = streams.map((s) => failure(s));
    await own.stop();
    for (const e of await Promise.all(endings)) {
      expect(e.err.code).toBe('UNAVAILABLE');
      expect(e.got).toBeLessThan(9);
    }
  });

  it('an abort after FINAL still ends a stream whose responses are unread', async () => {
    const controller = new AbortController();
    const stream = server()
      .model('square_int32')
      .stream({ inputs: { IN: new Int32Array([50]) }, signal: controller.signal });
    expect((await stream.next()).done).toBe(false);
    // FINAL came (the stream ended) with the other 49 responses unread.
    expect(await eventually(() => stream.ended && stream.buffered === 49)).toBe(true);
    controller.abort();
    expect(stream.buffered).toBe(0);
    const { err } = await failure(stream);
    expect(err.code).toBe('CANCELLED');
  });
});
