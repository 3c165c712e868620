// The shape of lib/: its folders are layers that only import down (no
// upward import and no cycle, `import type` included), its top level holds
// only entry points, and no function-like node in lib/ or bench/ runs past
// MAX_LINES lines. Data tables (object and array literals that are not
// functions) do not count: a function's length is its own lines minus the
// lines of the literals it holds, and a literal inside a function counts
// only for the functions it holds itself. Every check is first run on
// made-up inputs, so that a checker that stopped finding things fails too.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCycles } from '@triton-node/test-support/graph.js';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 80;
const root = fileURLToPath(new URL('../..', import.meta.url));

interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'results') out.push(...tsFiles(path));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(path);
    }
  }
  return out;
}

type FunctionLike =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration;

function isFunctionLike(node: ts.Node): node is FunctionLike {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

function isDataLiteral(node: ts.Node): boolean {
  return ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node);
}

/** A readable name: the declared one, or what the function is assigned to. */
function nameOf(node: FunctionLike, file: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(file);
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(file);
  }
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(file).slice(0, 40)})`;
  return '(anonymous)';
}

function lineOf(file: ts.SourceFile, pos: number): number {
  return file.getLineAndCharacterOfPosition(pos).line;
}

/**
 * Lines of `node` covered by data literals that hold no function: the
 * outermost such literals under `node`, not looking into nested functions
 * (they are measured on their own and their lines already count for `node`).
 */
function dataLines(node: ts.Node, file: ts.SourceFile): Set<number> {
  const lines = new Set<number>();
  const holdsFunction = (n: ts.Node): boolean =>
    isFunctionLike(n) || ts.forEachChild(n, holdsFunction) === true;
  const visit = (n: ts.Node): void => {
    if (isDataLiteral(n) && !holdsFunction(n)) {
      const first = lineOf(file, n.getStart(file));
      const last = lineOf(file, n.getEnd());
      // The literal's first and last lines also hold code (`const t = {`, `};`).
      for (let l = first + 1; l < last; l++) lines.add(l);
      return;
    }
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(node, visit);
  return lines;
}

/** Every function-like node of one file longer than `max` lines. */
function longFunctions(path: string, text: string, max: number): LongFunction[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node) && node.body !== undefined) {
      const first = lineOf(file, node.getStart(file));
      const last = lineOf(file, node.getEnd());
      const lines = last - first + 1 - dataLines(node.body, file).size;
      if (lines > max) {
        out.push({ file: relative(root, path), line: first + 1, name: nameOf(node, file), lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/**
 * lib/'s layers, top to bottom (docs/architecture.md). A file may import
 * files of its own layer or of a layer below. Folders on one line are one
 * layer: they may import each other, without cycles.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['cli'], // the `triton-node` command: main.ts and one file per command
  ['(entry)'], // index.ts, testing.ts, internal.ts: the package's entry points
  ['tune', 'doctor', 'codegen'], // tools that drive a server or read a repository
  ['api'], // Server, Model, options, health: the objects users hold
  ['deploy', 'lint'], // versions rolled out and back; model folders checked
  ['request'], // one inference: its types, validation, submission, results, streams
  ['tensor'], // outputs as tensors; pinned and device buffers
  ['metrics'], // Prometheus metrics: Triton's and custom ones
  ['config'], // Triton's documents: model config, pbtxt, datatypes, statistics, files
  ['addon'], // the native addon: loading it, decoding its events
  ['base'], // errors and argument checks
  ['abi'], // the contract with native code: codes, names, argument slots
];

/** The files the top level of lib/ may hold: entry points only. */
const ENTRY_POINTS = ['index.ts', 'internal.ts', 'testing.ts'];

function layerOf(file: string): string {
  const parts = file.split('/');
  return parts.length === 1 ? '(entry)' : parts[0]!;
}

function rankOf(layer: string): number {
  const rank = LAYERS.findIndex((l) => l.includes(layer));
  if (rank === -1) throw new Error(`lib/${layer}/ is in no layer: add it to LAYERS`);
  return rank;
}

/**
 * Relative imports of a file, resolved to paths relative to lib/: import and
 * export declarations (type-only too), `import()` calls and `import('...')`
 * types. Specifiers that leave lib/ or name no file are kept as they are
 * (outside lib/ they start with '../').
 */
function importsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(LIB, resolve(dirname(join(LIB, file)), s)).replace(/\.js$/, '.ts'));
}

/** What is wrong with lib/'s import graph: upward imports, cycles, stray top-level files. */
function layerProblems(graph: Map<string, string[]>): string[] {
  const problems: string[] = [];
  for (const [file, imports] of graph) {
    const from = layerOf(file);
    if (from === '(entry)' && !ENTRY_POINTS.includes(file)) {
      problems.push(`lib/${file} is at the top of lib/, which holds only entry points: move it into a layer`);
    }
    for (const target of imports) {
      if (!graph.has(target)) continue; // outside lib/, or not a TypeScript file
      const to = layerOf(target);
      if (rankOf(to) < rankOf(from)) {
        problems.push(`lib/${file} (${from}) imports lib/${target} (${to}): layers only import down`);
      }
    }
  }
  for (const cycle of findCycles(graph)) problems.push(`import cycle: ${cycle}`);
  return problems;
}

const LIB = join(root, 'lib');

function libGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of tsFiles(LIB)) {
    const file = relative(LIB, path);
    graph.set(file, importsOf(file, readFileSync(path, 'utf8')));
  }
  return graph;
}

describe('layers of lib/', () => {
  it('the checks find an upward import, a cycle, a type-only cycle and a stray top-level file', () => {
    const graph = new Map([
      ['base/is.ts', importsOf('base/is.ts', "import { x } from '../api/server.js';")],
      ['api/server.ts', importsOf('api/server.ts', "export * from './model.js';")],
      ['api/model.ts', importsOf('api/model.ts', "import type { S } from './server.js';")],
      ['request/a.ts', importsOf('request/a.ts', "const b = await import('./b.js');")],
      ['request/b.ts', importsOf('request/b.ts', "let a: import('./a.js').A;")],
      ['helpers.ts', []],
      ['index.ts', importsOf('index.ts', "export * from './api/server.js';")],
    ]);
    expect(graph.get('base/is.ts')).toEqual(['api/server.ts']);
    const problems = layerProblems(graph);
    expect(problems).toContain(
      'lib/base/is.ts (base) imports lib/api/server.ts (api): layers only import down',
    );
    expect(problems).toContain('import cycle: api/server.ts -> api/model.ts -> api/server.ts');
    expect(problems).toContain('import cycle: request/a.ts -> request/b.ts -> request/a.ts');
    expect(problems.filter((p) => p.includes('helpers.ts'))).toHaveLength(1);
    expect(problems).toHaveLength(4);
    expect(
      layerProblems(
        new Map([
          ['api/server.ts', ['request/a.ts', '../package.json']],
          ['request/a.ts', ['base/is.ts']],
          ['base/is.ts', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('every folder of lib/ is a layer; no file imports up; there is no import cycle', () => {
    const graph = libGraph();
    expect(graph.size).toBeGreaterThan(50);
    for (const entry of readdirSync(LIB, { withFileTypes: true })) {
      if (entry.isDirectory()) expect(() => rankOf(entry.name)).not.toThrow();
    }
    expect(existsSync(join(LIB, 'index.ts'))).toBe(true);
    expect(layerProblems(graph)).toEqual([]);
  });
});

describe('code structure (TypeScript)', () => {
  it(`no function in lib/ of triton-node and the gateway, or bench/, is longer than ${MAX_LINES} lines`, () => {
    const files = [
      ...tsFiles(join(root, 'lib')),
      ...tsFiles(join(root, '..', 'gateway', 'lib')),
      ...tsFiles(join(root, '..', '..', 'bench')),
    ];
    expect(files.length).toBeGreaterThan(10);
    const offenders = files.flatMap((f) => longFunctions(f, readFileSync(f, 'utf8'), MAX_LINES));
    const report = offenders
      .sort((a, b) => b.lines - a.lines)
      .map((o) => `${o.file}:${o.line} ${o.name} (${o.lines} lines)`);
    expect(report, `functions longer than ${MAX_LINES} lines:\n${report.join('\n')}`).toEqual([]);
  });

  it('the scanner counts functions of every kind and leaves data tables out', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${i};`).join('\n');
    const table = (n: number) => Array.from({ length: n }, (_, i) => `    k${i}: ${i},`).join('\n');
    const source = [
      `function longDecl() {\n${body(85)}\n}`,
      `const arrow = () => {\n${body(85)}\n};`,
      `const expr = function () {\n${body(85)}\n};`,
      `class C {\n  constructor() {\n${body(85)}\n  }\n  method() {\n${body(85)}\n  }\n  get g() {\n${body(85)}\n    return 1;\n  }\n  set s(v: number) {\n${body(85)}\n  }\n}`,
      `function short() {\n${body(10)}\n}`,
      `function withTable() {\n  const t = {\n${table(120)}\n  };\n${body(10)}\n}`,
      `function withCallbacks() {\n  const t = {\n    f: () => {\n${body(85)}\n    },\n  };\n}`,
    ].join('\n');
    const found = longFunctions(join(root, 'sample.ts'), source, MAX_LINES).map((o) => o.name);
    expect(found.sort()).toEqual([
      'arrow',
      'constructor',
      'expr',
      'f',
      'g',
      'longDecl',
      'method',
      's',
      'withCallbacks',
    ]);
  });
});
