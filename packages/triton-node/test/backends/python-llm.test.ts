/**
 * The LLM-shaped Python model of test/backends/python-llm.ts in process, on real
 * Triton's Python backend: token-by-token streaming equal to the whole
 * text, max_tokens, stop strings (held back across tokens), the prompt and
 * exclude_input_in_output, sampling parameters from the request parameters,
 * seeded sampling, and cancellation (leaving the loop, an AbortSignal)
 * stopping the model, proven by the line the model writes to its report file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LLM_CORPUS,
  type LlmReport,
  readLlmReports,
  writeLlmModel,
} from '@triton-node/test-support/backends/python-llm.js';
import {
  BACKEND_DIR,
  eventually,
  library,
  needsBackend,
  requestsSettled,
  skipAllIf,
  until,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import type { InferRequest } from '../../lib/index.js';

function skipReason(): string | false {
  if (library().isFake) return 'real Triton only (the fake engine has no Python backend)';
  return needsBackend('python');
}
const skip = skipReason();
skipAllIf(skip);

const repo = skip === false ? mkdtempSync(join(tmpdir(), 'tn-python-llm-')) : '';
const reportFile = join(repo, 'report.jsonl');
// 5 ms a token: a cancelled request of 2,000 tokens would otherwise run 10 s.
if (skip === false) {
  writeLlmModel(repo, { tokenDelayMs: 5, reportFile });
  // Registered before useServer(): after hooks run last-registered first, so this one after the stop.
  afterAll(() => rmSync(repo, { recursive: true, force: true }));
}
const server = useServer(['llm'], { modelRepository: repo }, skip);

let ids = 0;

interface Ask {
  prompt: string;
  stream?: boolean;
  exclude?: boolean;
  sampling?: Record<string, unknown>;
  parameters?: InferRequest['parameters'];
  signal?: AbortSignal;
}

function request(ask: Ask): InferRequest {
  const inputs: InferRequest['inputs'] = { text_input: [ask.prompt] };
  if (ask.stream !== undefined) inputs.stream = [ask.stream];
  if (ask.exclude !== undefined) inputs.exclude_input_in_output = [ask.exclude];
  if (ask.sampling !== undefined) inputs.sampling_parameters = [JSON.stringify(ask.sampling)];
  return {
    id: `req-${++ids}`,
    inputs,
    ...(ask.parameters === undefined ? {} : { parameters: ask.parameters }),
    ...(ask.signal === undefined ? {} : { signal: ask.signal }),
  };
}

/** Each response's text_output, and the request's id. */
async function generate(ask: Ask): Promise<{ id: string; pieces: string[] }> {
  const req = request(ask);
  const pieces: string[] = [];
  for await (const r of server().model('llm').stream(req)) {
    pieces.push(r.outputs.text_output!.strings().join(''));
    r.dispose();
  }
  return { id: req.id!, pieces };
}

/** The report line of request `id`, once the model wrote it. */
async function report(id: string): Promise<LlmReport> {
  let line: LlmReport | undefined;
  const found = await eventually(() => {
    line = readLlmReports(reportFile).find((r) => r.id === id);
    return line !== undefined;
  });
  expect(found, `report line of ${id}`).toBe(true);
  return line!;
}

const words = (text: string) => text.split(/\s+/).filter((w) => w !== '');

