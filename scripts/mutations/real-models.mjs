// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'lint-weights-not-through-symlinks',
    why: 'lint instance-count-memory: a model file that is a symlink (to its npm package, a volume) counts 0 bytes',
    file: 'packages/triton-node/lib/lint/weights.ts',
    search: '    const real = realOrNull(path);\n    const stat = statOrNull(path);\n',
    replace:
      '    const real = realOrNull(path);\n    const stat = real === path ? statOrNull(path) : null;\n',
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
  {
    name: 'lint-cpu-instances-unchecked',
    why: 'lint instance-count-memory: KIND_CPU instances are no longer checked against the host memory',
    file: 'packages/triton-node/lib/lint/rules.ts',
    search: 'const memory = gpu ? options.gpuMemoryBytes : cpu ? options.hostMemoryBytes : undefined;',
    replace: 'const memory = gpu ? options.gpuMemoryBytes : cpu ? undefined : undefined;',
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
];
