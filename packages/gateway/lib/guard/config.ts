/**
 * The guard's options (`GatewayOptions.guard`, the serve config's
 * `"gateway.guard"`) and their validation into a resolved form that the
 * guard reads without checking again. Every mistake throws a TypeError
 * naming the option, what it expected and what it received.
 */
import type { Writable } from 'node:stream';
import { describe } from 'triton-node/internal';
import { ROUTES } from '../routes.js';

/** Rates and caps of a tenant (or of one model of a tenant). Omitted: unlimited. */
export interface GuardLimitOptions {
  /** Requests per second admitted (token bucket refill rate). */
  requestsPerSecond?: number;
  /** Requests admitted at once after a quiet spell (bucket size; default: `requestsPerSecond`, at least 1). */
  requestBurst?: number;
  /**
   * Request body bytes per second admitted: every byte of every body and message (a declared
   * Content-Length at admission, a chunked body once read and before it is used, gRPC tensors in
   * `raw_input_contents` and typed `contents` at their datatype's element size).
   */
  bytesPerSecond?: number;
  /** Body bytes admitted at once (default: `bytesPerSecond`). */
  bytesBurst?: number;
  /** Generated tokens per second (the OpenAI routes spend them through `Admission.spendTokens`). */
  tokensPerSecond?: number;
  /** Tokens spent at once (default: `tokensPerSecond`). */
  tokensBurst?: number;
  /** Requests of the tenant in flight at once (per tenant only; ignored under `perModel`). */
  maxConcurrent?: number;
}

/** One tenant: what it may reach and how fast. */
export interface GuardTenantOptions {
  /** Models it may see and use: exact names or globs with `*` (`'llama-*'`); default none (`['*']`: all). */
  models?: string[];
  /** May load, unload and list every model, and register shared memory (default false). */
  admin?: boolean;
  /** Its limits: requests, bytes and tokens per second, concurrency. */
  limits?: GuardLimitOptions;
  /** Limits per model of this tenant, by exact name or glob (the first match applies). */
  perModel?: Record<string, GuardLimitOptions>;
}

/** An API key, stored as a hash, and the tenant it authenticates as. */
export interface GuardApiKeyOptions {
  /** SHA-256 of the key, 64 hex digits (`hashApiKey(key)`, or `printf %s "$KEY" | sha256sum`). */
  sha256: string;
  /** The tenant the key authenticates as (a key of `tenants`). */
  tenant: string;
  /** A label for the key, written to the audit log (`keyId`) so rotations can be followed; never the key. */
  id?: string;
}

/** JSON Web Tokens: where the verification key comes from and which claims must hold. */
export interface GuardJwtOptions {
  /** A JWKS file (`{ "keys": [...] }`); a token's `kid` picks the key (RS*, PS*, ES*, EdDSA). */
  jwksFile?: string;
  /** A PEM public key (SPKI), or the path of a file holding one. */
  publicKey?: string;
  /** A shared secret for HS256/HS384/HS512 (at least 32 bytes). */
  secret?: string;
  /** Accepted `alg` values (default: those the key can verify; `none` never). */
  algorithms?: string[];
  /** Required `iss`. */
  issuer?: string;
  /** Required `aud` (the token's `aud` must be or contain it). */
  audience?: string;
  /** Seconds of clock skew allowed on `exp` and `nbf` (default 5). */
  clockToleranceSeconds?: number;
  /** The claim naming the tenant (default `'tenant'`). */
  tenantClaim?: string;
  /** Reject tokens without `exp` (default true). */
  requireExpiry?: boolean;
}

/** Where audit lines go: a file rotated by size, or a writable stream. */
export interface GuardAuditOptions {
  /** Path of the audit file (appended to; rotated to `<file>.1`, `<file>.2`, ...). */
  file?: string;
  /** Size at which the file is rotated, bytes (default 64 MiB). */
  maxBytes?: number;
  /** How many rotated files to keep (default 5). */
  keep?: number;
  /** A writable stream taking the lines instead of a file. */
  stream?: Writable;
  /** How often buffered lines are written, ms (default 100; every line is written by `close()`). */
  flushIntervalMs?: number;
}

