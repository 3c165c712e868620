// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Wire answers (issue 43): serve answers as tritonserver r25.07 where
// NVIDIA's clients and qa tests look; the fake's queue counts a forming batch.

const WIRE = ['packages/gateway/test/wire-answers.test.ts'];

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'wire-queue-forming-batch',
    why: "a request waiting in a forming batch counts toward max_queue_size: without it the fake's queue looks empty while the first waits out its delay, and the second request is taken (Triton refuses it, 503)",
    file: 'packages/fake-engine/src/scheduling/scheduler.cc',
    search: 'm->queue.size() + m->forming >= qp.max_queue_size) {',
    replace: 'm->queue.size() >= qp.max_queue_size) {',
    tests: WIRE,
  },
  {
    name: 'wire-serve-strict-default',
    why: "serve's strictModelConfig defaults to tritonserver's false, not the library's true",
    file: 'packages/gateway/lib/cli/serve.ts',
    search: '  server.strictModelConfig ??= false;\n',
    replace: '',
    tests: ['packages/gateway/test/serve.test.ts'],
  },
  {
    name: 'wire-serve-strict-flag',
    why: '--strict-model-config sets strictModelConfig, over the config file',
    file: 'packages/gateway/lib/cli/serve.ts',
    search: '  if (strictModelConfig !== undefined) server.strictModelConfig = strictModelConfig;\n',
    replace: '',
    tests: ['packages/gateway/test/serve.test.ts'],
  },
  {
    name: 'wire-raw-refused',
    why: 'a raw binary request (Inference-Header-Content-Length: 0) is served: its body is the only input, not a JSON header',
    file: 'packages/gateway/lib/http/kserve.ts',
    search: '    length === 0\n',
    replace: '    length === -1\n',
    tests: WIRE,
  },
  {
    name: 'wire-raw-bytes-length',
    why: "a raw BYTES input is one element: the core prepends its length, and so must the gateway (else the body's first bytes are read as a length)",
    file: 'packages/gateway/lib/kserve/raw-input.ts',
    search: "data: binaryData(element, 'BYTES')",
    replace: "data: binaryData(body, 'BYTES')",
    tests: WIRE,
  },
  {
    name: 'wire-raw-batch-dim',
    why: "a raw input of a batching model gets the batch dimension 1, as the core deduces it (the output's shape says it)",
    file: 'packages/gateway/lib/kserve/raw-input.ts',
    search: '(config.max_batch_size ?? 0) > 0 ? [1, ...dims] : [...dims]',
    replace: '[...dims]',
    tests: WIRE,
  },
  {
    name: 'wire-raw-size-words',
    why: "a raw body that fills no whole shape gets the core's byte-size message naming 'raw_input', not the library's",
    file: 'packages/gateway/lib/kserve/raw-input.ts',
    search: '  if (expected !== body.length) {\n',
    replace: '  if (false) {\n',
    tests: WIRE,
  },
  {
    name: 'wire-raw-front',
    why: 'the isolating front passes a raw binary request on instead of parsing its body as a JSON header',
    file: 'packages/gateway/lib/isolation/proxy.ts',
    search: '  if (headerLength === 0) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/gateway/test/isolation.test.ts'],
  },
  {
    name: 'wire-load-not-json',
    why: "a load override that is not JSON fails as Triton fails it (500, 'failed to load'), not with the library's TypeError (400)",
    file: 'packages/gateway/lib/kserve/protocol.ts',
    search: '      JSON.parse(config);\n',
    replace: '',
    tests: WIRE,
  },
  {
    name: 'wire-shape-exact',
    why: "a shape's integers past 2^53 are read exactly (the header parsed again), so Triton's message names the dimension sent",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: '  if (hasRoundedShape(json)) json = parseExactShapes(text);\n',
    replace: '',
    tests: WIRE,
  },
  {
    name: 'wire-shape-count-overflow',
    why: "an element count past INT64_MAX gets Triton's 400 'causes total element count to exceed maximum size'",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: '    if (count > INT64_MAX / d) {\n',
    replace: '    if (false) {\n',
    tests: WIRE,
  },
  {
    name: 'wire-shape-bytes-overflow',
    why: "a byte size past INT64_MAX gets Triton's 400 'byte size overflow'",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: '  if (size > 1n && count > INT64_MAX / size) {\n',
    replace: '  if (false) {\n',
    tests: WIRE,
  },
  {
    name: 'wire-shape-negative',
    why: "a dimension that is not an unsigned integer gets Triton's 500 'Unable to parse shape', not 400",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: "        500,\n        \"Unable to parse 'shape'",
    replace: "        400,\n        \"Unable to parse 'shape'",
    tests: WIRE,
  },
  {
    name: 'wire-data-depth',
    why: "'data' may nest 99 deep, Triton's limit of 100",
    file: 'packages/gateway/lib/kserve/codec.ts',
    search: 'export const MAX_DATA_DEPTH = 100;',
    replace: 'export const MAX_DATA_DEPTH = 64;',
    tests: WIRE,
  },
  {
    name: 'wire-shm-key-500',
    why: "a key shm_open refuses (an empty one among them) gets Triton's 500 'Unable to open shared memory region', not 400",
    file: 'packages/gateway/lib/kserve/shared-memory.ts',
    search:
      "  throw new GatewayError(\n    500,\n    `Unable to open shared memory region: '${key}' (invalid key: ${why})`,",
    replace:
      "  throw new GatewayError(\n    400,\n    `Unable to open shared memory region: '${key}' (invalid key: ${why})`,",
    tests: WIRE,
  },
];
