/**
 * The guard's shared state on Redis (`guard.limits.store.redis`): token
 * buckets and concurrency leases that every replica takes from, and the deny
 * list of revoked credentials. `ioredis` is an optional peer dependency,
 * imported on first use; without a store nothing here is loaded.
 *
 * One admission is one round trip: a Lua script refills and takes from every
 * bucket the request needs and adds a concurrency lease, atomically, with
 * Redis's clock (replicas' clocks never meet). A tenant's keys share a hash
 * tag, so the script runs on one Redis Cluster node.
 *
 * Revocations are read from Redis by every replica every `revocationPollMs`
 * and on every reconnection (the list's version first, the whole list only
 * when it changed), so the check at admission is local and a revoked
 * credential is refused within that interval, also while Redis is down.
 * The version is an epoch (a random id given when the list is made) with a
 * counter and the list's size: a Redis that lost the list (a restart without
 * persistence, FLUSHALL, eviction) and counted up to the same number again
 * is told apart. A replica keeps every entry it read or made until its
 * expiry, and writes back whatever it knows that Redis lacks, so losing
 * Redis's data un-revokes nothing.
 */
import { randomUUID } from 'node:crypto';
import { importGatewayPeers } from '../peers.js';
import { type ResolvedStore, revocationMember } from './config.js';
import { DenyList, NEVER } from './deny-list.js';

/** The part of an ioredis client used here. */
interface RedisClient {
  status: string;
  on(event: string, fn: (...args: unknown[]) => void): unknown;
  once(event: string, fn: (...args: unknown[]) => void): unknown;
  defineCommand(name: string, spec: { numberOfKeys?: number; lua: string }): void;
  zrem(key: string, member: string): Promise<number>;
  disconnect(): void;
  quit(): Promise<unknown>;
  [command: string]: unknown;
}

interface IORedisModule {
  default: new (...args: unknown[]) => RedisClient;
  Cluster: new (...args: unknown[]) => RedisClient;
}

let ioredis: Promise<IORedisModule> | undefined;

/** Loads `ioredis` (once); rejects naming the install command when it is missing. */
export function loadRedis(): Promise<IORedisModule> {
  ioredis ??= importGatewayPeers(['ioredis'], 'shared limits (guard.limits.store.redis)').then(
    ([m]) => m as IORedisModule,
  );
  return ioredis;
}

/**
 * KEYS: the concurrency set (or a placeholder), then one hash per bucket.
 * ARGV: lease id, max concurrent (0: none), lease ms, force (1: take even
 * without room, no concurrency check), bucket count, then rate, capacity,
 * cost and need per bucket (need: what must fit now, at most the capacity:
 * a cost past it passes a full bucket and leaves it in debt). Returns {0, in
 * flight} admitted, {1, in flight} over the concurrency cap, {2, seconds to
 * wait as text} over a bucket. Every key written expires: a bucket once it
 * would be full again, the set twice a lease after its last use, and a lease
 * `leaseMs` after it was last renewed (dead ones are removed here).
 */
const ADMIT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease, maxc, leasems = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local force, n = ARGV[4] == '1', tonumber(ARGV[5])
local inflight = 0
if maxc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  inflight = redis.call('ZCARD', KEYS[1])
  if inflight >= maxc and not force then return {1, inflight} end
end
local levels = {}
local wait = 0
for i = 1, n do
  local rate, cap = tonumber(ARGV[2 + 4 * i]), tonumber(ARGV[3 + 4 * i])
  local v = redis.call('HMGET', KEYS[1 + i], 't', 'u')
  local tokens, updated = tonumber(v[1]) or cap, tonumber(v[2]) or now
  if now > updated then tokens = math.min(cap, tokens + (now - updated) / 1000 * rate) end
  levels[i] = tokens
  local need = math.min(tonumber(ARGV[5 + 4 * i]), cap)
  if tokens < need then wait = math.max(wait, (need - tokens) / rate) end
end
if wait > 0 and not force then return {2, tostring(wait)} end
for i = 1, n do
  local rate, cap, cost = tonumber(ARGV[2 + 4 * i]), tonumber(ARGV[3 + 4 * i]), tonumber(ARGV[4 + 4 * i])
  redis.call('HSET', KEYS[1 + i], 't', tostring(levels[i] - cost), 'u', now)
  redis.call('PEXPIRE', KEYS[1 + i], math.ceil((cap + math.max(0, cost - levels[i])) / rate * 1000) + 1000)
end
if maxc > 0 then
  redis.call('ZADD', KEYS[1], now + leasems, lease)
  redis.call('PEXPIRE', KEYS[1], leasems * 2)
