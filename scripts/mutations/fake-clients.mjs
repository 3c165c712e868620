// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// NVIDIA's clients against serve (issue 43): the fake engine loads and runs
// the example models (string tensors, sequence control inputs), names itself
// as Triton does, and a load body too large for serve gets Triton's answer
// without being held.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'fake-clients-server-name',
    why: "the server metadata's name is the server id ('triton' unless set), as Triton's: the fake named itself",
    file: 'packages/fake-engine/src/api/server.cc',
    search: '  JsonEscape(server->engine->options.server_id, &m->json);\n',
    replace: '  m->json += "\\"triton-node-fake-engine\\"";\n',
    tests: ['packages/triton-node/test/api/server.test.ts'],
  },
  {
    name: 'fake-clients-string-rows',
    why: "a batched string output goes back to each request as its own rows: every request got the whole batch's strings",
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: 'strings ? starts[element + my_elements] - starts[element]',
    replace: 'strings ? starts.back()',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'fake-clients-control-start',
    why: "the START control takes its true value only on a request with the START flag: every request's was true",
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: '{"CONTROL_SEQUENCE_START", start},',
    replace: '{"CONTROL_SEQUENCE_START", true},',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'fake-clients-corrid-type',
    why: "a correlation id the CORRID control cannot take (a string for a numeric one, a number for a TYPE_STRING one) is refused at submission, in Triton's words",
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: 'if (given == nullptr) return nullptr;',
    replace: 'if (given == nullptr || true) return nullptr;',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'fake-clients-control-poll',
    why: "a control_input Triton refuses while polling the repository fails the load with 'failed to poll', as Triton's",
    file: 'packages/fake-engine/src/repository/model_dir.cc',
    search: '  if (cfg->has_sequence_batching && !ValidateSequenceControls(*cfg, &error)) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'fake-clients-control-type',
    why: "a control whose data type is not the model input's fails the load with the real backend's message",
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: '  if (OnnxTypeOfConfig(c.data_type) != it->second.type) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'fake-clients-end-forgets',
    why: 'a sequence is forgotten once its END request is admitted, as Triton forgets the id when it queues the END: a request of the id sent while the END runs needs START',
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: '(it == m->sequences.by_key.end() || it->second.ended)',
    replace: '(it == m->sequences.by_key.end())',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'fake-clients-load-int-max',
    why: "a load body past maxBodyBytes whose file: value passes INT_MAX gets tritonserver's 400 naming it, not serve's 413",
    file: 'packages/gateway/lib/http/body.ts',
    search: 'scan.oversized !== undefined',
    replace: 'false',
    tests: ['packages/gateway/test/hostile/load-body.test.ts'],
  },
  {
    name: 'fake-clients-load-scan-bound',
    why: 'a file: value of exactly INT_MAX characters passes, as in Triton (input_len > INT_MAX)',
    file: 'packages/gateway/lib/http/load-scan.ts',
    search: 'this.#length > INT_MAX',
    replace: 'this.#length >= INT_MAX',
    tests: ['packages/gateway/test/hostile/load-body.test.ts'],
  },
];
