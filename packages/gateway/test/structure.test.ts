// The gateway behind one seam: packages/gateway/lib/ uses the library as its
// users do, by the package's names ('triton-node', and 'triton-node/internal'
// for the few helpers it shares), never a file of triton-node by path, so
// that the gateway's bundle cannot hold a second copy of a library class.
// Only `triton-node serve` (lib/cli/serve.ts) also takes the fake engine from
// 'triton-node/testing'. Its own import graph has no cycle. And its optional
// peers are declared by the code that loads them and listed, all optional,
// in its package.json (docs/gateway.md, "Package layout").
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCycles } from '@triton-node/test-support/graph.js';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LIB = join(ROOT, 'lib');
/** The library's names the gateway may import, and the files allowed a third. */
const LIBRARY_NAMES = ['triton-node', 'triton-node/internal'];
const TESTING_ALLOWED = ['cli/serve.ts'];

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
 * What a specifier of `file` (relative to lib/) names: a file of the gateway
 * (relative to lib/), `library:<name>` for one of triton-node's names,
 * `outside:<path>` for a relative path that leaves the gateway's lib/, or
 * undefined for anything else (node: modules, other packages).
 */
function resolveIn(file: string, specifier: string): string | undefined {
  if (specifier === 'triton-node' || specifier.startsWith('triton-node/')) return `library:${specifier}`;
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(LIB, resolve(dirname(join(LIB, file)), specifier)).replace(/\.js$/, '.ts');
  return target.startsWith('..') ? `outside:${target}` : target;
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

/** Imports that reach the library other than by its names, or by a name the file may not use. */
function seamProblems(graph: Graph): string[] {
  const problems: string[] = [];
  for (const [file, edges] of graph) {
    for (const { target, specifier } of edges) {
      if (target.startsWith('outside:')) {
        problems.push(
          `lib/${file} imports '${specifier}', outside the gateway: use the library by its names`,
        );
      } else if (target.startsWith('library:')) {
        const name = target.slice('library:'.length);
        if (LIBRARY_NAMES.includes(name)) continue;
        if (name === 'triton-node/testing' && TESTING_ALLOWED.includes(file)) continue;
        problems.push(
          `lib/${file} imports '${specifier}': the gateway uses 'triton-node' and 'triton-node/internal'`,
        );
      }
    }
  }
  return problems;
}

/** Import cycles within the gateway (type-only imports count), each reported once by its path. */
function cycles(graph: Graph): string[] {
  const own = (target: string) => !target.includes(':');
  return findCycles(
    new Map([...graph].map(([file, edges]) => [file, edges.map((e) => e.target).filter(own)])),
  );
}

function gatewayFiles(dir = LIB): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(out, gatewayFiles(path));
    else if (entry.name.endsWith('.ts')) out[relative(LIB, path)] = readFileSync(path, 'utf8');
  }
  return out;
}

describe('the gateway behind one seam', () => {
  it('the checks find a planted import of a library file, by path, by a name it may not use, and cycles', () => {
    const graph = graphOf({
      'a.ts': [
        "import { TritonError } from '../../triton-node/lib/base/errors.js';",
        "import type { Server } from 'triton-node';",
        "import { optionError } from 'triton-node/internal';",
        "export { fakeEngine } from 'triton-node/testing';",
        "import { b } from './b.js';",
        "import http from 'node:http';",
      ].join('\n'),
      'b.ts': "import type { A } from './a.js';",
      'c/d.ts': "let x: import('../c/d.js').X;",
      'cli/serve.ts': "import { fakeEngine } from 'triton-node/testing';",
    });
    expect(seamProblems(graph)).toEqual([
      "lib/a.ts imports '../../triton-node/lib/base/errors.js', outside the gateway: use the library by its names",
      "lib/a.ts imports 'triton-node/testing': the gateway uses 'triton-node' and 'triton-node/internal'",
    ]);
    expect(cycles(graph).sort()).toEqual(['a.ts -> b.ts -> a.ts', 'c/d.ts -> c/d.ts']);
  });

  it("lib/ imports the library only by its names: 'triton-node' and 'triton-node/internal'", () => {
    const graph = graphOf(gatewayFiles());
    expect(graph.size).toBeGreaterThan(40);
    const targets = new Set([...graph.values()].flat().map((e) => e.target));
    expect(targets).toContain('library:triton-node');
    expect(targets).toContain('library:triton-node/internal');
    expect(seamProblems(graph)).toEqual([]);
  });

  it('lib/ has no import cycle', () => {
    expect(cycles(graphOf(gatewayFiles()))).toEqual([]);
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

  it('package.json lists triton-node, and exactly the peers the gateway and `triton-node serve` declare, optional', () => {
    const gateway = declared('lib/peers.ts', 'GATEWAY_PEERS');
    const serve = declared('lib/cli/serve.ts', 'SERVE_PEERS');
    expect(gateway).toEqual(['@grpc/grpc-js', '@grpc/proto-loader', 'jose', 'ioredis']);
    expect(serve).toEqual(['pino']);
    const optional = [...gateway, ...serve].sort();
    // @types/node: for the .d.ts files only (they reference it), optional too.
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(
      [...optional, '@types/node', 'triton-node'].sort(),
    );
    expect(manifest.peerDependenciesMeta['@types/node']?.optional).toBe(true);
    for (const name of optional) expect(manifest.peerDependenciesMeta[name]?.optional, name).toBe(true);
    expect(manifest.peerDependenciesMeta['triton-node']).toBeUndefined();
  });

  const peers = Object.keys(manifest.peerDependencies).filter(
    (p) => p !== 'triton-node' && p !== '@types/node',
  );
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
