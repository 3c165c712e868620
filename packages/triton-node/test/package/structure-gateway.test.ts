// The gateway behind one seam: lib/gateway/ uses the library as its users
// do, through the package's public entry (lib/index.ts, `triton-node`) and
// the one internal entry (lib/internal.ts), never another library file, so
// that the gateway's bundle cannot hold a second copy of a library class.
// Its own import graph has no cycle. And the gateway's optional peers are
// declared by the code that loads them and listed, all optional, in
// package.json (docs/gateway.md, "Package layout").
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { findCycles } from './graph.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIB = join(ROOT, 'lib');
/** What the gateway may import of the library: the public entry and the internal one. */
const ENTRIES = ['index.ts', 'internal.ts'];

/** The package's own names, as tsconfig.json maps them to lib/ (the gateway imports the library by name). */
function packageNames(): Record<string, string> {
  const tsconfig = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  const out: Record<string, string> = {};
  for (const [name, [target]] of Object.entries(tsconfig.compilerOptions.paths)) {
    out[name] = relative(LIB, join(ROOT, target!));
  }
  return out;
}
const NAMES = packageNames();

interface Import {
  specifier: string;
  /** Only types (`import type`, `export type`): erased from the JavaScript, but still an edge. */
  typeOnly: boolean;
}

/** Every module a file names: import and export declarations, `import()` calls and `import('...')` types. */
function importsOf(file: string, text: string): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Import[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      const typeOnly = ts.isImportDeclaration(node)
        ? node.importClause?.isTypeOnly === true
        : node.isTypeOnly;
      if (ts.isStringLiteral(node.moduleSpecifier))
        out.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      out.push({ specifier: node.arguments[0].text, typeOnly: false });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      out.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * The lib/ file (relative to lib/) a specifier of `file` names: a relative
 * path, or one of the package's own names. Undefined for anything else
 * (node: modules, other packages); `../x` for a path that leaves lib/.
 */
function resolveIn(file: string, specifier: string): string | undefined {
  if (specifier in NAMES) return NAMES[specifier];
  if (!specifier.startsWith('.')) return undefined;
  return relative(LIB, resolve(dirname(join(LIB, file)), specifier)).replace(/\.js$/, '.ts');
}

/** The gateway's files (relative to lib/) with what each imports, resolved. */
type Graph = Map<string, Array<{ target: string; specifier: string }>>;

function graphOf(files: Record<string, string>): Graph {
  const graph: Graph = new Map();
  for (const [file, text] of Object.entries(files)) {
    const edges = importsOf(file, text).flatMap(({ specifier }) => {
      const target = resolveIn(file, specifier);
      return target === undefined ? [] : [{ target, specifier }];
    });
    graph.set(file, edges);
  }
  return graph;
}

/** Imports that leave the gateway for a library file other than its entries. */
function seamProblems(graph: Graph): string[] {
  const problems: string[] = [];
  for (const [file, edges] of graph) {
    for (const { target, specifier } of edges) {
      if (target.startsWith('gateway/') || ENTRIES.includes(target)) continue;
      problems.push(
        `lib/${file} imports '${specifier}' (lib/${target}): the gateway uses the library through lib/index.ts ('triton-node') and lib/internal.ts only`,
      );
    }
  }
  return problems;
}

/** Import cycles within the gateway (type-only imports count), each reported once by its path. */
function cycles(graph: Graph): string[] {
  return findCycles(new Map([...graph].map(([file, edges]) => [file, edges.map((e) => e.target)])));
}

function gatewayFiles(dir = join(LIB, 'gateway')): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(out, gatewayFiles(path));
    else if (entry.name.endsWith('.ts')) out[relative(LIB, path)] = readFileSync(path, 'utf8');
  }
  return out;
}

