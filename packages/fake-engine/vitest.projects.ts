import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration } from 'vitest/config';

// The fake engine's own tests: its C++ tests (test/native, built with the
// library by npm install in the repository), run by test/native-tests.test.ts.
// What the fake does through triton-node is the conformance suite's: its
// contract tests are triton-node's (packages/triton-node/test).
export const projects: TestProjectInlineConfiguration[] = [
  {
    root: fileURLToPath(new URL('.', import.meta.url)),
    test: { name: 'fake-engine', include: ['test/**/*.test.ts'], pool: 'forks', testTimeout: 120_000 },
  },
];
