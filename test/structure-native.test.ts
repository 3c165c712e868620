// The shape of native/: its layers only point down (no upward and no
// circular #include), and its functions fit on a screen. Both checks are
// run on small made-up inputs first, so that a checker that stopped finding
// anything would fail here too.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCycles } from '@triton-node/test-support/graph.js';
import { describe, expect, it } from 'vitest';

const NATIVE = fileURLToPath(new URL('../packages/triton-node/native', import.meta.url));
/** The fake engine's package: its rooms are src/<room>/, its C++ tests test/native/, its header include/. */
const FAKE = fileURLToPath(new URL('../packages/fake-engine', import.meta.url));
/** A fake engine file as this test names it (fake/<room>/..., fake/test/...), from its path in the package. */
function fakeName(real: string): string {
  if (real.startsWith('src/')) return `fake/${real.slice(4)}`;
  if (real.startsWith('test/native/')) return `fake/test/${real.slice('test/native/'.length)}`;
  if (real.startsWith('include/')) return real;
  throw new Error(`packages/fake-engine/${real} is in no room of the fake`);
}
/** The inverse of fakeName. */
function fakeReal(name: string): string {
  if (name.startsWith('fake/test/')) return `test/native/${name.slice('fake/test/'.length)}`;
  if (name.startsWith('fake/')) return `src/${name.slice(5)}`;
  return name;
}

/**
 * The addon's layers, top to bottom (docs/architecture.md). A file may
 * include files of its own layer or of a layer below it. The fake engine is
 * a library of its own (native/fake/), which may use only the C API header
 * of the addon's layers.
 */
const LAYERS = ['entry', 'objects', 'server', 'request', 'memory', 'env', 'triton', 'include'] as const;

/**
 * The fake engine's rooms, top to bottom (native/fake/<room>/): a file of the
 * fake may include files of its own room or of a room below it. `test` is the
 * fake's C++ tests, on top of everything.
 */
const FAKE_ROOMS = [
  'test',
  'api',
  'repository',
  'backends',
  'scheduling',
  'core',
  'config',
  'support',
] as const;
type FakeRoom = (typeof FAKE_ROOMS)[number];
type Layer = (typeof LAYERS)[number] | `fake/${FakeRoom}`;

const isFake = (layer: Layer): layer is `fake/${FakeRoom}` => layer.startsWith('fake/');
const fakeRank = (layer: `fake/${FakeRoom}`) => FAKE_ROOMS.indexOf(layer.slice('fake/'.length) as FakeRoom);

/** The longest function body allowed, in lines. */
const MAX_FUNCTION_LINES = 80;

function layerOf(file: string): Layer {
  if (file === 'addon.cc') return 'entry';
  const parts = file.split('/');
  const top = parts[0]!;
  if (top === 'fake') {
    const room = parts[1]!;
    if (parts.length > 2 && (FAKE_ROOMS as readonly string[]).includes(room))
      return `fake/${room as FakeRoom}`;
    throw new Error(`native/${file} is in no room of the fake: put it in one of ${FAKE_ROOMS.join(', ')}`);
  }
  if ((LAYERS as readonly string[]).includes(top)) return top as Layer;
  throw new Error(`native/${file} is in no layer: put it in one of ${LAYERS.join(', ')}`);
}

function sourceFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const name = path.posix.join(rel, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(dir, name));
    else if (/\.(cc|h)$/.test(entry.name)) out.push(name);
  }
  return out.sort();
}

/** Quoted includes of a file, as paths relative to native/. */
function includesOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)) {
    const name = m[1]!;
    if (name === 'triton_capi.h') out.push('include/triton_capi.h');
    else if (isFake(layerOf(file)))
      out.push(fakeName(path.posix.join(path.posix.dirname(fakeReal(file)), name)));
    else out.push(name);
  }
  return out;
}

