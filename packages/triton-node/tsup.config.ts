import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Options, defineConfig } from 'tsup';

// One copy of the library in the package: lib/core.ts (the library's
// modules) is bundled alone into dist/core.js and dist/core.cjs, and every
// entry point (index, testing, gateway, the gateway's worker, the CLI)
// imports the library's modules from there. A library module inlined into a
// second bundle would make a second TritonError, and an error the gateway
// met from the library would no longer be `instanceof` the gateway's
// TritonError. The gateway and the CLI also import the package by its own
// name (external: the application's copy, the same dist/index.js).
// No source maps in the package.

const ROOT = dirname(fileURLToPath(import.meta.url));
const CORE = join(ROOT, 'lib', 'core.ts');
const INDEX = join(ROOT, 'lib', 'index.ts');
const RELATIVE = /(?:from|import)\s*\(?\s*'(\.\.?\/[^']+\.js)'/g;

/** The .ts file that a relative `.js` specifier, resolved in `dir`, names (if there is one). */
function sourceIn(dir: string, specifier: string): string | undefined {
  const file = join(dir, specifier.replace(/\.js$/, '.ts'));
  return existsSync(file) ? file : undefined;
}

/** The library's modules: lib/core.ts and what it imports, transitively. */
function libraryModules(): Set<string> {
  const found = new Set<string>();
  const todo = [CORE];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (found.has(file)) continue;
    found.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(RELATIVE)) {
      const target = sourceIn(dirname(file), specifier!);
      if (target !== undefined) todo.push(target);
    }
  }
  return found;
}

/** The modules lib/core.ts re-exports whole (`export * from`). */
function coreExports(): Set<string> {
  const source = readFileSync(CORE, 'utf8');
  const files = [...source.matchAll(/^export \* from '(\.\/[^']+)'/gm)].map(([, s]) =>
    sourceIn(dirname(CORE), s!),
  );
  return new Set(files.filter((f) => f !== undefined));
}

/**
 * An esbuild plugin for every bundle but core's: an import of a library
 * module becomes an import of dist/core.js (core.cjs in the CommonJS build).
 * lib/index.ts only re-exports, and core re-exports all of it; any other
 * importer must take a module that core re-exports whole, or the names it
 * imports might not be there: the build fails naming the module instead.
 */
function fromCore(): NonNullable<Options['esbuildPlugins']>[number] {
  const library = libraryModules();
  const exported = coreExports();
  return {
    name: 'triton-node-core',
    setup(build) {
      const core = build.initialOptions.format === 'cjs' ? './core.cjs' : './core.js';
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const file = sourceIn(args.resolveDir, args.path);
        if (file === undefined || !library.has(file)) return undefined;
        if (args.importer !== INDEX && !exported.has(file)) {
          const what = `${relative(ROOT, args.importer)} imports ${relative(ROOT, file)}`;
          return {
            errors: [{ text: `${what}, a library module that lib/core.ts does not re-export: add it there` }],
          };
        }
        return { path: core, external: true };
      });
    },
  };
}

const common: Options = {
  sourcemap: false,
  clean: false,
  target: 'node20',
  platform: 'node',
  shims: true,
  splitting: false,
};

export default defineConfig([
  {
    ...common,
    // The library itself (not an entry point of the package: no types).
    entry: { core: 'lib/core.ts' },
    format: ['esm', 'cjs'],
    dts: false,
  },
  {
    ...common,
    entry: { index: 'lib/index.ts', testing: 'lib/testing.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    esbuildPlugins: [fromCore()],
  },
  {
    ...common,
    // triton-node/gateway: loads @grpc/grpc-js, @grpc/proto-loader and pino
    // (optional peer dependencies) only when used, so `import 'triton-node'`
    // never does.
    entry: { gateway: 'lib/gateway/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    external: ['triton-node'],
    esbuildPlugins: [fromCore()],
  },
  {
    ...common,
    // The entry of an isolated group's server process (forked by the
    // isolating front from next to gateway.js/gateway.cjs): ESM only. It
    // imports the gateway by the package's name, as an application does.
    entry: { 'gateway-worker': 'lib/gateway/isolation/worker.ts' },
    format: ['esm'],
    dts: false,
    external: ['triton-node', 'triton-node/gateway'],
    esbuildPlugins: [fromCore()],
  },
  {
    ...common,
    entry: { cli: 'lib/cli/main.ts' },
    format: ['esm'],
    dts: false,
    shims: false,
    splitting: true,
    external: ['triton-node', 'triton-node/gateway'],
    esbuildPlugins: [fromCore()],
    banner: { js: '#!/usr/bin/env node' },
  },
]);
