/**
 * Token buckets and concurrency counts per tenant and per tenant×model.
 * All state lives on the JS thread: admission is synchronous, so no two
 * requests race for a bucket.
 */
import type { ResolvedLimits, ResolvedTenant } from './config.js';

/**
 * A bucket of `capacity` tokens refilled at `rate` per second. A cost larger
 * than the capacity passes when the bucket is full and leaves it in debt, so
 * a large body is slowed down rather than refused forever.
 */
export class TokenBucket {
  rate: number;
  capacity: number;
  #tokens: number;
  #updated: number;

  constructor(rate: number, capacity: number, now: number) {
    this.rate = rate;
    this.capacity = capacity;
    this.#tokens = capacity;
    this.#updated = now;
  }

  #refill(now: number): void {
    const elapsed = (now - this.#updated) / 1000;
    if (elapsed > 0) this.#tokens = Math.min(this.capacity, this.#tokens + elapsed * this.rate);
    this.#updated = now;
  }

  /** Seconds until `cost` could be taken (0: now). Takes nothing. */
  wait(cost: number, now: number): number {
    this.#refill(now);
    const need = Math.min(cost, this.capacity);
    return this.#tokens >= need ? 0 : (need - this.#tokens) / this.rate;
  }

  take(cost: number): void {
    this.#tokens -= cost;
  }

  /** Whether the bucket is full at `now`: then it is the same as a new one, and may be forgotten. */
  full(now: number): boolean {
    this.#refill(now);
    return this.#tokens >= this.capacity;
  }

  /** New rate and capacity, keeping what is in the bucket (clipped to the new capacity). */
  reconfigure(rate: number, capacity: number, now: number): void {
    this.#refill(now);
    this.rate = rate;
    this.capacity = capacity;
    this.#tokens = Math.min(this.#tokens, capacity);
  }
}

/** The buckets one set of limits asks for. */
export class LimitState {
  requests?: TokenBucket;
  bytes?: TokenBucket;
  tokens?: TokenBucket;

  constructor(limits: ResolvedLimits, now: number) {
    this.apply(limits, now);
  }

  apply(limits: ResolvedLimits, now: number): void {
    this.requests = bucket(this.requests, limits.requestsPerSecond, limits.requestBurst, now);
    this.bytes = bucket(this.bytes, limits.bytesPerSecond, limits.bytesBurst, now);
    this.tokens = bucket(this.tokens, limits.tokensPerSecond, limits.tokensBurst, now);
  }

  /** Every bucket full: the state of a model nobody used for a while, the same as a new one. */
  atRest(now: number): boolean {
    return (
      (this.requests?.full(now) ?? true) &&
      (this.bytes?.full(now) ?? true) &&
      (this.tokens?.full(now) ?? true)
    );
  }
}

/**
 * The most per-model states a tenant keeps (each a few buckets). Model names
 * come from clients, absent models' too: past this many at once, after the
 * states at rest were forgotten, new names share one state per `perModel`
 * entry (they take from one bucket together, never from a fresh one each).
 */
export const MAX_MODEL_STATES = 4096;

function bucket(
  old: TokenBucket | undefined,
  rate: number | undefined,
  capacity: number,
  now: number,
): TokenBucket | undefined {
  if (rate === undefined) return undefined;
  if (old === undefined) return new TokenBucket(rate, capacity, now);
  old.reconfigure(rate, capacity, now);
  return old;
}

/**
 * A tenant's live state: its buckets, its per-model buckets, its requests in
 * flight. Per-model states are kept only while they hold something: one
 * whose buckets all refilled is forgotten (a new one is the same), so names
 * asked once, of absent models too, do not pile up; `MAX_MODEL_STATES`
 * bounds what is left.
 */
export class TenantState {
  config: ResolvedTenant;
  readonly own: LimitState;
  /** Buckets per model name (limits from the first `perModel` glob that matches the name). */
  readonly models = new Map<string, LimitState>();
  /** The state shared, per perModel entry, by new names while `models` is full. */
  readonly #crowded = new Map<ResolvedTenant['perModel'][number], LimitState>();
  /** The size of `models` at which states at rest are next looked for (doubles with what stays). */
  #sweepAt = 64;
  /** New names sent to the crowd since the last sweep (a full map is swept every 256th). */
  #crowdedSince = 0;
  inFlight = 0;

  constructor(config: ResolvedTenant, now: number) {
    this.config = config;
    this.own = new LimitState(config.limits, now);
  }

  /** The per-model state of `model` (undefined when no perModel entry matches). */
  model(model: string, now: number): LimitState | undefined {
    const entry = this.config.perModel.find((p) => p.pattern.test(model));
    if (entry === undefined) return undefined;
    let state = this.models.get(model);
    if (state !== undefined) return state;
    const full = this.models.size >= MAX_MODEL_STATES;
    if (full ? ++this.#crowdedSince >= 256 : this.models.size >= this.#sweepAt) this.#sweep(now);
    if (this.models.size >= MAX_MODEL_STATES) {
      state = this.#crowded.get(entry);
      if (state === undefined) {
        state = new LimitState(entry.limits, now);
        this.#crowded.set(entry, state);
      }
      return state;
    }
    state = new LimitState(entry.limits, now);
    this.models.set(model, state);
    return state;
  }

  /** Forgets the per-model states at rest; the next sweep comes when what stayed has doubled. */
  #sweep(now: number): void {
    this.#crowdedSince = 0;
    for (const [model, state] of this.models) if (state.atRest(now)) this.models.delete(model);
    for (const [entry, state] of this.#crowded) if (state.atRest(now)) this.#crowded.delete(entry);
    this.#sweepAt = Math.min(MAX_MODEL_STATES, Math.max(64, this.models.size * 2));
  }

  reconfigure(config: ResolvedTenant, now: number): void {
    this.config = config;
    this.own.apply(config.limits, now);
    for (const [model, state] of this.models) {
      const entry = config.perModel.find((p) => p.pattern.test(model));
      if (entry === undefined) this.models.delete(model);
      else state.apply(entry.limits, now);
    }
    // Entries are replaced by an update: the crowd's states start over under the new ones.
    this.#crowded.clear();
  }
}

/**
 * Seconds to wait before every bucket given has room (0: now) for its entry's
 * `need` (default its cost; a declared body not read yet needs room and costs
 * nothing yet); a request is admitted only when all of them have room, and
 * then takes each cost, so a refusal by one bucket spends nothing of the others.
 */
export function waitFor(entries: Array<[TokenBucket | undefined, number, number?]>, now: number): number {
  let longest = 0;
  for (const [b, cost, need = cost] of entries) {
    if (b === undefined || need <= 0) continue;
    longest = Math.max(longest, b.wait(need, now));
  }
  if (longest === 0) for (const [b, cost] of entries) if (b !== undefined && cost > 0) b.take(cost);
  return longest;
}
