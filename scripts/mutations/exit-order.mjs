// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// Exit order (issue 29): the addon's exit handler must run before the exit
// handlers Triton and its backends register when a server starts or a model
// loads.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'exit-handler-not-renewed',
    why: "exit: the addon's exit handler is registered only when the library loads, so at exit() it runs after Triton's singletons and backends were destroyed (process.exit mid-stream: SIGSEGV/SIGABRT)",
    file: 'packages/triton-node/native/server/core.cc',
    search: '        RenewExitHandler();\n',
    replace: '',
    tests: ['packages/triton-node/test/lifecycle/exit-order.test.ts'],
  },
];
