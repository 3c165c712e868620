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
import {
  eventually,
  fakeOnly,
  readUntil,
  requestsSettled,
  skipAllIf,
  skipIf,
  until,
  useServer,
} from '@triton-node/test-support/helpers.js';
import OpenAI from 'openai';
import { type ModelConfig, Tensor, TritonError, decodeBytes, encodeBytes } from 'triton-node';
import { addonStats } from 'triton-node/testing';
import { Client, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Guard } from '../lib/guard/types.js';
import { hashApiKey } from '../lib/index.js';
import { tensorBytes } from '../lib/kserve/codec.js';
import { type Listening, kserveClient, parseBinaryResponse, useGateway } from './helpers.js';

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

type Unary = (
  req: object,
  meta: grpc.Metadata,
  cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void,
) => void;
let grpcClient: grpc.Client & Record<string, Unary>;
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
  grpcClient = new C(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});
afterAll(() => {
  grpcClient?.close();
  grpcServer?.forceShutdown();
});

/** One unary call of the gateway's gRPC service with `meta` as metadata. */
function rpc(method: string, req: object, meta: Record<string, string>): Promise<Record<string, unknown>> {
  const m = new grpc.Metadata();
  for (const [k, v] of Object.entries(meta)) m.set(k, v);
  return new Promise((resolve, reject) =>
    grpcClient[method]!(req, m, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

/** The audit lines of one request id (the guard writes each at once: flushIntervalMs 0). */
function audited(id: string): Array<Record<string, unknown>> {
  return lines.filter((l) => l.requestId === id);
}

/** Waits until `id` has an audit line (a request that ends by a close is audited when the server sees it). */
async function auditedOnce(id: string): Promise<Array<Record<string, unknown>>> {
  await eventually(() => audited(id).length > 0);
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

  describe('each failure', () => {
    skipAllIf(fakeOnly('the OpenAI routes are served by the fake_text_stream model'));
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
  });

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

  it('names each ModelStreamInfer message by its id, else by the call’s x-request-id', async () => {
    const m = new grpc.Metadata();
    m.set('authorization', `Bearer ${KEY}`);
    m.set('x-request-id', 's-call');
    const call = (
      grpcClient as unknown as {
        ModelStreamInfer(meta: grpc.Metadata): grpc.ClientDuplexStream<object, Record<string, unknown>>;
      }
    ).ModelStreamInfer(m);
    const ended = new Promise((resolve, reject) => {
      call.on('data', () => undefined);
      call.on('end', resolve);
      call.on('error', reject);
    });
    for (const id of ['s-one', 's-two', '']) call.write(infer(id));
    call.end();
    await ended;
    for (const id of ['s-one', 's-two', 's-call'])
      expect(await auditedOnce(id), id).toEqual([
        expect.objectContaining({ route: 'stream_infer', status: 200 }),
      ]);
  });
});

describe('a raw client that half-closes mid-body', () => {
  it.each([
    ['end', '/v2/models/identity_fp32/infer'],
    ['destroy', '/v2/models/identity_fp32/infer'],
    ...(fake
      ? [
          ['end', '/v1/completions'],
          ['destroy', '/v1/completions'],
        ]
      : []),
  ])('is audited once (socket.%s on %s)', async (how, path) => {
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

  it('refuses 200,000 request parameters over gRPC with INVALID_ARGUMENT naming the limit', async () => {
    const parameters = Object.fromEntries(
      Array.from({ length: 200_000 }, (_, i) => [`p${i}`, { int64_param: String(i) }]),
    );
    const err = await rpc(
      'ModelInfer',
      {
        model_name: 'identity_fp32',
        parameters,
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['1', '1'], contents: { fp32_contents: [1] } }],
      },
      auth,
    ).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.details).toBe('Expected at most 4096 request parameters but received 200000');
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
  it('answers INVALID_ARGUMENT naming the input and the model, as Triton does', async () => {
    const err = await rpc(
      'ModelInfer',
      {
        model_name: 'identity_fp32',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['1', '1'], contents: { fp32_contents: [7] } }],
        raw_input_contents: [Buffer.from(new Float32Array([1]).buffer)],
      },
      auth,
    ).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.details).toBe(
      "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'identity_fp32'",
    );
  });
});

