import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { projects as fakeEngine } from './packages/fake-engine/vitest.projects.js';
import { projects as gateway } from './packages/gateway/vitest.projects.js';
import { projects as tritonNode } from './packages/triton-node/vitest.projects.js';

// The README's test command (`npm test` here) runs every package's tests
// and the repository's own (test/: the release's dry run, the workflow, the
// docs, the mutations' texts). Each package's own `npm test` runs its own;
// `npm run affected` runs those a change reaches (scripts/affected.mjs).
export default defineConfig({
  test: {
    projects: [
      ...fakeEngine,
      ...tritonNode,
      ...gateway,
      {
        root: fileURLToPath(new URL('.', import.meta.url)),
        test: {
          name: 'repository',
          include: ['test/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
