// Mutations of one area (see scripts/mutations.mjs for the shape and the rules).
// The shipped packages (issues 27 and 45): one copy of the library across
// triton-node's entry points and the gateway, declarations that compile
// without skipLibCheck, every entry point exported, the gateway behind its
// package boundary, and the packages finding each other by name.
// test/shipped.test.ts builds the packages from the mutated copy itself.

/** @type {import('../mutations.mjs').Mutation[]} */
export const MUTATIONS = [
  {
    name: 'gateway-bundles-library',
    why: 'one copy of the library: the gateway bundle takes in triton-node (its own TritonError) instead of importing it by name, so the OpenAI routes answer a library NOT_FOUND with code internal',
    file: 'packages/gateway/tsup.config.ts',
    search: 'const common = {\n  splitting: true,\n',
    replace: "const common = {\n  noExternal: ['triton-node', 'triton-node/internal'],\n  splitting: true,\n",
    tests: ['test/shipped.test.ts'],
  },
  {
    name: 'library-bundled-per-entry',
    why: 'one copy of the library: without code splitting each entry point (index, testing, internal, the CLI) carries the library, so an error or a Server the gateway meets is not of the classes the application imported',
    file: 'packages/triton-node/tsup.config.ts',
    search: 'const common = {\n  splitting: true,\n',
    replace: 'const common = {\n  splitting: false,\n',
    tests: ['test/shipped.test.ts'],
  },
  {
    name: 'cjs-bundles-library',
    why: 'one copy of the library in CommonJS: the CommonJS entries (index, testing, internal) each inline the library, so a CommonJS application and its gateway hold different TritonErrors',
    file: 'packages/triton-node/tsup.config.ts',
    search:
      "  { ...common, entry: LIBRARY, format: ['cjs'], dts: { entry: LIBRARY, banner: NODE_TYPES } },\n",
    replace:
      "  { ...common, splitting: false, entry: LIBRARY, format: ['cjs'], dts: { entry: LIBRARY, banner: NODE_TYPES } },\n",
    tests: ['test/shipped.test.ts'],
  },
  {
    name: 'dts-import-stripped',
    why: 'the declarations compile without skipLibCheck: the tune report module is marked internal again, stripInternal drops its import and index.d.ts names a TuneResult that is not there (the bundler renamed the real one TuneResult$1)',
    file: 'packages/triton-node/lib/tune/report.ts',
    search: ' * the declarations and the shipped .d.ts names a type that is not there.\n */\n',
    replace: ' * the declarations and the shipped .d.ts names a type that is not there.\n * @internal\n */\n',
    tests: ['test/shipped.test.ts'],
  },
  {
    name: 'gateway-cli-not-exported',
    why: "every entry point is in the package: the gateway's package.json no longer exports ./cli, so `triton-node serve` cannot find its command",
    file: 'packages/gateway/package.json',
    search:
      '    "./cli": {\n      "import": {\n        "types": "./dist/cli.d.ts",\n        "default": "./dist/cli.js"\n      }\n    },\n',
    replace: '',
    tests: ['test/shipped.test.ts'],
  },
  {
    name: 'fake-engine-not-found-by-name',
    why: 'triton-node finds the fake engine as its optional dependency, by name: looking for another name, every test on the fake loses its library',
    file: 'packages/triton-node/lib/addon/load.ts',
    search: "    engine = require('@triton-node/fake-engine') as { findLibrary(): string };\n",
    replace: "    engine = require('@triton-node/fake') as { findLibrary(): string };\n",
    tests: ['packages/triton-node/test/api/server.test.ts'],
  },
  {
    name: 'header-copies-differ',
    why: "one C API header: the fake engine's copy drifts from the addon's (an entry point's signature could differ between the two)",
    file: 'packages/fake-engine/include/triton_capi.h',
    search: '#define TRITON_NODE_API_MIN_MINOR 30\n',
    replace: '#define TRITON_NODE_API_MIN_MINOR 31\n',
    tests: ['test/build-config.test.ts'],
  },
  // The gateway behind its package boundary (packages/gateway/test/structure.test.ts).
  {
    name: 'gateway-imports-library-file',
    why: "one seam: the gateway imports TritonError from a file of triton-node by path instead of the package's name (how its bundle once came to hold a second TritonError)",
    file: 'packages/gateway/lib/errors.ts',
    search: "import { type ErrorHint, TritonError, type TritonErrorCode, hintText } from 'triton-node';\n",
    replace:
      "import { type ErrorHint, TritonError, type TritonErrorCode, hintText } from '../../triton-node/lib/index.js';\n",
    tests: ['packages/gateway/test/structure.test.ts'],
  },
  {
    name: 'gateway-context-openai-cycle',
    why: 'no cycles in the gateway: the shared context names the OpenAI routes, which import it (a type-only import is a cycle too)',
    file: 'packages/gateway/lib/context.ts',
    search: "import type { GatewayMetrics } from './metrics.js';\n",
    replace:
      "import type { GatewayMetrics } from './metrics.js';\nimport type { OpenAIRoutes } from './openai/routes.js';\nexport type Routes = OpenAIRoutes;\n",
    tests: ['packages/gateway/test/structure.test.ts'],
  },
  {
    name: 'gateway-peer-undeclared',
    why: 'peers declared where used: the gateway loads jose without declaring it, so package.json lists a peer nobody declares',
    file: 'packages/gateway/lib/peers.ts',
    search: "  jose: 'guard.jwt: verifying JWTs',\n",
    replace: '',
    tests: ['packages/gateway/test/structure.test.ts'],
  },
  {
    name: 'affected-skips-contracts',
    why: "a change runs its consumers' contract tests: a library change would run triton-node's tests only, and a break of what the gateway uses would go unseen until the whole suite",
    file: 'scripts/affected.mjs',
    search:
      "const CONSUMERS = { 'fake-engine': ['triton-node'], 'triton-node': ['gateway'], gateway: [] };\n",
    replace: "const CONSUMERS = { 'fake-engine': ['triton-node'], 'triton-node': [], gateway: [] };\n",
    tests: ['test/affected.test.ts'],
  },
];
