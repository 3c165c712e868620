import { defineConfig } from 'tsup';

// triton-node's entry points: the library (index), its test support
// (testing), what the sibling packages use beyond the public API (internal)
// and the CLI (ESM only; bin/triton-node.js runs it). Each format is one
// build with code splitting, so the modules the entries share (every library
// class) sit in one chunk that each of them imports: one TritonError, one
// Server in a process whichever entry point made it. No source maps.
const common = {
  splitting: true,
  sourcemap: false,
  clean: false,
  target: 'node20',
  platform: 'node',
  shims: true,
} as const;

const LIBRARY = { index: 'lib/index.ts', testing: 'lib/testing.ts', internal: 'lib/internal.ts' };
// The .d.ts files name Buffer, NodeJS and node:* modules: each loads @types/node itself, so that a
// consumer whose tsconfig lists no types (`"types": []`, TypeScript 7's `tsc --init`) still has them.
const NODE_TYPES = '/// <reference types="node" />';

export default defineConfig([
  {
    ...common,
    entry: { ...LIBRARY, cli: 'lib/cli/main.ts' },
    format: ['esm'],
    dts: { entry: LIBRARY, banner: NODE_TYPES },
  },
  { ...common, entry: LIBRARY, format: ['cjs'], dts: { entry: LIBRARY, banner: NODE_TYPES } },
]);
