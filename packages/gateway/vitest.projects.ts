import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin, TestProjectInlineConfiguration } from 'vitest/config';

// @triton-node/gateway's test projects, for its own vitest.config.ts and the
// repository's. The library is what an application installs: `triton-node`
// resolves, through the workspace's node_modules, to triton-node's built
// package (dist/), so these tests also run the library's bundles and types.
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const root = here('.');
const SUPPORT = here('../test-support/');
const onRealTriton = Boolean(process.env.TRITON_SERVER_LIB);
const NATIVE_TESTS = {
  pool: 'forks' as const,
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // Node loads triton-node's bundles itself, as in an installed application.
  server: { deps: { external: [/\/dist\//] as RegExp[] } },
};

function dist(file: string): string {
  const path = here(`./dist/${file}`);
  if (!existsSync(path)) throw new Error(`no dist/${file}: build the gateway first (npm run build:ts)`);
  return path;
}

/**
 * The 'gateway-dist' project runs test files on what ships: an import of the
 * gateway's entry (lib/index.ts, and GatewayError's lib/errors.ts) loads
 * dist/index.js, as an installed package would; Node loads the bundles
 * itself (server.deps.external). A test that imports another gateway module
 * by path cannot run there: the package has no such module.
 */
function onTheBuiltPackage(): Plugin {
  const entries: Record<string, string> = { 'lib/index.ts': 'index.js', 'lib/errors.ts': 'index.js' };
  return {
    name: 'triton-node-gateway-dist',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      const file = resolved ? relative(root, resolved.id) : '';
      if (!file.startsWith('lib/')) return null;
      const built = entries[file];
      if (built !== undefined) return dist(built);
      throw new Error(
        `${relative(root, importer ?? '')} imports ${file}, which the built package does not export`,
      );
    },
  };
}

const GPU_STUB_ENV = {
  TRITON_NODE_CUDART: `${SUPPORT}build/stub-cudart/libcudart.so`,
  TRITON_NODE_CUDA_STUB: '1',
};

export const projects: TestProjectInlineConfiguration[] = [
  {
    root,
    test: { ...NATIVE_TESTS, name: 'gateway', include: ['test/**/*.test.ts'], exclude: ['test/gpu/**'] },
  },
  { root, test: { ...NATIVE_TESTS, name: 'gateway-gpu', include: ['test/gpu/**/*.test.ts'] } },
  {
    // npm test builds dist/ first (build:ts). The isolation file also runs the
    // built worker (dist/gateway-worker.js, forked from next to dist/index.js).
    root,
    plugins: [onTheBuiltPackage()],
    test: {
      ...NATIVE_TESTS,
      name: 'gateway-dist',
      include: [
        'test/openai.test.ts',
        'test/openai-choices.test.ts',
        'test/embeddings.test.ts',
        'test/guard.test.ts',
        'test/http.test.ts',
        'test/isolation.test.ts',
      ],
    },
  },
  ...(onRealTriton
    ? []
    : [
        {
          root,
          test: {
            ...NATIVE_TESTS,
            name: 'gateway-gpu-stub',
            include: ['test/gpu/**/*.test.ts'],
            globalSetup: [`${SUPPORT}gpu/stub-setup.ts`],
            env: GPU_STUB_ENV,
          },
        },
      ]),
];
