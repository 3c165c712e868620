import { useServer } from '@triton-node/test-support/helpers.js';
/**
 * The gateway as a Fastify plugin: the protocol's routes (binary bodies
 * included, untouched by Fastify's parsers) beside the application's own
 * Fastify routes.
 */
import Fastify from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../lib/index.js';
import { binaryBody, bytesOf, parseBinaryResponse } from './helpers.js';

const server = useServer(['identity_fp32']);
const app = Fastify();
let url = '';

beforeAll(async () => {
  app.get('/hello', async () => ({ hello: 'world' }));
  app.post('/echo', async (req) => req.body);
  await app.register(createGateway(server()).fastify);
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
});

describe('gateway.fastify', () => {
  it('serves the protocol’s routes', async () => {
    const live = await request(`${url}/v2/health/live`);
    await live.body.dump();
    expect(live.statusCode).toBe(200);
    const meta = await request(`${url}/v2/models/identity_fp32`);
    expect(((await meta.body.json()) as { name: string }).name).toBe('identity_fp32');
    const metrics = await request(`${url}/metrics`);
    expect(await metrics.body.text()).toContain('nv_inference_request_success');
  });

  it('passes binary bodies through untouched', async () => {
    const data = new Float32Array([1, 2, 3]);
    const { body, headerLength } = binaryBody(
      {
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], parameters: { binary_data_size: 12 } }],
        parameters: { binary_data_output: true },
      },
      [bytesOf(data)],
    );
    const res = await request(`${url}/v2/models/identity_fp32/infer`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/octet-stream',
        'inference-header-content-length': String(headerLength),
      },
    });
    expect(res.statusCode).toBe(200);
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const { outputs } = parseBinaryResponse(bytes, Number(res.headers['inference-header-content-length']));
    expect(outputs[0]!.bytes!.equals(bytesOf(data))).toBe(true);
  });

  it('leaves the application’s own routes to Fastify, and answers protocol errors itself', async () => {
    const hello = await request(`${url}/hello`);
    expect(await hello.body.json()).toEqual({ hello: 'world' });
    const echo = await request(`${url}/echo`, {
      method: 'POST',
      body: JSON.stringify({ a: 1 }),
      headers: { 'content-type': 'application/json' },
    });
    expect(await echo.body.json()).toEqual({ a: 1 });
    const missing = await request(`${url}/v2/nothing`);
    expect(missing.statusCode).toBe(404);
    expect(await missing.body.json()).toEqual({ error: 'Not Found' });
  });
});
