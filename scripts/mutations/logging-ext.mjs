// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The logging extension (issue 43): Triton's process-wide logger changed at
// run time through setters that ignore their options object, read back from
// what the addon set, and served over HTTP and gRPC as tritonserver r25.07
// serves it, to admin tenants only. And serve's --trace-config.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'fake-log-setter-needs-options',
    why: "the fake's log setters change the logger whatever the options pointer, as Triton's do: ignoring a null one (the old fake) leaves tritonserver-style run-time changes without effect",
    file: 'packages/fake-engine/src/api/options.cc',
    search:
      '    (void)options;                                                  \\\n    body;                                                           \\\n',
    replace:
      '    if (options == nullptr) return nullptr;                         \\\n    body;                                                           \\\n',
    tests: ['packages/triton-node/test/api/log-settings.test.ts'],
  },
  {
    name: 'fake-log-file-unchecked',
    why: "a log file that cannot be opened is refused (INTERNAL) and the log stays where it was, as Triton's SetLogFile does; the old fake took any path and lost every line",
    file: 'packages/fake-engine/src/support/log.cc',
    search: '    if (probe.fail()) {\n',
    replace: '    if (false) {\n',
    tests: ['packages/triton-node/test/api/log-settings.test.ts'],
  },
  {
    name: 'log-settings-not-recorded',
    why: 'the C API has no getter for the logger: the addon records each change, or logSettings() and GET /v2/logging answer a stale value',
    file: 'packages/triton-node/native/triton/log_settings.cc',
    search: '    g_log.info = *u.info;\n',
    replace: '',
    tests: ['packages/triton-node/test/api/log-settings.test.ts', 'packages/gateway/test/logging.test.ts'],
  },
  {
    name: 'logging-not-admin',
    why: "Triton's logger is the whole process's: a tenant that may change it can silence errors or fill the disk with verbose lines, so /v2/logging and LogSettings are admin-only",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '  ROUTES.logging.name,\n',
    replace: '',
    tests: ['packages/gateway/test/guard.test.ts'],
  },
  {
    name: 'trace-setting-not-admin',
    why: "the trace settings are the whole server's (rate, file, the count left): /v2/trace/setting, a model's, and TraceSetting are admin-only",
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '  ROUTES.traceSetting.name,\n',
    replace: '',
    tests: ['packages/gateway/test/guard.test.ts'],
  },
  {
    name: 'logging-not-advertised',
    why: "server metadata lists 'logging', as tritonserver's does, so clients know the extension is there",
    file: 'packages/gateway/lib/kserve/protocol.ts',
    search: "  'logging',\n",
    replace: '',
    tests: ['packages/gateway/test/logging.test.ts'],
  },
  {
    name: 'log-http-file-accepted',
    why: 'the log file is not changed over the network (501, as tritonserver), whatever the body says',
    file: 'packages/gateway/lib/logging/protocol.ts',
    search:
      "  if ('log_file' in body && body.log_file !== null) throw new GatewayError(501, FILE_FIXED, 'UNSUPPORTED');\n",
    replace: '',
    tests: ['packages/gateway/test/logging.test.ts'],
  },
  {
    name: 'log-http-verbose-uncast',
    why: 'tritonserver casts the verbose level to int32 and keeps a negative one as 0: 2^32+3 is 3, 2^32-1 is 0',
    file: 'packages/gateway/lib/logging/protocol.ts',
    search: '  return Math.max(0, int32);\n',
    replace: '  return Math.min(n, 2 ** 31 - 1);\n',
    tests: ['packages/gateway/test/logging.test.ts'],
  },
  {
    name: 'log-http-format-unchecked',
    why: "a log format other than 'default' or 'ISO8601' is refused with tritonserver's 503 and words",
    file: 'packages/gateway/lib/logging/protocol.ts',
    search: '    if (known === undefined)\n      throw new GatewayError(503,',
    replace: '    if (known === null)\n      throw new GatewayError(503,',
    tests: ['packages/gateway/test/logging.test.ts'],
  },
  {
    name: 'log-grpc-kind-unchecked',
    why: 'a gRPC setting of the wrong kind is INVALID_ARGUMENT "expect boolean for \'<name>\'", as tritonserver answers, not read as false',
    file: 'packages/gateway/lib/logging/protocol.ts',
    search: "    if (v.parameter_choice !== 'bool_param') throw expect(name, 'boolean');\n",
    replace: '',
    tests: ['packages/gateway/test/logging.test.ts'],
  },
  {
    name: 'log-grpc-format-unchecked',
    why: 'an unknown log format over gRPC is INVALID_ARGUMENT, as tritonserver answers',
    file: 'packages/gateway/lib/logging/protocol.ts',
    search: '    if (known === undefined)\n      throw new GatewayError(400,',
    replace: '    if (known === null)\n      throw new GatewayError(400,',
    tests: ['packages/gateway/test/logging.test.ts'],
  },
  {
    name: 'serve-trace-config-ignored',
    why: "serve --trace-config sets the trace extension's global setting at start, as tritonserver's flag does",
    file: 'packages/gateway/lib/cli/serve.ts',
    search: '      gateway.trace = traceOptionsOf(traceFlags, gateway.trace);\n',
    replace: '      traceOptionsOf(traceFlags, gateway.trace);\n',
    tests: ['packages/gateway/test/serve-trace.test.ts'],
  },
  {
    name: 'serve-trace-off-not-final',
    why: 'as in tritonserver, any --trace-config level=OFF turns tracing off, whatever other levels were given',
    file: 'packages/gateway/lib/cli/trace-config.ts',
    search: "  if (levels.has('OFF')) out.level = 'OFF';\n  else if",
    replace: '  if',
    tests: ['packages/gateway/test/serve-trace.test.ts'],
  },
  {
    name: 'trace-options-unchecked',
    why: 'a bad trace option is a TypeError naming it, before the gateway makes anything (it would sample with NaN)',
    file: 'packages/gateway/lib/index.ts',
    search: '{ trace: checkTraceOptions(options.trace) }',
    replace: '{ trace: options.trace }',
    tests: ['packages/gateway/test/serve-trace.test.ts'],
  },
];
