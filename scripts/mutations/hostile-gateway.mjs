// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The gateway and doctor under a hostile review (issue 40): a stream client
// that stops reading, OpenAI body keys named like Object.prototype members,
// per-model limit state for invented names, an isolation group outliving its
// front, control characters in printed names; and what a mutation audit found
// no test protecting (serve's boolean flags, a client leaving during
// admission, the front's control header).

const HOSTILE = 'packages/gateway/test/hostile/gateway.test.ts';
const ISOLATION = 'packages/gateway/test/isolation.test.ts';
const SERVE = 'packages/gateway/test/serve.test.ts';

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'slow-client-unbounded',
    why: 'streams: while a route waits for a client that reads nothing, the model goes on filling its stream past streams.highWaterMark (up to the library’s 65,536 responses)',
    file: 'packages/gateway/lib/slow-client.ts',
    search: '      held !== undefined &&\n',
    replace: '      held === null &&\n',
    tests: [HOSTILE],
  },
  {
    name: 'slow-client-no-timeout',
    why: 'streams: a client that takes nothing is waited for forever, never cut after streams.writeTimeoutMs',
    file: 'packages/gateway/lib/slow-client.ts',
    search: "    const timer = setTimeout(() => done('timeout'), limits.writeTimeoutMs);\n",
    replace: '    const timer = setTimeout(() => undefined, limits.writeTimeoutMs);\n',
    tests: [HOSTILE],
  },
  {
    name: 'slow-client-end-unwatched',
    why: 'streams: an answer ended (its last event queued) to a client that reads nothing stays open, and in flight, until the client leaves',
    file: 'packages/gateway/lib/slow-client.ts',
    search: '  const timer = setTimeout(() => out.destroy(), timeoutMs);\n',
    replace: '  const timer = setTimeout(() => undefined, timeoutMs);\n',
    tests: [HOSTILE],
  },
  {
    name: 'openai-keys-inherited',
    why: "OpenAI: a body key is looked up in a plain object's table, so 'toString' and 'constructor' pass as supported parameters and '__proto__' answers a TypeError",
    file: 'packages/gateway/lib/openai/protocol.ts',
    search: '    const accepts = UNSUPPORTED.get(key);\n',
    replace:
      '    const accepts = (Object.fromEntries(UNSUPPORTED) as Record<string, (v: unknown) => boolean>)[key];\n',
    tests: [HOSTILE],
  },
  {
    name: 'limit-states-never-forgotten',
    why: 'guard: the per-model state of every model name ever asked is kept, refilled or not: memory grows with invented names',
    file: 'packages/gateway/lib/guard/limits.ts',
    search:
      '    for (const [model, state] of this.models) if (state.atRest(now)) this.models.delete(model);\n',
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'limit-states-unbounded',
    why: 'guard: with slowly refilling buckets the per-model states have no bound, and each invented name gets a fresh, full bucket',
    file: 'packages/gateway/lib/guard/limits.ts',
    search: '    if (this.models.size >= MAX_MODEL_STATES) {\n',
    replace: '    if (this.models.size < 0) {\n',
    tests: [HOSTILE],
  },
  {
    name: 'admission-left-kept',
    why: 'a client that left while its request was admitted: the admission is kept by a request that has ended, its concurrency slot never given back, no audit line written',
    file: 'packages/gateway/lib/exchange.ts',
    search: '    if (this.#ended) {\n      admission.done(outcome());\n      return false;\n    }\n',
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'inflight-counted-by-gauge',
    why: 'the ledger of requests in flight counts only through its metrics gauge: a gateway without metrics and the isolating front count nothing, and their drains wait for nothing',
    file: 'packages/gateway/lib/exchange.ts',
    search: '    this.#count++;\n    this.#gauge?.inFlight(this.#count);\n',
    replace: '    this.#gauge?.inFlight(++this.#count);\n',
    tests: [SERVE, ISOLATION],
  },
  {
    name: 'worker-exit-waits-for-triton',
    why: "isolation: a group process past its stop deadline exits through process.exit, whose addon cleanup waits Triton's exitTimeoutSeconds for a model that ignores cancellation",
    file: 'packages/gateway/lib/isolation/worker.ts',
    search: "    process.kill(process.pid, 'SIGKILL');\n",
    replace: '    process.exit(0);\n',
    tests: [ISOLATION],
  },
  {
    name: 'worker-drains-again-on-stop',
    why: "isolation: a group process told to stop (the front's drain deadline passed) drains again for seconds of its own before it cancels its streams",
    file: 'packages/gateway/lib/isolation/worker.ts',
    search: "  if (message.type === 'stop') void stop(0, 0);\n",
    replace: "  if (message.type === 'stop') void stop(0, STOP_DEADLINE_MS);\n",
    tests: [ISOLATION],
  },
  {
    name: 'front-forwards-control-header',
    why: "isolation: the front forwards a client's x-triton-node-isolation-control header (the header of its own requests to a group) instead of dropping it",
    file: 'packages/gateway/lib/isolation/proxy.ts',
    search:
      "    if (!HOP_BY_HOP.has(name) && name !== 'inference-header-content-length' && name !== CONTROL_HEADER)\n",
    replace: "    if (!HOP_BY_HOP.has(name) && name !== 'inference-header-content-length')\n",
    tests: [ISOLATION],
  },
  {
    name: 'serve-boolean-space-value',
    why: "serve: '--exit-on-error false' (the value after a space) leaves 'false' to be read as a model repository, and the flag true",
    file: 'packages/gateway/lib/cli/serve.ts',
    search: "      if (next === 'true' || next === 'false') {\n",
    replace: "      if (next === 'true' && next === 'false') {\n",
    tests: [SERVE],
  },
  {
    name: 'doctor-prints-raw-names',
    why: "doctor: a model folder's name is printed as it is: its escape sequences reach the terminal, a newline forges a line of the table",
    file: 'packages/triton-node/lib/doctor/report.ts',
    search: '    subject: printable(c.subject),\n    detail: printable(c.detail),\n',
    replace: '    subject: c.subject,\n    detail: c.detail,\n',
    tests: ['packages/triton-node/test/cli/doctor.test.ts'],
  },
  {
    name: 'lint-prints-raw-names',
    why: "lint: a finding's file (a model folder's name in it) is printed as it is, escape sequences and newlines included",
    file: 'packages/triton-node/lib/lint/index.ts',
    search: '      lines.push(printable(f.file));\n',
    replace: '      lines.push(f.file);\n',
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
];