/** Where a Redis server is: one of `url`, `urlEnv`, `sentinels` or `cluster`. */
export interface GuardRedisOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  url?: string;
  /** The name of an environment variable holding the URL (a Kubernetes Secret's key, say). */
  urlEnv?: string;
  /** Redis Sentinel: the sentinels and the master's `name`. */
  sentinels?: Array<{ host: string; port: number }>;
  /** The master's name under Sentinel. */
  name?: string;
  /** Redis Cluster: some of its nodes. */
  cluster?: Array<{ host: string; port: number }>;
  /** For `sentinels` and `cluster`: the nodes' user (a `url` carries its own). */
  username?: string;
  /** For `sentinels` and `cluster`: the nodes' password. */
  password?: string;
}

/** `guard.limits`: where buckets, concurrency and revocations live when shared by replicas. */
export interface GuardLimitsOptions {
  /** The shared store: buckets, concurrency leases and the deny list of every replica (docs/security.md). */
  store?: {
    /** The Redis server (`ioredis`, an optional peer dependency, connects to it on first use). */
    redis: GuardRedisOptions;
    /**
     * When Redis does not answer: `'local'` (default) admits against this replica's own buckets,
     * as without a store; `'closed'` refuses with 503 until Redis answers again.
     */
    fallback?: 'local' | 'closed';
    /** How long a Redis command may take before the fallback applies, ms (default 250). */
    timeoutMs?: number;
    /** Prefix of every key (default `'triton-node:'`). */
    keyPrefix?: string;
    /** How often each replica reads the deny list, ms (default 250; a revocation holds everywhere within it). */
    revocationPollMs?: number;
    /** Lifetime of a concurrency lease, renewed while its request runs, ms (default 30000): a crashed replica's leases end with it. */
    leaseMs?: number;
  };
}

/** `GatewayOptions.guard`: authentication, tenants, rate limits, audit. */
export interface GuardOptions {
  /** API keys by hash. With neither `apiKeys` nor `jwt`, authentication is off (tenant `anonymous`). */
  apiKeys?: GuardApiKeyOptions[];
  /** JWT verification. */
  jwt?: GuardJwtOptions;
  /** Tenants by name. */
  tenants?: Record<string, GuardTenantOptions>;
  /**
   * Routes answered without credentials: any of `'health'`, `'metrics'`, `'server'` (default
   * `['health']`). `/metrics` not listed here is for admin tenants only (it names every model).
   */
  open?: string[];
  /** The audit log (default: none). */
  audit?: GuardAuditOptions;
  /** Limits and revocations shared by every replica, on Redis (default: each process its own). */
  limits?: GuardLimitsOptions;
}

export interface ResolvedLimits {
  requestsPerSecond?: number;
  requestBurst: number;
  bytesPerSecond?: number;
  bytesBurst: number;
  tokensPerSecond?: number;
  tokensBurst: number;
  maxConcurrent?: number;
}

export interface ResolvedTenant {
  name: string;
  models: RegExp[];
  admin: boolean;
  limits: ResolvedLimits;
  perModel: Array<{ pattern: RegExp; key: string; limits: ResolvedLimits }>;
}

export interface ResolvedApiKey {
  hash: Buffer;
  tenant: string;
  id?: string;
  /** Its entry on the deny list (`revocationMember` of its id, else of its SHA-256 hex). */
  member: string;
}

/** The member of the deny list for a credential. */
export function revocationMember(r: { jti?: string; keyId?: string }): string {
  return r.jti !== undefined ? `jti:${r.jti}` : `key:${r.keyId}`;
}

export interface ResolvedStore {
  redis: {
    url?: string;
    sentinels?: Array<{ host: string; port: number }>;
    name?: string;
    cluster?: Array<{ host: string; port: number }>;
    auth: { username?: string; password?: string };
  };
  fallback: 'local' | 'closed';
  timeoutMs: number;
  keyPrefix: string;
  revocationPollMs: number;
  leaseMs: number;
}

export interface ResolvedGuard {
  apiKeys: ResolvedApiKey[];
  jwt?: GuardJwtOptions;
  tenants: Map<string, ResolvedTenant>;
  open: Set<string>;
  authOn: boolean;
  store?: ResolvedStore;
}

