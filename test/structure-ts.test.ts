// Function length: no function-like node in lib/ or bench/ may run past
// MAX_LINES lines. Data tables (object and array literals that are not
// functions) do not count: a function's length is its own lines minus the
// lines of the literals it holds, and a literal inside a function counts
// only for the functions it holds itself.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 80;
const root = fileURLToPath(new URL('..', import.meta.url));

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

describe('code structure (TypeScript)', () => {
  it(`no function in lib/ or bench/ is longer than ${MAX_LINES} lines`, () => {
    const files = [...tsFiles(join(root, 'lib')), ...tsFiles(join(root, 'bench'))];
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
