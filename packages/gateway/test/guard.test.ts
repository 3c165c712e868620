/**
 * The gateway's guard over real clients (undici, @grpc/grpc-js): API keys
 * and JWTs, tenants and their models, admin-only control, model-name
 * hardening, body and header limits, rate limits and concurrency caps, the
 * audit log. Every denial is checked three ways: its status, its audit line,
 * and that nothing reached the server (a count of the Server's method calls
 * and Triton's own inference statistics stay as they were).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { BACKEND_DIR, LIBRARY_PATH, MODELS, useServer } from '@triton-node/test-support/helpers.js';
import { type JWK, SignJWT, exportJWK, exportSPKI, generateKeyPair } from 'jose';
import type { ModelStatistics, Server } from 'triton-node';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GuardRequest } from '../lib/guard/types.js';
import { GatewayGuard, type GatewayOptions, type GuardOptions, hashApiKey } from '../lib/index.js';
import { SERVE_HTTP_OPTIONS, kserveClient, useGateway } from './helpers.js';

const served = useServer(['identity_fp32', 'identity_int32', 'identity_delay', 'square_int32']);

/**
 * Calls of the Server's methods made by the gateway (a denial must make
 * none), but for the metric registry's, which count every request.
 */
let serverCalls = 0;
let counted: Server | undefined;
function countingServer(): Server {
  counted ??= new Proxy(served(), {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function' || key === 'createMetric') return value;
      return (...args: unknown[]) => {
        serverCalls++;
        return value.apply(target, args);
      };
    },
  });
  return counted;
}

/** Requests Triton saw (succeeded or failed), over every model. */
async function tritonRequests(): Promise<number> {
  // Server's internal statistics call (every model at once): not in the package's types.
  const server = served() as unknown as {
    _modelStatistics(name: string, version: number): Promise<ModelStatistics[]>;
  };
  const stats = await server._modelStatistics('', -1);
  return stats.reduce((n, s) => n + s.inferenceStats.success.count + s.inferenceStats.fail.count, 0);
}

const KEYS = {
  alice: 'alice-key-0123456789abcdef',
  bob: 'bob-key-0123456789abcdef',
  root: 'root-key-0123456789abcdef',
};
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'triton-node';
const dir = mkdtempSync(join(tmpdir(), 'guard-test-'));
const auditFile = join(dir, 'audit.log');
type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let signer: SigningKey;
let stranger: SigningKey;

function guardOptions(jwks: string): GuardOptions {
  return {
    apiKeys: [
      { sha256: hashApiKey(KEYS.alice), tenant: 'alice', id: 'alice-1' },
      { sha256: hashApiKey(KEYS.bob), tenant: 'bob' },
      { sha256: hashApiKey(KEYS.root), tenant: 'root' },
    ],
    jwt: { jwksFile: jwks, issuer: ISSUER, audience: AUDIENCE },
    tenants: {
      alice: { models: ['identity_*'] },
      bob: { models: ['square_int32', 'identity_int32'], limits: { maxConcurrent: 1 } },
      carol: { models: ['identity_fp32'], limits: { requestsPerSecond: 2, requestBurst: 2 } },
      root: { models: ['*'], admin: true },
    },
    open: ['health'],
    audit: { file: auditFile },
  };
}

const options: GatewayOptions = { maxBodyBytes: 1024 * 1024 };
beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  signer = pair.privateKey;
  stranger = (await generateKeyPair('RS256')).privateKey;
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' };
  const jwks = join(dir, 'jwks.json');
  writeFileSync(jwks, JSON.stringify({ keys: [jwk] }));
  options.guard = guardOptions(jwks);
});
const gw = useGateway(countingServer, options);

interface TokenOptions {
  tenant?: string;
  audience?: string;
  issuer?: string;
  expiresIn?: number;
  key?: SigningKey;
}
function token(o: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ tenant: o.tenant ?? 'alice' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(o.issuer ?? ISSUER)
    .setAudience(o.audience ?? AUDIENCE)
    .setIssuedAt(now - 120)
    .setExpirationTime(now + (o.expiresIn ?? 60))
    .sign(o.key ?? signer);
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown> | undefined;
}
let counter = 0;
async function call(
  path: string,
  o: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: unknown; id?: string } = {},
): Promise<Reply & { id: string }> {
  const id = o.id ?? `req-${++counter}`;
  const body =
    o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  const r = await request(`${gw().url}${path}`, {
    method: o.method ?? (body === undefined ? 'GET' : 'POST'),
    headers: { 'x-request-id': id, ...(o.headers ?? {}) },
    ...(body === undefined ? {} : { body }),
  });
  const text = await r.body.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.statusCode, headers: r.headers, json, id };
}