/** The routes `guard.open` may name (every one is read-only and names no model). */
export const OPEN_ROUTES: readonly string[] = [ROUTES.live.name, ROUTES.metrics.name, ROUTES.server.name];

function plainObject(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new TypeError(expected(what, 'an object', v));
  return v as Record<string, unknown>;
}

function expected(what: string, wanted: string, got: unknown): string {
  return `Expected ${wanted} for ${what} but received ${describe(got)}`;
}

function onlyKeys(o: Record<string, unknown>, keys: readonly string[], what: string): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k))
      throw new TypeError(`${what}: unknown option '${k}' (expected one of ${keys.join(', ')})`);
  }
}

function positive(v: unknown, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
    throw new TypeError(expected(what, 'a positive number', v));
  return v;
}

/** A glob with `*` as a RegExp matching the whole name. */
export function globPattern(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

const LIMIT_KEYS = [
  'requestsPerSecond',
  'requestBurst',
  'bytesPerSecond',
  'bytesBurst',
  'tokensPerSecond',
  'tokensBurst',
  'maxConcurrent',
] as const;

function resolveLimits(v: unknown, what: string): ResolvedLimits {
  const o = plainObject(v ?? {}, what);
  onlyKeys(o, LIMIT_KEYS, what);
  const n = (k: (typeof LIMIT_KEYS)[number]) => positive(o[k], `${what}.${k}`);
  const requestsPerSecond = n('requestsPerSecond');
  const bytesPerSecond = n('bytesPerSecond');
  const tokensPerSecond = n('tokensPerSecond');
  const maxConcurrent = n('maxConcurrent');
  if (maxConcurrent !== undefined && !Number.isSafeInteger(maxConcurrent))
    throw new TypeError(expected(`${what}.maxConcurrent`, 'a positive whole number', maxConcurrent));
  return {
    ...(requestsPerSecond === undefined ? {} : { requestsPerSecond }),
    requestBurst: n('requestBurst') ?? Math.max(1, requestsPerSecond ?? 1),
    ...(bytesPerSecond === undefined ? {} : { bytesPerSecond }),
    bytesBurst: n('bytesBurst') ?? bytesPerSecond ?? 1,
    ...(tokensPerSecond === undefined ? {} : { tokensPerSecond }),
    tokensBurst: n('tokensBurst') ?? Math.max(1, tokensPerSecond ?? 1),
    ...(maxConcurrent === undefined ? {} : { maxConcurrent }),
  };
}

function stringList(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s === ''))
    throw new TypeError(expected(what, 'an array of non-empty strings', v));
  return v as string[];
}

function resolveTenant(name: string, v: unknown): ResolvedTenant {
  const what = `guard.tenants.${name}`;
  const o = plainObject(v, what);
  onlyKeys(o, ['models', 'admin', 'limits', 'perModel'], what);
  const admin = o.admin ?? false;
  if (typeof admin !== 'boolean') throw new TypeError(expected(`${what}.admin`, 'a boolean', admin));
  const models = stringList(o.models ?? [], `${what}.models`).map(globPattern);
  const perModel = Object.entries(plainObject(o.perModel ?? {}, `${what}.perModel`)).map(
    ([glob, limits]) => ({
      pattern: globPattern(glob),
      key: glob,
      limits: resolveLimits(limits, `${what}.perModel['${glob}']`),
    }),
  );
  return { name, models, admin, limits: resolveLimits(o.limits, `${what}.limits`), perModel };
}

function resolveApiKeys(v: unknown, tenants: Map<string, ResolvedTenant>): ResolvedApiKey[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new TypeError(expected('guard.apiKeys', 'an array', v));
  return v.map((entry, i) => {
    const what = `guard.apiKeys[${i}]`;
    const o = plainObject(entry, what);
    onlyKeys(o, ['sha256', 'tenant', 'id'], what);
    if (typeof o.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(o.sha256))
      throw new TypeError(
        `${what}.sha256: expected 64 hex digits (the SHA-256 of the key), not the key itself`,
      );
    if (typeof o.tenant !== 'string' || !tenants.has(o.tenant))
      throw new TypeError(
        expected(`${what}.tenant`, `a tenant of guard.tenants (${[...tenants.keys()].join(', ')})`, o.tenant),
      );
    if (o.id !== undefined && typeof o.id !== 'string')
      throw new TypeError(expected(`${what}.id`, 'a string', o.id));
    const hash = Buffer.from(o.sha256, 'hex');
    return {
      hash,
      tenant: o.tenant,
      ...(o.id === undefined ? {} : { id: o.id }),
      member: revocationMember({ keyId: o.id ?? hash.toString('hex') }),
    };
  });
}