/** What is wrong with an include graph: missing files, upward includes, cycles. */
function includeProblems(graph: Map<string, string[]>): string[] {
  const problems: string[] = [];
  const rank = (layer: (typeof LAYERS)[number]) => LAYERS.indexOf(layer);
  for (const [file, includes] of graph) {
    const from = layerOf(file);
    for (const target of includes) {
      if (!graph.has(target)) {
        problems.push(`${file} includes ${target}, which is not a file of native/`);
        continue;
      }
      const to = layerOf(target);
      const allowed = isFake(from)
        ? to === 'include' || (isFake(to) && fakeRank(to) >= fakeRank(from))
        : !isFake(to) && rank(to) >= rank(from);
      if (!allowed) problems.push(`${file} (${from}) includes ${target} (${to}): layers only point down`);
    }
  }
  for (const cycle of findCycles(graph)) problems.push(`circular include: ${cycle}`);
  return problems;
}

/** Comments, string and character literals (raw strings too) blanked out,
 * newlines kept, so that braces and line numbers can be read. */
function codeOnly(text: string): string {
  let out = '';
  let i = 0;
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  while (i < text.length) {
    const rest = text.slice(i, i + 3);
    let end = -1;
    if (rest.startsWith('//')) end = text.indexOf('\n', i);
    else if (rest.startsWith('/*')) end = text.indexOf('*/', i + 2) + 2;
    else if (rest.startsWith('R"')) {
      const open = text.indexOf('(', i);
      const delim = `)${text.slice(i + 2, open)}"`;
      end = text.indexOf(delim, open) + delim.length;
    } else if (text[i] === '"' || (text[i] === "'" && !/[0-9a-fA-F]/.test(text[i - 1] ?? ''))) {
      const quote = text[i]!;
      end = i + 1;
      while (end < text.length && text[end] !== quote) end += text[end] === '\\' ? 2 : 1;
      end += 1;
    }
    if (end === -1) {
      out += text[i];
      i += 1;
    } else {
      if (end <= i) end = text.length;
      out += blank(text.slice(i, end));
      i = end;
    }
  }
  return out;
}

interface LongFunction {
  line: number;
  lines: number;
  head: string;
}

/** Function bodies longer than `max` lines. A `{` at namespace or class
 * scope opens a function when what precedes it ends like a signature; data
 * tables (`= {`), namespaces, classes and enums are not functions. */
function longFunctions(text: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  const code = codeOnly(text);
  const out: LongFunction[] = [];
  const scopes: Array<'container' | 'function' | 'block'> = [];
  let headStart = 0;
  let opened: { index: number; head: string } | null = null;
  const lineAt = (index: number) => code.slice(0, index).split('\n').length;
  for (let i = 0; i < code.length; i++) {
    const ch = code[i];
    if (ch === ';' && !scopes.includes('function')) headStart = i + 1;
    if (ch === '{') {
      const inside = scopes.includes('function');
      const head = code.slice(headStart, i).replace(/\s+/g, ' ').trim();
      let kind: 'container' | 'function' | 'block' = 'block';
      if (!inside) {
        if (/(^|\s)(namespace|class|struct|union|enum)(\s|$)/.test(head) && !/\)\s*$/.test(head)) {
          kind = /=\s*$/.test(head) ? 'block' : 'container';
        } else if (/\)[\w\s:&,<>*()\-]*$/.test(head) && !/=\s*$/.test(head)) {
          kind = 'function';
          opened = { index: i, head };
        }
      }
      scopes.push(kind);
      headStart = i + 1;
    } else if (ch === '}') {
      const kind = scopes.pop();
      if (kind === 'function' && opened) {
        const lines = lineAt(i) - lineAt(opened.index) + 1;
        if (lines > max) out.push({ line: lineAt(opened.index), lines, head: opened.head.slice(-80) });
        opened = null;
      }
      if (!scopes.includes('function')) headStart = i + 1;
    }
  }
  return out;
}