/** identity_delay's config with `delayMs` per execution, one request per batch, and `dynamicBatching`. */
function delayConfig(delayMs: number, dynamicBatching: ModelConfig['dynamic_batching']): ModelConfig {
  return {
    name: 'identity_delay',
    backend: 'identity',
    max_batch_size: 1,
    input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
    instance_group: [{ count: 1, kind: 'KIND_CPU' }],
    dynamic_batching: dynamicBatching,
    parameters: { execute_delay_ms: { string_value: String(delayMs) } },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ECHO_INPUT = { name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] };

describe('what the codecs pass through', () => {
  it('passes custom string, int and bool request parameters over HTTP JSON, HTTP binary and gRPC (echo model)', async (ctx) => {
    skipIf(
      ctx,
      fakeOnly("identity_echo echoes only on the fake: no backend of Triton's test set reads them"),
    );
    const expected = { 'request.text': 'string:abc', 'request.n': 'int:3', 'request.flag': 'bool:true' };
    const json = await post(
      '/v2/models/identity_echo/infer',
      'params-json',
      JSON.stringify({ parameters: { text: 'abc', n: 3, flag: true }, inputs: [ECHO_INPUT] }),
    );
    expect(json.status).toBe(200);
    expect(JSON.parse(json.text).parameters).toMatchObject(expected);
    const header = Buffer.from(
      JSON.stringify({
        parameters: { text: 'abc', n: 3, flag: true },
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], parameters: { binary_data_size: 4 } }],
      }),
    );
    const binary = await request(`${gw().url}/v2/models/identity_echo/infer`, {
      method: 'POST',
      headers: { ...auth, 'inference-header-content-length': String(header.length) },
      body: Buffer.concat([header, Buffer.from(new Float32Array([1]).buffer)]),
    });
    expect(binary.statusCode).toBe(200);
    expect(((await binary.body.json()) as { parameters: object }).parameters).toMatchObject(expected);
    const g = await rpc(
      'ModelInfer',
      {
        model_name: 'identity_echo',
        parameters: { text: { string_param: 'abc' }, n: { int64_param: '3' }, flag: { bool_param: true } },
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['1'], contents: { fp32_contents: [1] } }],
      },
      auth,
    );
    const params = g.parameters as Record<string, { string_param: string }>;
    expect(Object.fromEntries(Object.keys(expected).map((k) => [k, params[k]?.string_param]))).toEqual(
      expected,
    );
  });

  it('passes the timeout: a request whose timeout ends while it waits in the queue fails (HTTP and gRPC)', async () => {
    await served().loadModel('identity_delay', {
      config: delayConfig(400, {
        default_queue_policy: { allow_timeout_override: true, default_timeout_microseconds: 10_000_000 },
      }),
    });
    const infer = (id: string, parameters: object) =>
      post(
        '/v2/models/identity_delay/infer',
        id,
        JSON.stringify({ parameters, inputs: [{ ...FP32_INPUT, shape: [1, 2] }] }),
      );
    // Each request reaches Triton before the next is sent: the later one
    // waits behind the earlier one's 400 ms (max_batch_size 1, one instance).
    const submitted = () =>
      until(
        'the request to reach Triton',
        () => addonStats().pendingRequests > 0,
        () => addonStats(),
      );
    expect(await requestsSettled()).toBe(true);
    const first = infer('timeout-first', {});
    await submitted();
    const late = await infer('timeout-late', { timeout: 10_000 });
    expect(late.status).not.toBe(200);
    expect(JSON.parse(late.text).error).toMatch(/timeout/i);
    expect((await first).status).toBe(200);
    expect(await requestsSettled()).toBe(true);
    const busy = infer('timeout-busy', {});
    await submitted();
    const err = await rpc(
      'ModelInfer',
      {
        model_name: 'identity_delay',
        parameters: { timeout: { int64_param: '10000' } },
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['1', '1'], contents: { fp32_contents: [1] } }],
      },
      auth,
    ).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.details).toMatch(/timeout/i);
    expect((await busy).status).toBe(200);
    // Without a timeout the same wait is fine.
    expect(await requestsSettled()).toBe(true);
    const again = infer('timeout-none-1', {});
    await submitted();
    expect((await infer('timeout-none-2', {})).status).toBe(200);
    expect((await again).status).toBe(200);
  });

  it.each([
    ['HTTP JSON', 'json'],
    ['HTTP binary', 'binary'],
    ['gRPC typed contents', 'typed'],
    ['gRPC raw contents', 'raw'],
  ])('round-trips BYTES elements of 256 bytes and more over %s', async (_what, how) => {
    const elements = ['a'.repeat(300), 'é'.repeat(200), '', 'x', 'b'.repeat(70_000)];
    const bytes = elements.map((e) => Buffer.from(e));
    const shape = [elements.length];
    let got: Buffer[];
    if (how === 'json') {
      const r = await post(
        '/v2/models/identity_bytes/infer',
        `bytes-${how}`,
        JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape, data: elements }] }),
      );
      expect(r.status).toBe(200);
      got = (JSON.parse(r.text).outputs[0].data as string[]).map((t) => Buffer.from(t));
    } else if (how === 'binary') {
      const data = encodeBytes(bytes);
      const header = Buffer.from(
        JSON.stringify({
          inputs: [
            { name: 'INPUT0', datatype: 'BYTES', shape, parameters: { binary_data_size: data.length } },
          ],
          parameters: { binary_data_output: true },
        }),
      );
      const r = await request(`${gw().url}/v2/models/identity_bytes/infer`, {
        method: 'POST',
        headers: { ...auth, 'inference-header-content-length': String(header.length) },
        body: Buffer.concat([header, data]),
      });
      expect(r.statusCode).toBe(200);
      const body = Buffer.from(await r.body.arrayBuffer());
      const { outputs } = parseBinaryResponse(body, Number(r.headers['inference-header-content-length']));
      got = decodeBytes(outputs[0]!.bytes!);
    } else {
      const input = { name: 'INPUT0', datatype: 'BYTES', shape: shape.map(String) };
      const g = await rpc(
        'ModelInfer',
        how === 'typed'
          ? { model_name: 'identity_bytes', inputs: [{ ...input, contents: { bytes_contents: bytes } }] }
          : { model_name: 'identity_bytes', inputs: [input], raw_input_contents: [encodeBytes(bytes)] },
        auth,
      );
      got = decodeBytes((g.raw_output_contents as Buffer[])[0]!);
    }
    expect(got.map((b) => b.toString())).toEqual(elements);
  });

  it('writes the length prefixes of BYTES elements that are not back to back (the codec’s copy path)', () => {
    const a = Buffer.from('c'.repeat(300));
    const b = Buffer.from('d'.repeat(65_537));
    // Tensor's constructor is the library's own (hidden from the package's types).
    const MakeTensor = Tensor as unknown as new (...args: unknown[]) => Tensor;
    const t = new MakeTensor('OUTPUT0', 'BYTES', [2], [a, b], 'cpu', 0);
    expect(Buffer.from(tensorBytes(t))).toEqual(encodeBytes([a, b]));
  });
});