const INFER = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2] }] };
const INFER_INT = { inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1], data: [3] }] };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function auditLines(): Array<Record<string, unknown>> {
  gw().gateway.guard!.flush();
  return readFileSync(auditFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}
function audited(id: string): Array<Record<string, unknown>> {
  return auditLines().filter((l) => l.requestId === id);
}

/** Runs `fn` and says how many server calls and Triton requests it caused. */
async function reach(fn: () => Promise<unknown>): Promise<{ calls: number; triton: number }> {
  const before = await tritonRequests();
  const calls = serverCalls;
  await fn();
  const made = serverCalls - calls;
  return { calls: made, triton: (await tritonRequests()) - before };
}

describe('authentication over HTTP', () => {
  it('admits a tenant by API key (Bearer or x-api-key) and by JWT, and audits each', async () => {
    const a = await call('/v2/models/identity_fp32/infer', { headers: bearer(KEYS.alice), body: INFER });
    expect(a.status).toBe(200);
    expect(a.headers['x-request-id']).toBe(a.id);
    const b = await call('/v2/models/identity_fp32/infer', {
      headers: { 'x-api-key': KEYS.alice },
      body: INFER,
    });
    expect(b.status).toBe(200);
    const c = await call('/v2/models/identity_fp32/infer', { headers: bearer(await token()), body: INFER });
    expect(c.status).toBe(200);
    const [line] = audited(a.id);
    expect(line).toMatchObject({
      tenant: 'alice',
      keyId: 'alice-1',
      protocol: 'http',
      route: 'infer',
      model: 'identity_fp32',
      status: 200,
    });
    expect(line!.bytesIn).toBe(JSON.stringify(INFER).length);
    expect(line!.bytesOut).toBeGreaterThan(0);
    expect(line!.latencyMs).toBeTypeOf('number');
    // Triton's own split of the inference's time (a timing trace rides along with a guard).
    expect(line!.queueUs).toBeTypeOf('number');
    expect(line!.computeUs).toBeTypeOf('number');
    expect(line!.queueUs as number).toBeGreaterThanOrEqual(0);
    expect((line!.queueUs as number) + (line!.computeUs as number)).toBeLessThanOrEqual(
      (line!.latencyMs as number) * 1000 + 1,
    );
    expect(Number.isNaN(Date.parse(line!.time as string))).toBe(false);
    expect(audited(c.id)[0]).toMatchObject({ tenant: 'alice', status: 200 });
    // Secrets never reach the log.
    const text = readFileSync(auditFile, 'utf8');
    for (const k of Object.values(KEYS)) expect(text).not.toContain(k);
    expect(text).not.toContain('eyJ');
  });

  it.each([
    ['no credentials', async () => ({})],
    ['a malformed Authorization header', async () => ({ authorization: 'Basic YWxpY2U6eA==' })],
    ['a malformed token', async () => bearer('eyJhbGciOiJSUzI1NiJ9.e30.bm90LWEtc2ln')],
    ['an expired token', async () => bearer(await token({ expiresIn: -3600 }))],
    ['a wrongly signed token', async () => bearer(await token({ key: stranger }))],
    ['a token for another audience', async () => bearer(await token({ audience: 'someone-else' }))],
    ['a token of another issuer', async () => bearer(await token({ issuer: 'https://evil.test' }))],
    ['a wrong API key', async () => ({ 'x-api-key': 'alice-key-0123456789abcdeX' })],
  ])('refuses %s with 401 and a challenge, audited, before the server', async (_what, headers) => {
    const h = await headers();
    let r: Reply & { id: string } = undefined as never;
    const reached = await reach(async () => {
      r = await call('/v2/models/identity_fp32/infer', { headers: h, body: INFER });
    });
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toMatch(/^Bearer realm="triton-node"/);
    expect(r.json?.error).toBeTypeOf('string');
    expect(reached).toEqual({ calls: 0, triton: 0 });
    expect(audited(r.id)).toEqual([expect.objectContaining({ status: 401, tenant: null, route: 'infer' })]);
  });

  it('keeps every model route closed without credentials; health is open, metrics closed by config', async () => {
    for (const path of [
      '/v2/models/identity_fp32',
      '/v2/models/identity_fp32/config',
      '/v2/models/stats',
      '/v2',
    ]) {
      expect((await call(path)).status, path).toBe(401);
    }
    expect((await call('/v2/repository/index', { body: {} })).status).toBe(401);
    expect((await call('/metrics')).status).toBe(401);
    expect((await call('/v2/health/live')).status).toBe(200);
  });

  it('refuses a valid token whose tenant is not configured with 403', async () => {
    const r = await call('/v2/models/identity_fp32', { headers: bearer(await token({ tenant: 'mallory' })) });
    expect(r.status).toBe(403);
    expect(audited(r.id)[0]).toMatchObject({ status: 403, tenant: 'mallory' });
  });
});

describe('tenants', () => {
  it.each([
    ['GET', ''],
    ['GET', '/config'],
    ['GET', '/ready'],
    ['GET', '/stats'],
    ['POST', '/infer'],
    ['POST', '/generate'],
    ['POST', '/generate_stream'],
    ['GET', '/versions/1'],
    ['POST', '/versions/1/infer'],
  ])(
    "answers %s …%s of another tenant's model exactly as of an unknown one, before the server",
    async (method, tail) => {
      const body = method === 'POST' ? INFER_INT : undefined;
      let forbidden: Reply & { id: string } = undefined as never;
      const reached = await reach(async () => {
        forbidden = await call(`/v2/models/square_int32${tail}`, {
          method: method as 'GET',
          headers: bearer(KEYS.alice),
          body,
        });
      });
      expect(reached).toEqual({ calls: 0, triton: 0 });
      const unknown = await call(`/v2/models/no_such_model${tail}`, {
        method: method as 'GET',
        headers: bearer(KEYS.root),
        body,
      });
      expect(unknown.status).toBeGreaterThanOrEqual(400);
      expect(forbidden.status).toBe(unknown.status);
      expect(JSON.stringify(forbidden.json).replaceAll('square_int32', 'X')).toBe(
        JSON.stringify(unknown.json).replaceAll('no_such_model', 'X'),
      );
      expect(audited(forbidden.id)[0]).toMatchObject({
        tenant: 'alice',
        status: unknown.status,
        model: 'square_int32',
      });
    },
  );

  it('lists only the tenant’s own models in the index and in statistics', async () => {
    const mine = await call('/v2/repository/index', { headers: bearer(KEYS.alice), body: {} });
    const names = (mine.json as unknown as Array<{ name: string }>).map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((n) => n.startsWith('identity_'))).toBe(true);
    const all = await call('/v2/repository/index', { headers: bearer(KEYS.root), body: {} });
    expect((all.json as unknown as unknown[]).length).toBeGreaterThan(names.length);
    const stats = await call('/v2/models/stats', { headers: bearer(KEYS.bob) });
    expect((stats.json!.model_stats as Array<{ name: string }>).map((s) => s.name).sort()).toEqual([
      'identity_int32',
      'square_int32',
    ]);
  });

  it('refuses load, unload and shared memory to non-admin tenants with 403, before the server', async () => {
    const paths = [
      '/v2/repository/models/identity_fp32/load',
      '/v2/repository/models/identity_fp32/unload',
      '/v2/systemsharedmemory/region/r/register',
    ];
    for (const path of paths) {
      let r: Reply & { id: string } = undefined as never;
      const reached = await reach(async () => {
        r = await call(path, { headers: bearer(KEYS.alice), body: {} });
      });
      expect(r.status, path).toBe(403);
      expect(reached, path).toEqual({ calls: 0, triton: 0 });
      expect(audited(r.id)[0]).toMatchObject({ status: 403, tenant: 'alice' });
    }
    expect(await served().model('identity_fp32').isReady()).toBe(true);
  });

  it("refuses Triton's log and trace settings to non-admin tenants with 403, before the server", async () => {
    const log = served().logSettings();
    const asks: [string, unknown][] = [
      ['/v2/logging', undefined],
      ['/v2/logging', { log_error: false, log_warning: false }],
      ['/v2/trace/setting', undefined],
      ['/v2/trace/setting', { trace_rate: '1' }],
      ['/v2/models/identity_fp32/trace/setting', { trace_count: '5' }],
    ];
    for (const [path, body] of asks) {
      let r: Reply & { id: string } = undefined as never;
      const reached = await reach(async () => {
        r = await call(path, { headers: bearer(KEYS.alice), body });
      });
      expect(r.status, path).toBe(403);
      expect(reached, path).toEqual({ calls: 0, triton: 0 });
      expect(audited(r.id)[0]).toMatchObject({ status: 403, tenant: 'alice', route: expect.any(String) });
    }
    expect(served().logSettings()).toEqual(log);
    expect((await call('/v2/trace/setting', { headers: bearer(KEYS.root) })).json).toMatchObject({
      trace_rate: '1000',
    });
    expect((await call('/v2/logging', { headers: bearer(KEYS.root) })).status).toBe(200);
  });
});

