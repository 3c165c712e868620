// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// What a hostile caller, tenant or model author tried (issue 40): each
// breaks the fix of one finding, and its test in test/hostile/ must fail.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'disposed-input-reused',
    why: 'no memory goes back to a pool while a request reads it: an output disposed while it is the input of a running request is handed to the next response',
    file: 'packages/triton-node/native/request/builder.cc',
    search:
      '  } else if (auto use = UseExternalOutput(env, view->array_buffer)) {\n' +
      '    // An output of an earlier request: its dispose() must wait for this one.\n' +
      '    ctx->holds.push_back(std::move(use));\n' +
      '  }\n',
    replace: '  }\n',
    tests: ['packages/triton-node/test/hostile/disposed-in-use.test.ts'],
  },
  {
    name: 'disposed-destination-reused',
    why: 'no memory goes back to a pool while a request writes it: an output disposed while it is the `into` of a running request is handed to the next response, which the request then overwrites',
    file: 'packages/triton-node/native/request/builder.cc',
    search:
      '    if (auto use = UseExternalOutput(env, view.array_buffer)) {\n' +
      '      ctx->holds.push_back(std::move(use));\n' +
      '    }\n',
    replace: '',
    tests: ['packages/triton-node/test/hostile/disposed-in-use.test.ts'],
  },
  {
    name: 'disposed-release-not-deferred',
    why: 'a release that meets in-flight uses is deferred to the last of them: releaseOutput() gives the memory back at once',
    file: 'packages/triton-node/native/memory/external_outputs.cc',
    search:
      '    handle->returned = true;\n' +
      '    if (handle->uses > 0) {\n' +
      '      handle->deferred = true;\n' +
      '    } else {\n' +
      '      give_back = true;\n' +
      '    }\n' +
      '  }\n' +
      '  if (give_back) GiveBack(handle->buffer);\n' +
      '  return true;\n',
    replace:
      '    handle->returned = true;\n    give_back = true;\n  }\n  if (give_back) GiveBack(handle->buffer);\n  return true;\n',
    tests: ['packages/triton-node/test/hostile/disposed-in-use.test.ts'],
  },
  {
    name: 'deferred-release-leaks',
    why: 'a deferred release happens: the last use of a disposed output never gives its memory back (the pool loses it)',
    file: 'packages/triton-node/native/memory/external_outputs.cc',
    search: '    give_back = handle->deferred;\n',
    replace: '    give_back = false;\n',
    tests: ['packages/triton-node/test/hostile/disposed-in-use.test.ts'],
  },
];
