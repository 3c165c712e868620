import { defineConfig } from 'tsup';

// ESM and CommonJS builds of the public entry points, with types.
export default defineConfig({
  entry: {
    index: 'lib/index.ts',
    testing: 'lib/testing.ts',
    gateway: 'lib/gateway/index.ts',
    cli: 'bench/cli.ts',
  },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'lib/index.ts', testing: 'lib/testing.ts', gateway: 'lib/gateway/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  shims: true,
  splitting: false,
});
