import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The GPU test project also runs on machines without a GPU, over a stand-in
// libcudart (test/gpu/stub-cudart.c, built by test/gpu/stub-setup.ts) whose
// "device" memory is host memory. That proves nothing about a GPU, but it
// runs every device-memory path of the addon against the fake engine's
// checks in CI. Not on a real Triton: its CPU build refuses GPU memory.
const stubCudart = fileURLToPath(new URL('./build/stub-cudart/libcudart.so', import.meta.url));
const onRealTriton = Boolean(process.env.TRITON_SERVER_LIB);

// Native code: each test file runs in its own forked process, so a crash in
// the addon or the engine fails that file instead of the whole run.
export default defineConfig({
  // The gateway and the CLI import the library by its own name, so that their
  // bundles share the application's copy of it; the tests run them on the
  // sources, as tsconfig's paths do for the type check and tsx.
  resolve: {
    alias: [
      { find: /^triton-node$/, replacement: fileURLToPath(new URL('./lib/index.ts', import.meta.url)) },
      {
        find: /^triton-node\/gateway$/,
        replacement: fileURLToPath(new URL('./lib/gateway/index.ts', import.meta.url)),
      },
    ],
  },
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'conformance', include: ['test/**/*.test.ts'], exclude: ['test/gpu/**'] },
      },
      {
        extends: true,
        test: { name: 'gpu', include: ['test/gpu/**/*.test.ts'] },
      },
      ...(onRealTriton
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: 'gpu-stub',
                include: ['test/gpu/**/*.test.ts'],
                globalSetup: ['test/gpu/stub-setup.ts'],
                env: { TRITON_NODE_CUDART: stubCudart, TRITON_NODE_CUDA_STUB: '1' },
              },
            },
          ]),
    ],
  },
});
