import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as api from 'triton-node';
import * as testing from 'triton-node/testing';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const doc = readFileSync(`${ROOT}docs/api.md`, 'utf8');

/** Every name lib/index.ts exports, types included (read from its export lists). */
function exportedNames(file: string): string[] {
  const text = readFileSync(`${ROOT}${file}`, 'utf8');
  const names = new Set<string>();
  for (const block of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of block[1]!.split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .at(-1)!
        .trim();
      if (name) names.add(name);
    }
  }
  for (const m of text.matchAll(/^export\s+(?:const|function|class|type|interface)\s+(\w+)/gm))
    names.add(m[1]!);
  return [...names];
}

describe('docs/api.md', () => {
  it('documents every public name of the package', () => {
    const names = [
      ...exportedNames('packages/triton-node/lib/index.ts'),
      ...exportedNames('packages/triton-node/lib/testing.ts'),
      ...exportedNames('packages/gateway/lib/index.ts'),
    ];
    expect(names.length).toBeGreaterThan(40);
    const missing = names.filter((n) => !new RegExp(`\\b${n}\\b`).test(doc));
    expect(missing).toEqual([]);
  });

  it('has a heading for every method of Server, Model, InferStream and Tensor', () => {
    const methods: Array<[string, object]> = [
      ['server', api.Server.prototype],
      ['model', api.Model.prototype],
      ['stream', api.InferStream.prototype],
      ['tensor', api.Tensor.prototype],
    ];
    const missing: string[] = [];
    for (const [prefix, proto] of methods) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        if (name === 'constructor' || name.startsWith('_')) continue;
        if (!doc.includes(`${prefix}.${name}`)) missing.push(`${prefix}.${name}`);
      }
    }
    for (const name of Object.keys(testing.fakeEngine)) {
      if (!doc.includes(`fakeEngine.${name}`)) missing.push(`fakeEngine.${name}`);
    }
    expect(missing).toEqual([]);
  });
});

/**
 * The members of every exported options interface (and of the request and
 * result shapes), read with the TypeScript compiler from lib/: what each
 * function accepts, by name.
 */
function optionMembers(): Array<[string, string[], string[]]> {
  const entries = [`${ROOT}packages/triton-node/lib/index.ts`, `${ROOT}packages/gateway/lib/index.ts`];
  const program = ts.createProgram(entries, { strict: true, noEmit: true });
  const checker = program.getTypeChecker();
  const exported = entries.flatMap((e) =>
    checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(e)!)!),
  );
  const out: Array<[string, string[], string[]]> = [];
  for (const symbol of exported) {
    const name = symbol.getName();
    if (!/Options$|^InferRequest$|^HostPolicy$|^RateLimiterResource$|^OutputOptions$/.test(name)) continue;
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (!(target.flags & ts.SymbolFlags.Interface)) continue;
    const type = checker.getDeclaredTypeOfSymbol(target);
    const props = checker.getPropertiesOfType(type);
    const undocumented = props
      .filter((p) => ts.displayPartsToString(p.getDocumentationComment(checker)).trim() === '')
      .map((p) => p.getName());
    out.push([name, props.map((p) => p.getName()), undocumented]);
  }
  return out;
}

describe('docs/api.md and the options each function accepts', () => {
  const codeSpans = [...doc.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  it('names every member of every options interface in code', () => {
    const interfaces = optionMembers();
    // The interfaces this test must see (a broken reader would pass vacuously).
    expect(interfaces.map(([n]) => n)).toEqual(
      expect.arrayContaining([
        'ServerOptions',
        'LoadModelOptions',
        'RateLimiterOptions',
        'InferRequest',
        'GatewayOptions',
        'DrainOptions',
      ]),
    );
    const missing: string[] = [];
    for (const [iface, members] of interfaces) {
      if (!codeSpans.some((c) => new RegExp(`\\b${iface}\\b`).test(c))) missing.push(iface);
      for (const m of members) {
        if (!codeSpans.some((c) => new RegExp(`(^|[^\\w.])${m}\\b`).test(c))) missing.push(`${iface}.${m}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has TSDoc on every member of every options interface', () => {
    const undocumented = optionMembers().flatMap(([iface, , members]) => members.map((m) => `${iface}.${m}`));
    expect(undocumented).toEqual([]);
  });
});

/** The README's code block whose first line is `first`. */
function readmeBlock(first: string): string {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  for (const [, body] of readme.matchAll(/^```\w*\n([\s\S]*?)^```$/gm))
    if (body!.startsWith(first)) return body!;
  throw new Error(`README.md has no code block that starts with ${JSON.stringify(first)}`);
}

/** Runs node with `args` in `cwd`; its exit status and output. */
function node(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ status: number | null; stdout: string; output: string }>((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env, timeout: 120_000 });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += String(d);
      output += String(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      output += String(d);
    });
    child.on('error', (err) => resolve({ status: null, stdout, output: `${output}\n${err.message}` }));
    child.on('close', (status) => resolve({ status, stdout, output }));
  });
}

describe('README: `await using` on Node.js 20 and 22', () => {
  it('the snippet, compiled with the advised tsconfig.json, keeps no `await using` and runs on this Node', async () => {
    // The package as built (dist/, and build/ for the addon), as an application imports it.
    const pkg = `${ROOT}packages/triton-node/`;
    expect(existsSync(`${pkg}dist/index.js`), 'no dist/index.js: npm run build:ts').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-await-using-'));
    try {
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(pkg, join(dir, 'node_modules', 'triton-node'));
      symlinkSync(join(pkg, 'examples', 'models'), join(dir, 'models'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
      writeFileSync(join(dir, 'tsconfig.json'), readmeBlock('// tsconfig.json for Node.js 20 and 22'));
      writeFileSync(join(dir, 'app.ts'), readmeBlock('// app.ts'));
      const tsc = await node([join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], dir);
      expect(tsc.output, "tsc with the README's tsconfig.json").toBe('');
      expect(tsc.status).toBe(0);
      // Node.js 20 and 22 cannot parse `await using` (24 can): the output must not have it.
      expect(readFileSync(join(dir, 'app.js'), 'utf8')).not.toMatch(/\bawait using\b/);
      const app = await node(['app.js'], dir, {
        ...process.env,
        TRITON_SERVER_LIB: testing.fakeEngine.libraryPath,
      });
      expect(app.status, app.output).toBe(0);
      expect(app.stdout).toContain('Float32Array(3) [ 1, 2, 3 ]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('README: the repository’s two commands', () => {
  it('say how long the install and the tests take, next to each command', () => {
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const line = (command: string) => readme.split('\n').find((l) => l.startsWith(command)) ?? '';
    expect(line('npm install && npm run demo')).toMatch(/# npm install: \d+-\d+ minutes on \d+ cores/);
    expect(line('npm install && npm test')).toMatch(
      /# npm test: \d+-\d+ minutes on \d+ cores, after the install's/,
    );
  });
});
