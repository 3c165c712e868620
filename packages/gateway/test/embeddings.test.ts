/**
 * `POST /v1/embeddings`, called with the official `openai` client against a
 * real HTTP server of the gateway: one text and a list, float and base64
 * (the client's default), `dimensions`, one Triton request per HTTP request
 * and concurrent HTTP requests batched by Triton's dynamic batcher, each
 * answer its own text's vector; errors in OpenAI's shape; the guard's
 * admission, token limit and audit line; the metrics. On the test
 * embedders of test/backends/embedder.ts (the fake engine's
 * fake_text_embedding, or a Python model computing the same vectors on real
 * Triton), whose vectors `embedText()` computes bit for bit.
 */
import { Writable } from 'node:stream';
import { EMBEDDING_SIZE, embedText, embedderUnderTest } from '@triton-node/test-support/backends/embedder.js';
import { llmUnderTest } from '@triton-node/test-support/backends/llm-helpers.js';
import {
  readUntil,
  rejection,
  requestsSettled,
  settledStatistics,
  skipAllIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { sampleValue } from '@triton-node/test-support/metrics/prometheus.js';
import OpenAI from 'openai';
import { statisticsDelta } from 'triton-node';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { type OpenAIModelOptions, createGateway, hashApiKey } from '../lib/index.js';
import { type Listening, useGateway } from './helpers.js';

const embedder = embedderUnderTest();
const llm = llmUnderTest();
const skip = embedder.skip || llm.skip;
skipAllIf(skip);
const server = useServer(
  [embedder.model, embedder.gathered, llm.model],
  { modelRepository: [...new Set([...embedder.repositories, ...llm.repositories])] },
  skip,
);
const MAX_BODY = 64 * 1024;
const skipped = () => {
  throw new Error('skipped');
};
const gw: () => Listening =
  skip === false
    ? useGateway(server, {
        maxBodyBytes: MAX_BODY,
        openai: {
          embed: { model: embedder.model, kind: 'embeddings' },
          'embed-gathered': {
            model: embedder.gathered,
            kind: 'embeddings',
            input: 'TEXT',
            output: 'EMBEDDING',
          },
          'embed-short': { model: embedder.model, kind: 'embeddings', truncateDimensions: true },
          'embed-misnamed': { model: embedder.model, kind: 'embeddings', input: 'TEXTS' },
          'embed-not-loaded': { model: 'identity_fp32', kind: 'embeddings' },
          words: { model: llm.model },
        },
      })
    : skipped;

function client(url = gw().url, apiKey = 'unused'): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
}

/** A vector as the float32 values it was sent as. */
function f32(v: number[]): Float32Array {
  return Float32Array.from(v);
}

/** A raw answer: an error, or the embeddings document. */
interface Answer {
  error: { message: string; type: string; param: string | null; code: string | null };
  data: Array<{ embedding: number[] | string }>;
}

