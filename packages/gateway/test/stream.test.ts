import { fakeOnly, requestsSettled, useServer } from '@triton-node/test-support/helpers.js';
import { fakeEngine } from 'triton-node/testing';
/**
 * Decoupled models over HTTP: Server-Sent Events from
 * /v2/models/{m}/generate_stream, read with undici; errors before the first
 * response as HTTP statuses; a client that disconnects cancels its request.
 */
import { Client, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { useGateway } from './helpers.js';

const server = useServer(['repeat_int32', 'square_int32', 'identity_fp32']);
const gw = useGateway(server);

async function sse(model: string, body: unknown) {
  const res = await request(`${gw().url}/v2/models/${model}/generate_stream`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice(6)));
  return { status: res.statusCode, type: res.headers['content-type'], text, events };
}

describe('generate_stream', () => {
  it('streams each response of a decoupled model as an event (generate form)', async () => {
    const r = await sse('repeat_int32', { IN: [7, 8, 9], DELAY: [0, 0, 0], WAIT: 0 });
    expect(r.status).toBe(200);
    expect(r.type).toBe('text/event-stream; charset=utf-8');
    expect(r.events.map((e) => e.OUT)).toEqual([7, 8, 9]);
    expect(r.events.map((e) => e.IDX)).toEqual([0, 1, 2]);
    expect(r.events[0]).toMatchObject({ model_name: 'repeat_int32', model_version: '1' });
  });

  it('takes a v2 inference request and answers v2 responses', async () => {
    const r = await sse('square_int32', {
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [3] }],
    });
    expect(r.status).toBe(200);
    expect(r.events.length).toBe(3);
    expect(r.events[0]).toMatchObject({
      model_name: 'square_int32',
      outputs: [{ name: 'OUT', datatype: 'INT32', shape: [1], data: [3] }],
    });
  });

  it('ends at once for a request with no responses', async () => {
    const r = await sse('square_int32', { IN: 0 });
    expect(r.status).toBe(200);
    expect(r.events).toEqual([]);
  });

  it('streams the one response of a model that is not decoupled', async () => {
    const r = await sse('identity_fp32', { INPUT0: [1, 2] });
    expect(r.status).toBe(200);
    expect(r.events).toEqual([expect.objectContaining({ OUTPUT0: [1, 2] })]);
  });

  it('answers errors before the first response with their HTTP status', async () => {
    let r = await sse('no_such_model', { IN: 1 });
    expect([400, 404]).toContain(r.status);
    expect(JSON.parse(r.text).error).toMatch(/no_such_model/);
    r = await sse('square_int32', { NOPE: 1 });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatch(/no input 'NOPE'/);
    r = await sse('square_int32', { IN: 'x' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatch(/IN/);
    const bad = await request(`${gw().url}/v2/models/square_int32/generate_stream`, {
      method: 'POST',
      body: '{',
    });
    expect(bad.statusCode).toBe(400);
    expect(((await bad.body.json()) as { error: string }).error).toMatch(/malformed JSON/);
  });

  it('cancels the request when the client disconnects', async () => {
    // square with 100 ms between responses: 1,000 responses would take 100 s.
    await server().loadModel('square_int32', {
      config: {
        name: 'square_int32',
        backend: 'square',
        max_batch_size: 0,
        model_transaction_policy: { decoupled: true },
        input: [{ name: 'IN', data_type: 'TYPE_INT32', dims: [1] }],
        output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [1] }],
        parameters: { CUSTOM_INFER_DELAY_NS: { string_value: '100000000' } },
      },
    });
    const client = new Client(gw().url);
    const res = await client.request({
      path: '/v2/models/square_int32/generate_stream',
      method: 'POST',
      body: JSON.stringify({ IN: 1000 }),
    });
    expect(res.statusCode).toBe(200);
    for await (const chunk of res.body) {
      if (String(chunk).includes('data: ')) break;
    }
    await client.destroy();
    // Settled long before the 100 s the request would run uncancelled.
    expect(await requestsSettled(30_000)).toBe(true);
    if (!fakeOnly()) expect(fakeEngine.liveObjects()).toMatchObject({ requests: 0, responses: 0 });
    const [stats] = await server().model('square_int32').statistics();
    const sent = Object.values(stats!.responseStats).reduce((n, r) => n + r.success.count, 0);
    expect(sent).toBeLessThan(1000);
  });
});