describe('a stream whose client leaves', () => {
  it('is cancelled when the client disconnects, not at its next response (2 s apart)', async () => {
    await served().loadModel('square_int32', {
      config: {
        name: 'square_int32',
        backend: 'square',
        max_batch_size: 0,
        model_transaction_policy: { decoupled: true },
        input: [{ name: 'IN', data_type: 'TYPE_INT32', dims: [1] }],
        output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [1] }],
        parameters: { CUSTOM_INFER_DELAY_NS: { string_value: '2000000000' } },
      },
    });
    const responses = async () => {
      const [stats] = await served().model('square_int32').statistics();
      return Object.values(stats!.responseStats).reduce((n, r) => n + r.success.count, 0);
    };
    const before = await responses();
    const client = new Client(gw().url);
    const res = await client.request({
      path: '/v2/models/square_int32/generate_stream',
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ IN: 1000 }),
    });
    expect(res.statusCode).toBe(200);
    for await (const chunk of res.body) if (String(chunk).includes('data: ')) break;
    await client.destroy();
    // square looks for a cancel before each 2 s sleep, then sends. Cancelled
    // at once, it sends the response it was sleeping on (the second) and
    // stops; cancelled only when the gateway next writes (the second
    // response), it sends a third. Counted, not timed.
    expect(await requestsSettled()).toBe(true);
    const sent = await readUntil(responses, (n) => n - before >= 2);
    expect(sent - before).toBe(2);
  });
});

