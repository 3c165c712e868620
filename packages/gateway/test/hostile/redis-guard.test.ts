// The guard's shared state on Redis against a hostile world (issue 40):
// Redis that comes back empty (a restart without persistence, FLUSHALL), a
// deny list replaced behind the replicas' backs, a key of the wrong type, an
// outage while a credential is revoked, revocations that expire, keys that
// must expire in Redis, and a tenant that declares a body it never sends.
// A real redis-server (test/gateway/redis-server.ts) is started, stopped,
// flushed and stalled with its own commands; every wait is for a condition
// (what Redis holds, what a replica answers) with a bound that names what it saw.
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { SETTLE_MS, useServer } from '@triton-node/test-support/helpers.js';
import { Redis } from 'ioredis';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, GatewayGuard, type GuardOptions, createGateway, hashApiKey } from '../../lib/index.js';
import { SERVE_HTTP_OPTIONS } from '../helpers.js';
import { noRedis, useRedis } from '../redis-server.js';

const CLI = fileURLToPath(new URL('../../../triton-node/lib/cli/main.ts', import.meta.url));
const server = useServer(['identity_fp32']);
const redis = useRedis();

const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const LEASE_MS = 1000;

let admin: Redis | undefined;
beforeAll(() => {
  if (noRedis === false) admin = new Redis(redis().url);
});
afterAll(() => {
  admin?.disconnect();
});
/** A plain client of the test's Redis, for reading and breaking what the guard keeps there. */
function db(): Redis {
  if (admin === undefined) throw new Error('no Redis');
  return admin;
}

/** Three tenants: any model, a concurrency cap of 4, and buckets of every kind (the tenant's and model m's). */
function baseOptions(): GuardOptions {
  return {
    jwt: { secret: SECRET },
    tenants: {
      t: { models: ['*'] },
      capped: { models: ['*'], limits: { maxConcurrent: 4 } },
      reader: { models: ['*'], limits: { bytesPerSecond: 1, bytesBurst: 1000 } },
      metered: {
        models: ['*'],
        limits: {
          requestsPerSecond: 200,
          requestBurst: 100,
          bytesPerSecond: 1000,
          bytesBurst: 1000,
          tokensPerSecond: 10,
          tokensBurst: 10,
        },
        perModel: { m: { requestsPerSecond: 50, bytesPerSecond: 500 } },
      },
    },
  };
}

/** The same on the test's Redis, under `prefix`. */
function guardOptions(prefix: string): GuardOptions {
  return {
    ...baseOptions(),
    limits: {
      store: { redis: { url: redis().url }, keyPrefix: prefix, revocationPollMs: 100, leaseMs: LEASE_MS },
    },
  };
}

/** `n` replicas sharing one store (keys under `prefix`); closed by the caller. */
function replicas(prefix: string, n = 3): GatewayGuard[] {
  return Array.from({ length: n }, () => new GatewayGuard(guardOptions(prefix)));
}

function token(jti: string, tenant = 't'): Promise<string> {
  return new SignJWT({ tenant, jti })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('10m')
    .sign(Buffer.from(SECRET));
}

let requestId = 0;
function admit(g: GatewayGuard, jwt: string, bytesIn?: number) {
  return g.admit({
    protocol: 'grpc',
    route: 'infer',
    model: 'm',
    headers: { authorization: `Bearer ${jwt}` },
    ...(bytesIn === undefined ? {} : { bytesIn }),
    requestId: `r${requestId++}`,
  });
}

