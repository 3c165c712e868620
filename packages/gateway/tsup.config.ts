import { defineConfig } from 'tsup';

// @triton-node/gateway's entry points: the gateway (index), the commands
// triton-node's CLI runs (cli: serve, revoke) and the entry of an isolated
// group's server process (gateway-worker, forked from next to the bundle).
// The library is not in them: `triton-node` is a peer dependency, imported
// by name (tsup leaves peers external), so the application's one copy of it
// serves the gateway too. No source maps in the package.
// The .d.ts files name node:http's types and Buffer: each loads @types/node itself (see triton-node's).
const NODE_TYPES = '/// <reference types="node" />';

const common = {
  splitting: true,
  sourcemap: false,
  clean: false,
  target: 'node20',
  platform: 'node',
  shims: true,
} as const;

export default defineConfig([
  {
    ...common,
    entry: { index: 'lib/index.ts', cli: 'lib/cli/index.ts', 'gateway-worker': 'lib/isolation/worker.ts' },
    format: ['esm'],
    dts: { entry: { index: 'lib/index.ts', cli: 'lib/cli/index.ts' }, banner: NODE_TYPES },
  },
  {
    ...common,
    entry: { index: 'lib/index.ts' },
    format: ['cjs'],
    dts: { entry: { index: 'lib/index.ts' }, banner: NODE_TYPES },
  },
]);