async function post(body: unknown, path = '/v1/embeddings') {
  const res = await request(`${gw().url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Answer };
}

async function stats(model: string) {
  return server().model(model).statistics();
}

describe('embeddings', () => {
  it('answers one text: its vector, OpenAI’s document shape and usage in words', async () => {
    const r = await client().embeddings.create({
      model: 'embed',
      input: 'the quick brown fox',
      encoding_format: 'float',
    });
    expect(r.object).toBe('list');
    expect(r.model).toBe('embed');
    expect(r.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(r.data).toHaveLength(1);
    expect(r.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    expect(r.data[0]!.embedding).toHaveLength(EMBEDDING_SIZE);
    expect(f32(r.data[0]!.embedding)).toEqual(embedText('the quick brown fox'));
  });

  it('answers a list in one Triton request of n texts, each vector its own text’s, in order', async () => {
    const texts = ['alpha beta', 'gamma', 'delta epsilon zeta', 'alpha beta'];
    const before = [await settledStatistics(server().model(embedder.model))];
    const r = await client().embeddings.create({ model: 'embed', input: texts, encoding_format: 'float' });
    expect(r.data.map((d) => d.index)).toEqual([0, 1, 2, 3]);
    r.data.forEach((d, i) => expect(f32(d.embedding), texts[i]).toEqual(embedText(texts[i]!)));
    expect(r.data[0]!.embedding).toEqual(r.data[3]!.embedding);
    expect(r.data[0]!.embedding).not.toEqual(r.data[1]!.embedding);
    expect(r.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    // Counted after the response, the execution maybe after the release.
    expect(await requestsSettled()).toBe(true);
    const delta = await readUntil(
      async () => statisticsDelta(before, await stats(embedder.model)),
      (d) => d.inferences >= 4 && d.executions >= 1,
    );
    // One request of 4 batch elements, one execution.
    expect(delta).toMatchObject({ requests: 1, successes: 1, inferences: 4, executions: 1 });
  });

  it('answers base64 (the client’s default) that decodes to the same float32 values', async () => {
    const text = 'base sixty four';
    // The client asks for base64 when no encoding_format is given, and decodes it.
    const decoded = await client().embeddings.create({ model: 'embed', input: [text, 'other words'] });
    expect(f32(decoded.data[0]!.embedding)).toEqual(embedText(text));
    expect(f32(decoded.data[1]!.embedding)).toEqual(embedText('other words'));
    const raw = await post({ model: 'embed', input: text, encoding_format: 'base64' });
    expect(raw.status).toBe(200);
    const b64 = raw.body.data[0]!.embedding as string;
    expect(typeof b64).toBe('string');
    const bytes = Buffer.from(b64, 'base64');
    expect(bytes.length).toBe(EMBEDDING_SIZE * 4);
    const values = new Float32Array(EMBEDDING_SIZE);
    for (let i = 0; i < EMBEDDING_SIZE; i++) values[i] = bytes.readFloatLE(i * 4);
    expect(values).toEqual(embedText(text));
  });

  it('honours dimensions: the model’s own size always; shorter only where truncateDimensions is set', async () => {
    const text = 'one two three four five six';
    const same = await client().embeddings.create({
      model: 'embed',
      input: text,
      dimensions: EMBEDDING_SIZE,
      encoding_format: 'float',
    });
    expect(f32(same.data[0]!.embedding)).toEqual(embedText(text));
    const short = await client().embeddings.create({
      model: 'embed-short',
      input: text,
      dimensions: 16,
      encoding_format: 'float',
    });
    const v = short.data[0]!.embedding;
    expect(v).toHaveLength(16);
    // The first 16 values of the full vector, normalized again.
    const head = Array.from(embedText(text).subarray(0, 16));
    const norm = Math.hypot(...head);
    expect(v.map((x, i) => Math.abs(x - head[i]! / norm)).every((d) => d < 1e-6)).toBe(true);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    for (const [model, dimensions] of [
      ['embed', 16],
      ['embed', EMBEDDING_SIZE + 1],
      ['embed-short', EMBEDDING_SIZE + 1],
    ] as const) {
      const err = await rejection(client().embeddings.create({ model, input: text, dimensions }), Error);
      expect(err, `${model} ${dimensions}`).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('dimensions');
    }
  });

  it('ignores unknown keys and reads only the body’s own keys', async () => {
    const ok = await post({ model: 'embed', input: 'x y', user: 'u-1', frobnicate: [1, 2] });
    expect(ok.status).toBe(200);
    // JSON.parse makes "__proto__" an own key: an input under it is no input.
    const proto = await post('{"model":"embed","__proto__":{"input":"x y"}}');
    expect(proto.status).toBe(400);
    expect(proto.body.error).toMatchObject({ param: 'input', type: 'invalid_request_error' });
    // A polluted Object.prototype (by any code of the process) adds no key to a request.
    const polluted = ['dimensions', 'encoding_format', 'input'] as const;
    const values = { dimensions: 8, encoding_format: 'int8', input: 'from the prototype' };
    for (const key of polluted)
      Object.defineProperty(Object.prototype, key, {
        value: values[key],
        configurable: true,
        writable: true,
      });
    let clean: Awaited<ReturnType<typeof post>>;
    let missing: Awaited<ReturnType<typeof post>>;
    try {
      clean = await post({ model: 'embed', input: 'own input' });
      missing = await post({ model: 'embed' });
    } finally {
      for (const key of polluted) delete (Object.prototype as Record<string, unknown>)[key];
    }
    expect(clean.status).toBe(200);
    expect(f32(clean.body.data[0]!.embedding as number[])).toEqual(embedText('own input'));
    expect(missing.status).toBe(400);
  });
});

describe('batching', () => {
  it('batches concurrent HTTP requests in Triton’s dynamic batcher, each answer its own text', async () => {
    const texts = Array.from({ length: 16 }, (_, i) => `request ${i} says ${'word '.repeat(i)}end`);
    const before = [await settledStatistics(server().model(embedder.gathered))];
    const answers = await Promise.all(
      texts.map((input) =>
        client().embeddings.create({ model: 'embed-gathered', input, encoding_format: 'float' }),
      ),
    );
    answers.forEach((a, i) => expect(f32(a.data[0]!.embedding), texts[i]).toEqual(embedText(texts[i]!)));
    expect(await requestsSettled()).toBe(true);
    const delta = await readUntil(
      async () => statisticsDelta(before, await stats(embedder.gathered)),
      (d) => d.inferences >= 16 && d.executions >= 1,
    );
    expect(delta.inferences, `statistics after 16 requests: ${JSON.stringify(delta)}`).toBe(16);
    expect(delta.requests).toBe(16);
    // The batcher waits for 4 requests (up to 5 s): 16 requests, fewer executions.
    expect(delta.executions).toBeLessThan(16);
    expect(delta.meanBatchSize).toBeGreaterThan(1);
  }, 30_000);
});

describe('errors', () => {
  it('answers bad input with 400 naming the param', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      ['', 'input', /must not be empty/],
      [[], 'input', /empty array/],
      [['a', ''], 'input', /input\[1\]/],
      [['a', 3, 'b'], 'input', /input\[1\]' must be a string/],
      [null, 'input', /string or an array/],
      [{ text: 'a' }, 'input', /string or an array/],
      [[1, 2, 3], 'input', /token arrays/],
      [[[1, 2], [3]], 'input', /token arrays/],
      [Array.from({ length: 9 }, (_, i) => `t${i}`), 'input', /9 texts.*at most 8.*max_batch_size/],
    ];
    for (const [input, param, message] of cases) {
      const r = await post({ model: 'embed', input });
      expect(r.status, JSON.stringify(input)).toBe(400);
      expect(r.body.error, JSON.stringify(input)).toMatchObject({ param, type: 'invalid_request_error' });
      expect(r.body.error.message).toMatch(message);
    }
    const others: Array<[Record<string, unknown>, string]> = [
      [{ encoding_format: 'int8' }, 'encoding_format'],
      [{ dimensions: 0 }, 'dimensions'],
      [{ dimensions: 1.5 }, 'dimensions'],
      [{ user: 7 }, 'user'],
      [{ model: 3 }, 'model'],
    ];
    for (const [extra, param] of others) {
      const r = await post({ model: 'embed', input: 'x', ...extra });
      expect(r.status, param).toBe(400);
      expect(r.body.error.param, param).toBe(param);
    }
    const json = await post('{nope');
    expect(json.status).toBe(400);
    expect(json.body.error.message).toMatch(/not valid JSON/);
  });

  it('answers an unknown model 404, a model of the other kind 400 naming what it serves', async () => {
    const unknown = await rejection(client().embeddings.create({ model: 'nope', input: 'x' }), Error);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
    const generation = await rejection(client().embeddings.create({ model: 'words', input: 'x' }), Error);
    expect(generation).toBeInstanceOf(OpenAI.BadRequestError);
    expect((generation as Error).message).toMatch(/'words' serves text generation .*not embeddings/);
    const completion = await rejection(client().completions.create({ model: 'embed', prompt: 'x' }), Error);
    expect(completion).toBeInstanceOf(OpenAI.BadRequestError);
    expect((completion as Error).message).toMatch(
      /'embed' serves embeddings \(POST \/v1\/embeddings\), not completions/,
    );
    const chat = await rejection(
      client().chat.completions.create({ model: 'embed', messages: [{ role: 'user', content: 'x' }] }),
      Error,
    );
    expect((chat as Error).message).toMatch(/serves embeddings .*not chat completions/);
    expect((chat as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
  });

  it('answers a model Triton does not serve with its status, a model of the wrong shape 500 saying why', async () => {
    const missing = await rejection(
      client().embeddings.create({ model: 'embed-not-loaded', input: 'x' }),
      Error,
    );
    expect([400, 404]).toContain((missing as InstanceType<typeof OpenAI.APIError>).status);
    const misnamed = await rejection(
      client().embeddings.create({ model: 'embed-misnamed', input: 'x' }),
      Error,
    );
    expect(misnamed).toBeInstanceOf(OpenAI.InternalServerError);
    expect((misnamed as Error).message).toMatch(/has no input 'TEXTS'/);
  });

  it('answers 413 past maxBodyBytes, 405 for GET, 503 while draining', async () => {
    const big = await post({ model: 'embed', input: 'x'.repeat(MAX_BODY) });
    expect(big.status).toBe(413);
    expect(big.body).toHaveProperty('error.message');
    const get = await request(`${gw().url}/v1/embeddings`);
    expect(get.statusCode).toBe(405);
    expect(await get.body.json()).toHaveProperty('error.message');
    const ctx = gw().gateway._context;
    ctx.draining = true;
    try {
      const err = await rejection(client().embeddings.create({ model: 'embed', input: 'x' }), Error);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    } finally {
      ctx.draining = false;
    }
  });
});

describe('configuration', () => {
  it('checks the kind and the embeddings options with TypeErrors naming the option', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { kind: 'embedding' },
        "Expected 'generation' or 'embeddings' for openai['m'].kind but received string \"embedding\"",
      ],
      [
        { kind: 'embeddings', input: '' },
        'Expected a Triton tensor name for openai[\'m\'].input but received string ""',
      ],
      [
        { kind: 'embeddings', output: 3 },
        "Expected a Triton tensor name for openai['m'].output but received number 3",
      ],
      [
        { kind: 'embeddings', truncateDimensions: 'yes' },
        "for openai['m'].truncateDimensions but received string",
      ],
      [
        { kind: 'embeddings', chatTemplate: {} },
        "openai['m'].chatTemplate is an option of kind 'generation', but this model is of kind 'embeddings': leave it out (received an object)",
      ],
      [
        { kind: 'embeddings', tokenCount: 'responses' },
        "openai['m'].tokenCount is an option of kind 'generation'",
      ],
      [
        { input: 'TEXT' },
        "openai['m'].input is an option of kind 'embeddings', but this model is of kind 'generation'",
      ],
      [
        { kind: 'generation', truncateDimensions: true },
        "openai['m'].truncateDimensions is an option of kind 'embeddings'",
      ],
    ];
    for (const [extra, message] of cases) {
      const m = { model: 'x', ...extra } as unknown as OpenAIModelOptions;
      expect(() => createGateway(server(), { openai: { m } }), message).toThrow(TypeError);
      expect(() => createGateway(server(), { openai: { m } })).toThrow(message);
    }
  });
});

describe('models and metrics', () => {
  it('lists the embeddings ids among the models', async () => {
    const ids = (await client().models.list()).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['embed', 'embed-gathered', 'words']));
  });

  it('counts vectors and prompt tokens per model id', async () => {
    const metrics = async () => (await request(`${gw().url}/metrics`)).body.text();
    const labels = { model: 'embed' };
    await client().embeddings.create({ model: 'embed', input: 'warm' });
    const before = await metrics();
    await client().embeddings.create({ model: 'embed', input: ['a b c', 'd e'] });
    const after = await metrics();
    const vectors = 'triton_node_openai_embeddings_total';
    const prompt = 'triton_node_openai_prompt_tokens_total';
    expect(sampleValue(after, vectors, labels)).toBe(sampleValue(before, vectors, labels)! + 2);
    expect(sampleValue(after, prompt, labels)).toBe(sampleValue(before, prompt, labels)! + 5);
  });
});

describe('behind a GatewayGuard', () => {
  const lines: string[] = [];
  const audit = new Writable({
    write(chunk, _enc, cb) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l !== ''),
      );
      cb();
    },
  });
  const guarded: () => Listening =
    skip === false
      ? useGateway(server, {
          openai: { embed: { model: embedder.model, kind: 'embeddings' } },
          guard: {
            apiKeys: [
              { sha256: hashApiKey('alice-key'), tenant: 'alice' },
              { sha256: hashApiKey('bob-key'), tenant: 'bob' },
            ],
            tenants: {
              alice: { models: ['text_embed*'], limits: { tokensPerSecond: 1, tokensBurst: 4 } },
              bob: { models: ['identity_*'] },
            },
            audit: { stream: audit, flushIntervalMs: 0 },
          },
        })
      : skipped;

  it('authenticates, hides the model from other tenants, spends input tokens and audits each request', async () => {
    const as = (key: string) => client(guarded().url, key);
    expect(
      await rejection(as('wrong').embeddings.create({ model: 'embed', input: 'x' }), Error),
    ).toBeInstanceOf(OpenAI.AuthenticationError);
    const first = await as('alice-key').embeddings.create({ model: 'embed', input: ['one two', 'three'] });
    expect(first.data).toHaveLength(2);
    // 3 of alice's 4 tokens spent: 3 more are over her limit.
    const over = await rejection(
      as('alice-key').embeddings.create({ model: 'embed', input: 'a b c' }),
      Error,
    );
    expect(over).toBeInstanceOf(OpenAI.RateLimitError);
    expect(
      Number((over as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')),
    ).toBeGreaterThan(0);
    const hidden = await rejection(as('bob-key').embeddings.create({ model: 'embed', input: 'x' }), Error);
    expect(hidden).toBeInstanceOf(OpenAI.NotFoundError);
    expect((hidden as Error).message).not.toContain(embedder.model);
    guarded().gateway.guard!.flush();
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => [r.tenant, r.route, r.status])).toEqual([
      [null, 'openai_embeddings', 401],
      ['alice', 'openai_embeddings', 200],
      ['alice', 'openai_embeddings', 429],
      ['bob', 'openai_embeddings', 404],
    ]);
    expect(records[1]).toMatchObject({ model: embedder.model, tokens: 3, version: '1' });
    expect(lines.join('\n')).not.toContain('one two');
  });
});
