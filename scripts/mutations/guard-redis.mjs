// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Limits and revocation shared by replicas on Redis (issue 33).

const REDIS = 'packages/gateway/test/guard-redis.test.ts';

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'redis-bucket-unchecked',
    why: 'shared limits: the admission script takes from the shared buckets without refusing when they are empty',
    file: 'packages/gateway/lib/guard/store.ts',
    search: 'if wait > 0 and not force then return {2, tostring(wait)} end\n',
    replace: 'if false then return {2, tostring(wait)} end\n',
    tests: [REDIS],
  },
  {
    name: 'redis-concurrency-unchecked',
    why: 'shared limits: the admission script adds a lease past maxConcurrent',
    file: 'packages/gateway/lib/guard/store.ts',
    search: '  if inflight >= maxc and not force then return {1, inflight} end\n',
    replace: '  if false then return {1, inflight} end\n',
    tests: [REDIS],
  },
  {
    name: 'redis-lease-kept',
    why: 'shared limits: a request that ends keeps its concurrency lease until it expires',
    file: 'packages/gateway/lib/guard/store.ts',
    search: '        client.zrem(conc, lease).catch(() => undefined);\n',
    replace: '        void conc;\n',
    tests: [REDIS],
  },
  {
    name: 'redis-store-unused',
    why: 'shared limits: with a store configured, each replica admits against its own buckets (N replicas, N times the rate)',
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '    if (this.#store !== undefined) {\n      const shared = await this.#sharedLimit(',
    replace: '    if (this.#store === null) {\n      const shared = await this.#sharedLimit(',
    tests: [REDIS],
  },
  {
    name: 'redis-revocations-unread',
    why: "revocation: a guard honours only the revocations made through it, not the store's deny list",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '    if (this.#revoked.has(member, Date.now()) || this.#store?.isRevoked(member) === true)\n',
    replace: '    if (this.#revoked.has(member, Date.now()))\n',
    tests: [REDIS],
  },
  {
    name: 'redis-deny-list-read-once',
    why: 'revocation: each replica reads the deny list once, at start, and never sees later revocations',
    file: 'packages/gateway/lib/guard/store.ts',
    search: '      if (flat === undefined) return;\n',
    replace: '      if (flat === undefined || this.#deniedVersion !== undefined) return;\n',
    tests: [REDIS],
  },
  {
    name: 'redis-fallback-inverted',
    why: "fallback: the default 'local' refuses with 503 while Redis is down, and 'closed' admits",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: "    if (this.#config.store?.fallback === 'closed') {\n",
    replace: "    if (this.#config.store?.fallback !== 'closed') {\n",
    tests: [REDIS],
  },
  {
    name: 'redis-state-unreported',
    why: 'fallback: a change of the store between reachable and not goes without its log line and metric',
    file: 'packages/gateway/lib/guard/store.ts',
    search: '    this.#onState(up, reason);\n',
    replace: '    void reason;\n',
    tests: [REDIS],
  },
  {
    name: 'redis-loaded-eagerly',
    why: 'optional peer: ioredis is imported with the gateway, also without guard.limits.store',
    file: 'packages/gateway/lib/guard/store.ts',
    search: 'let ioredis: Promise<IORedisModule> | undefined;\n',
    replace:
      "let ioredis: Promise<IORedisModule> | undefined = importGatewayPeers(['ioredis'], 'shared limits').then(\n" +
      '  ([m]) => m as IORedisModule,\n' +
      ');\n',
    tests: [REDIS],
  },
  {
    name: 'redis-tokens-local',
    why: "shared limits: generated tokens are spent from each replica's own bucket, not the shared one",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '        if (store === undefined) return settle(local());\n',
    replace: '        if (store !== null) return settle(local());\n',
    tests: [REDIS],
  },
  {
    name: 'redis-bytes-local',
    why: "shared limits: a chunked body's bytes are charged to each replica's own bucket, not the shared one",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '        if (store === undefined) return local();\n',
    replace: '        if (store !== null) return local();\n',
    tests: [REDIS],
  },
  {
    name: 'redis-lease-not-renewed',
    why: 'shared limits: a request running longer than leaseMs loses its lease, and the cap admits past it',
    file: 'packages/gateway/lib/guard/store.ts',
    search: '    this.#renewTimer = setInterval(() => void this.#renew(), this.#options.leaseMs / 3);\n',
    replace: '    this.#renewTimer = setInterval(() => undefined, this.#options.leaseMs / 3);\n',
    tests: [REDIS],
  },
  {
    name: 'redis-gauge-unset',
    why: 'fallback: triton_node_gateway_limits_store_up does not follow the store (nothing to alert on)',
    file: 'packages/gateway/lib/index.ts',
    search: 'onStoreState: (up) => ctx.metrics?.storeUp(up)',
    replace: 'onStoreState: () => undefined',
    tests: [REDIS],
  },
];
