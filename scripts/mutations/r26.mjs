// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Two Triton releases (issue 44): the library behaves the same on r25.07 and
// r26.06 where it can (duplicate outputs refused first), says which Triton
// runs and what it lacks, and the fake imitates each release's differences
// (packages/fake-engine/PRECONDITIONS.md, "Releases") as the recordings show them.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'r26-duplicate-output-passed-on',
    why: 'a request naming an output twice is refused by the library on every release: passed on, r25.07 answers it and r26.06 refuses it in its own words',
    file: 'packages/triton-node/lib/request/validate.ts',
    search: '  if (seen.has(name)) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/triton-node/test/api/releases.test.ts'],
  },
  {
    name: 'r26-fake-duplicate-output-taken',
    why: 'the fake imitating r26.06 refuses a second request for an output, as r26.06 does (core PR #493)',
    file: 'packages/fake-engine/src/api/request.cc',
    search: '      AtLeast(Release::kR26_06)) {\n',
    replace: '      false) {\n',
    tests: [
      'packages/triton-node/test/request/differential.test.ts',
      'packages/triton-node/test/api/releases.test.ts',
    ],
  },
  {
    name: 'r26-fake-invalid-dimension-as-r25',
    why: "the fake imitating r26.06 refuses a dimension below -1 in r26.06's words, not r25.07's byte count",
    file: 'packages/fake-engine/src/core/request_validation.cc',
    search: '  if (!AtLeast(Release::kR26_06)) return nullptr;\n',
    replace: '  return nullptr;\n',
    tests: [
      'packages/triton-node/test/request/differential.test.ts',
      'packages/triton-node/test/api/releases.test.ts',
    ],
  },
  {
    name: 'r26-fake-no-bf16',
    why: "the fake's onnxruntime backend imitating r26.06 loads BF16 models, as r26.06's backend does",
    file: 'packages/fake-engine/src/backends/onnxruntime_backend.cc',
    search: '  if (t == "TYPE_BF16" && AtLeast(Release::kR26_06)) return ort::kBfloat16;\n',
    replace: '',
    tests: ['packages/triton-node/test/backends/fake-onnxruntime.test.ts'],
  },
  {
    name: 'r26-fake-release-not-switched',
    why: 'asking the fake for r25.07 makes it imitate r25.07: ignored, the r25.07 recordings no longer match',
    file: 'packages/fake-engine/src/support/release.cc',
    search: '    g_release = Release::kR25_07;\n',
    replace: '    g_release = Release::kR26_06;\n',
    tests: [
      'packages/triton-node/test/request/differential.test.ts',
      'packages/triton-node/test/api/releases.test.ts',
    ],
  },
  {
    name: 'r26-fake-one-version',
    why: "the fake's metadata gives the version of the release it imitates",
    file: 'packages/fake-engine/src/api/server.cc',
    search: ' + ReleaseServerVersion() +\n',
    replace: ' + "2.70.0" +\n',
    tests: [
      'packages/triton-node/test/api/releases.test.ts',
      'packages/triton-node/test/request/differential.test.ts',
    ],
  },
  {
    name: 'r26-log-logger-ignored',
    why: 'log.logger on a library without the log callback rejects with UNSUPPORTED, never silently logs to stderr',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '    if (parsed.logger !== undefined) throw logCallbackMissing(library, holder);\n',
    replace: '',
    tests: ['packages/triton-node/test/api/releases.test.ts'],
  },
  {
    name: 'r26-release-unnamed',
    why: 'server.triton names the release of a proven server version (2.70 is r26.06)',
    file: 'packages/triton-node/lib/api/releases.ts',
    search: "  '2.70': 'r26.06',\n",
    replace: '',
    tests: ['packages/triton-node/test/api/releases.test.ts'],
  },
  {
    name: 'r26-delete-before-release',
    why: "a request is deleted only once Triton released it (r26.06's header says it; the fake aborts on a delete while Triton holds it): deleted at FINAL without waiting for the release",
    file: 'packages/triton-node/native/request/lifecycle.cc',
    search:
      '  if (hold_ == Hold::kInFlight && !triton_awaits_.Has(Ending::kFinal) &&\n      !triton_awaits_.Has(Ending::kRelease)) {\n',
    replace: '  if (hold_ == Hold::kInFlight && !triton_awaits_.Has(Ending::kFinal)) {\n',
    tests: [
      'packages/triton-node/test/request/stream.test.ts',
      'packages/triton-node/test/request/infer.test.ts',
    ],
  },
];
