/**
 * The gateway under hostile clients (issue 40): a stream client that stops
 * reading, OpenAI body keys named like `Object.prototype` members, model
 * names invented by the thousand against per-model limits, and a client that
 * leaves while its request is being admitted. Each attack was measured
 * against main before its fix; the comments say what it did then.
 */
import { once } from 'node:events';
import net from 'node:net';
import { Writable } from 'node:stream';
import { llmUnderTest } from '@triton-node/test-support/backends/llm-helpers.js';
import { eventually, fakeOnly, skipIf, useServer } from '@triton-node/test-support/helpers.js';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { resolveGuard } from '../../lib/guard/config.js';
import { MAX_MODEL_STATES, TenantState } from '../../lib/guard/limits.js';
import type { Guard } from '../../lib/guard/types.js';
import { GatewayGuard, type GatewayLogger, hashApiKey } from '../../lib/index.js';
import { useGateway } from '../helpers.js';

const llm = llmUnderTest();
const server = useServer(['identity_fp32', 'repeat_int32', ...(llm.skip === false ? [llm.model] : [])], {
  modelRepository: llm.repositories,
});

/** Log lines of a gateway, by message. */
function captureLog(): { logger: GatewayLogger; lines: Array<{ msg: string } & Record<string, unknown>> } {
  const lines: Array<{ msg: string } & Record<string, unknown>> = [];
  const at = (obj: object, msg?: string) => lines.push({ ...obj, msg: msg ?? '' });
  return { logger: { debug: at, info: at, warn: at, error: at }, lines };
}

const slowLog = captureLog();
/**
 * Small bounds, so that a client that stops reading meets them soon; the
 * write timeout long enough that the model, unbounded, would send all its
 * words before it (the bound, not the timeout, must stop it).
 */
const STREAMS = { highWaterMark: 16, writeTimeoutMs: 2000 };
const slow = useGateway(server, {
  openai: { words: { model: llm.model } },
  streams: STREAMS,
  logger: slowLog.logger,
});
/** Bounds no stream here reaches: only the write timeout ends a silent client's stream. */
const patientLog = captureLog();
const patient = useGateway(server, {
  openai: { words: { model: llm.model } },
  streams: { highWaterMark: 1_000_000, highWaterMarkBytes: 2 ** 40, writeTimeoutMs: 500 },
  logger: patientLog.logger,
});

/** A prompt word of 8 KiB (under the 16 KiB an HTTP response buffers before it waits): ~500 fill the kernel's buffers. */
const WORD = 8 * 1024;

/**
 * A client that sends `body` to `path` and then reads nothing: a raw socket,
 * paused once the request is out. (Node cannot shrink a socket's receive
 * buffer, so the server first fills the kernel's buffers, a few MiB, before
 * it meets the client's silence.)
 */
