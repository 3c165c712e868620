// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Hostile models (security review, issue 40): an ONNX file whose external
// data names a file outside its version folder, config text that becomes
// code in `triton-node types` output, and a sequence state no machine can
// hold.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'onnx-external-fake-follows',
    why: "the fake's onnxruntime backend refuses a model whose external data lies outside its version folder: it loads, and every inference returns the server's file",
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: '  if (!refused.empty()) return refused;\n',
    replace: '',
    tests: ['packages/triton-node/test/hostile/onnx-external-data.test.ts'],
  },
  {
    name: 'onnx-external-fake-link',
    why: 'the fake follows links when it checks a location: a weights.bin in the version folder that links to a file outside it passes',
    file: 'packages/fake-engine/src/backends/onnx_external_data.cc',
    search:
      '  if (real_version.empty() ||\n      real.compare(0, real_version.size() + 1, real_version + "/") != 0) {\n',
    replace: '  if (real_version.empty()) {\n',
    tests: ['packages/triton-node/test/hostile/onnx-external-data.test.ts'],
  },
  {
    name: 'onnx-external-lint-silent',
    why: 'lint reports an external data location outside the version folder (onnx-external-data): it says nothing',
    file: 'packages/triton-node/lib/lint/rules.ts',
    search: '            if (why === undefined) continue;\n',
    replace: '            continue;\n',
    tests: [
      'packages/triton-node/test/hostile/onnx-external-data.test.ts',
      'packages/triton-node/test/lint/lint.test.ts',
    ],
  },
  {
    name: 'onnx-external-attribute-unread',
    why: "the ONNX reader walks node attributes: a Constant node's tensor with a hostile location goes unseen",
    file: 'packages/triton-node/lib/config/onnx-external-data.ts',
    search: "  node: { 5: 'attribute' }, // attribute\n",
    replace: '  node: {},\n',
    tests: ['packages/triton-node/test/hostile/onnx-external-data.test.ts'],
  },
  {
    name: 'onnx-external-deploy-unchecked',
    why: 'deploy() refuses an .onnx file whose external data lies outside the version folder: it writes it and Triton reads the file',
    file: 'packages/triton-node/lib/deploy/deploy.ts',
    search: '    if (o.files !== undefined) checkOnnxFiles(name, o.files);\n',
    replace: '',
    tests: ['packages/triton-node/test/hostile/onnx-external-data.test.ts'],
  },
  {
    name: 'onnx-external-load-files-unchecked',
    why: 'loadModel({ files }) refuses such an .onnx file: it goes to Triton, which reads the file',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '    checkOnnxFiles(name, parsed.files, holder);\n',
    replace: '',
    tests: ['packages/triton-node/test/hostile/onnx-external-data.test.ts'],
  },
  {
    name: 'types-block-comment-raw',
    why: "triton-node types escapes config text in a block comment: a backend's */ ends it and the rest runs when the module is imported",
    file: 'packages/triton-node/lib/codegen/codegen.ts',
    search: "        `/** Model '${commentText(model)}' (${commentText(about.join(', '))}). */`,\n",
    replace: "        `/** Model '${model}' (${about.join(', ')}). */`,\n",
    tests: ['packages/triton-node/test/hostile/generated-types.test.ts'],
  },
  {
    name: 'types-line-comment-raw',
    why: "triton-node types escapes a skipped model's reason in a // comment: a newline in it starts a line of code",
    file: 'packages/triton-node/lib/codegen/codegen.ts',
    search:
      "      ? ['// No spec for:', ...skipped.map((m) => `//   ${commentText(`${m.model}: ${m.skipped}`)}`)]\n",
    replace: "      ? ['// No spec for:', ...skipped.map((m) => `//   ${m.model}: ${m.skipped}`)]\n",
    tests: ['packages/triton-node/test/hostile/generated-types.test.ts'],
  },
  {
    name: 'types-u2028-raw',
    why: 'U+2028 and U+2029 are line terminators to JavaScript and TypeScript: left raw, they end a // comment too',
    file: 'packages/triton-node/lib/codegen/codegen.ts',
    search: '      /[\\u0000-\\u001f\\u007f\\u2028\\u2029]/g,\n',
    replace: '      /[\\u0000-\\u001f\\u007f]/g,\n',
    tests: ['packages/triton-node/test/hostile/generated-types.test.ts'],
  },
  {
    name: 'state-size-fake-unchecked',
    why: 'the fake refuses a state larger than the machine at load: it loads, and the first sequence request aborts the process (std::bad_alloc) or fails',
    file: 'packages/fake-engine/src/scheduling/sequence_batcher.cc',
    search: '  return SequenceStateSizeProblem(cfg, MachineMemoryBytes());\n',
    replace: '  return SequenceStateSizeProblem(cfg, MachineMemoryBytes() * 0 + UINT64_MAX);\n',
    tests: ['packages/triton-node/test/hostile/sequence-states.test.ts'],
  },
  {
    name: 'state-size-overflow-wraps',
    why: "a state's byte size that overflows 64 bits is refused: it wraps to a small number and passes",
    file: 'packages/fake-engine/src/config/validate.cc',
    search: '    if (__builtin_mul_overflow(n, k, &n)) return false;\n',
    replace: '    n *= k;\n',
    tests: ['packages/fake-engine/test/native-tests.test.ts'],
  },
  {
    name: 'initial-state-load-unchecked',
    why: 'loadModel refuses an initial state larger than the machine before Triton sees it: real r25.07 crashes the process (SIGSEGV) allocating it',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '    this.#checkSequenceStates(name, config, holder);\n',
    replace: '',
    tests: ['packages/triton-node/test/hostile/sequence-states.test.ts'],
  },
  {
    name: 'initial-state-ensemble-unchecked',
    why: 'the check follows an ensemble to the models it composes (Triton loads them with it): an ensemble of such a model passes',
    file: 'packages/triton-node/lib/config/sequence-states.ts',
    search:
      "      const composed = typeof step?.model_name === 'string' ? visit(step.model_name, undefined) : undefined;\n",
    replace: '      const composed = undefined;\n',
    tests: ['packages/triton-node/test/hostile/sequence-states.test.ts'],
  },
  {
    name: 'initial-state-startup-unchecked',
    why: 'Server.create refuses startup models with such an initial state: Triton loads them itself at startup',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '  checkStartupSequenceStates(native, holder);\n',
    replace: '',
    tests: ['packages/triton-node/test/hostile/sequence-states.test.ts'],
  },
  {
    name: 'state-size-lint-silent',
    why: 'lint flags a state above 1 GiB per sequence (sequence-state-size): it says nothing',
    file: 'packages/triton-node/lib/lint/rules.ts',
    search: '        if (s.bytes <= SEQUENCE_STATE_LIMIT) continue;\n',
    replace: '        continue;\n',
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
];
