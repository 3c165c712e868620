// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The guard's shared state on Redis against a hostile world (issue 40): Redis
// losing or replacing the deny list, refusing a write, going down while a
// credential is revoked; revocations that expire; keys that must expire in
// Redis; a cost past a bucket's capacity; a body charged for what it declares.

const HOSTILE = 'packages/gateway/test/hostile/redis-guard.test.ts';
const STORE = 'packages/gateway/lib/guard/store.ts';

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'redis-deny-epoch-ignored',
    why: "revocation: the deny list's version is its counter and size alone, so a list Redis lost and made again up to the same count reads as unchanged, and its revocations are never read",
    file: STORE,
    search: "local version = (v[1] or '') .. ':' .. (v[2] or '0')",
    replace: "local version = ':' .. (v[2] or '0')",
    tests: [HOSTILE],
  },
  {
    name: 'redis-deny-list-replaced',
    why: 'revocation: a replica replaces what it knows with what Redis holds, so FLUSHALL (or a restart without persistence) un-revokes every credential on every replica',
    file: STORE,
    search: '      for (const [member, until] of inRedis) this.#denied.add(member, until);\n',
    replace:
      '      this.#denied = new DenyList();\n' +
      '      for (const [member, until] of inRedis) this.#denied.add(member, until);\n',
    tests: [HOSTILE],
  },
  {
    name: 'redis-deny-list-not-written-back',
    why: 'revocation: what Redis lost is never written back, so a replica started after FLUSHALL or a restart admits every credential revoked before',
    file: STORE,
    search:
      '      const lost = this.#denied.entries(Date.now()).filter(([member]) => !inRedis.has(member));\n',
    replace: '      const lost: Array<[string, number]> = [];\n',
    tests: [HOSTILE],
  },
  {
    name: 'redis-revoke-refusal-ignored',
    why: 'revocation: a write Redis refuses (a key of the wrong type) answers "revoked" while nothing was revoked',
    file: STORE,
    search:
      '      throw new StoreRefused(`the limits store (Redis) refused the revocation: ${(err as Error).message}`);\n',
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'redis-own-revocation-unkept',
    why: 'revocation: a revocation made while Redis is down is kept by nothing but the guard that made it, and never reaches the other replicas',
    file: STORE,
    search: '    this.#denied.add(member, expiresAt);\n',
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'deny-list-expiry-ignored',
    why: 'revocation: expired revocations are kept, and the deny list never shrinks (a token revoked until its exp stays refused)',
    file: 'packages/gateway/lib/guard/deny-list.ts',
    search: '    return until !== undefined && until > now;\n',
    replace: '    return until !== undefined;\n',
    tests: [HOSTILE],
  },
  {
    name: 'redis-expired-revocations-kept',
    why: "revocation: Redis's deny list keeps entries past their expiry (it only grows)",
    file: STORE,
    search: "local changed = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n",
    replace: 'local changed = 0\n',
    tests: [HOSTILE],
  },
  {
    name: 'redis-revocation-expiry-unstored',
    why: "revocation: a revocation's expiry is not stored in Redis (every entry written there never expires)",
    file: STORE,
    search: '[member, String(until)]',
    replace: '[member, String(Math.max(until, NEVER))]',
    tests: [HOSTILE],
  },
  {
    name: 'redis-bucket-no-ttl',
    why: "shared limits: bucket keys never expire in Redis (every tenant's and model's keys stay for ever)",
    file: STORE,
    search:
      "  redis.call('PEXPIRE', KEYS[1 + i], math.ceil((cap + math.max(0, cost - levels[i])) / rate * 1000) + 1000)\n",
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'redis-dead-leases-kept',
    why: 'shared limits: leases past their lifetime are never removed, so the slots of a replica that died holding them stay taken while anyone else uses the set',
    file: STORE,
    search: "  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n",
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'redis-oversize-cost-refused',
    why: "shared limits: a request costing more than a bucket's capacity is refused for ever instead of passing a full bucket and leaving it in debt",
    file: STORE,
    search: '  local need = math.min(tonumber(ARGV[5 + 4 * i]), cap)\n',
    replace: '  local need = tonumber(ARGV[5 + 4 * i])\n',
    tests: [HOSTILE],
  },
  {
    name: 'local-oversize-cost-refused',
    why: "limits: a request costing more than a bucket's capacity is refused for ever instead of passing a full bucket and leaving it in debt",
    file: 'packages/gateway/lib/guard/limits.ts',
    search: '    const need = Math.min(cost, this.capacity);\n',
    replace: '    const need = cost;\n',
    tests: [HOSTILE],
  },
  {
    name: 'declared-body-charged-at-admission',
    why: 'bytesPerSecond: a body is charged its declared Content-Length at admission, so one declared and never sent locks the tenant out',
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '  return { take: request.bodyUnread === true ? 0 : n, need: n };\n',
    replace: '  return { take: n, need: n };\n',
    tests: [HOSTILE],
  },
  {
    name: 'oversize-body-declared',
    why: 'bytesPerSecond: a Content-Length past maxBodyBytes is weighed against the bytes buckets, and answered 429 (come back later) instead of 413 (never)',
    file: 'packages/gateway/lib/http/server.ts',
    search: '  const declared = Number.isSafeInteger(length) && length >= 0 && length <= maxBodyBytes;\n',
    replace: '  const declared = Number.isSafeInteger(length) && length >= 0;\n',
    tests: [HOSTILE],
  },
  {
    name: 'declared-body-never-charged',
    why: 'bytesPerSecond: a body admitted on its Content-Length is never charged once read (every byte of it free)',
    file: 'packages/gateway/lib/exchange.ts',
    search:
      '    if (context.bytesIn === undefined || declared) this.bodyCharge = chargeOf(admission, declared);\n',
    replace: '    if (context.bytesIn === undefined) this.bodyCharge = chargeOf(admission, declared);\n',
    tests: [HOSTILE],
  },
  {
    name: 'declared-body-named-free',
    why: "bytesPerSecond: a body admitted on its declared size and read before its model is named (the OpenAI routes) is not charged to the tenant's buckets",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '        const taken = admitted.bytesIn !== undefined && admitted.bodyUnread !== true;\n',
    replace: '        const taken = admitted.bytesIn !== undefined;\n',
    tests: [HOSTILE],
  },
];