async function silentClient(url: string, path: string, body: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

/** Responses the fake's text model has sent so far (its statistics count each one). */
async function textResponses(): Promise<number> {
  const [stats] = await server().model(llm.model).statistics();
  return Object.values(stats!.responseStats).reduce((n, s) => n + s.success.count, 0);
}

/** Why the slow-client tests run on the fake engine only. */
const BIG_WORDS =
  "the fake's text model echoes an 8 KiB prompt word, so ~500 responses fill the kernel's socket buffers; the Python LLM's words are a few bytes: tens of thousands of tokens, minutes, to fill them";

describe('a stream client that stops reading', () => {
  it('OpenAI: the stream holds at most highWaterMark responses, the request is cancelled, the client cut', async (ctx) => {
    skipIf(ctx, fakeOnly(BIG_WORDS));
    const { gateway, url } = slow();
    const cancelledBefore = await llm.cancelled(server());
    const producedBefore = await textResponses();
    const socket = await silentClient(
      url,
      '/v1/completions',
      JSON.stringify({ model: 'words', prompt: 'w'.repeat(WORD), max_tokens: 1500, stream: true }),
    );
    try {
      // Before: the stream held up to 65,536 responses or 64 MiB for the client: here all 1,500
      // words of the model, never cancelled; then it waited for the client forever, in flight.
      expect(
        await eventually(async () => (await llm.cancelled(server())) > cancelledBefore, 30_000),
        'the model request was cancelled',
      ).toBe(true);
      expect(await eventually(() => gateway.inFlight === 0, 30_000), `in flight: ${gateway.inFlight}`).toBe(
        true,
      );
      const produced = (await textResponses()) - producedBefore;
      // What the kernel's buffers took (at most about 4 MiB: some 540 words) and the 16 the stream
      // may hold, give or take what was on its way when the cancel came; not the 1,500 of before.
      expect(produced).toBeLessThan(1000);
      // It held too much for the client: its last event is that error (logged), and the client,
      // which took nothing of that either, is cut once it read nothing for 2 s.
      const failed = slowLog.lines.find((l) => l.msg === 'stream failed');
      expect(failed?.err).toMatch(/read too slowly/);
    } finally {
      socket.destroy();
    }
  });

  it('generate_stream: the same bounds, and the client cut after writeTimeoutMs', async (ctx) => {
    skipIf(ctx, fakeOnly(BIG_WORDS));
    const { gateway, url } = slow();
    const before = slowLog.lines.length;
    const cancelledBefore = await llm.cancelled(server());
    const producedBefore = await textResponses();
    const socket = await silentClient(
      url,
      `/v2/models/${llm.model}/generate_stream`,
      JSON.stringify({
        text_input: 'g'.repeat(WORD),
        stream: true,
        exclude_input_in_output: true,
        parameters: { max_tokens: 1500 },
      }),
    );
    try {
      // Before: as for OpenAI, every response held, the route waiting for the client forever.
      expect(
        await eventually(async () => (await llm.cancelled(server())) > cancelledBefore, 30_000),
        'the model request was cancelled',
      ).toBe(true);
      expect(await eventually(() => gateway.inFlight === 0, 30_000), `in flight: ${gateway.inFlight}`).toBe(
        true,
      );
      expect((await textResponses()) - producedBefore).toBeLessThan(1000);
      // It held too much: its last event is the error; the client took nothing of that either.
      const failed = slowLog.lines.slice(before).find((l) => l.msg === 'stream failed');
      expect(failed).toMatchObject({ model: llm.model, err: expect.stringMatching(/read too slowly/) });
    } finally {
      socket.destroy();
    }
  });

  it('cuts a client that takes nothing for writeTimeoutMs, which cancels its request', async (ctx) => {
    skipIf(ctx, fakeOnly(BIG_WORDS));
    const { gateway, url } = patient();
    const cancelledBefore = await llm.cancelled(server());
    const socket = await silentClient(
      url,
      '/v1/completions',
      JSON.stringify({ model: 'words', prompt: 'c'.repeat(WORD), max_tokens: 1500, stream: true }),
    );
    try {
      expect(await eventually(() => gateway.inFlight === 1, 10_000), 'the stream began').toBe(true);
      // Before: nothing ended it but the client leaving (the model ran its 1,500 words to the end).
      expect(await eventually(() => gateway.inFlight === 0, 30_000), `in flight: ${gateway.inFlight}`).toBe(
        true,
      );
      expect(patientLog.lines.find((l) => l.msg === 'stream cut')?.err).toMatch(
        /took nothing of the stream for 500 ms/,
      );
      expect(await eventually(async () => (await llm.cancelled(server())) > cancelledBefore, 10_000)).toBe(
        true,
      );
    } finally {
      socket.destroy();
    }
  });

  it('refuses stream options that are not positive whole numbers, naming them', async () => {
    const { createGateway } = await import('../../lib/index.js');
    for (const [streams, name] of [
      [{ highWaterMark: 0 }, 'streams.highWaterMark'],
      [{ highWaterMarkBytes: 1.5 }, 'streams.highWaterMarkBytes'],
      [{ writeTimeoutMs: -1 }, 'streams.writeTimeoutMs'],
      ['fast', 'streams'],
    ] as const) {
      expect(() => createGateway(server(), { streams } as never)).toThrow(
        expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(name) }),
      );
    }
  });
});