end
return {0, inflight + 1}
`;

/** KEYS: a concurrency set; ARGV: lease ms, then the leases to extend (those still held). */
const RENEW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local leasems = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + leasems, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], leasems * 2)
return 0
`;

/**
 * KEYS: the deny list (a sorted set: member → expiry, ms since the epoch) and
 * its version (a hash: `epoch`, a random id given when the list is made, and
 * `n`, bumped at each change). ARGV: the epoch to give a list that has none
 * (a new one, or one Redis lost), then member and expiry pairs. Expired
 * entries are removed and not added; of two expiries the later holds; the
 * version changes only with the list. Returns how many entries changed.
 */
const DENY_WRITE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('HEXISTS', KEYS[2], 'epoch') == 0 then redis.call('HSET', KEYS[2], 'epoch', ARGV[1]) end
local changed = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 2, #ARGV - 1, 2 do
  local expiry, old = tonumber(ARGV[i + 1]), tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i]))
  if expiry > now and (old == nil or old < expiry) then
    redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
    changed = changed + 1
  end
end
if changed > 0 then redis.call('HINCRBY', KEYS[2], 'n', 1) end
return changed
`;

/**
 * KEYS: the deny list and its version; ARGV: the version the caller read
 * last. Returns {version} when it is the same, else {version, the entries
 * in force with their expiries}. The version is epoch:counter:size, so a list
 * lost and made again (a new epoch), or emptied behind the counter's back
 * (another size), never reads as the one before.
 */
const DENY_READ_LUA = `
local v = redis.call('HMGET', KEYS[2], 'epoch', 'n')
local version = (v[1] or '') .. ':' .. (v[2] or '0') .. ':' .. redis.call('ZCARD', KEYS[1])
if version == ARGV[1] then return {version} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {version, redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')}
`;

/**
 * One bucket of a request: its key suffix, refill rate, capacity, the cost
 * taken, and what must fit now (`need`, default the cost: a declared body
 * not read yet needs room for its size and costs nothing until read).
 */
export interface StoreBucket {
  key: string;
  rate: number;
  capacity: number;
  cost: number;
  need?: number;
}

export type StoreAnswer =
  | { kind: 'admitted'; inFlight: number; release: () => void }
  | { kind: 'concurrency'; inFlight: number }
  | { kind: 'rate'; waitSeconds: number };

/** A credential on the deny list: a token id (`jti`) or an API key id. */
export interface Revocation {
  jti?: string;
  keyId?: string;
  /** When the entry may be forgotten, ms since the epoch (a token's `exp`); default never. */
  expiresAt?: number;
}

/** What the store throws: Redis did not answer, or refused. */
export class StoreError extends Error {}

/** Thrown by the store when Redis cannot answer: the guard applies the fallback. */
export class StoreUnavailable extends StoreError {}

/** Redis answered a write with an error (a key of the wrong type, out of memory, read-only): nothing is assumed done. */
export class StoreRefused extends StoreError {}

/** ioredis's class of an error Redis replied (as opposed to no reply at all). */
function isReply(err: unknown): boolean {
  return (err as Error | undefined)?.name === 'ReplyError';
}

/** Opens an ioredis client (or cluster) for the resolved options. */
export async function connectRedis(options: ResolvedStore): Promise<RedisClient> {
  const { default: Redis, Cluster } = await loadRedis();
  const common = {
    // Fail fast while disconnected: the guard falls back rather than queueing admissions.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.timeoutMs,
    connectTimeout: Math.max(1000, options.timeoutMs),
    retryStrategy: (times: number) => Math.min(1000, 50 * 2 ** Math.min(times, 5)),
    lazyConnect: false,
  };
  const r = options.redis;
  if (r.cluster !== undefined) {
    return new Cluster(r.cluster, {
      enableOfflineQueue: false,
      redisOptions: { ...common, ...r.auth },
      clusterRetryStrategy: common.retryStrategy,
    });
  }
  if (r.sentinels !== undefined) {
    return new Redis({ ...common, ...r.auth, sentinels: r.sentinels, name: r.name });
  }
  return new Redis(r.url!, common);
}

/** Shared buckets, leases and deny list on Redis for one guard. */
export class RedisStore {
  readonly #options: ResolvedStore;
  readonly #onState: (up: boolean, reason: string) => void;
  #client: RedisClient | undefined;
  #connecting: Promise<RedisClient> | undefined;
  #up = false;
  #closed = false;
  /** Leases held by this replica, per concurrency key (renewed every third of their lifetime). */
  readonly #leases = new Map<string, Set<string>>();
  #renewTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  /**
   * The deny list as this replica knows it: every entry read from Redis or
   * revoked through this store, until its expiry, whatever Redis loses.
   */
  #denied = new DenyList();
  /** The version of the list last read in full (undefined: read it in full at the next sync). */
  #deniedVersion: string | undefined;
  #syncing: Promise<void> | undefined;
  #synced: Promise<void> | undefined;

  constructor(options: ResolvedStore, onState: (up: boolean, reason: string) => void) {
    this.#options = options;
    this.#onState = onState;
  }

  /** Whether the last exchange with Redis succeeded. */
  get up(): boolean {
    return this.#up;
  }

  #key(...parts: string[]): string {
    return `${this.#options.keyPrefix}${parts.join(':')}`;
  }

  /** The key of a tenant's bucket or set: the tenant in a hash tag, so all its keys share a slot. */
  tenantKey(tenant: string, suffix: string): string {
    return this.#key(`{${encodeURIComponent(tenant)}}`, suffix);
  }

  /** The deny list's keys: the list and its version (one hash tag: one Cluster slot). */
  #deniedKeys(): [string, string] {
    return [this.#key('{revoked}', 'set'), this.#key('{revoked}', 'version')];
  }

  #state(up: boolean, reason: string): void {
    if (this.#closed || up === this.#up) return;
    this.#up = up;
    this.#onState(up, reason);
  }

  /** The client, connected on first use; resolves once the deny list was read once (or Redis failed). */
  async start(): Promise<void> {
    this.#synced ??= this.#start();
    return this.#synced;
  }

  async #start(): Promise<void> {
    await this.#ready(await this.#connect());
    await this.#sync();
    this.#pollTimer = setInterval(() => void this.#sync(), this.#options.revocationPollMs);
    this.#pollTimer.unref();
    this.#renewTimer = setInterval(() => void this.#renew(), this.#options.leaseMs / 3);
    this.#renewTimer.unref();
  }

  /** Resolves once the client is ready, failed once, or after a few timeouts. */
  #ready(client: RedisClient): Promise<void> {
    if (client.status === 'ready') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.#options.timeoutMs * 4);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      client.once('ready', done);
      client.once('error', done);
    });
  }

  #connect(): Promise<RedisClient> {
    this.#connecting ??= connectRedis(this.#options).then((client) => {
      client.defineCommand('tritonNodeAdmit', { lua: ADMIT_LUA });
      client.defineCommand('tritonNodeRenew', { numberOfKeys: 1, lua: RENEW_LUA });
      client.defineCommand('tritonNodeDenyWrite', { numberOfKeys: 2, lua: DENY_WRITE_LUA });
      client.defineCommand('tritonNodeDenyRead', { numberOfKeys: 2, lua: DENY_READ_LUA });
      client.on('ready', () => {
        this.#state(true, 'connected');
        // Whatever happened while this replica was away, the list is read in full (and repaired).
        this.#deniedVersion = undefined;
        if (this.#pollTimer !== undefined) void this.#sync();
      });
      client.on('error', (err) => this.#state(false, (err as Error).message));
      client.on('close', () => this.#state(false, 'connection closed'));
      if (this.#closed) client.disconnect();
      this.#client = client;
      return client;
    });
    return this.#connecting;
  }

  #failed(err: unknown): StoreUnavailable {
    const message = (err as Error).message ?? String(err);
    this.#state(false, message);
    return new StoreUnavailable(`the limits store (Redis) did not answer: ${message}`);
  }

  /**
   * Takes `cost` from every bucket and, with `maxConcurrent`, a lease on the
   * tenant's concurrency set: all or nothing. `force` takes regardless (bytes
   * already passed on). Rejects with StoreUnavailable when Redis does not answer.
   */
  async take(
    tenant: string,
    buckets: StoreBucket[],
    maxConcurrent: number | undefined,
    force = false,
  ): Promise<StoreAnswer> {
    const client = this.#client ?? (await this.#connect());
    const conc = this.tenantKey(tenant, 'c');
    const lease = maxConcurrent === undefined ? '' : randomUUID();
    const keys = [conc, ...buckets.map((b) => this.tenantKey(tenant, b.key))];
    const args = [lease, maxConcurrent ?? 0, this.#options.leaseMs, force ? 1 : 0, buckets.length];
    for (const b of buckets) args.push(b.rate, b.capacity, b.cost, b.need ?? b.cost);
    let reply: [number, number | string];
    try {
      const admit = client.tritonNodeAdmit as (n: number, ...a: unknown[]) => Promise<typeof reply>;
      reply = await admit.call(client, keys.length, ...keys, ...args);
    } catch (err) {
      throw this.#failed(err);
    }
    this.#state(true, 'answered');
    const [code, value] = reply;
    if (code === 1) return { kind: 'concurrency', inFlight: Number(value) };
    if (code === 2) return { kind: 'rate', waitSeconds: Number(value) };
    if (maxConcurrent === undefined) return { kind: 'admitted', inFlight: 0, release: () => undefined };
    const held = this.#leases.get(conc) ?? new Set<string>();
    this.#leases.set(conc, held);
    held.add(lease);
    return {
      kind: 'admitted',
      inFlight: Number(value),
      release: () => {
        held.delete(lease);
        if (held.size === 0) this.#leases.delete(conc);
        // A lease that cannot be removed now ends with its lifetime.
        client.zrem(conc, lease).catch(() => undefined);
      },
    };
  }

  async #renew(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    const renew = client.tritonNodeRenew as (...a: unknown[]) => Promise<unknown>;
    await Promise.all(
      [...this.#leases].map(([key, leases]) =>
        renew.call(client, key, this.#options.leaseMs, ...leases).catch(() => undefined),
      ),
    );
  }

  /** Reads the deny list when its version changed, and writes back what Redis lost; one at a time. */
  #sync(): Promise<void> {
    this.#syncing ??= this.#syncOnce().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  async #syncOnce(): Promise<void> {
    const client = this.#client;
    if (client === undefined || this.#closed) return;
    try {
      const readList = client.tritonNodeDenyRead as (...a: unknown[]) => Promise<[string, string[]?]>;
      const [version, flat] = await readList.call(client, ...this.#deniedKeys(), this.#deniedVersion ?? '');
      if (flat === undefined) return;
      const inRedis = new Map<string, number>();
      for (let i = 0; i + 1 < flat.length; i += 2) inRedis.set(flat[i]!, Number(flat[i + 1]));
      for (const [member, until] of inRedis) this.#denied.add(member, until);
      // What this replica knows and Redis lacks was lost there (a restart without persistence,
      // FLUSHALL, eviction): it goes back, so that no replica, new ones included, un-revokes it.
      const lost = this.#denied.entries(Date.now()).filter(([member]) => !inRedis.has(member));
      const rewritten = lost.length === 0 ? 0 : await this.#writeDenied(client, lost);
      // Read again after a repair: it changed the version.
      this.#deniedVersion = rewritten > 0 ? undefined : version;
    } catch {
      // Read in full at the next sync; what this replica knows stays in force.
      this.#deniedVersion = undefined;
    }
  }

  /** Adds entries to Redis's deny list; resolves with how many changed there. */
  async #writeDenied(client: RedisClient, entries: Array<[string, number]>): Promise<number> {
    const write = client.tritonNodeDenyWrite as (...a: unknown[]) => Promise<number>;
    let changed = 0;
    // A few hundred entries a call: one script never holds Redis long.
    for (let i = 0; i < entries.length; i += 256) {
      const args = entries.slice(i, i + 256).flatMap(([member, until]) => [member, String(until)]);
      changed += await write.call(client, ...this.#deniedKeys(), randomUUID(), ...args);
    }
    return changed;
  }

  /** Whether a credential is refused: on the deny list as last read, or revoked through this store. */
  isRevoked(member: string): boolean {
    return this.#denied.has(member, Date.now());
  }

  /**
   * Adds a credential to the shared deny list (every replica refuses it after
   * its next read). This replica refuses it at once and keeps it until its
   * expiry; when Redis does not take it (StoreUnavailable, StoreRefused), it
   * is written at the first read of the list that succeeds.
   */
  async revoke(r: Revocation): Promise<void> {
    const member = revocationMember(r);
    const expiresAt = r.expiresAt ?? NEVER;
    this.#denied.add(member, expiresAt);
    const client = this.#client ?? (await this.#connect());
    await this.#ready(client);
    try {
      await this.#writeDenied(client, [[member, expiresAt]]);
    } catch (err) {
      this.#deniedVersion = undefined;
      if (!isReply(err)) throw this.#failed(err);
      throw new StoreRefused(`the limits store (Redis) refused the revocation: ${(err as Error).message}`);
    }
  }

  /** Stops the timers and closes the connection (leases still held end with their lifetime). */
  close(): void {
    this.#closed = true;
    clearInterval(this.#pollTimer);
    clearInterval(this.#renewTimer);
    this.#client?.disconnect();
  }
}

/** Opens a short-lived client, adds `r` to the deny list and closes (the `triton-node revoke` command). */
export async function revokeInStore(options: ResolvedStore, r: Revocation): Promise<void> {
  let failure: string | undefined;
  const store = new RedisStore(options, (up, reason) => {
    if (!up) failure = reason;
  });
  try {
    await store.revoke(r);
  } catch (err) {
    if (!(err instanceof StoreUnavailable) || failure === undefined || err.message.endsWith(failure))
      throw err;
    throw new StoreUnavailable(`${err.message} (${failure})`);
  } finally {
    store.close();
  }
}
