/**
 * Model-reported token counts and finish reasons on the OpenAI routes (the
 * vLLM backend's additional outputs): where the model's metadata has the
 * `return_finish_reason`, `return_num_input_tokens` and
 * `return_num_output_tokens` inputs, the gateway asks for them and answers
 * with the model's numbers (usage, the guard's spending, the metrics) and
 * finish reason; a model without them keeps the gateway's own counting. Both
 * stand-ins count a stop word as generated and cut out (as vLLM generates the
 * token and then cuts its text), which the gateway's word count cannot see.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { llmUnderTest } from '@triton-node/test-support/backends/llm-helpers.js';
import { writeLlmModel } from '@triton-node/test-support/backends/python-llm.js';
import { library, skipAllIf, useServer } from '@triton-node/test-support/helpers.js';
import { sampleValue } from '@triton-node/test-support/metrics/prometheus.js';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { finishReason } from '../lib/openai/generate.js';
import { type Listening, useGateway } from './helpers.js';

const llm = llmUnderTest();
const skip = llm.skip;
skipAllIf(skip);

// The same model without the additional outputs in its config: the gateway counts for itself.
const plainRepo = mkdtempSync(join(tmpdir(), 'tn-llm-plain-'));
afterAll(() => rmSync(plainRepo, { recursive: true, force: true }));
if (skip === false) {
  if (library().isFake) {
    mkdirSync(join(plainRepo, 'text_plain', '1'), { recursive: true });
    writeFileSync(join(plainRepo, 'text_plain', '1', '.keep'), '');
    writeFileSync(
      join(plainRepo, 'text_plain', 'config.pbtxt'),
      `name: "text_plain"
backend: "fake_text_stream"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true },
  { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true },
  { name: "exclude_input_in_output" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`,
    );
  } else {
    writeLlmModel(plainRepo, { name: 'text_plain', additionalOutputs: false });
  }
}

const server = useServer(
  [llm.model, 'text_plain'],
  { modelRepository: [...llm.repositories, plainRepo] },
  skip,
);
const gw: () => Listening =
  skip === false
    ? useGateway(server, { openai: { words: { model: llm.model }, plain: { model: 'text_plain' } } })
    : () => {
        throw new Error('skipped');
      };

function client(): OpenAI {
  return new OpenAI({ baseURL: `${gw().url}/v1`, apiKey: 'unused', maxRetries: 0 });
}

function words(text: string | null | undefined): string[] {
  return (text ?? '').split(/\s+/).filter((w) => w !== '');
}

const PROMPT = 'alpha beta gamma delta epsilon';

/**
 * A stop that cuts the completion of `model` after some words, and the tokens
 * the model generated to get there (the stop word's own included: the words
 * of the full text up to the end of the stop's first match).
 */
async function stopCase(model: string) {
  const full = (await client().completions.create({ model, prompt: PROMPT, max_tokens: 5 })).choices[0]!.text;
  const stop = words(full)[2]!;
  const generated = words(full.slice(0, full.indexOf(stop) + stop.length)).length;
  return { full, stop, generated };
}

describe('a model that reports its token counts and finish reasons', () => {
  it('usage counts the tokens the model generated, the stop word it cut out included', async () => {
    const { full, stop, generated } = await stopCase('words');
    const ask = { model: 'words', prompt: PROMPT, max_tokens: 5, stop: [stop] };
    const c = await client().completions.create(ask);
    expect(c.choices[0]!.text).toBe(llm.stopped(full, stop));
    // The gateway's word count would say one less.
    expect(words(c.choices[0]!.text)).toHaveLength(generated - 1);
    expect(c.usage).toEqual({ prompt_tokens: 5, completion_tokens: generated, total_tokens: 5 + generated });
    const stream = await client().completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)!.usage).toEqual(c.usage);
  });

  it("answers the model's finish reason: 'stop' when the stop word was the last token max_tokens allowed", async () => {
    const { stop, generated } = await stopCase('words');
    // Its own guess (tokens >= max_tokens) would say 'length'.
    const ask = { model: 'words', prompt: PROMPT, max_tokens: generated, stop: [stop] };
    expect((await client().completions.create(ask)).choices[0]!.finish_reason).toBe('stop');
    const stream = await client().completions.create({ ...ask, stream: true });
    const reasons = [];
    for await (const chunk of stream) reasons.push(...chunk.choices.map((ch) => ch.finish_reason));
    expect(reasons.filter((r) => r !== null)).toEqual(['stop']);
    // max_tokens reached without a stop: 'length'.
    const long = await client().completions.create({ model: 'words', prompt: PROMPT, max_tokens: 2 });
    expect(long.choices[0]!.finish_reason).toBe('length');
  });

  it('spends and records the tokens the model reports', async () => {
    const { stop, generated } = await stopCase('words');
    const metrics = async () => (await request(`${gw().url}/metrics`)).body.text();
    const labels = { model: 'words' };
    const before = await metrics();
    const stream = await client().completions.create({
      model: 'words',
      prompt: PROMPT,
      max_tokens: 5,
      stop: [stop],
      stream: true,
    });
    for await (const _chunk of stream) {
      // To the end.
    }
    const after = await metrics();
    const out = 'triton_node_openai_output_tokens_total';
    const prompt = 'triton_node_openai_prompt_tokens_total';
    expect(sampleValue(after, out, labels)).toBe(sampleValue(before, out, labels)! + generated);
    expect(sampleValue(after, prompt, labels)).toBe(sampleValue(before, prompt, labels)! + 5);
  });
});

describe('a model without them', () => {
  it("keeps the gateway's own counting: tokenCount's words per response, and 'length' once max_tokens were", async () => {
    const { full, stop, generated } = await stopCase('plain');
    const ask = { model: 'plain', prompt: PROMPT, max_tokens: generated, stop: [stop] };
    const c = await client().completions.create(ask);
    expect(c.choices[0]!.text).toBe(llm.stopped(full, stop));
    // The words of each response (a streamed chunk each), as the entry's tokenCount counts them.
    let counted = 0;
    for await (const chunk of await client().completions.create({ ...ask, stream: true }))
      counted += words(chunk.choices[0]?.text).length;
    expect(c.usage).toEqual({ prompt_tokens: 5, completion_tokens: counted, total_tokens: 5 + counted });
    expect(c.choices[0]!.finish_reason).toBe(counted >= generated ? 'length' : 'stop');
    // Not what the same model answers when it reports its own: the gateway invents none of that.
    expect([counted, c.choices[0]!.finish_reason]).not.toEqual([generated, 'stop']);
  });
});

describe("a model's finish reason in OpenAI's words", () => {
  it("keeps stop, length and content_filter, maps their synonyms, ignores vLLM's None, and calls the rest stop", () => {
    const cases: Array<[string, string | undefined]> = [
      ['stop', 'stop'],
      ['length', 'length'],
      ['content_filter', 'content_filter'],
      ['eos', 'stop'],
      ['max_tokens', 'length'],
      ['LENGTH', 'length'],
      ['None', undefined],
      ['', undefined],
      ['abort', 'stop'],
    ];
    for (const [reported, expected] of cases) expect(finishReason(reported), reported).toBe(expected);
  });
});
