/**
 * Credentials refused until their expiry: the deny list a guard checks at
 * admission. Entries are members as `revocationMember` writes them
 * (`jti:…`, `key:…`); nothing takes one off before its expiry.
 */

/** The expiry of an entry that never expires (a sorted-set score Redis keeps exactly). */
export const NEVER = Number.MAX_SAFE_INTEGER;

export class DenyList {
  /** member → ms since the epoch after which it is forgotten. */
  readonly #until = new Map<string, number>();

  /** Refuses `member` until `expiresAt`; of two expiries the later holds. */
  add(member: string, expiresAt: number): void {
    const old = this.#until.get(member);
    if (old === undefined || old < expiresAt) this.#until.set(member, expiresAt);
  }

  /** Whether `member` is refused at `now` (ms since the epoch). */
  has(member: string, now: number): boolean {
    const until = this.#until.get(member);
    return until !== undefined && until > now;
  }

  /** The entries in force at `now`, as [member, expiry]; expired ones are forgotten. */
  entries(now: number): Array<[string, number]> {
    for (const [member, until] of this.#until) if (until <= now) this.#until.delete(member);
    return [...this.#until];
  }
}
