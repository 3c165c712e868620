import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as api from 'triton-node';
import * as testing from 'triton-node/testing';

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
