/**
 * The guard: who is calling (API key or JWT → tenant), may they (open
 * routes, admin routes, the tenant's models), may they now (token buckets,
 * concurrency), and the audit line of every request, denied ones included.
 * Only a token's verification waits (jose verifies through WebCrypto);
 * the limits are taken synchronously once the caller is known.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { GatewayLogger } from '../context.js';
import { GatewayError, ModelHiddenError } from '../errors.js';
import { absentModel } from '../kserve/absent.js';
import { ROUTES } from '../routes.js';
import { type AuditRecord, type AuditSink, createAuditSink } from './audit.js';
import {
  type GuardOptions,
  type ResolvedGuard,
  type ResolvedLimits,
  type ResolvedTenant,
  resolveGuard,
  revocationMember,
} from './config.js';
import { DenyList, NEVER } from './deny-list.js';
import { TokenError, loadKeys, looksLikeJwt, verifyJwt } from './jwt.js';
import { TenantState, type TokenBucket, waitFor } from './limits.js';
import {
  RedisStore,
  type Revocation,
  type StoreBucket,
  StoreError,
  StoreUnavailable,
  revokeInStore,
} from './store.js';
import type { Admission, AuditOutcome, Guard, GuardRequest } from './types.js';

/** gRPC status codes the guard's denials carry. */
const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;

/**
 * Routes only admin tenants may call (unless listed in `open`). `/metrics`
 * is one: its series name every model of every tenant, with their counters.
 */
const ADMIN_ROUTES = new Set([
  ROUTES.traceSetting.name,
  ROUTES.logging.name,
  ROUTES.load.name,
  ROUTES.unload.name,
  ROUTES.systemStatus.name,
  ROUTES.metrics.name,
]);

/** The tenant of everyone when authentication is off and no `anonymous` tenant is configured. */
const UNRESTRICTED: ResolvedTenant = {
  name: 'anonymous',
  models: [/^/],
  admin: true,
  limits: { requestBurst: 1, bytesBurst: 1, tokensBurst: 1 },
  perModel: [],
};

/** SHA-256 of an API key as 64 hex digits: what `guard.apiKeys[].sha256` holds. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Why a model name is refused before anything reaches Triton (undefined: it is fine). */
export function invalidModelName(name: string): string | undefined {
  if (name === '') return 'the model name is empty';
  if (name.length > 1024) return 'the model name is longer than 1024 characters';
  if (name.includes('..')) return "the model name contains '..'";
  if (name.includes('/') || name.includes('\\')) return 'the model name contains a path separator';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'the model name contains a control character';
  return undefined;
}

function header(headers: GuardRequest['headers'], name: string): string | undefined {
  const v = headers[name];
  if (Array.isArray(v)) return v[0];
  return typeof v === 'string' ? v : undefined;
}

