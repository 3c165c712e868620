import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serverOptions, useServer } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { type HealthHandler, Server } from '../../lib/index.js';

const server = useServer(['identity_fp32']);

async function withHttp<T>(handler: HealthHandler, fn: (base: string) => Promise<T>): Promise<T> {
  const srv = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`);
  } finally {
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
}

async function get(url: string, method = 'GET'): Promise<{ status: number; body: unknown; text: string }> {
  const res = await fetch(url, { method });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

describe('healthHandler', () => {
  it('answers liveness and readiness, per model too, as Kubernetes probes read them', async () => {
    await withHttp(server().healthHandler({ models: ['identity_fp32'] }), async (base) => {
      expect(await get(`${base}/healthz/live`)).toMatchObject({ status: 200, body: { live: true } });
      expect(await get(`${base}/healthz/ready`)).toMatchObject({
        status: 200,
        body: { ready: true, models: { identity_fp32: true } },
      });
      // A model that is not loaded makes the server not ready for this probe.
      expect(await get(`${base}/healthz/ready?model=identity_nobatch`)).toMatchObject({
        status: 503,
        body: { ready: false, models: { identity_fp32: true, identity_nobatch: false } },
      });
      const head = await get(`${base}/healthz/ready`, 'HEAD');
      expect(head).toMatchObject({ status: 200, text: '' });
      const post = await get(`${base}/healthz/ready`, 'POST');
      expect(post.status).toBe(405);
    });
  });

  it('a server without model conditions is ready; a stopped one is not, and says why', async () => {
    const s = await Server.create(serverOptions());
    const handler = s.healthHandler();
    await withHttp(handler, async (base) => {
      expect(await get(`${base}/`)).toMatchObject({ status: 200, body: { ready: true } });
      await s.stop();
      const ready = await get(`${base}/ready`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ ready: false, error: expect.stringMatching(/stop/) });
      const live = await get(`${base}/live`);
      expect(live).toMatchObject({ status: 503, body: { live: false } });
    });
  });

  it('option mistakes are TypeErrors naming the option', () => {
    expect(() => server().healthHandler({ models: 'identity_fp32' as never })).toThrow(
      /healthHandler options.models/,
    );
    expect(() => server().healthHandler(null as never)).toThrow(/healthHandler options/);
  });
});
