// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The first hour with the CLI (issue 45, item 6): tune takes --fake-engine as
// serve does; the missing-library error gives its advice once, with one
// minimum; lint reports a config named for another folder, and leaves a vLLM
// model's parameters at warnings; serve logs what it serves.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'tune-fake-engine-ignored',
    why: 'tune --fake-engine starts the fake engine: without it the default library (none here) is tried and the start fails',
    file: 'packages/triton-node/lib/cli/commands/tune.ts',
    search: "  const library = fake ? lib.fakeEngine.libraryPath : text('library');\n",
    replace: "  const library = text('library');\n",
    tests: ['packages/triton-node/test/tune/tune.test.ts'],
  },
  {
    name: 'tune-fake-engine-with-library',
    why: 'tune --fake-engine and --library name two libraries: a usage error, as serve says',
    file: 'packages/triton-node/lib/cli/commands/tune.ts',
    search: "  if (fake && typeof values.library === 'string')\n",
    replace: '  if (false)\n',
    tests: ['packages/triton-node/test/tune/tune.test.ts'],
  },
  {
    name: 'loader-native-advice-again',
    why: 'the missing-library error gives its advice once: the native error (its cause) states what was tried, with no advice and no second minimum of its own',
    file: 'packages/triton-node/native/triton/api.cc',
    search: '                             : "libtritonserver.so not found") +\n',
    replace:
      '                             : "libtritonserver.so not found") +\n      "\\nPossible solutions:\\n  - set TRITON_SERVER_LIB (Triton r24.08 or later)" +\n',
    tests: ['packages/triton-node/test/addon/loader.test.ts'],
  },
  {
    name: 'loader-second-minimum',
    why: 'the advice names one minimum, the C API the loader checks: no other release or version beside it',
    file: 'packages/triton-node/lib/addon/load.ts',
    search:
      "    '- A \"dlopen failed\" outcome above: make the library\\'s dependencies resolve (ldd /path/to/libtritonserver.so)',\n",
    replace: "    '- Use Triton r24.08 or later',\n",
    tests: ['packages/triton-node/test/addon/loader.test.ts'],
  },
  {
    name: 'lint-name-folder-unchecked',
    why: "lint reports a config whose name is not its folder's, which Triton's poll refuses (serve and doctor say so too)",
    file: 'packages/triton-node/lib/lint/rules.ts',
    search: "      if (typeof declared !== 'string' || declared === '' || declared === model.name) return;\n",
    replace: '      return;\n',
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
  {
    name: 'lint-vllm-parameter-error',
    why: "a vLLM model's config.pbtxt parameters are never errors: the backend ignores them and the model loads",
    file: 'packages/triton-node/lib/lint/rules.ts',
    search: "          { path: `parameters[${p.index}].key` },\n          'warning',\n",
    replace:
      "          { path: `parameters[${p.index}].key` },\n          inJson === undefined ? 'error' : 'warning',\n",
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
  {
    name: 'lint-misplaced-utilization-error',
    why: "a misplaced gpu_memory_utilization of 1.0 in a vLLM model's config.pbtxt is a warning: it has no effect there",
    file: 'packages/triton-node/lib/lint/rules.ts',
    search: "          u >= 1 && !misplaced ? ('error' as const) : ('warning' as const),\n",
    replace: "          u >= 1 ? ('error' as const) : ('warning' as const),\n",
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
  {
    name: 'serve-fixed-backends',
    why: 'serve logs the backends that answer the models it serves, asked of the server, never a fixed list',
    file: 'packages/gateway/lib/cli/serve.ts',
    search: '  const backends = [...new Set(served.map((m) => m.backend))].sort();\n',
    replace: "  const backends = ['identity', 'repeat', 'square'];\n",
    tests: ['packages/gateway/test/serve.test.ts'],
  },
  {
    name: 'serve-models-unsaid',
    why: 'serve logs the models ready at start, as the server reports them',
    file: 'packages/gateway/lib/cli/serve.ts',
    search: '  const served = await servedModels(server);\n',
    replace: '  const served: ServedModel[] = [];\n',
    tests: ['packages/gateway/test/serve.test.ts'],
  },
];
