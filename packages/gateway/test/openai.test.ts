/**
 * The OpenAI-compatible routes, called with the official `openai` client:
 * completions and chat (streaming and not), the model list, errors as the
 * client's typed errors, a client abort cancelling the Triton request, the
 * TTFT/TPOT metrics, and the guard's hooks. On the library's LLM
 * (test/backends/llm-helpers.ts): the fake engine's fake_text_stream backend
 * (test/models/text_words), or on real Triton our Python LLM model
 * (test/backends/python-llm.ts). Texts are compared with each other (streamed and
 * not, with and without a stop), not written out, so one test serves both.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { llmUnderTest } from '@triton-node/test-support/backends/llm-helpers.js';
import {
  BACKEND_DIR,
  LIBRARY_PATH,
  eventually,
  library,
  rejection,
  requestsSettled,
  skipAllIf,
  until,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { histogramSeries, sampleValue } from '@triton-node/test-support/metrics/prometheus.js';
import Fastify from 'fastify';
import OpenAI from 'openai';
import { addonStats } from 'triton-node/testing';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../lib/errors.js';
import type { Admission, Guard, GuardRequest } from '../lib/guard/types.js';
import { hashApiKey } from '../lib/index.js';
import { createGateway } from '../lib/index.js';
import { type Listening, useGateway } from './helpers.js';

const llm = llmUnderTest();
const skip = llm.skip;
skipAllIf(skip);
const server = useServer([llm.model], { modelRepository: llm.repositories }, skip);
const plain = { message: '{content}\n', suffix: '' };
const gw: () => Listening =
  skip === false
    ? useGateway(server, {
        openai: {
          words: { model: llm.model, chatTemplate: plain },
          'words-responses': { model: llm.model, tokenCount: 'responses', ownedBy: 'tests' },
          'words-capped': { model: llm.model, maxTokensDefault: 2 },
          'not-loaded': { model: 'identity_fp32' },
        },
      })
    : () => {
        throw new Error('skipped');
      };

function client(): OpenAI {
  return new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: 'unused', maxRetries: 0 });
}

/** The whitespace-separated words of a text. */
function words(text: string | null | undefined): string[] {
  return (text ?? '').split(/\s+/).filter((w) => w !== '');
}