/** Keys every plain object inherits: a lookup table that is a plain object answers them all. */
const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__lookupSetter__',
];

describe.skipIf(llm.skip !== false)('OpenAI body keys named like Object.prototype members', () => {
  const post = async (path: string, raw: string) => {
    const res = await request(`${slow().url}${path}`, {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json' },
    });
    const text = await res.body.text();
    return { status: res.statusCode, text, json: JSON.parse(text) as { error?: Record<string, unknown> } };
  };

  it('answers each as an unknown argument, 400 naming it, on both routes', async () => {
    const bodies = {
      '/v1/completions': '"model":"words","prompt":"a b","max_tokens":2',
      '/v1/chat/completions': '"model":"words","messages":[{"role":"user","content":"a b"}],"max_tokens":2',
    };
    for (const [path, known] of Object.entries(bodies)) {
      for (const key of PROTOTYPE_KEYS) {
        for (const value of ['1', '{}', 'null', '"x"', '[]', 'true']) {
          const res = await post(path, `{${known},${JSON.stringify(key)}:${value}}`);
          // Before: toString and constructor were accepted (200); hasOwnProperty, valueOf and
          // __proto__ answered with TypeError text ("accepts is not a function").
          const where = `${path} ${key}: ${value} -> ${res.status} ${res.text}`;
          expect(res.status, where).toBe(400);
          expect(res.json.error, where).toMatchObject({
            type: 'invalid_request_error',
            param: key,
            message: `Unrecognized request argument supplied: ${key}`,
          });
        }
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads nested objects by their own keys: a __proto__ there is a key, never a prototype', async () => {
    // An inherited role would make this message valid; its own keys have none.
    const role = await post(
      '/v1/chat/completions',
      '{"model":"words","messages":[{"__proto__":{"role":"user"},"content":"a"}]}',
    );
    expect(role.status).toBe(400);
    expect(role.json.error).toMatchObject({ param: 'messages', message: expect.stringMatching(/role/) });
    const part = await post(
      '/v1/chat/completions',
      '{"model":"words","messages":[{"role":"user","content":[{"__proto__":{"type":"text","text":"a"}}]}]}',
    );
    expect(part.status).toBe(400);
    expect(part.json.error).toMatchObject({
      param: 'messages',
      message: expect.stringMatching(/text parts/),
    });
    // stream_options whose include_usage is only inherited: no usage chunk.
    const res = await request(`${slow().url}/v1/completions`, {
      method: 'POST',
      body: '{"model":"words","prompt":"a b","max_tokens":2,"stream":true,"stream_options":{"__proto__":{"include_usage":true}}}',
      headers: { 'content-type': 'application/json' },
    });
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(text).toContain('data: [DONE]');
    expect(text).not.toContain('"usage"');
    // A hostile model id is an unknown model.
    for (const id of PROTOTYPE_KEYS) {
      const unknown = await post('/v1/completions', `{"model":${JSON.stringify(id)},"prompt":"a"}`);
      expect(unknown.status, id).toBe(404);
      expect(unknown.json.error).toMatchObject({ code: 'model_not_found' });
    }
    expect(({} as Record<string, unknown>).role).toBeUndefined();
  });
});

describe('per-model limit state for model names a client invents', () => {
  const config = (perModel: Record<string, object>) =>
    resolveGuard({
      apiKeys: [{ sha256: hashApiKey('k'.repeat(32)), tenant: 't' }],
      tenants: { t: { models: ['*'], perModel } },
    }).tenants.get('t')!;

  it('forgets the buckets of names not asked again once they refilled: memory does not grow with names', () => {
    const state = new TenantState(config({ '*': { requestsPerSecond: 100 } }), 0);
    // 100,000 names, 1,000 a second (each bucket refills in 10 ms).
    for (let i = 0; i < 100_000; i++) state.model(`absent-${i}`, i)!.requests!.take(1);
    // Before: 100,000 states, one per name ever asked.
    expect(state.models.size).toBeLessThanOrEqual(128);
  });

  it('holds at most MAX_MODEL_STATES when buckets refill slowly, and a real model keeps its own', () => {
    const state = new TenantState(config({ '*': { requestsPerSecond: 0.001, requestBurst: 1 } }), 0);
    // The real model's only request of the next 1,000 s.
    state.model('real', 0)!.requests!.take(1);
    for (let i = 0; i < 20_000; i++) state.model(`absent-${i}`, 1 + i / 1000)!.requests!.take(1);
    expect(state.models.size).toBeLessThanOrEqual(MAX_MODEL_STATES);
    // The flood neither evicted nor refilled the real model's bucket: it still waits.
    expect(state.model('real', 30)!.requests!.wait(1, 30)).toBeGreaterThan(900);
    // Names past the bound share one bucket: the flood's empty, not a fresh one each.
    expect(state.model('yet-another', 30)!.requests!.wait(1, 30)).toBeGreaterThan(0);
  });

  it('through the guard: 20,000 invented names are refused by the shared bucket, not admitted each', async () => {
    const guard = new GatewayGuard({
      apiKeys: [{ sha256: hashApiKey('k'.repeat(32)), tenant: 't' }],
      tenants: { t: { models: ['*'], perModel: { '*': { requestsPerSecond: 0.001, requestBurst: 1 } } } },
    });
    let admitted = 0;
    for (let i = 0; i < 20_000; i++) {
      try {
        const a = await guard.admit({
          protocol: 'http',
          route: 'model_metadata',
          model: `absent-${i}`,
          headers: { 'x-api-key': 'k'.repeat(32) },
          requestId: String(i),
        });
        a.done({ status: 404 });
        admitted++;
      } catch {
        // 429: over the limit.
      }
    }
    // Each name's first request until the states are full; after that the shared bucket's one.
    expect(admitted).toBeLessThanOrEqual(MAX_MODEL_STATES + 1);
    guard.close();
  });
});

describe('a client that leaves while its request is admitted', () => {
  it('gives its concurrency slot back and is audited once, with 499', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const audit = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n')) if (l !== '') lines.push(JSON.parse(l));
        cb();
      },
    });
    const key = 'slot-tenant-key-0123456789';
    const real = new GatewayGuard({
      apiKeys: [{ sha256: hashApiKey(key), tenant: 'one' }],
      tenants: { one: { models: ['*'], limits: { maxConcurrent: 1 } } },
      audit: { stream: audit, flushIntervalMs: 1 },
    });
    // Admission held open until the test lets it go (a slow credential check, a Redis round trip).
    let letGo!: () => void;
    const held = new Promise<void>((r) => {
      letGo = r;
    });
    let asked = 0;
    const guard: Guard = {
      async admit(r) {
        asked++;
        const admission = await real.admit(r);
        if (asked === 1) await held;
        return admission;
      },
    };
    const { gateway, url } = slow();
    const ctx = gateway._context as { guard?: Guard };
    ctx.guard = guard;
    try {
      const { hostname, port } = new URL(url);
      const socket = net.connect(Number(port), hostname);
      await once(socket, 'connect');
      socket.write(`GET /v2/models/identity_fp32 HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n\r\n`);
      expect(await eventually(() => asked === 1 && gateway.inFlight === 1, 10_000)).toBe(true);
      socket.destroy();
      // The gateway saw it leave (its response closed) while the admission was still held.
      expect(await eventually(() => gateway.inFlight === 0, 10_000)).toBe(true);
      letGo();
      // Before: the admission was kept by a request that had ended: the slot stayed taken (every
      // later request of the tenant got 429) and no audit line was written.
      expect(await eventually(() => lines.length === 1, 10_000), JSON.stringify(lines)).toBe(true);
      expect(lines[0]).toMatchObject({ tenant: 'one', status: 499, route: 'model_metadata' });
      const next = await request(`${url}/v2/models/identity_fp32`, { headers: { 'x-api-key': key } });
      await next.body.dump();
      expect(next.statusCode).toBe(200);
    } finally {
      ctx.guard = undefined;
      real.close();
    }
  });
});