describe('the checks themselves', () => {
  it('find an upward include, a circular one and a missing file', () => {
    const graph = new Map([
      ['memory/a.h', ['objects/b.h']],
      ['objects/b.h', []],
      ['request/c.h', ['request/d.h']],
      ['request/d.h', ['request/c.h']],
      ['server/e.h', ['server/nowhere.h']],
    ]);
    const problems = includeProblems(graph);
    expect(problems.some((p) => p.startsWith('memory/a.h (memory) includes objects/b.h'))).toBe(true);
    expect(problems.some((p) => p.startsWith('circular include: request/c.h -> request/d.h'))).toBe(true);
    expect(problems.some((p) => p.includes('server/nowhere.h, which is not a file'))).toBe(true);
    expect(
      includeProblems(
        new Map([
          ['objects/x.h', ['memory/y.h']],
          ['memory/y.h', []],
        ]),
      ),
    ).toEqual([]);
  });

  it("find an upward include between the fake's rooms, a circular one, and the fake and the addon using each other", () => {
    const graph = new Map([
      ['fake/core/a.h', ['fake/scheduling/b.h']],
      ['fake/scheduling/b.h', []],
      ['fake/config/c.h', ['fake/config/d.h']],
      ['fake/config/d.h', ['fake/config/c.h']],
      ['fake/support/e.h', ['memory/f.h']],
      ['memory/f.h', []],
      ['server/g.h', ['fake/api/h.h']],
      ['fake/api/h.h', []],
    ]);
    const problems = includeProblems(graph);
    const found = (start: string) => problems.some((p) => p.startsWith(start));
    expect(found('fake/core/a.h (fake/core) includes fake/scheduling/b.h (fake/scheduling)')).toBe(true);
    expect(found('circular include: fake/config/c.h -> fake/config/d.h')).toBe(true);
    expect(found('fake/support/e.h (fake/support) includes memory/f.h (memory)')).toBe(true);
    expect(found('server/g.h (server) includes fake/api/h.h (fake/api)')).toBe(true);
    expect(
      includeProblems(
        new Map([
          ['fake/api/x.cc', ['fake/core/y.h', 'fake/api/z.h', 'include/triton_capi.h']],
          ['fake/api/z.h', []],
          ['fake/core/y.h', ['fake/support/w.h']],
          ['fake/support/w.h', ['include/triton_capi.h']],
          ['fake/test/t.cc', ['fake/config/v.h']],
          ['fake/config/v.h', []],
          ['include/triton_capi.h', []],
        ]),
      ),
    ).toEqual([]);
    expect(() => layerOf('fake/loose.cc')).toThrow(/in no room of the fake/);
  });

  it('find a long function and leave tables and short functions alone', () => {
    const body = (n: number) => Array.from({ length: n }, (_, k) => `  x += ${k};  // }`).join('\n');
    const text = [
      'namespace n {',
      'struct S { int a; };',
      `int Long(int x) {\n${body(90)}\n  return x;\n}`,
      `int Short(int x) const {\n${body(10)}\n}`,
      `const int kTable[] = {\n${Array.from({ length: 100 }, (_, k) => `  ${k},`).join('\n')}\n};`,
      'const char* s = "{{{";',
      '}',
    ].join('\n');
    const found = longFunctions(text);
    expect(found.map((f) => f.head)).toEqual(['int Long(int x)']);
    expect(found[0]!.lines).toBe(93);
  });
});

describe("the addon's native/ and the fake engine", () => {
  const addonFiles = sourceFiles(NATIVE);
  const fakeFiles = [...sourceFiles(FAKE, 'src'), ...sourceFiles(FAKE, 'test/native')];
  const texts = new Map([
    ...addonFiles.map((f) => [f, readFileSync(path.join(NATIVE, f), 'utf8')] as const),
    ...fakeFiles.map((f) => [fakeName(f), readFileSync(path.join(FAKE, f), 'utf8')] as const),
  ]);
  const files = [...texts.keys()];

  it('has layers that only point down, and no circular include', () => {
    const graph = new Map(files.map((f) => [f, includesOf(f, texts.get(f)!)]));
    expect(includeProblems(graph)).toEqual([]);
  });

  it(`has no function longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const long: string[] = [];
    for (const [file, text] of texts) {
      if (!file.endsWith('.cc') && !file.endsWith('.h')) continue;
      if (file.startsWith('include/')) continue; // the C API declarations
      for (const f of longFunctions(text)) long.push(`native/${file}:${f.line} ${f.head} (${f.lines} lines)`);
    }
    expect(long).toEqual([]);
  });
});
