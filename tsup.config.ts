import { defineConfig } from 'tsup';

// The public entry points as ESM and CommonJS, with types; the CLI as one
// ESM file that imports the package by name (itself), so that the library is
// not bundled twice. No source maps in the package.
export default defineConfig([
  {
    entry: { index: 'lib/index.ts', testing: 'lib/testing.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: false,
    clean: true,
    target: 'node20',
    platform: 'node',
    shims: true,
    splitting: false,
  },
  {
    entry: { cli: 'lib/cli.ts' },
    format: ['esm'],
    dts: false,
    sourcemap: false,
    clean: false,
    target: 'node20',
    platform: 'node',
    external: ['triton-node'],
    banner: { js: '#!/usr/bin/env node' },
  },
]);