describe('the gateway behind one seam', () => {
  it('the checks find a planted import of a library file, by path, by name and dynamic, and planted cycles', () => {
    const graph = graphOf({
      'gateway/a.ts': [
        "import { TritonError } from '../base/errors.js';",
        "import type { Server } from 'triton-node';",
        "import { optionError } from '../internal.js';",
        "export { fakeEngine } from 'triton-node/testing';",
        "const m = await import('../request/stream.js');",
        "import { b } from './b.js';",
        "import http from 'node:http';",
      ].join('\n'),
      'gateway/b.ts': "import type { A } from './a.js';",
      'gateway/c/d.ts': "export * from '../../gateway/index.js';\nlet x: import('../c/d.js').X;",
      'gateway/index.ts': "import { c } from '@triton-node/gateway';",
    });
    expect(seamProblems(graph)).toEqual([
      "lib/gateway/a.ts imports '../base/errors.js' (lib/base/errors.ts): the gateway uses the library through lib/index.ts ('triton-node') and lib/internal.ts only",
      "lib/gateway/a.ts imports 'triton-node/testing' (lib/testing.ts): the gateway uses the library through lib/index.ts ('triton-node') and lib/internal.ts only",
      "lib/gateway/a.ts imports '../request/stream.js' (lib/request/stream.ts): the gateway uses the library through lib/index.ts ('triton-node') and lib/internal.ts only",
    ]);
    expect(cycles(graph).sort()).toEqual([
      'gateway/a.ts -> gateway/b.ts -> gateway/a.ts',
      'gateway/c/d.ts -> gateway/c/d.ts',
      'gateway/index.ts -> gateway/index.ts',
    ]);
  });

  it('lib/gateway/ imports the library only through lib/index.ts and lib/internal.ts', () => {
    const graph = graphOf(gatewayFiles());
    expect(graph.size).toBeGreaterThan(40);
    // The reader sees the gateway's imports of the library, by name and by path.
    const targets = new Set([...graph.values()].flat().map((e) => e.target));
    expect(targets).toContain('index.ts');
    expect(targets).toContain('internal.ts');
    expect(seamProblems(graph)).toEqual([]);
  });

  it('lib/gateway/ has no import cycle', () => {
    expect(cycles(graphOf(gatewayFiles()))).toEqual([]);
  });

  it('the isolation worker reaches the gateway by its package name only', () => {
    const worker = 'gateway/isolation/worker.ts';
    const edges = graphOf(gatewayFiles()).get(worker)!;
    expect(edges.map((e) => e.specifier)).toContain('@triton-node/gateway');
    const own = edges.filter((e) => e.target.startsWith('gateway/') && e.specifier !== '@triton-node/gateway');
    expect(own.map((e) => e.target)).toEqual(['gateway/isolation/messages.ts']);
  });
});

/** The keys of the object literal `name` is declared as in `file` (a declaration of peers: name → what needs it). */
function declared(file: string, name: string): string[] {
  const path = join(ROOT, file);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  let keys: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === name && node.initializer) {
      let init: ts.Expression = node.initializer;
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression;
      if (ts.isObjectLiteralExpression(init)) {
        keys = init.properties.map((p) => {
          const n = p.name!;
          return ts.isStringLiteral(n) ? n.text : n.getText(source);
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (keys === undefined) throw new Error(`${file} declares no ${name} object`);
  return keys;
}

describe('optional peers, declared where they are used', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };

  it('package.json lists exactly the peers the library, the gateway and `triton-node serve` declare, each optional', () => {
    const library = declared('lib/request/otel.ts', 'LIBRARY_PEERS');
    const gateway = declared('lib/gateway/peers.ts', 'GATEWAY_PEERS');
    const serve = declared('lib/cli/commands/serve.ts', 'SERVE_PEERS');
    expect(library).toEqual(['@opentelemetry/api']);
    expect(gateway).toEqual(['@grpc/grpc-js', '@grpc/proto-loader', 'jose', 'ioredis']);
    expect(serve).toEqual(['pino']);
    const all = [...library, ...gateway, ...serve].sort();
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(all);
    for (const name of all) expect(manifest.peerDependenciesMeta[name]?.optional, name).toBe(true);
  });

  const peers = Object.keys(manifest.peerDependencies);
  /** The peers `text` imports as values (a type-only import is erased). */
  const valueImports = (file: string, text: string) =>
    importsOf(file, text)
      .filter((i) => !i.typeOnly && peers.some((p) => i.specifier === p || i.specifier.startsWith(`${p}/`)))
      .map((i) => i.specifier);

  it('no file of lib/ imports a peer as a value: they are loaded when a feature first needs them', () => {
    const planted =
      "import pino from 'pino';\nimport type { X } from 'jose';\nexport * from '@grpc/grpc-js/x';";
    expect(valueImports('planted.ts', planted)).toEqual(['pino', '@grpc/grpc-js/x']);
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) {
          for (const name of valueImports(path, readFileSync(path, 'utf8')))
            offenders.push(`${relative(ROOT, path)}: ${name}`);
        }
      }
    };
    walk(LIB);
    expect(offenders).toEqual([]);
  });
});
