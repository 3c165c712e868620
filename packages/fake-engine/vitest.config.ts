import { defineConfig } from 'vitest/config';
import { projects } from './vitest.projects.js';

// `npm test` in this package: the fake engine's C++ tests.
export default defineConfig({ test: { projects } });
