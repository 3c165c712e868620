import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration } from 'vitest/config';

// triton-node's test projects, for its own vitest.config.ts and for the
// repository's (which runs every package's). Native code: each test file
// runs in its own forked process, so a crash in the addon or the engine
// fails that file instead of the whole run.
//
// The GPU tests also run on machines without a GPU, over a stand-in
// libcudart (test-support's gpu/stub-cudart.c, built by its stub-setup.ts)
// whose "device" memory is host memory. That proves nothing about a GPU, but
// it runs every device-memory path of the addon against the fake engine's
// checks in CI. Not on a real Triton: its CPU build refuses GPU memory.
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const SUPPORT = here('../test-support/');
export const STUB_CUDART = `${SUPPORT}build/stub-cudart/libcudart.so`;
const onRealTriton = Boolean(process.env.TRITON_SERVER_LIB);

/** The library's tests import it by path and by its names: both are the sources. */
const resolve = {
  alias: [
    { find: /^triton-node$/, replacement: here('./lib/index.ts') },
    { find: /^triton-node\/testing$/, replacement: here('./lib/testing.ts') },
    { find: /^triton-node\/internal$/, replacement: here('./lib/internal.ts') },
  ],
};
export const NATIVE_TESTS = { pool: 'forks', testTimeout: 60_000, hookTimeout: 60_000 } as const;

export const projects: TestProjectInlineConfiguration[] = [
  {
    root: here('.'),
    resolve,
    test: { ...NATIVE_TESTS, name: 'conformance', include: ['test/**/*.test.ts'], exclude: ['test/gpu/**'] },
  },
  { root: here('.'), resolve, test: { ...NATIVE_TESTS, name: 'gpu', include: ['test/gpu/**/*.test.ts'] } },
  ...(onRealTriton
    ? []
    : [
        {
          root: here('.'),
          resolve,
          test: {
            ...NATIVE_TESTS,
            name: 'gpu-stub',
            include: ['test/gpu/**/*.test.ts'],
            globalSetup: [`${SUPPORT}gpu/stub-setup.ts`],
            env: { TRITON_NODE_CUDART: STUB_CUDART, TRITON_NODE_CUDA_STUB: '1' },
          },
        },
      ]),
];