describe('generation', () => {
  it('streams one token per response, in order, equal to the text of the same request not streamed', async () => {
    const sampling = { max_tokens: 12, temperature: 0 };
    const streamed = await generate({ prompt: 'the keeper climbed', stream: true, exclude: true, sampling });
    const whole = await generate({ prompt: 'the keeper climbed', exclude: true, sampling });
    expect(streamed.pieces).toHaveLength(12);
    for (const piece of streamed.pieces) expect(piece).toMatch(/^ \S+$/);
    expect(whole.pieces).toHaveLength(1);
    expect(streamed.pieces.join('')).toBe(whole.pieces[0]);
    expect(await report(streamed.id)).toMatchObject({ tokens: 12, responses: 12, reason: 'length' });
    expect(await report(whole.id)).toMatchObject({ tokens: 12, responses: 1, reason: 'length' });
    // Real text: every generated word is a word of the corpus.
    const corpus = new Set(words(readFileSync(LLM_CORPUS, 'utf8')));
    for (const w of words(whole.pieces[0]!)) expect(corpus.has(w), w).toBe(true);
  });

  it('prepends the prompt unless exclude_input_in_output, and refuses a stream that would prepend it', async () => {
    const sampling = { max_tokens: 6 };
    const plain = await generate({ prompt: 'the sea was', sampling });
    const excluded = await generate({ prompt: 'the sea was', exclude: true, sampling });
    expect(plain.pieces).toEqual([`the sea was${excluded.pieces[0]}`]);
    const refused = generate({ prompt: 'the sea was', stream: true, exclude: false, sampling });
    await expect(refused).rejects.toMatchObject({ code: 'INVALID_ARG' });
    await expect(refused).rejects.toThrow(/exclude_input_in_output/);
  });

  it('stops after max_tokens, default 16 (the config’s max_tokens_default)', async () => {
    for (const max of [1, 3, 40]) {
      const r = await generate({
        prompt: 'the river',
        stream: true,
        exclude: true,
        sampling: { max_tokens: max },
      });
      expect(r.pieces).toHaveLength(max);
      expect(await report(r.id)).toMatchObject({ tokens: max, reason: 'length' });
    }
    const d = await generate({ prompt: 'the river', exclude: true });
    expect(words(d.pieces[0]!)).toHaveLength(16);
  });

  it('cuts the text before the first stop string, also one spanning tokens, streamed or not', async () => {
    const full = (await generate({ prompt: 'the keeper', exclude: true, sampling: { max_tokens: 20 } }))
      .pieces[0]!;
    const w = words(full);
    // A stop of two words (it spans two tokens) and one of a single later word.
    const two = `${w[3]} ${w[4]}`;
    for (const stop of [[two], [w[8]!, two]]) {
      const at = Math.min(...stop.map((s) => full.indexOf(s)));
      const sampling = { max_tokens: 20, stop };
      const whole = await generate({ prompt: 'the keeper', exclude: true, sampling });
      const streamed = await generate({ prompt: 'the keeper', stream: true, exclude: true, sampling });
      expect(whole.pieces[0]).toBe(full.slice(0, at));
      expect(streamed.pieces.join('')).toBe(full.slice(0, at));
      for (const s of stop) expect(streamed.pieces.join('')).not.toContain(s);
      expect(await report(streamed.id)).toMatchObject({ reason: 'stop' });
    }
  });

  it('reads sampling parameters from the request parameters when there is no sampling_parameters tensor', async () => {
    const r = await generate({
      prompt: 'the girl',
      exclude: true,
      parameters: { max_tokens: 4, stop: 'nothing' },
    });
    expect(words(r.pieces[0]!)).toHaveLength(4);
    expect(await report(r.id)).toMatchObject({ tokens: 4, reason: 'length' });
  });

  it('samples the same text again for the same seed and temperature', async () => {
    const sampling = { max_tokens: 30, temperature: 1.5, seed: 7 };
    const a = await generate({ prompt: 'the boats', exclude: true, sampling });
    const b = await generate({ prompt: 'the boats', exclude: true, sampling });
    expect(words(a.pieces[0]!)).toHaveLength(30);
    expect(a.pieces).toEqual(b.pieces);
  });

  it('answers bad sampling parameters with INVALID_ARG naming them', async () => {
    await expect(generate({ prompt: 'x', sampling: { max_tokens: 0 } })).rejects.toThrow(/max_tokens/);
    const bad = request({ prompt: 'x' });
    bad.inputs.sampling_parameters = ['{not json'];
    const stream = server().model('llm').stream(bad);
    await expect(stream.next()).rejects.toMatchObject({ code: 'INVALID_ARG' });
  });
});

describe('cancellation', () => {
  it('stops the model when the consumer leaves the loop', async () => {
    const req = request({ prompt: 'the night', stream: true, exclude: true, sampling: { max_tokens: 2000 } });
    let seen = 0;
    for await (const r of server().model('llm').stream(req)) {
      r.dispose();
      if (++seen === 3) break;
    }
    const line = await report(req.id!);
    expect(line.reason).toBe('cancelled');
    expect(line.tokens).toBeGreaterThanOrEqual(3);
    expect(line.tokens).toBeLessThan(2000);
  });

  it('stops the model when the request’s AbortSignal aborts', async () => {
    const abort = new AbortController();
    const req = request({
      prompt: 'the night',
      stream: true,
      exclude: true,
      sampling: { max_tokens: 2000 },
      signal: abort.signal,
    });
    let seen = 0;
    const done = (async () => {
      for await (const r of server().model('llm').stream(req)) {
        r.dispose();
        if (++seen === 3) abort.abort();
      }
    })();
    await expect(done).rejects.toMatchObject({ name: 'AbortError', code: 'CANCELLED' });
    const line = await report(req.id!);
    expect(line.reason).toBe('cancelled');
    expect(line.tokens).toBeLessThan(2000);
  });

  it('stops a request that is not streamed as well', async () => {
    const abort = new AbortController();
    const req = request({
      prompt: 'the night',
      exclude: true,
      sampling: { max_tokens: 2000 },
      signal: abort.signal,
    });
    expect(await requestsSettled()).toBe(true);
    const stream = server().model('llm').stream(req);
    const first = stream.next();
    // Aborted once it reached Triton (an abort before that submits nothing,
    // and the model would write no line).
    await until('the request to reach Triton', () => addon().addonStats().inflightRequests > 0);
    abort.abort();
    await expect(first).rejects.toMatchObject({ name: 'AbortError' });
    const line = await report(req.id!);
    expect(line).toMatchObject({ reason: 'cancelled', responses: 0 });
    expect(line.tokens).toBeLessThan(2000);
  });
});
