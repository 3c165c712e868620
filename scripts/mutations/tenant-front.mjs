// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The isolating front and the guard under a hostile tenant (issue 27).

const HOSTILE = 'packages/gateway/test/hostile-tenant.test.ts';

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'front-forwards-malformed-header',
    why: 'isolation: a malformed Inference-Header-Content-Length is dropped and the request forwarded, not answered 400 at the front',
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: "    throw badRequest(`Unable to parse Inference-Header-Content-Length: '${text}'`);\n",
    replace: '    return undefined;\n',
    tests: [HOSTILE],
  },
  {
    name: 'front-region-check-skipped',
    why: "isolation: the front no longer refuses a client's shared_memory_region in an inference's JSON header",
    file: 'packages/gateway/lib/isolation/proxy.ts',
    search: '    if (params.shared_memory_region !== undefined) {\n',
    replace: '    if (params.shared_memory_region === null) {\n',
    tests: [HOSTILE],
  },
  {
    name: 'front-region-name-fixed',
    why: "isolation: the front's region has one fixed, guessable name instead of a random one per process",
    file: 'packages/gateway/lib/isolation/shm-pool.ts',
    search: "    this.region = `${RESERVED_REGION_PREFIX}-${randomBytes(16).toString('hex')}`;\n",
    replace: '    this.region = RESERVED_REGION_PREFIX;\n',
    tests: [HOSTILE],
  },
  {
    name: 'front-stream-followers-unchecked',
    why: 'isolation: only the first message of a gRPC stream is checked for regions and admitted; the others pass as they are',
    file: 'packages/gateway/lib/isolation/grpc.ts',
    search: '      if (!first) {\n',
    replace: '      if (!first && msg === null) {\n',
    tests: [HOSTILE],
  },
  {
    name: 'worker-control-unchecked',
    why: "isolation: a group's process registers and unregisters regions for any request, not only the front's own (with its control token)",
    file: 'packages/gateway/lib/isolation/worker.ts',
    search: "  return path.includes('sharedmemory') && !path.endsWith('/status');\n",
    replace: '  return false;\n',
    tests: [HOSTILE],
  },
  {
    name: 'worker-serves-any-region',
    why: "isolation: a group's process serves shared memory to every request, not only those the front moved into its region",
    file: 'packages/gateway/lib/isolation/worker.ts',
    search: "    (fromFront || isStatus(req.url ?? '/') ? trusted : untrusted)(req, res);\n",
    replace: '    trusted(req, res);\n',
    tests: [HOSTILE],
  },
  {
    name: 'worker-grpc-serves-any-region',
    why: "isolation: a group's process serves shared memory to every gRPC call, not only those carrying the front's token",
    file: 'packages/gateway/lib/isolation/worker.ts',
    search: '      (fromFront ? trusted : untrusted)[rpc]!(call, callback);\n',
    replace: '      trusted[rpc]!(call, callback);\n',
    tests: [HOSTILE],
  },
  {
    name: 'front-path-unresolved',
    why: "isolation: the front routes on the raw path while the process resolves its dot segments, so '/v2/models/a/infer/../../b/infer' passes unchecked",
    file: 'packages/gateway/lib/isolation/index.ts',
    search:
      "  const parsed = requestUrl(req.url ?? '/');\n  const path = parsed.pathname;\n  const url = `${parsed.pathname}${parsed.search}`;\n",
    replace: "  const url = req.url ?? '/';\n  const path = url.split('?', 1)[0]!;\n",
    tests: [HOSTILE],
  },
  {
    name: 'bytes-chunked-uncharged',
    why: 'bytesPerSecond: an HTTP body without a Content-Length (chunked) is charged nothing',
    file: 'packages/gateway/lib/exchange.ts',
    search:
      '    if (context.bytesIn === undefined || declared) this.bodyCharge = chargeOf(admission, declared);\n',
    replace: '    if (declared) this.bodyCharge = chargeOf(admission, declared);\n',
    tests: [HOSTILE],
  },
  {
    name: 'bytes-typed-uncharged',
    why: 'bytesPerSecond: typed gRPC contents are not counted, only raw_input_contents',
    file: 'packages/gateway/lib/grpc/codec.ts',
    search: '  if (!Array.isArray(msg.inputs)) return bytes;\n',
    replace: '  return bytes;\n',
    tests: [HOSTILE],
  },
  {
    name: 'front-grpc-bytes-uncharged',
    why: "bytesPerSecond: the front's gRPC calls tell the guard no tensor bytes",
    file: 'packages/gateway/lib/isolation/grpc.ts',
    search: '    ...(bytesIn === 0 ? {} : { bytesIn }),\n',
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'metrics-open-to-tenants',
    why: "/metrics (every tenant's model names and counters) is served to every authenticated tenant, not admins only",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '  ROUTES.systemStatus.name,\n  ROUTES.metrics.name,\n]);\n',
    replace: '  ROUTES.systemStatus.name,\n]);\n',
    tests: [HOSTILE],
  },
  {
    name: 'grpc-stats-unfiltered',
    why: "tenants: gRPC ModelStatistics lists every model, not the tenant's (HTTP filters)",
    file: 'packages/gateway/lib/grpc/rpcs.ts',
    search:
      "      const stats = (await modelStatistics(server, (req.name as string) ?? '', version(req))).filter((s) =>\n" +
      '        ex.canSee(s.name),\n' +
      '      );\n',
    replace: "      const stats = await modelStatistics(server, (req.name as string) ?? '', version(req));\n",
    tests: [HOSTILE],
  },
  {
    name: 'front-index-unfiltered',
    why: "isolation: the front's HTTP repository index and statistics list every model of the tenant's group, not the tenant's",
    file: 'packages/gateway/lib/isolation/index.ts',
    search: '    const doc = visibleOnly(merged, ex.admission);\n',
    replace: '    const doc = merged;\n',
    tests: [HOSTILE],
  },
  {
    name: 'front-grpc-stats-unfiltered',
    why: "isolation: the front's gRPC RepositoryIndex and ModelStatistics list every model of the tenant's group",
    file: 'packages/gateway/lib/isolation/grpc.ts',
    search:
      "      return rpc === 'RepositoryIndex' || rpc === 'ModelStatistics' ? visibleOnly(answer, admission) : answer;\n",
    replace: '      return answer;\n',
    tests: [HOSTILE],
  },
  {
    name: 'refusal-spends-other-buckets',
    why: 'rate limits: each bucket takes its cost as it is checked, so a refusal by one leaves the others spent',
    file: 'packages/gateway/lib/guard/limits.ts',
    search:
      '    longest = Math.max(longest, b.wait(need, now));\n' +
      '  }\n' +
      '  if (longest === 0) for (const [b, cost] of entries) if (b !== undefined && cost > 0) b.take(cost);\n',
    replace:
      '    const wait = b.wait(need, now);\n' +
      '    if (wait === 0) b.take(cost);\n' +
      '    longest = Math.max(longest, wait);\n' +
      '  }\n',
    tests: [HOSTILE],
  },
  {
    name: 'removed-tenant-keeps-access',
    why: 'guard.update(): a tenant left out keeps its API key and its state, so its requests are still admitted',
    file: 'packages/gateway/lib/guard/guard.ts',
    search:
      '    this.#config = config;\n' +
      '    this.#keys = keys;\n' +
      '    for (const [name, state] of this.#tenants) {\n' +
      '      const next = config.tenants.get(name);\n' +
      '      if (next === undefined) this.#tenants.delete(name);\n',
    replace:
      '    this.#config = { ...config, apiKeys: [...config.apiKeys, ...this.#config.apiKeys] };\n' +
      '    this.#keys = keys;\n' +
      '    for (const [name, state] of this.#tenants) {\n' +
      '      const next = config.tenants.get(name);\n' +
      '      if (next === undefined) continue;\n',
    tests: [HOSTILE],
  },
  {
    name: 'shm-output-offset-ignored',
    why: "shared memory: an output is written at the reference's offset in the object, ignoring the region's registered offset",
    file: 'packages/gateway/lib/kserve/shared-memory.ts',
    search:
      '      done += writeSync(region!.fd, bytes, done, bytes.byteLength - done, region!.offset + ref.offset + done);\n',
    replace:
      '      done += writeSync(region!.fd, bytes, done, bytes.byteLength - done, ref.offset + done);\n',
    tests: [HOSTILE],
  },
  {
    name: 'chunked-limit-checked-late',
    why: 'body limit: a chunked body is buffered whole and only then found over the limit (413 after the client sent it all)',
    file: 'packages/gateway/lib/http/body.ts',
    search:
      '      if (received + chunk.length > (target?.length ?? limit)) {\n' +
      '        fail(\n' +
      '          target === undefined\n' +
      '            ? tooLarge(limit, `more than ${limit}`)\n' +
      "            : new GatewayError(400, 'request body is longer than its Content-Length'),\n" +
      '        );\n' +
      '        return;\n' +
      '      }\n',
    replace:
      '      if (target !== undefined && received + chunk.length > target.length) {\n' +
      "        fail(new GatewayError(400, 'request body is longer than its Content-Length'));\n" +
      '        return;\n' +
      '      }\n' +
      '      if (target === undefined && received <= limit && received + chunk.length > limit)\n' +
      "        req.prependOnceListener('end', () => fail(tooLarge(limit, `more than ${limit}`)));\n",
    tests: [HOSTILE],
  },
  {
    name: 'front-server-route-misnamed',
    why: "the front names GET /v2 as the guard does ('server'), so a guard's open: ['server'] opens it at the front too",
    file: 'packages/gateway/lib/routes.ts',
    search: "  server: kserve('server', 'server', 'GET /v2[/]', 'ServerMetadata'),\n",
    replace: "  server: kserve('server_metadata', 'server', 'GET /v2[/]', 'ServerMetadata'),\n",
    tests: ['packages/gateway/test/hostile-tenant.test.ts'],
  },
];
