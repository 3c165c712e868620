// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Traces and OpenTelemetry (issue 43): per-trace timing with ensemble steps'
// child traces, request.trace spans, and the gateway's trace extension.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'trace-first-release-ends',
    why: "a traced request ends when its own and every child trace were released: ending at the first release (an ensemble step's) recycles the context a later release still uses",
    file: 'packages/triton-node/native/request/trace_log.cc',
    search: '  if (done_ || !root_released_ || open_children_ > 0) return false;\n',
    replace: '  if (done_) return false;\n',
    tests: ['packages/triton-node/test/request/trace-spans.test.ts'],
  },
  {
    name: 'trace-children-merged',
    why: "each trace id gets its own record: activities of an ensemble step's child trace written into the request's own",
    file: 'packages/triton-node/native/request/trace_log.cc',
    search: '    if (spans_[i].id == id) return &spans_[i];\n',
    replace: '    return &spans_[0];\n',
    tests: ['packages/triton-node/test/request/trace-spans.test.ts'],
  },
  {
    name: 'trace-fake-no-child',
    why: "the fake spawns a child trace for each ensemble step as Triton does: without it the ensemble's traces have no steps",
    file: 'packages/fake-engine/src/scheduling/ensemble_steps.cc',
    search: '            parent == nullptr ? nullptr : SpawnChildTrace(parent);\n',
    replace: '            nullptr;\n',
    tests: ['packages/triton-node/test/request/trace-spans.test.ts'],
  },
  {
    name: 'otel-span-parent-ignored',
    why: "a step's span is a child of its ensemble's span, the request's of the caller's span: every span parented on the caller",
    file: 'packages/triton-node/lib/request/otel.ts',
    search:
      '    const under = (t.parentId !== 0 ? contexts.get(t.parentId) : undefined) ?? parent.context;\n',
    replace: '    const under = parent.context;\n',
    tests: ['packages/triton-node/test/request/trace-spans.test.ts', 'packages/gateway/test/trace.test.ts'],
  },
  {
    name: 'otel-traceparent-ignored',
    why: "a traceparent's trace id and span id parent the spans: spans under the active context instead",
    file: 'packages/triton-node/lib/request/otel.ts',
    search: '  if (trace === true) return { api, context: api.context.active() };\n',
    replace: '  return { api, context: api.context.active() };\n',
    tests: ['packages/triton-node/test/request/trace-spans.test.ts', 'packages/gateway/test/trace.test.ts'],
  },
  {
    name: 'trace-setting-model-no-fallback',
    why: "a model's setting follows the global one for what it did not specify: copying nothing from the global setting",
    file: 'packages/gateway/lib/trace/settings.ts',
    search: "    if (model === '') for (const name of [...this.#following]) this.#updateOne(name, {});\n",
    replace: '',
    tests: ['packages/gateway/test/trace.test.ts'],
  },
  {
    name: 'trace-setting-invalid-accepted',
    why: 'a setting that would trace with no trace file is refused as tritonserver refuses it',
    file: 'packages/gateway/lib/trace/settings.ts',
    search: '    if (reason !== undefined && values.level !== 0) {\n',
    replace: '    if (false) {\n',
    tests: ['packages/gateway/test/trace.test.ts'],
  },
  {
    name: 'trace-traceparent-not-forced',
    why: 'a valid traceparent forces a trace in the opentelemetry mode, whatever the rate',
    file: 'packages/gateway/lib/trace/settings.ts',
    search:
      "    const force = traceparent !== undefined && setting.values.level !== 0 && this.#mode === 'opentelemetry';\n",
    replace: '    const force = false;\n',
    tests: ['packages/gateway/test/trace.test.ts'],
  },
  {
    name: 'trace-file-no-parent-id',
    why: "a child trace's record names its parent, as tritonserver's trace file does",
    file: 'packages/gateway/lib/trace/settings.ts',
    search: '  if (t.parentId !== 0) head.parent_id = t.parentId;\n',
    replace: '',
    tests: ['packages/gateway/test/trace.test.ts'],
  },
];