const JWT_KEYS = [
  'jwksFile',
  'publicKey',
  'secret',
  'algorithms',
  'issuer',
  'audience',
  'clockToleranceSeconds',
  'tenantClaim',
  'requireExpiry',
] as const;

function resolveJwt(v: unknown): GuardJwtOptions | undefined {
  if (v === undefined) return undefined;
  const o = plainObject(v, 'guard.jwt');
  onlyKeys(o, JWT_KEYS, 'guard.jwt');
  const sources = (['jwksFile', 'publicKey', 'secret'] as const).filter((k) => o[k] !== undefined);
  if (sources.length !== 1)
    throw new TypeError(
      `guard.jwt: give exactly one of jwksFile, publicKey, secret (received ${sources.length})`,
    );
  for (const k of ['jwksFile', 'publicKey', 'secret', 'issuer', 'audience', 'tenantClaim'] as const) {
    if (o[k] !== undefined && (typeof o[k] !== 'string' || o[k] === ''))
      throw new TypeError(expected(`guard.jwt.${k}`, 'a non-empty string', o[k]));
  }
  if (typeof o.secret === 'string' && Buffer.byteLength(o.secret) < 32)
    throw new TypeError(
      'guard.jwt.secret: expected at least 32 bytes (a shorter HMAC secret can be guessed)',
    );
  if (o.algorithms !== undefined) stringList(o.algorithms, 'guard.jwt.algorithms');
  const tolerance = o.clockToleranceSeconds ?? 5;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0 || tolerance > 300)
    throw new TypeError(
      expected('guard.jwt.clockToleranceSeconds', 'a number of seconds from 0 to 300', tolerance),
    );
  if (o.requireExpiry !== undefined && typeof o.requireExpiry !== 'boolean')
    throw new TypeError(expected('guard.jwt.requireExpiry', 'a boolean', o.requireExpiry));
  return { ...(o as GuardJwtOptions), clockToleranceSeconds: tolerance };
}

function nodes(v: unknown, what: string): Array<{ host: string; port: number }> {
  if (!Array.isArray(v) || v.length === 0)
    throw new TypeError(expected(what, 'a non-empty array of { host, port }', v));
  return v.map((n, i) => {
    const o = plainObject(n, `${what}[${i}]`);
    onlyKeys(o, ['host', 'port'], `${what}[${i}]`);
    if (typeof o.host !== 'string' || o.host === '')
      throw new TypeError(expected(`${what}[${i}].host`, 'a host name', o.host));
    if (typeof o.port !== 'number' || !Number.isInteger(o.port) || o.port <= 0 || o.port > 65535)
      throw new TypeError(expected(`${what}[${i}].port`, 'a port (1-65535)', o.port));
    return { host: o.host, port: o.port };
  });
}

