// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The life of Python models at stop() (issue 41): a stub that does not exit
// must not hold the stop to its exit timeout, and only this server's stubs
// are touched.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'stub-never-killed',
    why: 'stop() bounds a Python stub that does not exit: the stubs still running pythonStubExitSeconds into the stop are no longer killed',
    file: 'packages/triton-node/lib/api/python-stubs.ts',
    search: "      process.kill(stub.pid, 'SIGKILL');\n",
    replace: '',
    tests: ['packages/triton-node/test/lifecycle/python-stub-exit.test.ts'],
  },
  {
    name: 'stub-of-any-server-killed',
    why: "only this server's stubs are killed: a stub under another repository is killed too",
    file: 'packages/triton-node/lib/api/python-stubs.ts',
    search: '    if (!roots.some((root) => real(modelFile).startsWith(root))) continue;\n',
    replace: '',
    tests: ['packages/triton-node/test/lifecycle/python-stub-exit.test.ts'],
  },
  {
    name: 'stub-kill-not-said',
    why: 'a killed stub is named in a TritonWarning: the stop kills it silently',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '        if (killed.length > 0) {\n',
    replace: '        if (killed.length < 0) {\n',
    tests: ['packages/triton-node/test/lifecycle/python-stub-exit.test.ts'],
  },
  {
    name: 'stub-limit-zero-ignored',
    why: 'pythonStubExitSeconds 0 never kills: 0 is taken as "at once"',
    file: 'packages/triton-node/lib/api/python-stubs.ts',
    search: '  if (seconds === 0) return async () => killed;\n',
    replace: '',
    tests: ['packages/triton-node/test/lifecycle/python-stub-exit.test.ts'],
  },
];
