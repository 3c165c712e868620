// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// An LLM behind the OpenAI routes (issue 42): n choices per request, the
// model's own token counts and finish reasons, the LLM panels of the
// dashboard, and lint of a Python-backend LLM's gpu_memory_utilization.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'openai-n-one-request',
    why: 'each of the n choices is its own Triton request: one request answers one choice',
    file: 'packages/gateway/lib/openai/routes.ts',
    search: 'const requests = Array.from({ length: g.n }, (_, i) =>',
    replace: 'const requests = Array.from({ length: 1 }, (_, i) =>',
    tests: ['packages/gateway/test/openai-choices.test.ts'],
  },
  {
    name: 'openai-n-same-seed',
    why: 'choice i samples with seed + i: with the same seed for all, the choices are one text n times',
    file: 'packages/gateway/lib/openai/routes.ts',
    search: 'tritonRequest(entry, inputs, g, seed === undefined ? undefined : seed + i),',
    replace: 'tritonRequest(entry, inputs, g, seed === undefined ? undefined : seed),',
    tests: ['packages/gateway/test/openai-choices.test.ts'],
  },
  {
    name: 'openai-n-unbounded',
    why: "n is bounded by the entry's maxChoices: without it one HTTP request fans out to any number of Triton requests",
    file: 'packages/gateway/lib/openai/protocol.ts',
    search: ' || v < 1 || v > model.maxChoices)',
    replace: ' || v < 1)',
    tests: ['packages/gateway/test/openai-choices.test.ts', 'packages/gateway/test/openai.test.ts'],
  },
  {
    name: 'openai-n-failure-leaves-others',
    why: "a choice that fails cancels every other choice's request: they would run to their max_tokens for nothing",
    file: 'packages/gateway/lib/openai/routes.ts',
    search: '        failure = { err };\n        for (const o of choices) o.stream.cancel();\n',
    replace: '        failure = { err };\n',
    tests: ['packages/gateway/test/openai-choices.test.ts'],
  },
  {
    name: 'openai-reports-not-asked',
    why: "the gateway asks a model with the vLLM backend's return_* inputs for its finish reason and token counts",
    file: 'packages/gateway/lib/openai/generate.ts',
    search: '  for (const name of REPORTS) if (inputs.has(name)) tensors[name] = [true];\n',
    replace: '',
    tests: ['packages/gateway/test/openai-reports.test.ts'],
  },
  {
    name: 'openai-reports-own-token-count',
    why: "usage, limits and metrics use the model's num_output_tokens: the gateway's word count misses a stop token cut out",
    file: 'packages/gateway/lib/openai/routes.ts',
    search: "const tokens = response.outputTokens ?? countTokens(entry, text, text === '' ? 0 : 1);",
    replace: "const tokens = countTokens(entry, text, text === '' ? 0 : 1);",
    tests: ['packages/gateway/test/openai-reports.test.ts'],
  },
  {
    name: 'openai-reports-own-finish-reason',
    why: "the finish reason is the model's: the gateway's guess says 'length' for a stop at the last allowed token",
    file: 'packages/gateway/lib/openai/routes.ts',
    search: '    if (choice.reason !== undefined) return choice.reason;\n',
    replace: '',
    tests: ['packages/gateway/test/openai-reports.test.ts'],
  },
  {
    name: 'openai-reports-none-is-a-reason',
    why: "vLLM's 'None' (not finished yet) is no finish reason",
    file: 'packages/gateway/lib/openai/generate.ts',
    search: "if (r === '' || r === 'none' || r === 'null') return undefined;",
    replace: "if (r === '') return undefined;",
    tests: ['packages/gateway/test/openai-reports.test.ts'],
  },
  {
    name: 'grafana-no-ttft-p99',
    why: 'the dashboard shows TTFT p99 per model from a metric the OpenAI routes expose',
    file: 'packages/gateway/kit/grafana/triton-node-dashboard.json',
    search:
      'rate(triton_node_openai_time_to_first_token_us_bucket[5m])))",\n          "legendFormat": "TTFT p99',
    replace: 'rate(triton_node_openai_ttft_us_bucket[5m])))",\n          "legendFormat": "TTFT p99',
    tests: ['packages/gateway/test/kit/grafana.test.ts'],
  },
  {
    name: 'lint-python-llm-headroom',
    why: "gpu-memory-headroom judges a Python LLM's gpu_memory_utilization parameter (warning above 0.9, error at 1.0)",
    file: 'packages/triton-node/lib/lint/rules.ts',
    search: '      if (python !== undefined && python.value > 0.9) {\n',
    replace: '      if (false) {\n',
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
  {
    name: 'lint-python-llm-budget',
    why: "the GPU budget counts a Python LLM as gpu_memory_utilization x its GPU's memory, not its weights",
    file: 'packages/triton-node/lib/lint/gpu-budget.ts',
    search: '    if (llm !== undefined) {\n',
    replace: '    if (false) {\n',
    tests: ['packages/triton-node/test/lint/gpu-memory-budget.test.ts'],
  },
];
