// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The shipped package (issue 27): one copy of the library across the bundles,
// declarations that compile without skipLibCheck, every entry point exported.
// packages/triton-node/test/package/shipped.test.ts builds the package from the mutated copy itself.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'gateway-bundles-library',
    why: "one copy of the library: the gateway bundle takes in the library it imports (by the package's name, resolved to packages/triton-node/lib/, and packages/triton-node/lib/internal.ts by path) instead of importing it (its own TritonError), so the OpenAI routes answer a library NOT_FOUND with code internal",
    file: 'packages/triton-node/tsup.config.ts',
    search:
      "    external: ['triton-node'],\n    esbuildPlugins: [fromCore()],\n  },\n  {\n    ...common,\n    // The entry of an isolated",
    replace: '  },\n  {\n    ...common,\n    // The entry of an isolated',
    tests: ['packages/triton-node/test/package/shipped.test.ts'],
  },
  {
    name: 'index-bundles-library',
    why: 'one copy of the library: dist/index and dist/testing each carry the library instead of importing dist/core, so an error or a Server the gateway meets is not of the classes the application imported',
    file: 'packages/triton-node/tsup.config.ts',
    search:
      "    entry: { index: 'packages/triton-node/lib/index.ts', testing: 'packages/triton-node/lib/testing.ts' },\n    format: ['esm', 'cjs'],\n    dts: true,\n    esbuildPlugins: [fromCore()],\n",
    replace:
      "    entry: { index: 'packages/triton-node/lib/index.ts', testing: 'packages/triton-node/lib/testing.ts' },\n    format: ['esm', 'cjs'],\n    dts: true,\n",
    tests: ['packages/triton-node/test/package/shipped.test.ts'],
  },
  {
    name: 'cjs-bundles-load-esm-core',
    why: 'each format its own core: the CommonJS bundles require dist/core.js (ESM), which Node before 20.19 cannot require',
    file: 'packages/triton-node/tsup.config.ts',
    search: "build.initialOptions.format === 'cjs' ? './core.cjs' : './core.js'",
    replace: "build.initialOptions.format === 'cjs' ? './core.js' : './core.js'",
    tests: ['packages/triton-node/test/package/shipped.test.ts'],
  },
  {
    name: 'cjs-bundles-library',
    why: 'one copy of the library in CommonJS: the CommonJS bundles (index, testing, gateway) each inline the library, so a CommonJS application and its gateway hold different TritonErrors',
    file: 'packages/triton-node/tsup.config.ts',
    search: "      const core = build.initialOptions.format === 'cjs' ? './core.cjs' : './core.js';\n",
    replace: "      if (build.initialOptions.format === 'cjs') return;\n      const core = './core.js';\n",
    tests: ['packages/triton-node/test/package/shipped.test.ts'],
  },
  {
    name: 'dts-import-stripped',
    why: 'the declarations compile without skipLibCheck: the tune report module is marked internal again, stripInternal drops its import and index.d.ts names a TuneResult that is not there (the bundler renamed the real one TuneResult$1)',
    file: 'packages/triton-node/lib/tune/report.ts',
    search: ' * the declarations and the shipped .d.ts names a type that is not there.\n */\n',
    replace: ' * the declarations and the shipped .d.ts names a type that is not there.\n * @internal\n */\n',
    tests: ['packages/triton-node/test/package/shipped.test.ts'],
  },
  {
    name: 'gateway-not-exported',
    why: 'every entry point is in the package: package.json exports no longer lists ./gateway',
    file: 'package.json',
    search:
      '    "./gateway": {\n      "import": {\n        "types": "./dist/gateway.d.ts",\n        "default": "./dist/gateway.js"\n      },\n      "require": {\n        "types": "./dist/gateway.d.cts",\n        "default": "./dist/gateway.cjs"\n      }\n    },\n',
    replace: '',
    tests: ['packages/triton-node/test/package/shipped.test.ts'],
  },
  // The gateway behind one seam (packages/triton-node/test/package/structure-gateway.test.ts).
  {
    name: 'gateway-imports-library-file',
    why: "one seam: the gateway imports TritonError from a library file by path instead of the package's public entry (how its bundle once came to hold a second TritonError)",
    file: 'packages/gateway/lib/errors.ts',
    search: "import { type ErrorHint, TritonError, type TritonErrorCode, hintText } from 'triton-node';\n",
    replace:
      "import { type ErrorHint, TritonError, type TritonErrorCode, hintText } from '../../base/errors.js';\n",
    tests: ['packages/triton-node/test/package/structure-gateway.test.ts'],
  },
  {
    name: 'gateway-context-openai-cycle',
    why: 'no cycles in the gateway: the shared context names the OpenAI routes, which import it (a type-only import is a cycle too)',
    file: 'packages/gateway/lib/context.ts',
    search: "import type { GatewayMetrics } from './metrics.js';\n",
    replace:
      "import type { GatewayMetrics } from './metrics.js';\nimport type { OpenAIRoutes } from './openai/routes.js';\nexport type Routes = OpenAIRoutes;\n",
    tests: ['packages/triton-node/test/package/structure-gateway.test.ts'],
  },
  {
    name: 'gateway-peer-undeclared',
    why: 'peers declared where used: the gateway loads jose without declaring it, so package.json lists a peer nobody declares',
    file: 'packages/gateway/lib/peers.ts',
    search: "  jose: 'guard.jwt: verifying JWTs',\n",
    replace: '',
    tests: ['packages/triton-node/test/package/structure-gateway.test.ts'],
  },
];
