import { defineConfig } from 'vitest/config';

// Native code: each test file runs in its own forked process, so a crash in
// the addon or the engine fails that file instead of the whole run.
export default defineConfig({
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
    ],
  },
});
