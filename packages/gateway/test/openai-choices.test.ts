import { llmUnderTest } from '@triton-node/test-support/backends/llm-helpers.js';
import {
  eventually,
  rejection,
  requestsSettled,
  skipAllIf,
  until,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { histogramSeries, sampleValue } from '@triton-node/test-support/metrics/prometheus.js';
/**
 * `n` choices on the OpenAI routes, with the official `openai` client: each
 * choice its own Triton request run at the same time, answered by index
 * (streamed: one choice per chunk, a finish reason per choice, one usage
 * chunk), choice i sampled with seed + i, usage and the guard's token
 * spending over all choices, `n` bounded per model entry, and a client that
 * leaves cancelling every choice. On the library's LLM
 * (test/backends/llm-helpers.ts).
 */
import OpenAI from 'openai';
import { addonStats } from 'triton-node/testing';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Admission, Guard } from '../lib/guard/types.js';
import { createGateway } from '../lib/index.js';
import { type Listening, useGateway } from './helpers.js';

const llm = llmUnderTest();
const skip = llm.skip;
skipAllIf(skip);
const server = useServer([llm.model], { modelRepository: llm.repositories }, skip);
const gw: () => Listening =
  skip === false
    ? useGateway(server, {
        openai: { words: { model: llm.model }, few: { model: llm.model, maxChoices: 2 } },
      })
    : () => {
        throw new Error('skipped');
      };

function client(): OpenAI {
  return new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: 'unused', maxRetries: 0 });
}

function words(text: string | null | undefined): string[] {
  return (text ?? '').split(/\s+/).filter((w) => w !== '');
}

const PROMPT = 'alpha beta gamma delta epsilon zeta eta theta';
/** Sampled (temperature above 0) with a seed: reproducible, and each seed its own text. */
const SEEDED = { model: 'words', prompt: PROMPT, max_tokens: 6, temperature: 1, seed: 41 };

