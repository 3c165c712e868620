import { defineConfig } from 'tsup';

// The public entry points as ESM and CommonJS, with types; the CLI as one
// ESM file. The gateway and the CLI import the package by name (itself), so
// that the library is not bundled twice: one copy of each class (TritonError,
// CudaBuffer, Server) whichever entry point loaded it. No source maps in the
// package.
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
    // triton-node/gateway: loads @grpc/grpc-js, @grpc/proto-loader and pino
    // (optional peer dependencies) only when used, so `import 'triton-node'`
    // never does.
    entry: { gateway: 'lib/gateway/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: false,
    clean: false,
    target: 'node20',
    platform: 'node',
    shims: true,
    splitting: false,
    external: ['triton-node'],
  },
  {
    // The entry of an isolated group's server process (forked by the
    // isolating front from next to gateway.js/gateway.cjs): ESM only.
    entry: { 'gateway-worker': 'lib/gateway/isolation/worker.ts' },
    format: ['esm'],
    dts: false,
    sourcemap: false,
    clean: false,
    target: 'node20',
    platform: 'node',
    shims: true,
    splitting: false,
    external: ['triton-node'],
  },
  {
    entry: { cli: 'lib/cli.ts' },
    format: ['esm'],
    dts: false,
    sourcemap: false,
    clean: false,
    target: 'node20',
    platform: 'node',
    external: ['triton-node', 'triton-node/gateway'],
    banner: { js: '#!/usr/bin/env node' },
  },
]);
