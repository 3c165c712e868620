import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Plugin, defineConfig } from 'vitest/config';

// The GPU test project also runs on machines without a GPU, over a stand-in
// libcudart (test/gpu/stub-cudart.c, built by test/gpu/stub-setup.ts) whose
// "device" memory is host memory. That proves nothing about a GPU, but it
// runs every device-memory path of the addon against the fake engine's
// checks in CI. Not on a real Triton: its CPU build refuses GPU memory.
const stubCudart = fileURLToPath(new URL('./build/stub-cudart/libcudart.so', import.meta.url));
const onRealTriton = Boolean(process.env.TRITON_SERVER_LIB);
const root = fileURLToPath(new URL('.', import.meta.url));
function dist(file: string): string {
  const path = fileURLToPath(new URL(`./dist/${file}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`no dist/${file}: build the package first (npm run build:ts)`);
  return path;
}

/**
 * The 'dist' project runs test files on what ships: every import of a lib/
 * module (by path or by the package's names) loads the built file that holds
 * it, as an installed package would: lib/index.ts is dist/index.js,
 * lib/testing.ts dist/testing.js, the gateway's entry (and its GatewayError)
 * dist/gateway.js, any other library module dist/core.js (the one copy of
 * the library every entry point imports; see tsup.config.ts). Node loads
 * those files itself (server.deps.external), not vitest's transform, so the
 * bundles' imports of each other, 'triton-node' included, resolve as in a
 * package. A test that imports another gateway module by path cannot run
 * there: the package has no such module.
 */
function onTheBuiltPackage(): Plugin {
  const entries: Record<string, string> = {
    'lib/index.ts': 'index.js',
    'lib/testing.ts': 'testing.js',
    'lib/gateway/index.ts': 'gateway.js',
    'lib/gateway/kserve/errors.ts': 'gateway.js',
  };
  return {
    name: 'triton-node-dist',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      const file = resolved ? relative(root, resolved.id) : '';
      if (!file.startsWith('lib/')) return null;
      const built = entries[file];
      if (built !== undefined) return dist(built);
      if (file.startsWith('lib/gateway/') || file === 'lib/cli/main.ts') {
        throw new Error(
          `${relative(root, importer ?? '')} imports ${file}, which the built package does not export`,
        );
      }
      return dist('core.js');
    },
  };
}

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
        replacement: fileURLToPath(new URL('../gateway/lib/index.ts', import.meta.url)),
      },
      {
        find: /^triton-node\/testing$/,
        replacement: fileURLToPath(new URL('./lib/testing.ts', import.meta.url)),
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
      {
        // npm test builds dist/ first (build:ts). The isolation file also
        // runs the built worker (dist/gateway-worker.js, forked from next to
        // dist/gateway.js), which no other test starts.
        extends: true,
        plugins: [onTheBuiltPackage()],
        test: {
          name: 'dist',
          include: [
            'test/gateway/openai.test.ts',
            'test/gateway/openai-choices.test.ts',
            'test/gateway/embeddings.test.ts',
            'test/gateway/guard.test.ts',
            'test/gateway/http.test.ts',
            'test/gateway/isolation.test.ts',
          ],
          server: { deps: { external: [/\/dist\//] } },
        },
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
