// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The GPU LLM of issue 42 (test/gpu/llm: engine.py, model.py). Its tests run
// on a GPU, or, on a machine without one, on real Triton's CPU build with a
// model made for the CPU: run these as
//   TRITON_NODE_GPU_LLM=DIR TRITON_SERVER_LIB=... TRITON_BACKEND_DIR=... npm run mutate -- --only ...
// with DIR from `make_llm.py --out DIR --device cpu --num-blocks 512` (docs/llm.md). Without
// either, the files skip and every mutation here survives.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'llm-decode-unmasked',
    why: "a decode pass attends over each sequence's own tokens only: without the length mask it reads other blocks' padding",
    file: 'packages/test-support/gpu/llm/engine.py',
    search: 'attn_mask=mask, enable_gqa=True',
    replace: 'attn_mask=None, enable_gqa=True',
    tests: ['packages/triton-node/test/gpu/llm-tokens.test.ts'],
    gpu: true,
  },
  {
    name: 'llm-prefill-cache-misplaced',
    why: "a prompt's keys and values land at their own positions in the sequence's blocks",
    file: 'packages/test-support/gpu/llm/engine.py',
    search: '            offset = cols % self.block_size\n',
    replace: '            offset = (cols + 1) % self.block_size\n',
    tests: ['packages/triton-node/test/gpu/llm-tokens.test.ts'],
    gpu: true,
  },
  {
    name: 'llm-blocks-not-freed',
    why: "a finished or cancelled sequence's cache blocks go back to the pool",
    file: 'packages/test-support/gpu/llm/engine.py',
    search: '        self.free.extend(reversed(seq.blocks))\n',
    replace: '',
    tests: ['packages/triton-node/test/gpu/llm-tokens.test.ts'],
    gpu: true,
  },
  {
    name: 'llm-cancel-ignored',
    why: 'a client that leaves ends its sequence at the next step',
    file: 'packages/test-support/gpu/llm/model.py',
    search: '            if seq.tag.request.is_cancelled():\n',
    replace: '            if False:\n',
    tests: ['packages/triton-node/test/gpu/llm-tokens.test.ts'],
    gpu: true,
  },
  {
    name: 'llm-seed-ignored',
    why: 'a seeded sampled request is reproducible: without its own generator it draws from the global one',
    file: 'packages/test-support/gpu/llm/engine.py',
    search: '            seq.generator.manual_seed(seq.params.seed)\n',
    replace: '            seq.generator.seed()\n',
    tests: ['packages/triton-node/test/gpu/llm-tokens.test.ts'],
    gpu: true,
  },
  {
    name: 'llm-stop-ignored',
    why: 'a stop string ends the text before it',
    file: 'packages/test-support/gpu/llm/model.py',
    search: '            if seq.text.stopped and not seq.finished:\n',
    replace: '            if False:\n',
    tests: ['packages/triton-node/test/gpu/llm-tokens.test.ts'],
    gpu: true,
  },
  {
    name: 'llm-output-count-wrong',
    why: "num_output_tokens counts the tokens since the previous response (the gateway's usage comes from it)",
    file: 'packages/test-support/gpu/llm/model.py',
    search: '        self.unsent = []\n        return pb_utils.InferenceResponse(output_tensors=outputs)\n',
    replace: '        return pb_utils.InferenceResponse(output_tensors=outputs)\n',
    tests: ['packages/triton-node/test/gpu/llm-tokens.test.ts'],
    gpu: true,
  },
];