function resolveRedis(v: unknown, env: NodeJS.ProcessEnv): ResolvedStore['redis'] {
  const what = 'guard.limits.store.redis';
  const o = plainObject(v, what);
  onlyKeys(o, ['url', 'urlEnv', 'sentinels', 'name', 'cluster', 'username', 'password'], what);
  const given = (['url', 'urlEnv', 'sentinels', 'cluster'] as const).filter((k) => o[k] !== undefined);
  if (given.length !== 1)
    throw new TypeError(
      `${what}: give exactly one of url, urlEnv, sentinels, cluster (received ${given.length})`,
    );
  for (const k of ['username', 'password', 'name'] as const)
    if (o[k] !== undefined && typeof o[k] !== 'string')
      throw new TypeError(expected(`${what}.${k}`, 'a string', o[k]));
  const auth = {
    ...(o.username === undefined ? {} : { username: o.username as string }),
    ...(o.password === undefined ? {} : { password: o.password as string }),
  };
  let url = o.url;
  if (o.urlEnv !== undefined) {
    if (typeof o.urlEnv !== 'string' || o.urlEnv === '')
      throw new TypeError(expected(`${what}.urlEnv`, 'an environment variable name', o.urlEnv));
    url = env[o.urlEnv];
    if (url === undefined || url === '')
      throw new TypeError(`${what}.urlEnv: the environment variable ${o.urlEnv} is not set`);
  }
  if (url !== undefined) {
    if (typeof url !== 'string' || !/^rediss?:\/\/./.test(url))
      throw new TypeError(`${what}.url: expected a redis:// or rediss:// URL`);
    return { url, auth };
  }
  if (o.sentinels !== undefined) {
    if (typeof o.name !== 'string' || o.name === '')
      throw new TypeError(`${what}.name: the master's name is required with sentinels`);
    return { sentinels: nodes(o.sentinels, `${what}.sentinels`), name: o.name, auth };
  }
  return { cluster: nodes(o.cluster, `${what}.cluster`), auth };
}

const STORE_KEYS = ['redis', 'fallback', 'timeoutMs', 'keyPrefix', 'revocationPollMs', 'leaseMs'] as const;

function resolveStore(v: unknown, env: NodeJS.ProcessEnv): ResolvedStore | undefined {
  if (v === undefined) return undefined;
  const limits = plainObject(v, 'guard.limits');
  onlyKeys(limits, ['store'], 'guard.limits');
  if (limits.store === undefined) return undefined;
  const what = 'guard.limits.store';
  const o = plainObject(limits.store, what);
  onlyKeys(o, STORE_KEYS, what);
  const fallback = o.fallback ?? 'local';
  if (fallback !== 'local' && fallback !== 'closed')
    throw new TypeError(expected(`${what}.fallback`, "'local' or 'closed'", fallback));
  const ms = (k: 'timeoutMs' | 'revocationPollMs' | 'leaseMs', fallbackMs: number, max: number) => {
    const n = o[k] ?? fallbackMs;
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0 || n > max)
      throw new TypeError(expected(`${what}.${k}`, `a whole number of milliseconds from 1 to ${max}`, n));
    return n;
  };
  const keyPrefix = o.keyPrefix ?? 'triton-node:';
  if (typeof keyPrefix !== 'string')
    throw new TypeError(expected(`${what}.keyPrefix`, 'a string', keyPrefix));
  return {
    redis: resolveRedis(o.redis, env),
    fallback,
    timeoutMs: ms('timeoutMs', 250, 60_000),
    keyPrefix,
    revocationPollMs: ms('revocationPollMs', 250, 1000),
    leaseMs: ms('leaseMs', 30_000, 3_600_000),
  };
}

/** Validates the guard's options (all but `audit`, which only `createGuard` reads). */
export function resolveGuard(options: unknown, env: NodeJS.ProcessEnv = process.env): ResolvedGuard {
  const o = plainObject(options, 'guard');
  onlyKeys(o, ['apiKeys', 'jwt', 'tenants', 'open', 'audit', 'limits'], 'guard');
  const tenants = new Map<string, ResolvedTenant>();
  for (const [name, t] of Object.entries(plainObject(o.tenants ?? {}, 'guard.tenants'))) {
    tenants.set(name, resolveTenant(name, t));
  }
  const open = stringList(o.open ?? [ROUTES.live.name], 'guard.open');
  for (const r of open) {
    if (!OPEN_ROUTES.includes(r))
      throw new TypeError(expected('guard.open[]', `one of ${OPEN_ROUTES.join(', ')}`, r));
  }
  const apiKeys = resolveApiKeys(o.apiKeys, tenants);
  const jwt = resolveJwt(o.jwt);
  const store = resolveStore(o.limits, env);
  return {
    apiKeys,
    ...(jwt === undefined ? {} : { jwt }),
    ...(store === undefined ? {} : { store }),
    tenants,
    open: new Set(open),
    authOn: apiKeys.length > 0 || jwt !== undefined,
  };
}
