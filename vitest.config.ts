import { defineConfig } from 'vitest/config';
import { projects as fakeEngine } from './packages/fake-engine/vitest.projects.js';
import { projects as gateway } from './packages/gateway/vitest.projects.js';
import { projects as tritonNode } from './packages/triton-node/vitest.projects.js';

// The README's test command (`npm test` here) runs every package's tests;
// each package's own `npm test` runs its own (and `npm run affected` those a
// change reaches: scripts/affected.mjs). Repository-wide tests (docs,
// mutations, the release workflow) are triton-node's test/package.
export default defineConfig({ test: { projects: [...fakeEngine, ...tritonNode, ...gateway] } });
