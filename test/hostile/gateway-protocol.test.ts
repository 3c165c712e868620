/**
 * A hostile tenant against the gateway's protocols (issue 27), with real
 * clients (undici, the `openai` client, @grpc/grpc-js): every request gets
 * exactly one audit line carrying the client's request id, whatever ends it
 * (bad JSON, a missing model, 405, an unknown route, 413, a client that
 * leaves mid-body); the OpenAI routes authenticate before reading a body;
 * huge parameter maps, raw and typed contents for one gRPC input; and what
 * the codecs must pass through (request parameters, the timeout, BYTES
 * elements of 256 bytes and more), a stream cancelled when its client
 * leaves, and the queue limit of a dynamic batcher.
 */
import net from 'node:net';
import { Readable, Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import OpenAI from 'openai';
import { Client, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../lib/gateway/index.js';
import { type Listening, kserveClient, useGateway } from '../gateway-helpers.js';
import { fakeOnly, skipIf, useServer } from '../helpers.js';

const fake = fakeOnly() === false;
const MODELS = ['identity_fp32', 'identity_bytes', 'identity_echo', 'identity_delay', 'square_int32'];
const served = useServer(fake ? [...MODELS, 'text_words'] : MODELS);

const KEY = 'mallory-key-0123456789';
const lines: Array<Record<string, unknown>> = [];
const audit = new Writable({
  write(chunk, _enc, cb) {
    for (const l of String(chunk).split('\n')) if (l !== '') lines.push(JSON.parse(l));
    cb();
  },
});
const gw: () => Listening = useGateway(served, {
  maxBodyBytes: 4 * 1024 * 1024,
  ...(fake ? { openai: { words: { model: 'text_words' } } } : {}),
  guard: {
    apiKeys: [{ sha256: hashApiKey(KEY), tenant: 'mallory' }],
    tenants: { mallory: { models: ['*'] } },
    audit: { stream: audit, flushIntervalMs: 0 },
  },
});

// As `triton-node serve` has it: what Node refuses before the gateway sees a request is audited too.
beforeAll(() => {
  gw().http.on('clientError', gw().gateway.guard!.clientError);
});

/** The audit lines of one request id (the guard writes each at once: flushIntervalMs 0). */
function audited(id: string): Array<Record<string, unknown>> {
  return lines.filter((l) => l.requestId === id);
}

/** Waits until `id` has an audit line (a request that ends by a close is audited when the server sees it). */
async function auditedOnce(id: string): Promise<Array<Record<string, unknown>>> {
  const end = Date.now() + 5000;
  while (audited(id).length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  // A second line would come right after the first: give it the chance.
  await new Promise((r) => setTimeout(r, 100));
  return audited(id);
}

const auth = { authorization: `Bearer ${KEY}` };

async function post(path: string, id: string, body: string, headers: Record<string, string> = auth) {
  const r = await request(`${gw().url}${path}`, {
    method: 'POST',
    headers: { 'x-request-id': id, 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await r.body.text();
  return { status: r.statusCode, id: r.headers['x-request-id'], text };
}

/** Sends the head and half of a body, then goes away (undici aborts the request when its body fails). */
async function abortMidBody(path: string, id: string): Promise<void> {
  async function* body() {
    yield Buffer.from('{"model":"words","prompt":"');
    await new Promise((r) => setTimeout(r, 100));
    throw new Error('the client gives up');
  }
  await request(`${gw().url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'x-request-id': id, 'content-length': '1000' },
    body: Readable.from(body()),
  }).catch(() => undefined);
}

describe('the OpenAI routes: one audit line per request, authenticated before the body', () => {
  it('answers an anonymous caller 401 whatever its body, audited once with its request id', async (ctx) => {
    skipIf(ctx, fakeOnly('the OpenAI routes are served by the fake_text_stream model'));
    const r = await post('/v1/completions', 'oa-anon-badjson', '{not json', {});
    expect(r.status).toBe(401);
    expect(r.id).toBe('oa-anon-badjson');
    expect(await auditedOnce('oa-anon-badjson')).toEqual([
      expect.objectContaining({ status: 401, tenant: null, route: 'openai_completions' }),
    ]);
    const c = new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: 'not-a-key', maxRetries: 0 });
    const err = await c.completions
      .create({ model: 'words', prompt: 'x' }, { headers: { 'x-request-id': 'oa-anon-client' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(await auditedOnce('oa-anon-client')).toEqual([expect.objectContaining({ status: 401 })]);
  });

  it.each([
    ['bad JSON', 'POST', '/v1/completions', '{not json', 400],
    ['a body that is not an object', 'POST', '/v1/chat/completions', '[1]', 400],
    ['no model', 'POST', '/v1/completions', '{"prompt":"x"}', 400],
    ['an unknown model', 'POST', '/v1/completions', '{"model":"nope","prompt":"x"}', 404],
    ['a wrong method', 'GET', '/v1/completions', undefined, 405],
    ['a wrong method on the models', 'POST', '/v1/models', '{}', 405],
    ['an unknown route', 'POST', '/v1/nowhere', '{}', 404],
    ['a body past maxBodyBytes', 'POST', '/v1/completions', 'x'.repeat(5 * 1024 * 1024), 413],
  ])(
    'audits %s once, with the status answered and the request id',
    async (what, method, path, body, status) => {
      if (!fake) return;
      const id = `oa-${what.replace(/\W+/g, '-')}`;
      const r = await request(`${gw().url}${path}`, {
        method: method as 'GET' | 'POST',
        headers: { ...auth, 'x-request-id': id },
        ...(body === undefined ? {} : { body }),
      });
      await r.body.text();
      expect(r.statusCode).toBe(status);
      expect(r.headers['x-request-id']).toBe(id);
      expect(await auditedOnce(id)).toEqual([expect.objectContaining({ status, tenant: 'mallory' })]);
    },
  );

  it('audits a completion once, with the id the openai client sent', async (ctx) => {
    skipIf(ctx, fakeOnly('the OpenAI routes are served by the fake_text_stream model'));
    const c = new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: KEY, maxRetries: 0 });
    const done = await c.completions
      .create({ model: 'words', prompt: 'a b', max_tokens: 2 }, { headers: { 'x-request-id': 'oa-ok' } })
      .withResponse();
    expect(done.response.headers.get('x-request-id')).toBe('oa-ok');
    expect(await auditedOnce('oa-ok')).toEqual([
      expect.objectContaining({ status: 200, tenant: 'mallory', model: 'text_words', tokens: 2 }),
    ]);
  });

  it('audits a client that leaves mid-body once, and gives its slot back', async (ctx) => {
    skipIf(ctx, fakeOnly('the OpenAI routes are served by the fake_text_stream model'));
    await abortMidBody('/v1/completions', 'oa-abort');
    const got = await auditedOnce('oa-abort');
    expect(got).toHaveLength(1);
    expect([400, 499]).toContain(got[0]!.status);
    expect(gw().gateway.guard!.inFlight('mallory')).toBe(0);
  });
});

describe('the KServe HTTP routes: one audit line per request', () => {
  it('audits a client that leaves mid-body once', async () => {
    await abortMidBody('/v2/models/identity_fp32/infer', 'kh-abort');
    const got = await auditedOnce('kh-abort');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ route: 'infer', tenant: 'mallory' });
    expect(gw().gateway.guard!.inFlight('mallory')).toBe(0);
  });

  it('audits bad JSON, 405 and an unknown route once each, with the request id', async () => {
    for (const [id, method, path, status] of [
      ['kh-json', 'POST', '/v2/models/identity_fp32/infer', 400],
      ['kh-405', 'GET', '/v2/models/identity_fp32/infer', 405],
      ['kh-404', 'POST', '/v2/nowhere', 404],
    ] as const) {
      const r = await request(`${gw().url}${path}`, {
        method,
        headers: { ...auth, 'x-request-id': id },
        ...(method === 'POST' ? { body: '{not json' } : {}),
      });
      await r.body.text();
      expect(r.statusCode).toBe(status);
      expect(r.headers['x-request-id']).toBe(id);
      expect(await auditedOnce(id)).toEqual([expect.objectContaining({ status })]);
    }
  });
});

describe('gRPC: one audit line per call, with the x-request-id metadata', () => {
  type Unary = (
    req: object,
    meta: grpc.Metadata,
    cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void,
  ) => void;
  let client: grpc.Client & Record<string, Unary>;
  let grpcServer: grpc.Server;
  beforeAll(async () => {
    grpcServer = new grpc.Server();
    await gw().gateway.addToGrpcServer(grpcServer);
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const C = kserveClient<Record<string, Unary>>();
    client = new C(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    client?.close();
    grpcServer?.forceShutdown();
  });
  const rpc = (method: string, req: object, meta: Record<string, string>) => {
    const m = new grpc.Metadata();
    for (const [k, v] of Object.entries(meta)) m.set(k, v);
    return new Promise<Record<string, unknown>>((resolve, reject) =>
      client[method]!(req, m, (err, res) => (err ? reject(err) : resolve(res))),
    );
  };
  const infer = (id: string) => ({
    model_name: 'identity_fp32',
    id,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['1', '1'], contents: { fp32_contents: [1] } }],
  });

  it('carries the x-request-id metadata over the message id, and audits each call once', async () => {
    await rpc('ModelInfer', infer('msg-id'), { ...auth, 'x-request-id': 'g-meta' });
    await rpc('ModelMetadata', { name: 'identity_fp32' }, { ...auth, 'x-request-id': 'g-meta-2' });
    await rpc('ModelInfer', infer(''), { 'x-request-id': 'g-anon' }).catch(() => undefined);
    expect(await auditedOnce('g-meta')).toEqual([expect.objectContaining({ status: 200, route: 'infer' })]);
    expect(await auditedOnce('g-meta-2')).toHaveLength(1);
    expect(await auditedOnce('g-anon')).toEqual([expect.objectContaining({ status: 401 })]);
    expect(audited('msg-id')).toEqual([]);
  });
});

describe('a raw client that half-closes mid-body', () => {
  it.each([
    ['end', '/v2/models/identity_fp32/infer'],
    ['destroy', '/v2/models/identity_fp32/infer'],
    ['end', '/v1/completions'],
    ['destroy', '/v1/completions'],
  ])('is audited once (socket.%s on %s)', async (how, path) => {
    if (path.startsWith('/v1/') && !fake) return;
    const id = `raw-${how}-${path.length}`;
    const start = new Date().toISOString();
    const { port } = new URL(gw().url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nX-Request-Id: ${id}\r\nContent-Length: 1000\r\n\r\n{"in`,
    );
    await new Promise((r) => setTimeout(r, 100));
    if (how === 'end') socket.end();
    else socket.destroy();
    socket.on('error', () => undefined);
    expect(await auditedOnce(id)).toHaveLength(1);
    // Nor a line of its own for the connection (the clientError listener's, with a new id).
    expect(lines.filter((l) => l.route === 'client_error' && l.time! >= start)).toEqual([]);
    expect(gw().gateway.guard!.inFlight('mallory')).toBe(0);
  });
});

const FP32_INPUT = { name: 'INPUT0', datatype: 'FP32', shape: [2], data: [1, 2] };

describe('huge and deep requests: a clear 400, never a stack overflow', () => {
  const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, i]));

  it('refuses 200,000 request parameters over HTTP naming the limit, and takes 4,096', async () => {
    const r = await post(
      '/v2/models/identity_echo/infer',
      'deep-params',
      JSON.stringify({ parameters: many(200_000), inputs: [FP32_INPUT] }),
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toBe('Expected at most 4096 request parameters but received 200000');
    const ok = await post(
      '/v2/models/identity_echo/infer',
      'deep-params-ok',
      JSON.stringify({ parameters: many(4096), inputs: [FP32_INPUT] }),
    );
    expect(ok.status).toBe(200);
  });

  it.each([
    [
      'infer data',
      '/v2/models/identity_fp32/infer',
      (d: string) => `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,1],"data":${d}}]}`,
    ],
    ['generate', '/v2/models/identity_fp32/generate', (d: string) => `{"INPUT0":${d}}`],
    ['generate_stream', '/v2/models/square_int32/generate_stream', (d: string) => `{"IN":${d}}`],
    [
      'generate_stream (v2 form)',
      '/v2/models/square_int32/generate_stream',
      (d: string) => `{"inputs":[{"name":"IN","datatype":"INT32","shape":[1],"data":${d}}]}`,
    ],
    [
      'generate parameters',
      '/v2/models/identity_fp32/generate',
      (d: string) => `{"INPUT0":[1],"parameters":{"p":${d}}}`,
    ],
  ])('answers %s nested 20,000 deep with a 400 naming it', async (_what, path, body) => {
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const r = await post(path, `deep-${path.length}`, body(deep));
    expect(r.status).toBe(400);
    expect(r.text).not.toMatch(/call stack/);
  });
});

describe('gRPC ModelInfer with raw and typed contents for one input', () => {
  let client: grpc.Client &
    Record<
      string,
      (
        req: object,
        meta: grpc.Metadata,
        cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void,
      ) => void
    >;
  let grpcServer: grpc.Server;
  beforeAll(async () => {
    grpcServer = new grpc.Server();
    await gw().gateway.addToGrpcServer(grpcServer);
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const C = kserveClient<Record<string, never>>();
    client = new C(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as typeof client;
  });
  afterAll(() => {
    client?.close();
    grpcServer?.forceShutdown();
  });

  it('answers INVALID_ARGUMENT naming the input and the model, as Triton does', async () => {
    const m = new grpc.Metadata();
    m.set('authorization', `Bearer ${KEY}`);
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.ModelInfer!(
        {
          model_name: 'identity_fp32',
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['1', '1'], contents: { fp32_contents: [7] } }],
          raw_input_contents: [Buffer.from(new Float32Array([1]).buffer)],
        },
        m,
        (e) => resolve(e),
      ),
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.details).toBe(
      "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'identity_fp32'",
    );
  });
});