async function statusOf(g: GatewayGuard, jwt: string): Promise<number> {
  try {
    (await admit(g, jwt)).done({ status: 200 });
    return 200;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

/** What each replica answers a credential now. */
function statuses(gs: GatewayGuard[], jwt: string): Promise<number[]> {
  return Promise.all(gs.map((g) => statusOf(g, jwt)));
}

/** Resolves with `probe()`'s value once `ok` holds; rejects after `ms` naming `what` and the last value seen. */
async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, ms = SETTLE_MS) {
  const end = Date.now() + ms;
  for (;;) {
    const seen = await probe();
    if (ok(seen)) return seen;
    if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(seen)} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const allRefuse = (s: number[]) => s.every((x) => x === 401);
const allAdmit = (s: number[]) => s.every((x) => x === 200);

/** The deny list's entry of a token id in Redis: its expiry (ms since the epoch), or null. */
function entry(prefix: string, jti: string): Promise<string | null> {
  return db().zscore(`${prefix}{revoked}:set`, `jti:${jti}`);
}

function closeAll(gs: GatewayGuard[]): void {
  for (const g of gs) g.close();
}

describe.skipIf(noRedis !== false)('revocation on Redis: no replica ever misses one', () => {
  it('a revocation made while Redis restarts empty reaches every replica; the ones before it stay', async () => {
    const gs = replicas('restart:');
    try {
      const before = await token('before-restart');
      const during = await token('during-restart');
      expect(await statuses(gs, before)).toEqual([200, 200, 200]);
      await gs[0]!.revoke({ jti: 'before-restart' });
      await until('replicas refusing the first revocation', () => statuses(gs, before), allRefuse);
      // Redis restarts without its data, and a credential is revoked (from a shell) before the
      // replicas are back: the list's counter starts again where it was when they last read it.
      await redis().kill();
      await redis().restart();
      await GatewayGuard.revokeInStore(guardOptions('restart:'), { jti: 'during-restart' });
      // Before: never (each replica read version 1, saw version 1 again, and never read the list).
      await until(
        'replicas refusing the revocation made during the restart',
        () => statuses(gs, during),
        allRefuse,
      );
      expect(await statuses(gs, before)).toEqual([401, 401, 401]);
      // What the replicas knew went back to Redis: a replica started now refuses it too.
      await until(
        'the first revocation back in Redis',
        () => entry('restart:', 'before-restart'),
        (e) => e !== null,
      );
      const fresh = new GatewayGuard(guardOptions('restart:'));
      try {
        expect(await statusOf(fresh, before)).toBe(401);
      } finally {
        fresh.close();
      }
    } finally {
      closeAll(gs);
    }
  });

  it('FLUSHALL un-revokes nothing: every replica keeps refusing and writes the list back', async () => {
    const gs = replicas('flush:');
    try {
      const kept = await token('kept-over-flush');
      expect(await statuses(gs, kept)).toEqual([200, 200, 200]);
      await gs[1]!.revoke({ jti: 'kept-over-flush', expiresAt: Date.now() + 600_000 });
      await until('replicas refusing the revocation', () => statuses(gs, kept), allRefuse);
      await db().flushall();
      // Before: every replica read the empty list, and the credential worked again on all of them.
      const back = await until(
        'the revocation back in Redis',
        () => entry('flush:', 'kept-over-flush'),
        (e) => e !== null,
      );
      expect(Number(back)).toBeGreaterThan(Date.now());
      expect(await statuses(gs, kept)).toEqual([401, 401, 401]);
      const fresh = new GatewayGuard(guardOptions('flush:'));
      try {
        expect(await statusOf(fresh, kept)).toBe(401);
      } finally {
        fresh.close();
      }
    } finally {
      closeAll(gs);
    }
  });

  it('a list replaced behind the replicas, with the same count, is told apart by its epoch', async () => {
    const gs = replicas('epoch:');
    try {
      const one = await token('epoch-one');
      const other = await token('epoch-other');
      expect(await statuses(gs, other)).toEqual([200, 200, 200]);
      await gs[0]!.revoke({ jti: 'epoch-one' });
      await until('replicas refusing the revocation', () => statuses(gs, one), allRefuse);
      const version = await db().hgetall('epoch:{revoked}:version');
      expect(Object.keys(version).sort()).toEqual(['epoch', 'n']);
      // In one step, as a Redis that came back empty and took one revocation before anyone
      // looked: a new list with the same count and size, under another epoch.
      await db()
        .multi()
        .flushall()
        .zadd('epoch:{revoked}:set', Number.MAX_SAFE_INTEGER, 'jti:epoch-other')
        .hset('epoch:{revoked}:version', 'epoch', 'another-epoch', 'n', version.n!)
        .exec();
      await until('replicas refusing the new list’s revocation', () => statuses(gs, other), allRefuse);
      expect(await statuses(gs, one)).toEqual([401, 401, 401]);
      await until(
        'the first revocation written back',
        () => entry('epoch:', 'epoch-one'),
        (e) => e !== null,
      );
    } finally {
      closeAll(gs);
    }
  });

  it('a revocation made while Redis is down holds on its replica at once and reaches the others when Redis is back', async () => {
    const gs = replicas('outage:');
    let down = false;
    try {
      const offline = await token('revoked-offline');
      expect(await statuses(gs, offline)).toEqual([200, 200, 200]);
      await redis().kill();
      down = true;
      await expect(gs[0]!.revoke({ jti: 'revoked-offline' })).rejects.toThrow(
        /^the limits store \(Redis\) did not answer: .*; this replica refuses the credential now, and writes it to the store as soon as the store takes it$/,
      );
      expect(await statusOf(gs[0]!, offline)).toBe(401);
      await redis().restart();
      down = false;
      // Before: the other replicas never heard of it (it was kept by the guard that made it alone).
      await until(
        'replicas refusing the revocation made during the outage',
        () => statuses(gs, offline),
        allRefuse,
      );
      expect(await entry('outage:', 'revoked-offline')).not.toBeNull();
    } finally {
      // The next tests need Redis, whatever failed here.
      if (down) await redis().restart();
      closeAll(gs);
    }
  });

  it('a revocation Redis refuses (a key of the wrong type) is an error, never "revoked", and is written once the key is fixed', async () => {
    const gs = replicas('wrongtype:');
    try {
      const jwt = await token('wrong-type');
      expect(await statuses(gs, jwt)).toEqual([200, 200, 200]);
      await db().set('wrongtype:{revoked}:set', 'not a sorted set');
      // Before: resolved (and the CLI printed "revoked"), with nothing revoked.
      await expect(gs[0]!.revoke({ jti: 'wrong-type' })).rejects.toThrow(/WRONGTYPE/);
      await expect(
        GatewayGuard.revokeInStore(guardOptions('wrongtype:'), { jti: 'wrong-type' }),
      ).rejects.toThrow(/the limits store \(Redis\) refused the revocation: WRONGTYPE/);
      const cli = spawnSync(
        process.execPath,
        [
          ...['--import', 'tsx', CLI, 'revoke', '--redis-url', redis().url],
          ...['--key-prefix', 'wrongtype:', '--jti', 'wrong-type'],
        ],
        { encoding: 'utf8' },
      );
      expect(cli.stdout).toBe('');
      expect(cli.stderr).toMatch(
        /^triton-node revoke: the limits store \(Redis\) refused the revocation: WRONGTYPE/,
      );
      expect(cli.status).toBe(1);
      // The replica that was asked refuses it already.
      expect(await statusOf(gs[0]!, jwt)).toBe(401);
      // The version key of the wrong type is refused the same way.
      await db().del('wrongtype:{revoked}:set');
      await db().set('wrongtype:{revoked}:version', '7');
      await expect(gs[1]!.revoke({ jti: 'wrong-type-2' })).rejects.toThrow(/WRONGTYPE/);
      await db().del('wrongtype:{revoked}:version');
      await until('replicas refusing it once the keys are fixed', () => statuses(gs, jwt), allRefuse);
      const second = await token('wrong-type-2');
      await until('the second one too', () => statuses(gs, second), allRefuse);
    } finally {
      closeAll(gs);
    }
  });

  it('a revocation answered late (Redis paused) is an error at once, holds here, and reaches every replica', async () => {
    const gs = replicas('stalled:');
    try {
      const jwt = await token('stalled');
      expect(await statuses(gs, jwt)).toEqual([200, 200, 200]);
      // Every client's commands wait from now for 1.5 s: longer than the store's 250 ms timeout.
      await db().call('CLIENT', 'PAUSE', '1500');
      await expect(gs[0]!.revoke({ jti: 'stalled' })).rejects.toThrow(/did not answer/);
      expect(await statusOf(gs[0]!, jwt)).toBe(401);
      await until('replicas refusing it once Redis answers', () => statuses(gs, jwt), allRefuse);
    } finally {
      closeAll(gs);
    }
  });

  it('a revocation is forgotten at its expiry: on every replica, and in Redis', async () => {
    const gs = replicas('expiry:');
    const local = new GatewayGuard(baseOptions());
    try {
      const jwt = await token('expiring');
      expect(await statuses([...gs, local], jwt)).toEqual([200, 200, 200, 200]);
      // Long enough for every replica to read the revocation (every 250 ms) on a busy machine.
      const expiresAt = Date.now() + 10_000;
      await gs[0]!.revoke({ jti: 'expiring', expiresAt });
      await local.revoke({ jti: 'expiring', expiresAt });
      // Redis holds the expiry (before: never, the entry stayed until Redis lost it).
      expect(Number(await entry('expiry:', 'expiring'))).toBe(expiresAt);
      await until(
        'replicas refusing it before it expires',
        () => statuses([...gs, local], jwt),
        allRefuse,
        expiresAt - Date.now(),
      );
      // Every replica, the one that revoked it and a guard without a store included, admits it again.
      await until('replicas admitting it after its expiry', () => statuses([...gs, local], jwt), allAdmit);
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
      // The next revocation leaves the expired entry out of Redis's list.
      await gs[1]!.revoke({ jti: 'after-expiry' });
      expect(await entry('expiry:', 'expiring')).toBeNull();
      expect(await entry('expiry:', 'after-expiry')).not.toBeNull();
    } finally {
      closeAll([...gs, local]);
    }
  });
});

describe.skipIf(noRedis !== false)('what the guard keeps in Redis expires', () => {
  it('every bucket key and the concurrency set carry a TTL no longer than their refill', async () => {
    const [g] = replicas('ttl:', 1);
    try {
      const metered = await token('ttl-metered', 'metered');
      const a = await admit(g!, metered, 100);
      expect(await a.spendTokens(5, 'm')).toBe(true);
      a.done({ status: 200 });
      const capped = await token('ttl-capped', 'capped');
      const held = await admit(g!, capped);
      // Refill times: requests 100/200 s, bytes 1000/1000 s, tokens 10/10 s, the model's 50/50 and 500/500 s.
      const keys = {
        'ttl:{metered}:r': 500,
        'ttl:{metered}:b': 1000,
        'ttl:{metered}:t': 1000,
        'ttl:{metered}:m:m:r': 1000,
        'ttl:{metered}:m:m:b': 1000,
        'ttl:{capped}:c': 2 * LEASE_MS,
      };
      for (const [key, refillMs] of Object.entries(keys)) {
        const ttl = await db().pttl(key);
        // Before: -1 (no TTL) for the buckets: a tenant's keys stayed in Redis for ever. A key
        // already gone (-2: a busy machine read it after its TTL) had one.
        expect(ttl, key).not.toBe(-1);
        if (ttl !== -2) expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(refillMs + 1000);
      }
      held.done({ status: 200 });
    } finally {
      g!.close();
    }
  });

  it("a dead replica's leases run out while a live replica keeps the set alive", async () => {
    const [live, dead, other] = replicas('leases:');
    try {
      const jwt = await token('leases', 'capped');
      const running = await admit(live!, jwt);
      await Promise.all([admit(dead!, jwt), admit(dead!, jwt), admit(dead!, jwt)]);
      // The replica dies holding three of the four slots: nothing renews or removes its leases.
      dead!.close();
      await expect(admit(other!, jwt)).rejects.toMatchObject({
        status: 429,
        message: "tenant 'capped' has 4 requests in flight (limit 4)",
      });
      // The live replica's request renews its own lease (and the set's TTL) all along; before, the
      // set kept the dead leases for as long as anyone touched it: the slots were blocked for ever.
      const admitted = await until(
        'a request admitted once the dead leases ran out',
        () =>
          admit(other!, jwt).then(
            (a) => {
              a.done({ status: 200 });
              return true;
            },
            () => false,
          ),
        (ok) => ok,
        20 * LEASE_MS,
      );
      expect(admitted).toBe(true);
      expect(await db().zcard('leases:{capped}:c')).toBe(1);
      running.done({ status: 200 });
    } finally {
      closeAll([live!, dead!, other!]);
    }
  });
});

describe('a request that costs more than a bucket holds', () => {
  // The documented semantics (docs/security.md, "Tenants and limits"): it passes when the bucket is
  // full and leaves it in debt, so it slows the tenant down instead of being refused for ever.
  const cases: Array<[string, () => GuardOptions]> = [
    ['this process', baseOptions],
    ...(noRedis === false
      ? [['Redis', () => guardOptions('oversize:')] as [string, () => GuardOptions]]
      : []),
  ];
  for (const [where, options] of cases) {
    it(`passes when the bucket is full and leaves it in debt (${where})`, async () => {
      const g = new GatewayGuard(options());
      try {
        const jwt = await token(`oversize-${where}`, 'metered');
        // 5000 bytes against a 1000-byte bucket (the model's is 500): admitted, the buckets in debt.
        const a = await admit(g, jwt, 5000);
        // 50 tokens against a 10-token bucket: spent too.
        expect(await a.spendTokens(50, 'm')).toBe(true);
        expect(await a.spendTokens(1, 'm')).toBe(false);
        expect(a.tokensRetryAfterSeconds(1, 'm')).toBeGreaterThanOrEqual(4);
        a.done({ status: 200 });
        // The debt is paid back at the rate: about 9 s for the model's bucket, not for ever.
        const refused = await admit(g, jwt, 1).then(
          () => undefined,
          (e: { status: number; retryAfterSeconds: number }) => e,
        );
        expect(refused?.status).toBe(429);
        expect(refused!.retryAfterSeconds).toBeGreaterThanOrEqual(4);
        expect(refused!.retryAfterSeconds).toBeLessThanOrEqual(11);
      } finally {
        g.close();
      }
    });
  }
});

describe('a body admitted on its declared size is charged once it is read', () => {
  const cases: Array<[string, () => GuardOptions]> = [
    ['this process', baseOptions],
    ...(noRedis === false
      ? [['Redis', () => guardOptions('declared:')] as [string, () => GuardOptions]]
      : []),
  ];
  for (const [where, options] of cases) {
    it(`by Admission.forModel, as the OpenAI routes name their model (${where})`, async () => {
      const g = new GatewayGuard(options());
      try {
        const jwt = await token(`declared-${where}`, 'reader');
        const declared = (bytesIn: number) =>
          g.admit({
            protocol: 'http',
            route: 'openai_chat',
            headers: { authorization: `Bearer ${jwt}` },
            bytesIn,
            bodyUnread: true,
            requestId: `d${requestId++}`,
          });
        // 800 of the tenant's 1000 bytes declared: admitted, nothing taken yet.
        const a = await declared(800);
        const b = await declared(800);
        // Read and named: the first body is charged (200 bytes left), the second no longer fits.
        await a.forModel!('m', 800);
        await expect(b.forModel!('m', 800)).rejects.toMatchObject({ status: 429 });
        a.done({ status: 200 });
        b.done({ status: 429 });
        await expect(declared(800)).rejects.toMatchObject({ status: 429 });
      } finally {
        g.close();
      }
    });
  }
});

/** Tenants of the body tests: 20 kB of bytes, refilled at 1 byte/s (nothing refills during a test). */
function bodyGuard(store?: string): GuardOptions {
  const tenants = ['huge', 'spent', 'short'];
  return {
    apiKeys: tenants.map((t) => ({ sha256: hashApiKey(`${t}-key-0123456789`), tenant: t })),
    tenants: Object.fromEntries(
      tenants.map((t) => [
        t,
        { models: ['identity_fp32'], limits: { bytesPerSecond: 1, bytesBurst: 20_000 } },
      ]),
    ),
    ...(store === undefined ? {} : { limits: { store: { redis: { url: redis().url }, keyPrefix: store } } }),
  };
}

function fp32Json(bytes: number): string {
  const text = JSON.stringify({
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2] }],
  });
  return text + ' '.repeat(bytes - text.length);
}