describe('input hardening', () => {
  it.each([
    ['..', 'a..b'],
    ['%2f', 'identity_fp32%2f..%2fsecret'],
    ['%2F', 'a%2Fb'],
    ['NUL', 'identity_fp32%00'],
    ['a control character', 'a%0Ab'],
    ['a backslash', 'a%5Cb'],
  ])('refuses a model name with %s with 400 before the server', async (_what, name) => {
    let r: Reply & { id: string } = undefined as never;
    const reached = await reach(async () => {
      r = await call(`/v2/models/${name}/infer`, { headers: bearer(KEYS.root), body: INFER });
    });
    expect(r.status).toBe(400);
    expect(r.json?.error).toMatch(/^invalid model name/);
    expect(reached).toEqual({ calls: 0, triton: 0 });
    expect(audited(r.id)[0]).toMatchObject({ status: 400, tenant: 'root' });
  });

  it('refuses a body past maxBodyBytes with 413, audited, before Triton', async () => {
    const big = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }],
      pad: 'x'.repeat(2 * 1024 * 1024),
    });
    let r: Reply & { id: string } = undefined as never;
    const reached = await reach(async () => {
      r = await call('/v2/models/identity_fp32/infer', { headers: bearer(KEYS.alice), body: big });
    });
    expect(r.status).toBe(413);
    expect(reached.triton).toBe(0);
    expect(audited(r.id)[0]).toMatchObject({ status: 413, tenant: 'alice' });
  });

  it('answers headers past maxHeaderSize with 431 and audits it (the clientError listener)', async () => {
    const h = http.createServer({ ...SERVE_HTTP_OPTIONS, maxHeaderSize: 4096 }, gw().gateway.handler);
    h.on('clientError', gw().gateway.guard!.clientError);
    await new Promise<void>((resolve) => h.listen(0, '127.0.0.1', resolve));
    try {
      const before = auditLines().filter((l) => l.status === 431).length;
      const calls = serverCalls;
      const r = await request(
        `http://127.0.0.1:${(h.address() as AddressInfo).port}/v2/models/identity_fp32`,
        {
          headers: { ...bearer(KEYS.alice), 'x-padding': 'p'.repeat(8192) },
        },
      );
      await r.body.dump();
      expect(r.statusCode).toBe(431);
      expect(serverCalls).toBe(calls);
      const lines = auditLines().filter((l) => l.status === 431);
      expect(lines.length).toBe(before + 1);
      expect(lines.at(-1)).toMatchObject({
        route: 'client_error',
        tenant: null,
        error: 'HPE_HEADER_OVERFLOW',
      });
    } finally {
      h.closeAllConnections();
      await new Promise((resolve) => h.close(resolve));
    }
  });
});