function unauthorized(message: string): GatewayError {
  const description = message.replace(/["\\]/g, '');
  return new GatewayError(401, message, 'INVALID_ARG', {
    grpcCode: UNAUTHENTICATED,
    challenge: `Bearer realm="triton-node", error="invalid_token", error_description="${description}"`,
  });
}

function tooMany(message: string, seconds: number): GatewayError {
  return new GatewayError(429, message, 'UNAVAILABLE', {
    grpcCode: RESOURCE_EXHAUSTED,
    retryAfterSeconds: Math.max(1, Math.ceil(seconds)),
  });
}

interface Identity {
  tenant: string;
  keyId?: string;
  /** Its entry on the deny list (`jti:…` for a token with an id, `key:…` for an API key). */
  credential?: string;
}

/** What the guard tells the gateway besides answers: where it logs, and the store's state for a metric. */
export interface GuardHooks {
  logger?: GatewayLogger;
  /** Called when the limits store becomes reachable (true) or not (false). */
  onStoreState?(up: boolean): void;
  /** Whether a request is being served on `socket` (a client error on it is that request's, audited by it). */
  isServing?(socket: object): boolean;
}

/** A credential to refuse from now on: a token's `jti` or an API key's id (its `id`, else its SHA-256). */
export interface GuardRevocation {
  jti?: string;
  keyId?: string;
  /** When the entry may be forgotten (a token's `exp`): a Date or ms since the epoch; default never. */
  expiresAt?: Date | number;
}

/** A revocation checked, as the store takes it (`what` names the caller in errors). */
function revocationEntry(revocation: GuardRevocation, what: string): Revocation {
  const r = revocation as Record<string, unknown>;
  if (typeof r !== 'object' || r === null || (r.jti === undefined) === (r.keyId === undefined))
    throw new TypeError(`${what}: give exactly one of jti and keyId`);
  for (const k of ['jti', 'keyId'] as const)
    if (r[k] !== undefined && (typeof r[k] !== 'string' || r[k] === ''))
      throw new TypeError(`Expected a non-empty string for ${what} ${k} but received ${typeof r[k]}`);
  const at = revocation.expiresAt;
  const expiresAt = at instanceof Date ? at.getTime() : at;
  if (expiresAt !== undefined && !Number.isFinite(expiresAt))
    throw new TypeError(`${what} expiresAt: expected a Date or ms since the epoch`);
  return {
    ...(revocation.jti === undefined ? {} : { jti: revocation.jti }),
    ...(revocation.keyId === undefined ? {} : { keyId: revocation.keyId }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** A request's body bytes for the buckets: what is taken now, and what must fit now. */
interface ByteCharge {
  take: number;
  need: number;
}

/** Bytes taken as they are: a body already read, or bytes spent after admission. */
function bytesRead(n: number): ByteCharge {
  return { take: n, need: n };
}

/**
 * What a request's body costs at admission: all of a body already read (a
 * gRPC message); nothing of one only declared (`bodyUnread`), which must fit
 * the buckets now and is charged as it is read, so a body refused or cut
 * short costs at most what was read.
 */
function admissionBytes(request: GuardRequest): ByteCharge {
  const n = request.bytesIn ?? 0;
  return { take: request.bodyUnread === true ? 0 : n, need: n };
}

/** The bucket list of one set of limits, as the store takes them (`prefix` names the keys). */
function storeBuckets(
  limits: ResolvedLimits,
  prefix: string,
  requests: number,
  bytes: ByteCharge,
): StoreBucket[] {
  const out: StoreBucket[] = [];
  const add = (key: string, rate: number | undefined, capacity: number, cost: number, need = cost) => {
    if (rate !== undefined && need > 0) out.push({ key: `${prefix}${key}`, rate, capacity, cost, need });
  };
  add('r', limits.requestsPerSecond, limits.requestBurst, requests);
  add('b', limits.bytesPerSecond, limits.bytesBurst, bytes.take, bytes.need);
  return out;
}

/** What the shared path answers when the fallback applies: take from this replica's buckets. */
const LOCAL = Symbol('local');

/** A guard over resolved options; `update()` swaps them at run time. */
export class GatewayGuard implements Guard {
  #config: ResolvedGuard;
  #keys: ReturnType<typeof loadKeys> = [];
  readonly #tenants = new Map<string, TenantState>();
  readonly #audit: AuditSink | undefined;
  /** Open routes (health, metrics): no credentials, no tenant, no limits. */
  readonly #openState = new TenantState(UNRESTRICTED, 0);
  /** Shared buckets, leases and deny list (undefined: this process's own). */
  readonly #store: RedisStore | undefined;
  /** Revocations made through this guard, until their expiry (kept here too, whatever the store does). */
  readonly #revoked = new DenyList();
  readonly #hooks: GuardHooks;

  constructor(options: GuardOptions, hooks: GuardHooks = {}) {
    this.#config = resolveGuard(options);
    if (this.#config.jwt !== undefined) this.#keys = loadKeys(this.#config.jwt);
    this.#audit = createAuditSink(options.audit);
    this.#hooks = hooks;
    const store = this.#config.store;
    if (store !== undefined) {
      this.#store = new RedisStore(store, (up, reason) => {
        const fallback = store.fallback === 'local' ? "this replica's own buckets" : 'refusing with 503';
        if (up) this.#hooks.logger?.info?.({ store: 'redis' }, 'limits store reachable: limits are shared');
        else this.#hooks.logger?.warn?.({ store: 'redis', reason }, `limits store unreachable: ${fallback}`);
        this.#hooks.onStoreState?.(up);
      });
    }
  }

  /** Whether the shared limits store answers now (undefined without one). */
  get storeUp(): boolean | undefined {
    return this.#store?.up;
  }

  /**
   * Refuses a credential from now on: a JWT by its `jti`, an API key by its
   * `id` (or, without one, its SHA-256 hex), until `expiresAt`. With a store
   * every replica refuses it within `revocationPollMs`; without one, this
   * process only. Rejects when the store did not take it: this replica
   * refuses it all the same, and writes it to the store once it can.
   */
  async revoke(revocation: GuardRevocation): Promise<void> {
    const entry = revocationEntry(revocation, 'guard.revoke');
    this.#revoked.add(revocationMember(entry), entry.expiresAt ?? NEVER);
    const store = this.#store;
    if (store === undefined) return;
    try {
      // Started first: its reads of the list write this one back should Redis not take it now.
      await store.start();
      await store.revoke(entry);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      const Kind = err.constructor as new (message: string) => StoreError;
      throw new Kind(
        `${err.message}; this replica refuses the credential now, and writes it to the store as soon as the store takes it`,
      );
    }
  }

  /**
   * Puts a credential on the deny list of the store that
   * `options.limits.store` names, from any process (what `triton-node
   * revoke` does): every replica sharing the store refuses it within its
   * `revocationPollMs`. Throws a TypeError for options that are not valid
   * or name no store; rejects when Redis does not take it.
   */
  static async revokeInStore(options: GuardOptions, revocation: GuardRevocation): Promise<void> {
    const store = resolveGuard({ ...options, audit: undefined }).store;
    if (store === undefined)
      throw new TypeError('GatewayGuard.revokeInStore: options.limits.store is not set');
    await revokeInStore(store, revocationEntry(revocation, 'GatewayGuard.revokeInStore'));
  }

  /**
   * Replaces keys, JWT settings, tenants, limits and open routes (validated
   * first: a bad config throws and the old one stays). Buckets keep what they
   * hold; `audit` cannot change at run time and is ignored.
   */
  update(options: GuardOptions): void {
    const config = resolveGuard({ ...options, audit: undefined });
    const keys = config.jwt === undefined ? [] : loadKeys(config.jwt);
    const now = performance.now();
    this.#config = config;
    this.#keys = keys;
    for (const [name, state] of this.#tenants) {
      const next = config.tenants.get(name);
      if (next === undefined) this.#tenants.delete(name);
      else state.reconfigure(next, now);
    }
  }

  /** Writes buffered audit lines now. */
  flush(): void {
    this.#audit?.flush();
  }

  /** Writes buffered audit lines and closes the audit file (and the store's connection). */
  close(): void {
    this.#audit?.close();
    this.#store?.close();
  }

  /** Requests in flight of a tenant. */
  inFlight(tenant: string): number {
    return this.#tenants.get(tenant)?.inFlight ?? 0;
  }

  /** Writes one audit line (for requests that never reached `admit`, such as a 431). */
  audit(record: Omit<AuditRecord, 'time'>): void {
    this.#audit?.write({ time: new Date().toISOString(), ...record });
  }

  /**
   * A `clientError` listener for the `node:http` server: answers what Node
   * refuses before the gateway sees a request (431 for headers past
   * `maxHeaderSize`, 400 for a malformed request, 408 for a timeout) and
   * audits it.
   */
  readonly clientError = (err: NodeJS.ErrnoException, socket: Duplex): void => {
    // A request being served (its body cut short) is audited by its own line.
    if (err.code === 'ECONNRESET' || !socket.writable || this.#hooks.isServing?.(socket) === true) {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : err.code === 'HPE_HEADERS_TIMEOUT' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 408
          : 400;
    const remote = (socket as { remoteAddress?: string }).remoteAddress;
    this.audit({
      requestId: randomUUID(),
      tenant: null,
      protocol: 'http',
      route: 'client_error',
      status,
      latencyMs: 0,
      ...(remote === undefined ? {} : { remote }),
      error: err.code ?? err.message,
    });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
    );
  };

  /**
   * Admits a request or rejects with the GatewayError it gets (401, 403, 404 as
   * for an unknown model, 400, 429 with `retryAfterSeconds`); a denial is
   * audited here, an admission when its `done()` is called.
   */
  async admit(request: GuardRequest): Promise<Admission> {
    const started = performance.now();
    let identity: Identity | undefined;
    try {
      identity = await this.#identify(request);
      const open = this.#config.open.has(request.route);
      if (!open) await this.#checkRevoked(identity);
      const state = open ? this.#openState : this.#state(identity.tenant, started);
      this.#authorize(request, state.config);
      const release = await this.#limit(request, state, started);
      return this.#admission(request, identity, state, started, release);
    } catch (err) {
      const e = err instanceof GatewayError ? err : new GatewayError(500, (err as Error).message);
      // A hidden model's line has the status the client gets: its route's for an absent model.
      const status =
        e instanceof ModelHiddenError ? absentModel(request.route, e.model, e.version).status : e.status;
      this.#record(request, identity, started, { status, error: e.message });
      throw e;
    }
  }

  async #identify(request: GuardRequest): Promise<Identity> {
    const config = this.#config;
    if (!config.authOn) return { tenant: 'anonymous' };
    if (config.open.has(request.route)) return { tenant: 'anonymous' };
    const auth = header(request.headers, 'authorization');
    let credential: string | undefined;
    if (auth !== undefined) {
      const m = /^Bearer[ ]+(\S+)\s*$/i.exec(auth);
      if (m === null) throw unauthorized("malformed Authorization header (expected 'Bearer <token>')");
      credential = m[1]!;
    } else credential = header(request.headers, 'x-api-key');
    if (credential === undefined || credential === '') throw unauthorized('credentials are required');
    if (config.jwt !== undefined && looksLikeJwt(credential)) {
      try {
        const { tenant, jti } = await verifyJwt(credential, this.#keys, config.jwt);
        return jti === undefined ? { tenant } : { tenant, credential: revocationMember({ jti }) };
      } catch (err) {
        if (err instanceof TokenError) throw unauthorized(err.message);
        throw err;
      }
    }
    return this.#apiKey(credential);
  }

  /** Every stored hash is compared (in constant time each), so timing tells nothing of which matched. */
  #apiKey(key: string): Identity {
    const hash = createHash('sha256').update(key, 'utf8').digest();
    let found: Identity | undefined;
    for (const entry of this.#config.apiKeys) {
      if (timingSafeEqual(hash, entry.hash) && found === undefined) {
        found = {
          tenant: entry.tenant,
          ...(entry.id === undefined ? {} : { keyId: entry.id }),
          credential: entry.member,
        };
      }
    }
    if (found === undefined) throw unauthorized('the API key or token is not valid');
    return found;
  }

  /** 401 for a credential on the deny list (the store's as last read, and this guard's own). */
  async #checkRevoked(identity: Identity): Promise<void> {
    const member = identity.credential;
    if (member === undefined) return;
    if (this.#store !== undefined) await this.#store.start();
    if (this.#revoked.has(member, Date.now()) || this.#store?.isRevoked(member) === true)
      throw unauthorized('the credential has been revoked');
  }

  #state(tenant: string, now: number): TenantState {
    let state = this.#tenants.get(tenant);
    if (state !== undefined) return state;
    const config = this.#config.tenants.get(tenant) ?? (this.#config.authOn ? undefined : UNRESTRICTED);
    if (config === undefined) {
      throw new GatewayError(403, `tenant '${tenant}' is not configured on this gateway`, 'INVALID_ARG', {
        grpcCode: PERMISSION_DENIED,
      });
    }
    state = new TenantState(config, now);
    this.#tenants.set(tenant, state);
    return state;
  }

  #authorize(request: GuardRequest, tenant: ResolvedTenant): void {
    if (request.model !== undefined) {
      const why = invalidModelName(request.model);
      if (why !== undefined) throw new GatewayError(400, `invalid model name: ${why}`, 'INVALID_ARG');
    }
    if (this.#config.open.has(request.route)) return;
    if (ADMIN_ROUTES.has(request.route)) {
      if (!tenant.admin) {
        throw new GatewayError(
          403,
          `tenant '${tenant.name}' may not call ${request.route} (admin only)`,
          'INVALID_ARG',
          {
            grpcCode: PERMISSION_DENIED,
          },
        );
      }
      return;
    }
    if (request.model !== undefined && !tenant.models.some((p) => p.test(request.model!))) {
      throw new ModelHiddenError(request.model, request.version, tenant.name);
    }
  }

  /**
   * Concurrency and buckets; `modelOnly`: the per-model buckets alone, and
   * `ownBytes` of the tenant's (a model named after admission, by a body
   * read after it).
   */
  async #limit(
    request: GuardRequest,
    state: TenantState,
    now: number,
    modelOnly = false,
    ownBytes = admissionBytes(request),
  ): Promise<(() => void) | undefined> {
    if (this.#config.open.has(request.route)) return undefined;
    if (this.#store !== undefined) {
      const shared = await this.#sharedLimit(request, state, modelOnly, ownBytes);
      if (shared !== LOCAL) return shared;
    }
    this.#localLimit(request, state, now, modelOnly, ownBytes);
    return undefined;
  }

  /** The buckets a request takes from in the store: the tenant's, then its model's. */
  #storeBuckets(
    state: TenantState,
    model: string | undefined,
    own: [number, ByteCharge],
    perModel: [number, ByteCharge],
  ) {
    const entry = model === undefined ? undefined : state.config.perModel.find((p) => p.pattern.test(model));
    return [
      ...storeBuckets(state.config.limits, '', ...own),
      ...(entry === undefined
        ? []
        : storeBuckets(entry.limits, `m:${encodeURIComponent(model!)}:`, ...perModel)),
    ];
  }

  /** The store's fallback: LOCAL to take from this replica's buckets, or a 503. */
  #unavailable(err: StoreUnavailable): typeof LOCAL {
    if (this.#config.store?.fallback === 'closed') {
      throw new GatewayError(503, `${err.message}; requests are refused until it answers`, 'UNAVAILABLE', {
        grpcCode: UNAVAILABLE,
        retryAfterSeconds: 1,
      });
    }
    return LOCAL;
  }

  /** One round trip: the shared buckets and a concurrency lease, or LOCAL when the fallback applies. */
  async #sharedLimit(
    request: GuardRequest,
    state: TenantState,
    modelOnly: boolean,
    ownBytes: ByteCharge,
  ): Promise<(() => void) | undefined | typeof LOCAL> {
    const store = this.#store!;
    const max = modelOnly ? undefined : state.config.limits.maxConcurrent;
    const buckets = this.#storeBuckets(
      state,
      request.model,
      [modelOnly ? 0 : 1, ownBytes],
      [1, admissionBytes(request)],
    );
    if (buckets.length === 0 && max === undefined) return undefined;
    let answer: Awaited<ReturnType<RedisStore['take']>>;
    try {
      await store.start();
      answer = await store.take(state.config.name, buckets, max);
    } catch (err) {
      if (err instanceof StoreUnavailable) return this.#unavailable(err);
      throw err;
    }
    if (answer.kind === 'concurrency')
      throw tooMany(
        `tenant '${state.config.name}' has ${answer.inFlight} requests in flight (limit ${max})`,
        1,
      );
    if (answer.kind === 'rate')
      throw tooMany(`rate limit of tenant '${state.config.name}' reached`, answer.waitSeconds);
    return answer.release;
  }

  /** Post-admission spends in the store: 0 when taken, else the seconds to wait; LOCAL for the fallback. */
  async #sharedSpend(
    state: TenantState,
    buckets: StoreBucket[],
    force: boolean,
  ): Promise<number | typeof LOCAL> {
    if (buckets.length === 0) return 0;
    try {
      const answer = await this.#store!.take(state.config.name, buckets, undefined, force);
      return answer.kind === 'rate' ? answer.waitSeconds : 0;
    } catch (err) {
      if (err instanceof StoreUnavailable) return this.#unavailable(err);
      throw err;
    }
  }

  #localLimit(
    request: GuardRequest,
    state: TenantState,
    now: number,
    modelOnly: boolean,
    ownBytes: ByteCharge,
  ): void {
    const max = state.config.limits.maxConcurrent;
    if (!modelOnly && max !== undefined && state.inFlight >= max)
      throw tooMany(
        `tenant '${state.config.name}' has ${state.inFlight} requests in flight (limit ${max})`,
        1,
      );
    const perModel = request.model === undefined ? undefined : state.model(request.model, now);
    const bytes = admissionBytes(request);
    const wait = waitFor(
      [
        [modelOnly ? undefined : state.own.requests, 1],
        [state.own.bytes, ownBytes.take, ownBytes.need],
        [perModel?.requests, 1],
        [perModel?.bytes, bytes.take, bytes.need],
      ],
      now,
    );
    if (wait > 0) throw tooMany(`rate limit of tenant '${state.config.name}' reached`, wait);
  }

  #admission(
    admitted: GuardRequest,
    identity: Identity,
    state: TenantState,
    started: number,
    release: (() => void) | undefined,
  ): Admission {
    state.inFlight++;
    let ended = false;
    let tokens = 0;
    let tokensWait = 0;
    let request = admitted;
    const store = this.#store;
    const modelState = (model: string | undefined, now: number) =>
      model === undefined ? undefined : state.model(model, now);
    return {
      tenant: identity.tenant,
      done: (outcome) => {
        if (ended) return;
        ended = true;
        state.inFlight--;
        release?.();
        this.#record(request, identity, started, { tokens: tokens || undefined, ...outcome });
      },
      forModel: async (model, bytesIn) => {
        // The audit line names the model even when it is refused here.
        request = { ...request, model, ...(bytesIn === undefined ? {} : { bytesIn, bodyUnread: false }) };
        this.#authorize(request, state.config);
        // The tenant's buckets took the body at admission only when it was read then.
        const taken = admitted.bytesIn !== undefined && admitted.bodyUnread !== true;
        await this.#limit(request, state, performance.now(), true, bytesRead(taken ? 0 : (bytesIn ?? 0)));
      },
      canSee: (model) => state.config.models.some((p) => p.test(model)),
      spendBytes: (n, force = false) => {
        if (n <= 0 || this.#config.open.has(request.route)) return 0;
        const local = () => {
          const now = performance.now();
          const buckets: Array<[TokenBucket | undefined, number]> = [
            [state.own.bytes, n],
            [modelState(request.model, now)?.bytes, n],
          ];
          if (!force) return waitFor(buckets, now);
          for (const [b] of buckets) b?.take(n);
          return 0;
        };
        if (store === undefined) return local();
        const buckets = this.#storeBuckets(state, request.model, [0, bytesRead(n)], [0, bytesRead(n)]);
        return this.#sharedSpend(state, buckets, force).then((w) => (w === LOCAL ? local() : w));
      },
      spendTokens: (n, model) => {
        const local = () => {
          const now = performance.now();
          return waitFor(
            [
              [state.own.tokens, n],
              [modelState(model, now)?.tokens, n],
            ],
            now,
          );
        };
        const settle = (wait: number) => {
          tokensWait = wait;
          if (wait === 0) tokens += n;
          return wait === 0;
        };
        if (store === undefined) return settle(local());
        const entry = state.config.perModel.find((p) => p.pattern.test(model));
        const buckets = [
          ...this.#tokenBuckets(state.config.limits, '', n),
          ...(entry === undefined
            ? []
            : this.#tokenBuckets(entry.limits, `m:${encodeURIComponent(model)}:`, n)),
        ];
        return this.#sharedSpend(state, buckets, false).then((w) => settle(w === LOCAL ? local() : w));
      },
      tokensRetryAfterSeconds: (n, model) => {
        if (store !== undefined) return Math.max(1, Math.ceil(tokensWait));
        const now = performance.now();
        const buckets = [state.own.tokens, modelState(model, now)?.tokens];
        const wait = Math.max(0, ...buckets.map((b) => (b === undefined ? 0 : b.wait(n, now))));
        return Math.max(1, Math.ceil(wait));
      },
    };
  }

  #tokenBuckets(limits: ResolvedLimits, prefix: string, n: number): StoreBucket[] {
    return limits.tokensPerSecond === undefined || n <= 0
      ? []
      : [{ key: `${prefix}t`, rate: limits.tokensPerSecond, capacity: limits.tokensBurst, cost: n }];
  }

  #record(
    request: GuardRequest,
    identity: Identity | undefined,
    started: number,
    outcome: AuditOutcome,
  ): void {
    if (this.#audit === undefined) return;
    const record: Omit<AuditRecord, 'time'> = {
      requestId: request.requestId,
      tenant: identity?.tenant ?? null,
      protocol: request.protocol,
      route: request.route,
      status: outcome.status,
      latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
    };
    const extra: Partial<AuditRecord> = {
      model: request.model,
      version: outcome.version ?? request.version,
      bytesIn: request.bytesIn,
      bytesOut: outcome.bytesOut,
      queueUs: outcome.queueUs,
      computeUs: outcome.computeUs,
      tokens: outcome.tokens,
      remote: request.remoteAddress,
      keyId: identity?.keyId,
      error: outcome.error,
    };
    for (const [k, v] of Object.entries(extra))
      if (v !== undefined && v !== '') (record as Record<string, unknown>)[k] = v;
    this.audit(record);
  }
}
