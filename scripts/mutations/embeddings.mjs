// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The OpenAI `POST /v1/embeddings` route (issue 41): each text answered its
// own vector, in OpenAI's encodings and dimensions, only for ids of its kind,
// within the tenant's token limit, from the body's own keys; and the fake
// engine's embedding backend batched by the dynamic batcher.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'embeddings-vector-order',
    why: 'each text of a request gets its own row of the output: every text answered the first vector',
    file: 'packages/gateway/lib/openai/embeddings.ts',
    search: 'values.slice(i * size, (i + 1) * size)',
    replace: 'values.slice(0, size)',
    tests: ['packages/gateway/test/embeddings.test.ts'],
  },
  {
    name: 'embeddings-base64-endianness',
    why: "base64 is the little-endian float32 bytes, as OpenAI's and the clients' decoders read them",
    file: 'packages/gateway/lib/openai/embeddings.ts',
    search: 'bytes.writeFloatLE(v[i]!, i * 4)',
    replace: 'bytes.writeFloatBE(v[i]!, i * 4)',
    tests: ['packages/gateway/test/embeddings.test.ts'],
  },
  {
    name: 'embeddings-dimensions-unchecked',
    why: 'a model without truncateDimensions refuses a shorter `dimensions` (400) instead of cutting vectors it was not trained to cut',
    file: 'packages/gateway/lib/openai/embeddings.ts',
    search: '  if (wanted < size && !e.truncateDimensions)\n',
    replace: '  if (false)\n',
    tests: ['packages/gateway/test/embeddings.test.ts'],
  },
  {
    name: 'embeddings-truncate-not-normalized',
    why: 'a vector cut to `dimensions` is L2-normalized again, as OpenAI does',
    file: 'packages/gateway/lib/openai/embeddings.ts',
    search: '(norm > 0 ? x / norm : 0)',
    replace: 'x',
    tests: ['packages/gateway/test/embeddings.test.ts'],
  },
  {
    name: 'embeddings-kind-unchecked-on-completions',
    why: 'an embeddings id on the completion routes answers 400 naming what it serves, not a Triton failure',
    file: 'packages/gateway/lib/openai/routes.ts',
    search: "    if (entry.kind !== 'generation') throw wrongKind(entry, call.ex.route);\n",
    replace: '',
    tests: ['packages/gateway/test/embeddings.test.ts'],
  },
  {
    name: 'embeddings-tokens-unspent',
    why: "an embeddings request spends its input tokens against the tenant's token limit (429 over it)",
    file: 'packages/gateway/lib/openai/embeddings.ts',
    search: 'admission !== undefined && !(await admission.spendTokens(tokens, entry.model))',
    replace: 'admission !== undefined && false',
    tests: ['packages/gateway/test/embeddings.test.ts'],
  },
  {
    name: 'embeddings-inherited-keys',
    why: "only the body's own keys are read: a polluted Object.prototype adds no input, format or dimensions",
    file: 'packages/gateway/lib/openai/embeddings.ts',
    search: '  return Object.hasOwn(body, key) ? body[key] : undefined;\n',
    replace: '  return body[key];\n',
    tests: ['packages/gateway/test/embeddings.test.ts'],
  },
  {
    name: 'fake-embedding-unbatched',
    why: "the fake's embedding backend is batched by the dynamic batcher as Triton batches a model of max_batch_size > 0",
    file: 'packages/fake-engine/src/scheduling/scheduler.cc',
    search:
      '                 m.backend == BackendKind::kOnnxRuntime ||\n                 m.backend == BackendKind::kTextEmbedding);\n',
    replace: '                 m.backend == BackendKind::kOnnxRuntime);\n',
    tests: [
      'packages/gateway/test/embeddings.test.ts',
      'packages/triton-node/test/backends/text-embedding.test.ts',
    ],
  },
];