describe('rate limits and concurrency', () => {
  it('answers 429 with an integer Retry-After once the bucket is empty, and update() changes the limit', async () => {
    const key = 'carol-key-0123456789abcdef';
    const current = options.guard!;
    const next: GuardOptions = {
      ...current,
      apiKeys: [...current.apiKeys!, { sha256: hashApiKey(key), tenant: 'carol' }],
    };
    gw().gateway.guard!.update(next);
    const statuses: number[] = [];
    let limited: Reply & { id: string } = undefined as never;
    for (let i = 0; i < 4; i++) {
      const r = await call('/v2/models/identity_fp32/infer', { headers: { 'x-api-key': key }, body: INFER });
      statuses.push(r.status);
      if (r.status === 429) limited = r;
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses.slice(2)).toContain(429);
    expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(audited(limited.id)[0]).toMatchObject({ status: 429, tenant: 'carol' });
    // A bad config is refused and the old one stays.
    expect(() =>
      gw().gateway.guard!.update({ ...next, tenants: { carol: { limits: { requestsPerSecond: -1 } } } }),
    ).toThrow(/requestsPerSecond/);
    gw().gateway.guard!.update({
      ...next,
      tenants: {
        ...next.tenants,
        carol: { models: ['identity_fp32'], limits: { requestsPerSecond: 1000, requestBurst: 1000 } },
      },
    });
    await new Promise((r) => setTimeout(r, 50));
    const after = await Promise.all(
      Array.from({ length: 5 }, () =>
        call('/v2/models/identity_fp32/infer', { headers: { 'x-api-key': key }, body: INFER }),
      ),
    );
    expect(after.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('caps a tenant’s requests in flight (429 past maxConcurrent)', async () => {
    gw().gateway.guard!.update({
      ...options.guard!,
      tenants: {
        ...options.guard!.tenants,
        bob: { models: ['square_int32', 'identity_delay'], limits: { maxConcurrent: 1 } },
      },
    });
    const body = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }] };
    const both = await Promise.all([
      call('/v2/models/identity_delay/infer', { headers: bearer(KEYS.bob), body }),
      call('/v2/models/identity_delay/infer', { headers: bearer(KEYS.bob), body }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 429]);
    expect(gw().gateway.guard!.inFlight('bob')).toBe(0);
    gw().gateway.guard!.update(options.guard!);
  });
});

describe('over gRPC', () => {
  type Unary = (
    req: object,
    meta: grpc.Metadata,
    cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void,
  ) => void;
  let client: grpc.Client & Record<string, Unary>;
  let grpcServer: grpc.Server;
  beforeAll(async () => {
    grpcServer = new grpc.Server();
    await gw().gateway.addToGrpcServer(grpcServer);
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const Client = kserveClient<Record<string, Unary>>();
    client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    client?.close();
    grpcServer?.forceShutdown();
  });

  function rpc(
    method: string,
    req: object,
    meta: Record<string, string> = {},
  ): Promise<Record<string, unknown>> {
    const m = new grpc.Metadata();
    for (const [k, v] of Object.entries(meta)) m.set(k, v);
    return new Promise((resolve, reject) =>
      client[method]!(req, m, (err, res) => (err ? reject(err) : resolve(res))),
    );
  }
  const inferMsg = (model: string, id: string) => ({
    model_name: model,
    id,
    inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: ['1'], contents: { int_contents: [4] } }],
  });

  it('serves an authenticated tenant (authorization or x-api-key metadata)', async () => {
    const r = await rpc('ModelInfer', inferMsg('identity_int32', 'g-ok'), {
      authorization: `Bearer ${KEYS.bob}`,
    });
    expect(r.model_name).toBe('identity_int32');
    await expect(rpc('ServerLive', {})).resolves.toMatchObject({ live: true });
    const idx = await rpc('RepositoryIndex', {}, { 'x-api-key': KEYS.bob });
    expect((idx.models as Array<{ name: string }>).map((m) => m.name).sort()).toEqual([
      'identity_int32',
      'square_int32',
    ]);
    expect(audited('g-ok')[0]).toMatchObject({
      protocol: 'grpc',
      tenant: 'bob',
      route: 'infer',
      status: 200,
      queueUs: expect.any(Number),
      computeUs: expect.any(Number),
    });
  });

  it('answers UNAUTHENTICATED, NOT_FOUND (as unknown) and PERMISSION_DENIED, before the server', async () => {
    const reached = await reach(async () => {
      await expect(rpc('ModelInfer', inferMsg('square_int32', 'g-anon'))).rejects.toMatchObject({
        code: grpc.status.UNAUTHENTICATED,
      });
      await expect(
        rpc('ModelInfer', inferMsg('square_int32', 'g-exp'), bearer(await token({ expiresIn: -3600 }))),
      ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
      await expect(rpc('ModelMetadata', { name: 'square_int32' }, bearer(KEYS.alice))).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: "Request for unknown model: 'square_int32' is not found",
      });
      await expect(rpc('ModelReady', { name: 'square_int32' }, bearer(KEYS.alice))).resolves.toMatchObject({
        ready: false,
      });
      await expect(
        rpc('RepositoryModelUnload', { model_name: 'square_int32' }, bearer(KEYS.alice)),
      ).rejects.toMatchObject({
        code: grpc.status.PERMISSION_DENIED,
      });
      await expect(
        rpc('LogSettings', { settings: { log_error: { bool_param: false } } }, bearer(KEYS.alice)),
      ).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
      await expect(
        rpc('TraceSetting', { settings: { trace_rate: { value: ['1'] } } }, bearer(KEYS.alice)),
      ).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
      await expect(rpc('ModelInfer', inferMsg('a..b', 'g-dots'), bearer(KEYS.root))).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
      });
    });
    expect(reached).toEqual({ calls: 0, triton: 0 });
    expect(audited('g-anon')[0]).toMatchObject({ protocol: 'grpc', status: 401, tenant: null });
    expect(audited('g-dots')[0]).toMatchObject({ status: 400 });
    const unknown = await rpc('ModelMetadata', { name: 'no_such_model' }, bearer(KEYS.root)).catch((e) => e);
    expect(unknown.code).toBe(grpc.status.NOT_FOUND);
    expect(unknown.details.replace('no_such_model', 'X')).toBe("Request for unknown model: 'X' is not found");
    await expect(rpc('ModelReady', { name: 'no_such_model' }, bearer(KEYS.root))).resolves.toMatchObject({
      ready: false,
    });
    const forbidden = await rpc('ModelInfer', inferMsg('square_int32', 'g-hid'), bearer(KEYS.alice)).catch(
      (e) => e,
    );
    const missing = await rpc('ModelInfer', inferMsg('no_such_model', 'g-unk'), bearer(KEYS.root)).catch(
      (e) => e,
    );
    expect(forbidden.code).toBe(missing.code);
    expect(forbidden.details.replaceAll('square_int32', 'X')).toBe(
      missing.details.replaceAll('no_such_model', 'X'),
    );
  });

  it('admits and audits each ModelStreamInfer message on its own', async () => {
    function stream(meta: Record<string, string>, msgs: object[]): Promise<Array<Record<string, unknown>>> {
      const m = new grpc.Metadata();
      for (const [k, v] of Object.entries(meta)) m.set(k, v);
      return new Promise((resolve, reject) => {
        const call = (
          client as unknown as {
            ModelStreamInfer(meta: grpc.Metadata): grpc.ClientDuplexStream<object, Record<string, unknown>>;
          }
        ).ModelStreamInfer(m);
        const got: Array<Record<string, unknown>> = [];
        call.on('data', (d) => got.push(d));
        call.on('end', () => resolve(got));
        call.on('error', reject);
        for (const msg of msgs) call.write(msg);
        call.end();
      });
    }
    const square = (id: string) => ({
      model_name: 'square_int32',
      id,
      inputs: [{ name: 'IN', datatype: 'INT32', shape: ['1'], contents: { int_contents: [2] } }],
    });
    const ok = await stream({ 'x-api-key': KEYS.bob }, [square('s-ok')]);
    expect(ok.length).toBe(2);
    expect(ok.every((m) => m.error_message === '')).toBe(true);
    const reached = await reach(async () => {
      const anon = await stream({}, [square('s-anon')]);
      expect(anon.map((m) => m.error_message)).toEqual(['credentials are required']);
      const other = await stream({ 'x-api-key': KEYS.alice }, [square('s-alice')]);
      expect(other[0]!.error_message).toMatch(/^Request for unknown model: 'square_int32' is not found/);
    });
    expect(reached).toEqual({ calls: 0, triton: 0 });
    expect(audited('s-ok')[0]).toMatchObject({ route: 'stream_infer', tenant: 'bob', status: 200 });
    expect(audited('s-anon')[0]).toMatchObject({ route: 'stream_infer', tenant: null, status: 401 });
    expect(audited('s-alice')[0]).toMatchObject({ tenant: 'alice', status: 404 });
  });

  it('answers RESOURCE_EXHAUSTED past a rate limit', async () => {
    gw().gateway.guard!.update({
      ...options.guard!,
      tenants: {
        ...options.guard!.tenants,
        bob: { models: ['identity_int32'], limits: { requestsPerSecond: 1, requestBurst: 1 } },
      },
    });
    const results = await Promise.allSettled(
      [1, 2, 3].map(() =>
        rpc('ModelInfer', inferMsg('identity_int32', `g-rl-${++counter}`), bearer(KEYS.bob)),
      ),
    );
    const codes = results.map((r) => (r.status === 'fulfilled' ? 0 : (r.reason as grpc.ServiceError).code));
    expect(codes.filter((c) => c === 0).length).toBe(1);
    expect(codes.filter((c) => c === grpc.status.RESOURCE_EXHAUSTED).length).toBe(2);
    gw().gateway.guard!.update(options.guard!);
  });
});