describe('completions', () => {
  it('answers a completion as one JSON document, with usage and finish_reason', async () => {
    const c = await client().completions.create({
      model: 'words',
      prompt: 'alpha beta gamma',
      max_tokens: 5,
    });
    expect(c.object).toBe('text_completion');
    expect(c.model).toBe('words');
    expect(c.id).toMatch(/^cmpl-/);
    expect(c.choices).toEqual([
      { index: 0, text: expect.any(String), logprobs: null, finish_reason: 'length' },
    ]);
    expect(words(c.choices[0]!.text)).toHaveLength(5);
    // The fake repeats the prompt's words.
    if (library().isFake) expect(c.choices[0]!.text).toBe('alpha beta gamma alpha beta');
    expect(c.usage).toEqual({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
  });

  it('passes stop and the model default of max_tokens, and finishes with stop below the limit', async () => {
    const ask = { model: 'words', prompt: 'alpha beta gamma', max_tokens: 5 };
    const full = (await client().completions.create(ask)).choices[0]!.text;
    const stop = words(full)[2]!;
    const stopped = await client().completions.create({ ...ask, stop: [stop] });
    expect(stopped.choices[0]).toMatchObject({ text: llm.stopped(full, stop), finish_reason: 'stop' });
    expect(words(stopped.choices[0]!.text).length).toBeLessThan(3);
    const stream = await client().completions.create({ ...ask, stop: [stop], stream: true });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
    expect(streamed).toBe(stopped.choices[0]!.text);
    const unset = await client().completions.create({ model: 'words', prompt: 'one two three' });
    // The model's own finish reason: its default max_tokens reached, or its end.
    expect(unset.choices[0]!.finish_reason).toBe(llm.defaultFinish);
    expect(words(unset.choices[0]!.text)).toHaveLength(llm.defaultTokens(3));
    const capped = await client().completions.create({ model: 'words-capped', prompt: 'one two three' });
    expect(capped.choices[0]!.finish_reason).toBe('length');
    expect(words(capped.choices[0]!.text)).toHaveLength(2);
  });

  it('streams a completion chunk by chunk, equal to the text not streamed, with a usage chunk when asked', async () => {
    const ask = { model: 'words', prompt: 'red green blue', max_tokens: 4 };
    const whole = (await client().completions.create(ask)).choices[0]!.text;
    const stream = await client().completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === 'text_completion' && c.model === 'words')).toBe(true);
    const texts = chunks.flatMap((c) => c.choices.map((ch) => ch.text));
    expect(texts.join('')).toBe(whole);
    expect(words(whole)).toHaveLength(4);
    expect(chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0]!.finish_reason)).toEqual([
      null,
      null,
      null,
      null,
      'length',
    ]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 4, prompt_tokens: 3 } });
  });

  it('ends the event stream with data: [DONE]', async () => {
    const res = await request(`${gw().url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'words', prompt: 'a b', max_tokens: 2, stream: true }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    const text = await res.body.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text.split('\n\n').filter((e) => e.startsWith('data: ')).length).toBe(4);
  });
});

describe('chat completions', () => {
  const messages = [
    { role: 'system' as const, content: 'be brief' },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'hello there' }] },
  ];

  it('answers a chat completion through the chat template', async () => {
    const c = await client().chat.completions.create({ model: 'words', messages });
    expect(c.object).toBe('chat.completion');
    expect(c.id).toMatch(/^chatcmpl-/);
    expect(c.choices[0]).toMatchObject({
      index: 0,
      message: { role: 'assistant' },
      finish_reason: llm.defaultFinish,
    });
    // The fake repeats the prompt: the messages through the template.
    if (library().isFake) expect(c.choices[0]!.message.content).toBe('be brief hello there');
    const n = llm.defaultTokens(4);
    expect(words(c.choices[0]!.message.content)).toHaveLength(n);
    expect(c.usage).toEqual({ prompt_tokens: 4, completion_tokens: n, total_tokens: 4 + n });
  });

  it('uses the default template (role lines) when none is configured', async () => {
    const c = await client().chat.completions.create({
      model: 'words-responses',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 3,
    });
    if (library().isFake) expect(c.choices[0]!.message.content).toBe('<|user|> hi <|assistant|>');
    // '<|user|>', 'hi', '<|assistant|>'; one token per response.
    expect(c.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3 });
  });

  it('streams deltas: the role first, then the content, then the finish reason and usage', async () => {
    const whole = await client().chat.completions.create({ model: 'words', messages, max_tokens: 6 });
    const stream = await client().chat.completions.create({
      model: 'words',
      messages,
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const content = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('');
    expect(content).toBe(whole.choices[0]!.message.content);
    expect(words(content)).toHaveLength(6);
    const withChoice = chunks.filter((c) => c.choices.length > 0);
    expect(withChoice.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 });
  });
});

describe('models', () => {
  it('lists the configured model ids and retrieves one', async () => {
    const list = await client().models.list();
    expect(list.data.map((m) => m.id).sort()).toEqual([
      'not-loaded',
      'words',
      'words-capped',
      'words-responses',
    ]);
    expect(list.data[0]).toMatchObject({ object: 'model', owned_by: 'triton-node' });
    const one = await client().models.retrieve('words-responses');
    expect(one).toMatchObject({ id: 'words-responses', object: 'model', owned_by: 'tests' });
    expect(await rejection(client().models.retrieve('nope'), Error)).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('errors', () => {
  it('answers an unknown model with 404 model_not_found', async () => {
    const err = await rejection(client().completions.create({ model: 'gpt-nothing', prompt: 'x' }), Error);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('answers unsupported and malformed parameters with 400 naming the parameter', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ n: 17 }, 'n'],
      [{ n: 0 }, 'n'],
      [{ best_of: 2 }, 'best_of'],
      [{ temperature: 5 }, 'temperature'],
      [{ max_tokens: 0 }, 'max_tokens'],
      [{ stop: [1] }, 'stop'],
      [{ logprobs: 3 }, 'logprobs'],
      [{ frobnicate: true }, 'frobnicate'],
      [{ prompt: ['a', 'b'] }, 'prompt'],
    ];
    for (const [extra, param] of cases) {
      const err = await rejection(
        client().completions.create({ model: 'words', prompt: 'x', ...extra } as never),
        Error,
      );
      expect(err, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param, param).toBe(param);
    }
    const chat = await rejection(client().chat.completions.create({ model: 'words', messages: [] }), Error);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("answers in OpenAI's error shape for bad JSON, a wrong method, an unknown route", async () => {
    const bad = await request(`${gw().url}/v1/chat/completions`, { method: 'POST', body: '{nope' });
    expect(bad.statusCode).toBe(400);
    const body = (await bad.body.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: null, code: null });
    expect(body.error.message).toMatch(/not valid JSON/);
    const get = await request(`${gw().url}/v1/completions`);
    expect(get.statusCode).toBe(405);
    expect(await get.body.json()).toHaveProperty('error.message');
    const unknown = await request(`${gw().url}/v1/audio/speech`, { method: 'POST', body: '{}' });
    expect(unknown.statusCode).toBe(404);
    expect(await unknown.body.json()).toHaveProperty('error.code', 'unknown_url');
  });

  it("answers a model that Triton does not serve with Triton's error status", async () => {
    const err = await rejection(client().completions.create({ model: 'not-loaded', prompt: 'x' }), Error);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect([400, 404]).toContain((err as InstanceType<typeof OpenAI.APIError>).status);
  });
});

describe('serving', () => {
  it('refuses new generations with 503 while draining', async () => {
    const ctx = gw().gateway._context;
    ctx.draining = true;
    try {
      const err = await rejection(client().completions.create({ model: 'words', prompt: 'x' }), Error);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    } finally {
      ctx.draining = false;
    }
  });

  it('serves /v1/ from the Fastify plugin when configured, and leaves it to Fastify otherwise', async () => {
    const withOpenAI = Fastify();
    const without = Fastify();
    try {
      await withOpenAI.register(createGateway(server(), { openai: { w: { model: llm.model } } }).fastify);
      without.get('/v1/models', async () => ({ mine: true }));
      await without.register(createGateway(server()).fastify);
      const a = await withOpenAI.listen({ port: 0, host: '127.0.0.1' });
      const b = await without.listen({ port: 0, host: '127.0.0.1' });
      const c = new OpenAI({ baseURL: `${a}/v1`, apiKey: 'x', maxRetries: 0 });
      const done = await c.completions.create({ model: 'w', prompt: 'via fastify', max_tokens: 2 });
      expect(words(done.choices[0]!.text)).toHaveLength(2);
      expect(await (await request(`${b}/v1/models`)).body.json()).toEqual({ mine: true });
    } finally {
      await withOpenAI.close();
      await without.close();
    }
  });
});

describe('cancellation', () => {
  it('cancels the Triton request when the client aborts a stream: the model stops', async () => {
    const before = await llm.cancelled(server());
    const abort = new AbortController();
    const stream = await client().completions.create(
      { model: 'words', prompt: 'tick tock', max_tokens: 2000, stream: true },
      { signal: abort.signal },
    );
    let seen = 0;
    try {
      for await (const _chunk of stream) {
        if (++seen === 3) abort.abort();
      }
    } catch {
      // The client ends the iteration, or raises its abort: either way the connection is gone.
    }
    expect(seen).toBeGreaterThanOrEqual(3);
    expect(seen).toBeLessThan(2000);
    // The model saw the cancel (the fake's statistics, the Python model's report) long before its 2,000 tokens.
    expect(await eventually(async () => (await llm.cancelled(server())) > before)).toBe(true);
  });

  it('cancels a request that is not streamed when the client leaves', async () => {
    const before = await llm.cancelled(server());
    expect(await requestsSettled()).toBe(true);
    const abort = new AbortController();
    const done = client().completions.create(
      { model: 'words', prompt: 'tick tock', max_tokens: 2000 },
      { signal: abort.signal },
    );
    // The request reaches Triton first (a client gone before that leaves nothing to cancel).
    await until('the request to reach Triton', () => addonStats().inflightRequests > 0);
    abort.abort();
    expect(await rejection(done, Error)).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(await eventually(async () => (await llm.cancelled(server())) > before)).toBe(true);
  });
});

describe('metrics', () => {
  it('exposes time to first token, time per output token and token counters per model', async () => {
    const metrics = async () => (await request(`${gw().url}/metrics`)).body.text();
    const labels = { model: 'words' };
    const ttft = 'triton_node_openai_time_to_first_token_us';
    const tpot = 'triton_node_openai_time_per_output_token_us';
    const tokens = 'triton_node_openai_output_tokens_total';
    await client().completions.create({ model: 'words', prompt: 'warm up', max_tokens: 2 });
    const before = await metrics();
    const stream = await client().completions.create({
      model: 'words',
      prompt: 'a b c',
      max_tokens: 5,
      stream: true,
    });
    for await (const _chunk of stream) {
      // Read to the end: the request is recorded once it finished.
    }
    const after = await metrics();
    expect(histogramSeries(after, ttft, labels)!.count).toBe(
      histogramSeries(before, ttft, labels)!.count + 1,
    );
    expect(histogramSeries(after, tpot, labels)!.count).toBe(
      histogramSeries(before, tpot, labels)!.count + 1,
    );
    expect(sampleValue(after, tokens, labels)).toBe(sampleValue(before, tokens, labels)! + 5);
    const t = histogramSeries(after, ttft, labels)!;
    // Sane, not timed: positive, below a minute on average.
    expect(t.sum / t.count).toBeGreaterThan(0);
    expect(t.sum / t.count).toBeLessThan(60e6);
    expect(sampleValue(after, 'triton_node_openai_prompt_tokens_total', labels)).toBeGreaterThan(0);
  });
});

/** A guard that admits per `rule` (`hide`: what forModel throws), counting what it was asked and told. */
function testGuard(rule: {
  deny?: GatewayError;
  hide?: GatewayError;
  visible?: string[];
  tokenBudget?: number;
}) {
  const seen: GuardRequest[] = [];
  const named: string[] = [];
  const outcomes: Array<Parameters<Admission['done']>[0]> = [];
  let budget = rule.tokenBudget ?? Number.POSITIVE_INFINITY;
  const guard: Guard = {
    async admit(req) {
      seen.push(req);
      if (rule.deny) throw rule.deny;
      return {
        tenant: 't',
        done: (o) => outcomes.push(o),
        forModel: (model) => {
          named.push(model);
          if (rule.hide) throw rule.hide;
        },
        canSee: (m) => rule.visible === undefined || rule.visible.includes(m),
        spendTokens: (n) => {
          budget -= n;
          return budget >= 0;
        },
        tokensRetryAfterSeconds: () => 2,
      };
    },
  };
  return { guard, seen, named, outcomes };
}

async function withGuard<T>(guard: Guard, body: () => Promise<T>): Promise<T> {
  const ctx = gw().gateway._context as { guard?: Guard };
  ctx.guard = guard;
  try {
    return await body();
  } finally {
    ctx.guard = undefined;
  }
}

describe('guard', () => {
  it('admits each request with its route before its body, names its Triton model, and audits its end once', async () => {
    const g = testGuard({});
    await withGuard(g.guard, () =>
      client().completions.create({ model: 'words', prompt: 'p q', max_tokens: 3 }),
    );
    expect(g.seen).toEqual([expect.objectContaining({ protocol: 'http', route: 'openai_completions' })]);
    expect(g.seen[0]!.model).toBeUndefined();
    expect(g.named).toEqual([llm.model]);
    expect(g.seen[0]!.headers.authorization).toBe('Bearer unused');
    expect(g.outcomes).toEqual([expect.objectContaining({ status: 200, tokens: 3, version: '1' })]);
  });

  it("answers a denial in OpenAI's shape with its status and Retry-After", async () => {
    const deny = Object.assign(new GatewayError(429, 'too many requests for tenant t'), {
      retryAfterSeconds: 7,
    });
    const g = testGuard({ deny });
    const err = await withGuard(g.guard, () =>
      rejection(
        client().chat.completions.create({ model: 'words', messages: [{ role: 'user', content: 'x' }] }),
        Error,
      ),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('7');
    const hidden = testGuard({ hide: new GatewayError(404, `Request for unknown model: '${llm.model}'`) });
    const notFound = await withGuard(hidden.guard, () =>
      rejection(client().completions.create({ model: 'words', prompt: 'x' }), Error),
    );
    expect(notFound).toBeInstanceOf(OpenAI.NotFoundError);
    expect((notFound as Error).message).not.toContain(llm.model);
    const auth = testGuard({ deny: new GatewayError(401, 'missing credentials') });
    expect(await withGuard(auth.guard, () => rejection(client().models.list(), Error))).toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
  });

  it('lists only the models the tenant may see', async () => {
    const g = testGuard({ visible: ['identity_fp32'] });
    const list = await withGuard(g.guard, () => client().models.list());
    expect(list.data.map((m) => m.id)).toEqual(['not-loaded']);
    expect(
      await withGuard(g.guard, () => rejection(client().models.retrieve('words'), Error)),
    ).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('ends a stream with an error once the tenant runs out of tokens, and refuses with 429 before the first', async () => {
    const g = testGuard({ tokenBudget: 3 });
    const stream = await withGuard(g.guard, () =>
      client().completions.create({ model: 'words', prompt: 'x y', max_tokens: 10, stream: true }),
    );
    const texts: string[] = [];
    const err = await rejection(
      (async () => {
        for await (const chunk of stream) texts.push(chunk.choices[0]?.text ?? '');
      })(),
      Error,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(words(texts.join(''))).toHaveLength(3);
    const none = testGuard({ tokenBudget: 0 });
    const refused = await withGuard(none.guard, () =>
      rejection(client().completions.create({ model: 'words', prompt: 'x', stream: true }), Error),
    );
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('2');
  });
});

describe('the OpenAI routes behind a GatewayGuard', () => {
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
          openai: { words: { model: llm.model }, other: { model: 'identity_fp32' } },
          guard: {
            apiKeys: [
              { sha256: hashApiKey('alice-key'), tenant: 'alice' },
              { sha256: hashApiKey('bob-key'), tenant: 'bob' },
            ],
            tenants: {
              alice: { models: ['text_*'], limits: { tokensPerSecond: 1, tokensBurst: 4 } },
              bob: { models: ['identity_*'] },
            },
            audit: { stream: audit, flushIntervalMs: 0 },
          },
        })
      : () => {
          throw new Error('skipped');
        };
  const as = (apiKey: string) => new OpenAI({ baseURL: `${guarded().url}/v1`, apiKey, maxRetries: 0 });

  it('authenticates, hides other tenants’ models, spends tokens and audits each request', async () => {
    expect(await rejection(as('wrong-key').models.list(), Error)).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((await as('alice-key').models.list()).data.map((m) => m.id)).toEqual(['words']);
    expect((await as('bob-key').models.list()).data.map((m) => m.id)).toEqual(['other']);
    const hidden = await rejection(as('bob-key').completions.create({ model: 'words', prompt: 'x' }), Error);
    expect(hidden).toBeInstanceOf(OpenAI.NotFoundError);
    // Alice's 4 tokens go on the first completion; the next is refused before its first token.
    const first = await as('alice-key').completions.create({ model: 'words', prompt: 'a b', max_tokens: 4 });
    expect(words(first.choices[0]!.text)).toHaveLength(4);
    const second = await rejection(
      as('alice-key').completions.create({ model: 'words', prompt: 'a b', max_tokens: 4 }),
      Error,
    );
    expect(second).toBeInstanceOf(OpenAI.RateLimitError);
    expect(
      Number((second as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')),
    ).toBeGreaterThan(0);
    guarded().gateway.guard!.flush();
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => [r.tenant, r.route, r.status])).toEqual([
      [null, 'openai_models', 401],
      ['alice', 'openai_models', 200],
      ['bob', 'openai_models', 200],
      ['bob', 'openai_completions', 404],
      ['alice', 'openai_completions', 200],
      ['alice', 'openai_completions', 429],
    ]);
    expect(records[4]).toMatchObject({ model: llm.model, tokens: 4 });
    expect(lines.join('\n')).not.toContain('a b');
  });
});

describe('triton-node serve', () => {
  it('serves the OpenAI routes from the openai section of its --config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openai-serve-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ gateway: { openai: { served: { model: llm.model } } } }));
    const args = llm.repositories.flatMap((r) => ['--repository', r]);
    args.push('--library', LIBRARY_PATH, '--model-control-mode', 'explicit');
    if (BACKEND_DIR !== undefined) args.push('--backend-dir', BACKEND_DIR);
    args.push('--load-model', llm.model, '--host', '127.0.0.1', '--http-port', '0', '--no-grpc');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../../triton-node/lib/cli/main.ts', import.meta.url)),
        'serve',
        ...args,
        '--config',
        config,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const serving = out.split('\n').find((l) => l.includes('"msg":"serving"'));
          if (serving) resolve(JSON.parse(serving).httpPort as number);
        });
        void exit.then((code) => reject(new Error(`serve exited ${code}: ${out}`)));
      });
      const c = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'x', maxRetries: 0 });
      expect((await c.models.list()).data.map((m) => m.id)).toEqual(['served']);
      const done = await c.completions.create({ model: 'served', prompt: 'from the cli', max_tokens: 4 });
      expect(words(done.choices[0]!.text)).toHaveLength(4);
    } finally {
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    }
  }, 30_000);
});
