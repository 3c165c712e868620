import { defineConfig } from 'vitest/config';
import { projects } from './vitest.projects.js';

// `npm test` in this package: triton-node's own tests (the repository's
// vitest.config.ts runs them with every other package's).
export default defineConfig({ test: { projects } });