describe('GatewayGuard on its own', () => {
  const req = (headers: Record<string, string>, extra: Partial<GuardRequest> = {}): GuardRequest => ({
    protocol: 'http',
    route: 'infer',
    model: 'm',
    headers,
    requestId: 'r',
    ...extra,
  });
  const status = async (guard: GatewayGuard, r: GuardRequest) => {
    try {
      (await guard.admit(r)).done({ status: 200 });
      return 200;
    } catch (err) {
      return (err as { status: number }).status;
    }
  };
  const tenants = { t: { models: ['m'] } };

  it('verifies HS256 with a secret, ES256 with a PEM key; refuses alg none, a wrong alg, a future nbf, no exp', async () => {
    const secret = 's'.repeat(40);
    const hs = new GatewayGuard({ jwt: { secret }, tenants });
    const sign = (alg: string, key: Parameters<SignJWT['sign']>[0], claims: Record<string, unknown> = {}) =>
      new SignJWT({ tenant: 't', ...claims }).setProtectedHeader({ alg }).setExpirationTime('1m').sign(key);
    const secretKey = new TextEncoder().encode(secret);
    expect(await status(hs, req(bearer(await sign('HS256', secretKey))))).toBe(200);
    expect(await status(hs, req(bearer(await sign('HS512', secretKey))))).toBe(200);
    expect(await status(hs, req(bearer(await sign('HS256', new TextEncoder().encode('x'.repeat(40))))))).toBe(
      401,
    );
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"tenant":"t"}').toString('base64url')}.`;
    expect(await status(hs, req(bearer(none)))).toBe(401);
    expect(
      await status(
        hs,
        req(bearer(await sign('HS256', secretKey, { nbf: Math.floor(Date.now() / 1000) + 600 }))),
      ),
    ).toBe(401);
    const noExp = await new SignJWT({ tenant: 't' }).setProtectedHeader({ alg: 'HS256' }).sign(secretKey);
    expect(await status(hs, req(bearer(noExp)))).toBe(401);
    const ec = await generateKeyPair('ES256', { extractable: true });
    const pem = await exportSPKI(ec.publicKey);
    const es = new GatewayGuard({ jwt: { publicKey: pem }, tenants });
    expect(await status(es, req(bearer(await sign('ES256', ec.privateKey))))).toBe(200);
    // An HMAC made with the public key's text as the secret (the classic confusion) is refused.
    expect(await status(es, req(bearer(await sign('HS256', new TextEncoder().encode(pem)))))).toBe(401);
    // A token expired less than clockToleranceSeconds ago still passes; past it, not.
    const now = Math.floor(Date.now() / 1000);
    const skewed = new GatewayGuard({ jwt: { secret, clockToleranceSeconds: 30 }, tenants });
    const justExpired = await new SignJWT({ tenant: 't' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(now - 10)
      .sign(secretKey);
    expect(await status(skewed, req(bearer(justExpired)))).toBe(200);
    expect(await status(hs, req(bearer(justExpired)))).toBe(401);
  });

  it('refuses bad options with a TypeError naming the option', () => {
    expect(() => new GatewayGuard({ apiKeys: [{ sha256: 'not-hex', tenant: 't' }], tenants })).toThrow(
      /apiKeys\[0\]\.sha256/,
    );
    expect(
      () => new GatewayGuard({ apiKeys: [{ sha256: hashApiKey('k'), tenant: 'nobody' }], tenants }),
    ).toThrow(/tenant/);
    expect(() => new GatewayGuard({ jwt: { secret: 'short' } })).toThrow(/at least 32 bytes/);
    expect(() => new GatewayGuard({ jwt: {} })).toThrow(/exactly one of/);
    expect(() => new GatewayGuard({ open: ['infer'] })).toThrow(/guard\.open/);
    expect(() => new GatewayGuard({ tenants: { t: { limits: { maxConcurrent: 1.5 } } } })).toThrow(
      /maxConcurrent/,
    );
    expect(() => new GatewayGuard({ tenants: { t: { modles: [] } as never } })).toThrow(
      /unknown option 'modles'/,
    );
  });

  it('limits body bytes per tenant and requests per tenant×model; a refusal spends nothing', async () => {
    const guard = new GatewayGuard({
      tenants: {
        anonymous: {
          models: ['*'],
          limits: { bytesPerSecond: 1500, bytesBurst: 1500 },
          perModel: { 'slow-*': { requestsPerSecond: 1, requestBurst: 1 } },
        },
      },
    });
    const at = (model: string, bytesIn: number) => status(guard, req({}, { model, bytesIn }));
    expect(await at('m', 1000)).toBe(200);
    expect(await at('m', 1000)).toBe(429);
    expect(await at('m', 400)).toBe(200);
    // Each model of the glob has its own bucket; other models are not limited by it.
    const fresh = new GatewayGuard({
      tenants: {
        anonymous: { models: ['*'], perModel: { 'slow-*': { requestsPerSecond: 1, requestBurst: 1 } } },
      },
    });
    const call = (model: string) => status(fresh, req({}, { model }));
    expect([
      await call('slow-a'),
      await call('slow-a'),
      await call('slow-b'),
      await call('fast'),
      await call('fast'),
    ]).toEqual([200, 429, 200, 200, 200]);
  });

  it('spends generated tokens against the tenant’s tokens/s bucket', async () => {
    const guard = new GatewayGuard({
      tenants: { anonymous: { models: ['*'], limits: { tokensPerSecond: 10, tokensBurst: 10 } } },
    });
    const a = await guard.admit(req({}));
    expect(a.tenant).toBe('anonymous');
    // Open routes (health by default) are never limited: probes keep working.
    const strict = new GatewayGuard({
      tenants: { anonymous: { limits: { requestsPerSecond: 1, requestBurst: 1 } } },
    });
    const probes: number[] = [];
    for (let i = 0; i < 5; i++)
      probes.push(await status(strict, req({}, { route: 'health', model: undefined })));
    expect(probes).toEqual([200, 200, 200, 200, 200]);
    expect(a.spendTokens(8, 'm')).toBe(true);
    expect(a.spendTokens(8, 'm')).toBe(false);
    a.done({ status: 200 });
  });

  it('rotates the audit file past maxBytes, keeping `keep` older files with the newest lines whole', async () => {
    const file = join(dir, 'rotate.log');
    const guard = new GatewayGuard({ audit: { file, maxBytes: 2000, keep: 2, flushIntervalMs: 0 } });
    for (let i = 0; i < 40; i++)
      (await guard.admit(req({}, { requestId: `rot-${i}` }))).done({ status: 200 });
    guard.close();
    const files = [`${file}.2`, `${file}.1`, file];
    const lines = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    );
    for (const f of files) expect(statSync(f).size).toBeLessThanOrEqual(2000);
    expect(() => statSync(`${file}.3`)).toThrow();
    // The newest lines survive, in order, each whole.
    const ids = lines.map((l) => JSON.parse(l).requestId as string);
    expect(ids.at(-1)).toBe('rot-39');
    const first = Number(ids[0]!.slice(4));
    expect(first).toBeGreaterThan(0);
    expect(ids).toEqual(Array.from({ length: 40 - first }, (_, i) => `rot-${first + i}`));
  });

  it('writes every line to a stream on close, even within the flush interval', async () => {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        chunks.push(String(chunk));
        cb();
      },
    });
    const guard = new GatewayGuard({ audit: { stream, flushIntervalMs: 60_000 } });
    for (let i = 0; i < 3; i++) (await guard.admit(req({}, { requestId: `s-${i}` }))).done({ status: 200 });
    expect(chunks.join('')).toBe('');
    guard.close();
    expect(
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).requestId),
    ).toEqual(['s-0', 's-1', 's-2']);
  });
});