describe('n choices', () => {
  it('answers n choices, each with its index and finish reason, the usage summed over them', async () => {
    const c = await client().completions.create({ model: 'words', prompt: PROMPT, max_tokens: 4, n: 3 });
    expect(c.choices.map((ch) => ch.index)).toEqual([0, 1, 2]);
    for (const ch of c.choices) {
      expect(words(ch.text)).toHaveLength(4);
      expect(ch.finish_reason).toBe('length');
    }
    // The prompt is read once; the completion tokens are every choice's.
    expect(c.usage).toEqual({ prompt_tokens: 8, completion_tokens: 12, total_tokens: 20 });
  });

  it('samples choice i with seed + i: the choices differ, and the whole answer repeats', async () => {
    const a = await client().completions.create({ ...SEEDED, n: 3 });
    const b = await client().completions.create({ ...SEEDED, n: 3 });
    const texts = a.choices.map((ch) => ch.text);
    expect(b.choices.map((ch) => ch.text)).toEqual(texts);
    expect(new Set(texts).size).toBeGreaterThan(1);
    // Choice i is what one request with seed + i answers.
    for (let i = 0; i < 3; i++) {
      const one = await client().completions.create({ ...SEEDED, seed: SEEDED.seed + i });
      expect(one.choices[0]!.text, `choice ${i}`).toBe(texts[i]);
    }
  });

  it('streams each choice in chunks of one choice, by index, each ending with its finish reason; one usage chunk', async () => {
    const whole = await client().completions.create({ ...SEEDED, n: 3 });
    const stream = await client().completions.create({
      ...SEEDED,
      n: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const withChoice = chunks.filter((c) => c.choices.length > 0);
    expect(withChoice.every((c) => c.choices.length === 1)).toBe(true);
    for (let i = 0; i < 3; i++) {
      const mine = withChoice.map((c) => c.choices[0]!).filter((ch) => ch.index === i);
      expect(mine.map((ch) => ch.text).join(''), `choice ${i}`).toBe(whole.choices[i]!.text);
      // One finish reason per choice, on its last chunk.
      expect(mine.filter((ch) => ch.finish_reason !== null)).toEqual([mine.at(-1)]);
      expect(mine.at(-1)!.finish_reason).toBe(whole.choices[i]!.finish_reason);
    }
    expect(chunks.filter((c) => c.usage)).toEqual([chunks.at(-1)]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: whole.usage });
  });

  it('chat: n messages, and streamed n role deltas then each choice’s content', async () => {
    const ask = { model: 'words', messages: [{ role: 'user' as const, content: PROMPT }], max_tokens: 5 };
    const whole = await client().chat.completions.create({ ...ask, n: 2, temperature: 1, seed: 3 });
    expect(whole.choices.map((ch) => [ch.index, ch.message.role])).toEqual([
      [0, 'assistant'],
      [1, 'assistant'],
    ]);
    const stream = await client().chat.completions.create({
      ...ask,
      n: 2,
      temperature: 1,
      seed: 3,
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (let i = 0; i < 2; i++) {
      const mine = chunks.flatMap((c) => c.choices).filter((ch) => ch.index === i);
      expect(mine[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(mine.map((ch) => ch.delta.content ?? '').join('')).toBe(whole.choices[i]!.message.content);
      expect(mine.at(-1)!.finish_reason).toBe(whole.choices[i]!.finish_reason);
    }
  });

  it('bounds n per model entry (default 16) with a 400 naming n; a bad maxChoices is a TypeError', async () => {
    for (const [model, n, most] of [
      ['words', 17, 16],
      ['few', 3, 2],
    ] as const) {
      const err = await rejection(client().completions.create({ model, prompt: 'x', n }), Error);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('n');
      expect((err as Error).message).toContain(`from 1 to ${most} for model '${model}'; received ${n}`);
    }
    const two = await client().completions.create({ model: 'few', prompt: 'x y', n: 2, max_tokens: 1 });
    expect(two.choices).toHaveLength(2);
    for (const bad of [0, 129, 1.5, '4'])
      expect(() =>
        createGateway(server(), { openai: { m: { model: llm.model, maxChoices: bad as number } } }),
      ).toThrow(TypeError);
  });

  it('records TTFT, TPOT and output tokens per choice', async () => {
    const metrics = async () => (await request(`${gw().url}/metrics`)).body.text();
    const labels = { model: 'words' };
    const ttft = 'triton_node_openai_time_to_first_token_us';
    await client().completions.create({ model: 'words', prompt: 'warm up', max_tokens: 2 });
    const before = await metrics();
    const stream = await client().completions.create({ ...SEEDED, n: 3, stream: true });
    for await (const _chunk of stream) {
      // Read to the end: the choices are recorded once the request finished.
    }
    const after = await metrics();
    expect(histogramSeries(after, ttft, labels)!.count).toBe(
      histogramSeries(before, ttft, labels)!.count + 3,
    );
    const tokens = 'triton_node_openai_output_tokens_total';
    expect(sampleValue(after, tokens, labels)).toBe(sampleValue(before, tokens, labels)! + 18);
  });
});

describe('n choices and the client leaving', () => {
  it('cancels every choice’s Triton request when the client aborts a stream', async () => {
    const before = await llm.cancelled(server());
    const abort = new AbortController();
    const stream = await client().completions.create(
      { model: 'words', prompt: 'tick tock', max_tokens: 2000, n: 3, stream: true },
      { signal: abort.signal },
    );
    let seen = 0;
    try {
      for await (const _chunk of stream) {
        if (++seen === 6) abort.abort();
      }
    } catch {
      // The client ends the iteration, or raises its abort.
    }
    expect(seen).toBeLessThan(6000);
    expect(await eventually(async () => (await llm.cancelled(server())) >= before + 3)).toBe(true);
  });

  it('cancels every choice of a request not streamed when the client leaves', async () => {
    const before = await llm.cancelled(server());
    expect(await requestsSettled()).toBe(true);
    const abort = new AbortController();
    const done = client().completions.create(
      { model: 'words', prompt: 'tick tock', max_tokens: 2000, n: 3 },
      { signal: abort.signal },
    );
    // Each choice is its own request: all three reach Triton.
    await until('3 requests in Triton', () => addonStats().inflightRequests >= 3);
    abort.abort();
    expect(await rejection(done, Error)).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(await eventually(async () => (await llm.cancelled(server())) >= before + 3)).toBe(true);
  });
});

/** A guard with a token budget, keeping what was spent and audited. */
function budgetGuard(budget: number) {
  const spent: number[] = [];
  const outcomes: Array<Parameters<Admission['done']>[0]> = [];
  let left = budget;
  const guard: Guard = {
    async admit() {
      return {
        tenant: 't',
        done: (o) => outcomes.push(o),
        canSee: () => true,
        spendTokens: (n) => {
          spent.push(n);
          left -= n;
          return left >= 0;
        },
        tokensRetryAfterSeconds: () => 3,
      };
    },
  };
  return { guard, spent, outcomes };
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

describe('n choices and the guard', () => {
  it('a choice that fails cancels the others: one refused spend ends all three requests', async () => {
    const before = await llm.cancelled(server());
    let spends = 0;
    const guard: Guard = {
      async admit() {
        return {
          tenant: 't',
          done: () => undefined,
          canSee: () => true,
          // Refuses once, the 5th spend: the choice that asked fails, the others could go on.
          spendTokens: () => ++spends !== 5,
          tokensRetryAfterSeconds: () => 1,
        };
      },
    };
    const err = await withGuard(guard, () =>
      rejection(
        client().completions.create({ model: 'words', prompt: 'tick tock', max_tokens: 2000, n: 3 }),
        Error,
      ),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    // All three were cancelled, long before their 2,000 tokens.
    expect(await eventually(async () => (await llm.cancelled(server())) >= before + 3)).toBe(true);
  });

  it('spends and audits the tokens of every choice; a budget below them refuses the answer', async () => {
    const g = budgetGuard(100);
    await withGuard(g.guard, () =>
      client().completions.create({ model: 'words', prompt: PROMPT, max_tokens: 2, n: 3 }),
    );
    expect(g.spent.reduce((a, b) => a + b, 0)).toBe(6);
    expect(g.outcomes).toEqual([expect.objectContaining({ status: 200, tokens: 6 })]);
    const short = budgetGuard(4);
    const err = await withGuard(short.guard, () =>
      rejection(client().completions.create({ model: 'words', prompt: PROMPT, max_tokens: 2, n: 3 }), Error),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(short.outcomes).toEqual([expect.objectContaining({ status: 429 })]);
  });
});
