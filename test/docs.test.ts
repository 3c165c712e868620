import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as api from '../lib/index.js';
import * as testing from '../lib/testing.js';

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
    const names = [...exportedNames('lib/index.ts'), ...exportedNames('lib/testing.ts')];
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