describe('triton-node serve with "gateway.guard" in --config', () => {
  it('authenticates, answers 431 past --max-header-bytes, and has every line in the audit file after SIGTERM', async () => {
    const audit = join(dir, 'serve-audit.log');
    const config = join(dir, 'serve.json');
    writeFileSync(
      config,
      JSON.stringify({
        maxHeaderBytes: 4096,
        gateway: {
          guard: {
            apiKeys: [{ sha256: hashApiKey(KEYS.alice), tenant: 'alice' }],
            tenants: { alice: { models: ['identity_fp32'] } },
            audit: { file: audit, flushIntervalMs: 60_000 },
          },
        },
      }),
    );
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../../triton-node/lib/cli/main.ts', import.meta.url)),
        'serve',
        ...[
          '--repository',
          MODELS,
          '--library',
          LIBRARY_PATH,
          ...(BACKEND_DIR ? ['--backend-dir', BACKEND_DIR] : []),
        ],
        ...['--model-control-mode', 'explicit', '--load-model', 'identity_fp32', '--host', '127.0.0.1'],
        ...['--http-port', '0', '--no-grpc', '--config', config],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /"httpPort":(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      void exit.then((code) => reject(new Error(`serve exited ${code}: ${out}`)));
    });
    const url = `http://127.0.0.1:${port}/v2/models/identity_fp32`;
    const statuses: number[] = [];
    for (const headers of [
      {},
      { 'x-api-key': KEYS.alice },
      { 'x-api-key': KEYS.alice, 'x-pad': 'p'.repeat(8192) },
    ]) {
      const r = await request(url, { headers });
      await r.body.dump();
      statuses.push(r.statusCode);
    }
    expect(statuses).toEqual([401, 200, 431]);
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    // Buffered for a minute, yet all there: the shutdown closes the gateway, which flushes.
    const lines = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.status)).toEqual([401, 200, 431]);
  });
});