interface Answer {
  status: number;
  text: string;
  retryAfter?: string;
}

/** A POST of `body` whose Content-Length says `declared`; sends `body` only (and closes, when shorter). */
function post(url: string, tenant: string, declared: number, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v2/models/identity_fp32/infer`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(declared),
        'x-api-key': `${tenant}-key-0123456789`,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => {
        // A refused body is never sent: the request is over once answered.
        req.destroy();
        resolve({
          status: res.statusCode!,
          text,
          retryAfter: res.headers['retry-after'] as string | undefined,
        });
      });
    });
    req.on('error', reject);
    req.write(body);
    if (body.length === declared) req.end();
  });
}

/** A POST that declares `declared` bytes, sends `sent` and leaves; resolves once the gateway audited it. */
async function leaveMidBody(url: string, tenant: string, declared: number, sent: number, audit: string[]) {
  const lines = audit.length;
  const req = http.request(`${url}/v2/models/identity_fp32/infer`, {
    method: 'POST',
    headers: { 'content-length': String(declared), 'x-api-key': `${tenant}-key-0123456789` },
  });
  req.on('error', () => undefined);
  // Headers and the first bytes reach the gateway (flushed to the socket) before the client leaves.
  await new Promise((r) => req.write('x'.repeat(sent), r));
  req.destroy();
  return until(
    'the audit line of the request left mid-body',
    async () => audit.slice(lines).map((l) => JSON.parse(l) as { tenant: string; status: number }),
    (ls) => ls.some((l) => l.tenant === tenant),
  );
}

describe('a body is charged for the bytes read, never for what it declares', () => {
  const stores: Array<[string, string | undefined]> = [
    ['this process', undefined],
    ...(noRedis === false ? [['Redis', 'bodies:'] as [string, string]] : []),
  ];
  for (const [where, store] of stores) {
    describe(`limits in ${where}`, () => {
      const MAX_BODY = 1024 * 1024;
      let gateway: Gateway;
      let listener: http.Server;
      let url: string;
      const audit: string[] = [];
      beforeAll(async () => {
        const stream = new Writable({
          write(chunk, _enc, cb) {
            audit.push(
              ...chunk
                .toString()
                .split('\n')
                .filter((l: string) => l !== ''),
            );
            cb();
          },
        });
        gateway = createGateway(server(), {
          maxBodyBytes: MAX_BODY,
          guard: { ...bodyGuard(store), audit: { stream, flushIntervalMs: 10 } },
        });
        listener = http.createServer(SERVE_HTTP_OPTIONS, gateway.handler);
        await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
        url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
      });
      afterAll(async () => {
        gateway?.close();
        listener?.closeAllConnections();
        await new Promise((resolve) => listener?.close(resolve));
      });

      it('a Content-Length of 2^53-1 gets 413 and costs the tenant nothing', async () => {
        const huge = await post(url, 'huge', Number.MAX_SAFE_INTEGER, '');
        expect(huge.status).toBe(413);
        expect(huge.text).toContain(
          `request body of ${Number.MAX_SAFE_INTEGER} bytes exceeds the limit of ${MAX_BODY} bytes`,
        );
        // Before: 429 with Retry-After 90071992547390 (2,850 years), shared by every replica through Redis.
        const next = await post(url, 'huge', 16_000, fp32Json(16_000));
        expect(next, next.text).toMatchObject({ status: 200 });
        if (store !== undefined) {
          const level = Number(await db().hget(`${store}{huge}:b`, 't'));
          expect(level).toBeGreaterThanOrEqual(20_000 - 16_000);
          expect(level).toBeLessThan(20_000 - 16_000 + 100);
        }
      });

      it('a body over the limit gets 413, not 429, when the bytes bucket is not full; bodies read are charged', async () => {
        expect((await post(url, 'spent', 16_000, fp32Json(16_000))).status).toBe(200);
        const huge = await post(url, 'spent', MAX_BODY + 1, '');
        expect(huge.status, huge.text).toBe(413);
        // 4 kB are left: a body that fits them passes, and is charged once read (1 kB left).
        expect((await post(url, 'spent', 3000, fp32Json(3000))).status).toBe(200);
        const over = await post(url, 'spent', 3000, fp32Json(3000));
        expect(over.status, over.text).toBe(429);
        expect(over.text).toContain("rate limit of tenant 'spent' reached");
      });

      it('a body cut short costs at most the bytes read', async () => {
        // 60 kB declared (under the 1 MiB limit, three times the 20 kB bucket), 10 bytes sent.
        await leaveMidBody(url, 'short', 60_000, 10, audit);
        // Before: the 60 kB were charged at admission, and this was refused for 40,000 s.
        const next = await post(url, 'short', 16_000, fp32Json(16_000));
        expect(next, next.text).toMatchObject({ status: 200 });
      });
    });
  }
});
