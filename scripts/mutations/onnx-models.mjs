// Mutations of the fake engine's onnxruntime backend and sequence batcher
// (issue 28; see scripts/mutations.mjs for the shape and the rules).

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'onnx-batch-not-split',
    why: "batched requests each get their own rows of the batch's output",
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: '    offset += my_bytes;\n',
    replace: '',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'onnx-output-dims-not-exact',
    why: "a config output's dims must equal the model's (-1 only where the model has one), as the real backend checks",
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: '    if (exact || model_shape[i] != -1) ok = model_shape[i] == full[i];\n',
    replace: '    if (model_shape[i] != -1) ok = model_shape[i] == full[i];\n',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'onnx-autocomplete-no-dynamic-batching',
    why: 'auto-complete turns dynamic batching on for a model that batches, as r25.07 does',
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: '    cfg->dynamic_batching.present = true;\n',
    replace: '',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'onnx-backend-restarts',
    why: 'after a failed onnxruntime load, later servers of the process cannot start the backend (r25.07)',
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: '  if (first != nullptr && !first->stopping.load()) return "";\n',
    replace: '  return "";\n',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'sequence-runs-concurrently',
    why: 'requests of one sequence run one after the other, each on the state the one before left',
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: '  if (seq.running) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'sequence-state-not-reset-on-start',
    why: 'a request with sequenceStart begins from the initial (zero) state',
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: '  if ((reading && start) || seq.states.size() != states.size()) {\n',
    replace: '  if (seq.states.size() != states.size()) {\n',
    tests: [
      'packages/triton-node/test/backends/fake-onnxruntime.test.ts',
      'packages/triton-node/test/backends/onnx-vad.test.ts',
    ],
  },
  {
    name: 'sequence-never-idle',
    why: 'a sequence idle past max_sequence_idle_microseconds is released (its next request needs START)',
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: '      it->second.waiting.empty() && now - it->second.last_us > idle) {\n',
    replace: '      it->second.waiting.empty() && false) {\n',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'sequence-cancel-ignored',
    why: 'a request cancelled while it waits in its sequence ends the sequence: it and those behind it are CANCELLED (as Triton)',
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: '    if (!seq.waiting.empty() && seq.waiting.front()->cancelled->load()) {\n',
    replace: '    if (false) {\n',
    tests: ['packages/triton-node/test/backends/onnx-vad.test.ts'],
  },
];
