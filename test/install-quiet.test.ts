/**
 * A quiet contributor install on the oldest Node the package supports (20):
 * no locked package may ask for a newer Node (npm prints EBADENGINE for it:
 * cookie@2, through fastify's light-my-request, asked for Node 22 and is
 * kept out with an `overrides` entry in package.json).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as {
  engines: { node: string };
  overrides?: Record<string, string>;
};
const lock = JSON.parse(readFileSync(new URL('package-lock.json', ROOT), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

/** Whether an `engines.node` range lets some Node of major `major` run (the forms npm packages use). */
function admitsMajor(range: string, major: number): boolean {
  return range.split('||').some((alt) => {
    const a = alt.trim();
    if (a === '*' || a === '') return true;
    const m = /^(>=|\^|~)?\s*v?(\d+)/.exec(a);
    if (m === null) return true;
    const n = Number(m[2]);
    return m[1] === '>=' ? n <= major : n === major;
  });
}

describe('a quiet install on Node 20', () => {
  const oldest = Number(/^>=\s*(\d+)/.exec(pkg.engines.node)?.[1]);

  it('the package says which Node it supports', () => {
    expect(oldest).toBe(20);
  });

  it('reads the ranges npm packages write', () => {
    expect(admitsMajor('>=22', 20)).toBe(false);
    expect(admitsMajor('>=18', 20)).toBe(true);
    expect(admitsMajor('^20.19.0 || >=22.12.0', 20)).toBe(true);
    expect(admitsMajor('^18 || >=22', 20)).toBe(false);
    expect(admitsMajor('>=16 || 14 >=14.17', 20)).toBe(true);
  });

  it('no locked package asks for a newer Node', () => {
    const refused = Object.entries(lock.packages).flatMap(([path, p]) => {
      const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
      return node !== undefined && !admitsMajor(node, oldest) ? [`${path}@${p.version}: node ${node}`] : [];
    });
    expect(refused).toEqual([]);
  });
});
