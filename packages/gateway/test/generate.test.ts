import { llmUnderTest } from '@triton-node/test-support/backends/llm-helpers.js';
import { eventually, skipIf, useServer } from '@triton-node/test-support/helpers.js';
import { sampleValue } from '@triton-node/test-support/metrics/prometheus.js';
/**
 * `POST /v2/models/{m}/generate`, read with undici, answered as Triton's
 * HTTP server answers it: one JSON object (chunked, `application/json`) for
 * any model, decoupled or not; the first response decides the status; a
 * model that sends no response or more than one gets Triton's "exactly 1
 * response" error under that status; the request's id is echoed. On the
 * decoupled repeat and square models, on identity, and on the library's
 * LLM (test/backends/llm-helpers.ts), with the vLLM backend README's smoke test.
 */
import { Client, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { GENERATE_ONE_RESPONSE } from '../lib/http/generate.js';
import { useGateway } from './helpers.js';

// The README's model name: on real Triton our Python LLM is served as vllm_model.
const llm = llmUnderTest('vllm_model');
const models = ['repeat_int32', 'square_int32', 'identity_fp32', ...(llm.skip === false ? [llm.model] : [])];
const server = useServer(models, {
  modelRepository: llm.repositories,
});
const gw = useGateway(server);

async function generate(model: string, body: unknown, kind: 'generate' | 'generate_stream' = 'generate') {
  const res = await request(`${gw().url}/v2/models/${model}/${kind}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

describe('generate', () => {
  it('answers the one response of a model that is not decoupled, with the request’s id and the response parameters', async () => {
    const r = await generate('identity_fp32', { id: '42', INPUT0: [1.5, 2] });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    // Triton's order: every key sorted, the identity backend's response parameters among them.
    const answer = JSON.parse(r.text) as Record<string, unknown>;
    expect(answer).toEqual({
      OUTPUT0: [1.5, 2],
      id: '42',
      model_name: 'identity_fp32',
      model_version: '1',
      param0: 'an example string parameter',
      param1: 42,
      param2: false,
      param3: 123.123,
    });
    expect(Object.keys(answer)).toEqual(Object.keys(answer).sort());
  });

  it('answers a decoupled model that sends exactly one response with it, chunked', async () => {
    const r = await generate('repeat_int32', { IN: [7], DELAY: [0], WAIT: 0 });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(JSON.parse(r.text)).toEqual({ model_name: 'repeat_int32', model_version: '1', OUT: 7, IDX: 0 });
    const one = await generate('square_int32', { IN: 1 });
    expect(JSON.parse(one.text)).toMatchObject({ model_name: 'square_int32', OUT: 1 });
  });

  it('answers 200 with Triton’s error when a decoupled model sends several responses or none', async () => {
    for (const body of [{ IN: 3 }, { IN: 0 }]) {
      const r = await generate('square_int32', body);
      expect(r.status, JSON.stringify(body)).toBe(200);
      expect(JSON.parse(r.text), JSON.stringify(body)).toEqual({ error: GENERATE_ONE_RESPONSE });
    }
    // The same requests stream: 3 events, and none.
    const streamed = await generate('square_int32', { IN: 3 }, 'generate_stream');
    expect(streamed.text.split('\n\n').filter((e) => e.startsWith('data: '))).toHaveLength(3);
  });

  it('counts its requests under route="generate" on /metrics', async () => {
    const count = async () => {
      const text = await (await request(`${gw().url}/metrics`)).body.text();
      const labels = { protocol: 'http', route: 'generate', status: '200' };
      return sampleValue(text, 'triton_node_gateway_requests_total', labels) ?? 0;
    };
    const before = await count();
    await generate('square_int32', { IN: 1 });
    expect(await eventually(async () => (await count()) === before + 1)).toBe(true);
  });

  it('answers an error before the first response with its status, as JSON', async () => {
    const r = await generate('square_int32', { NOPE: 1 });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatch(/no input 'NOPE'/);
    const missing = await generate('no_such_model', { IN: 1 });
    expect([400, 404]).toContain(missing.status);
    const bad = await generate('square_int32', '{');
    expect(bad.status).toBe(400);
  });
});

describe(`generate on the LLM (${llm.describe})`, () => {
  it('passes the vLLM backend README’s smoke test', async (ctx) => {
    skipIf(ctx, llm.skip);
    // The README's command: curl -X POST localhost:8000/v2/models/vllm_model/generate -d '<this body>'
    const body =
      '{"text_input": "What is Triton Inference Server?", "parameters": {"stream": false, "temperature": 0}}';
    const r = await generate(llm.model, body);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const answer = JSON.parse(r.text) as Record<string, unknown>;
    expect(Object.keys(answer).sort()).toEqual(['model_name', 'model_version', 'text_output']);
    expect(answer).toMatchObject({ model_name: llm.model, model_version: '1' });
    const text = answer.text_output as string;
    // The prompt, then the generated text (not streamed: the prompt is not excluded).
    expect(text.startsWith('What is Triton Inference Server?')).toBe(true);
    const words = text.split(/\s+/).filter((w) => w !== '');
    expect(words).toHaveLength(5 + llm.defaultTokens(5));
  });

  it('answers the text that generate_stream streams, and the "exactly 1" error for a stream', async (ctx) => {
    skipIf(ctx, llm.skip);
    const parameters = { max_tokens: 8 };
    const whole = await generate(llm.model, {
      text_input: 'the keeper climbed',
      exclude_input_in_output: true,
      parameters,
    });
    const streamed = await generate(
      llm.model,
      { text_input: 'the keeper climbed', stream: true, exclude_input_in_output: true, parameters },
      'generate_stream',
    );
    expect(streamed.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = streamed.text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)) as { text_output: string });
    expect(events).toHaveLength(8);
    expect(events.map((e) => e.text_output).join('')).toBe(JSON.parse(whole.text).text_output);
    const many = await generate(llm.model, {
      text_input: 'the keeper climbed',
      stream: true,
      exclude_input_in_output: true,
      parameters,
    });
    expect(many.status).toBe(200);
    expect(JSON.parse(many.text)).toEqual({ error: GENERATE_ONE_RESPONSE });
  });

  it('answers a stream that would carry the prompt with 400, as the vLLM backend refuses it', async (ctx) => {
    skipIf(ctx, llm.skip);
    const r = await generate(
      llm.model,
      { text_input: 'the sea', stream: true, exclude_input_in_output: false },
      'generate_stream',
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatch(
      /When streaming, `exclude_input_in_output` = False is not allowed/,
    );
  });

  it('cancels the model’s request when the client leaves', async (ctx) => {
    skipIf(ctx, llm.skip);
    const before = await llm.cancelled(server());
    const client = new Client(gw().url);
    // Streamed by the model: the first response sends the headers, so the request runs by then.
    const res = await client.request({
      path: `/v2/models/${llm.model}/generate`,
      method: 'POST',
      body: JSON.stringify({
        text_input: 'the night',
        stream: true,
        exclude_input_in_output: true,
        parameters: { max_tokens: 2000 },
      }),
    });
    expect(res.statusCode).toBe(200);
    await client.destroy();
    expect(await eventually(async () => (await llm.cancelled(server())) > before)).toBe(true);
  });
});