describe('the queue of a dynamic batcher (the library on the engine)', () => {
  it('refuses the request past max_queue_size with UNAVAILABLE "Exceeds maximum queue size", as Triton does', async () => {
    await served().loadModel('identity_delay', {
      config: delayConfig(400, { default_queue_policy: { max_queue_size: 2 } }),
    });
    const model = served().model('identity_delay');
    const one = () =>
      model.infer({ inputs: { INPUT0: new Float32Array([1]) } }).then(
        () => 'ok',
        (e: unknown) => e,
      );
    // One executing (400 ms), two queued, the fourth refused. Whether the
    // batcher had taken the first off the queue when the others came shows
    // in which one was refused: were it still queued, the third would be;
    // then the round is run again, a little later.
    for (let round = 1; ; round++) {
      const executing = one();
      await sleep(100 * round);
      const queued = [one(), one()];
      const over = await one();
      const rest = await Promise.all([executing, ...queued]);
      if (round < 5 && rest.some((r) => r !== 'ok')) continue;
      expect(rest).toEqual(['ok', 'ok', 'ok']);
      expect(over).toBeInstanceOf(TritonError);
      expect(over).toMatchObject({ code: 'UNAVAILABLE' });
      expect((over as Error).message).toMatch(/Exceeds maximum queue size/);
      break;
    }
  });
});

describe('a client that leaves while its OpenAI request is being admitted', () => {
  skipAllIf(fakeOnly('the OpenAI routes are served by the fake_text_stream model'));
  const slow = useGateway(served, { openai: { words: { model: 'text_words' } } });

  it('ends the request with its one done(), the slot given back, instead of waiting for a body forever', async () => {
    const outcomes: Array<{ status: number }> = [];
    // The admission waits until the client is gone and the server saw it go.
    let admitting = false;
    let admit!: () => void;
    const gate = new Promise<void>((r) => {
      admit = r;
    });
    const guard: Guard = {
      async admit() {
        admitting = true;
        await gate;
        return {
          tenant: 't',
          done: (o) => outcomes.push(o),
          canSee: () => true,
          spendTokens: () => true,
          tokensRetryAfterSeconds: () => 1,
        };
      },
    };
    (slow().gateway._context as { guard?: Guard }).guard = guard;
    const { port } = new URL(slow().url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    const body = '{"model":"words","prompt":"x"}';
    socket.write(
      `POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await until('the admission to start', () => admitting);
    socket.destroy();
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        slow().http.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
    await until('the server to see the client go', async () => (await connections()) === 0);
    admit();
    await until(
      'the request to end',
      () => outcomes.length > 0,
      () => outcomes,
    );
    expect(outcomes).toEqual([expect.objectContaining({ status: 499 })]);
  });
});
