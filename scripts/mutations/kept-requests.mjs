// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Kept requests (issue 32): a released Triton request reused for the next
// request of its model and inputs must never skip a check Triton would not
// make again, nor outlive a change of the models.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'kept-request-unchecked-size',
    why: 'a reused request is checked: one whose data does not fill its shape goes on the kept request, where Triton does not check it again (the fake aborts as a backend would read past the data)',
    file: 'packages/triton-node/native/request/builder.cc',
    search: '    if (elements * element != in.byte_length) return false;\n',
    replace: '',
    tests: ['packages/triton-node/test/request/kept-requests.test.ts'],
  },
  {
    name: 'kept-request-outlives-unload',
    why: 'a model change deletes the kept requests: a load or unload leaves them holding the version it unloads',
    file: 'packages/triton-node/native/server/core.cc',
    search: "    ModelChangeBegins();  // ended by the op's thread\n    PurgeSharedKeptRequests();\n",
    replace: "    ModelChangeBegins();  // ended by the op's thread\n",
    tests: ['packages/triton-node/test/request/kept-requests.test.ts'],
  },
  {
    name: 'kept-request-new-inputs',
    why: 'inputs that differ get a new request: a kept request of other shapes is reused with only its data swapped',
    file: 'packages/triton-node/native/request/builder.cc',
    search: '  if (kept != nullptr && !SameInputs(kept, inputs, counts.inputs)) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/triton-node/test/request/kept-requests.test.ts'],
  },
];
