// Keeps the mutation list of `npm run mutate` (scripts/mutations.mjs) in step
// with the code: every search text still occurs exactly once in its file, so
// no mutation silently stops applying. (The mutation run itself is too slow
// for every test run; this check is not.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MUTATIONS } from '../scripts/mutations.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const list = MUTATIONS;

function occurrences(text: string, search: string): number {
  let n = 0;
  for (let at = text.indexOf(search); at >= 0; at = text.indexOf(search, at + 1)) n++;
  return n;
}

describe('npm run mutate: the mutation list', () => {
  it('has at least 15 mutations with unique names, each changing something', () => {
    expect(list.length).toBeGreaterThanOrEqual(15);
    expect(new Set(list.map((m) => m.name)).size).toBe(list.length);
    for (const m of list) {
      expect(m.name, m.name).toMatch(/^[a-z0-9-]+$/);
      expect(m.why.length, m.name).toBeGreaterThan(0);
      expect(m.replace, m.name).not.toBe(m.search);
      expect(m.tests.length, m.name).toBeGreaterThan(0);
    }
  });

  for (const m of list) {
    it(`${m.name}: its search text occurs exactly once in ${m.file}; its tests exist`, () => {
      const text = readFileSync(join(ROOT, m.file), 'utf8');
      expect(occurrences(text, m.search), `search text of '${m.name}' in ${m.file}`).toBe(1);
      for (const t of m.tests) {
        expect(existsSync(join(ROOT, t)), t).toBe(true);
        // GPU mutations run the GPU project, the others the conformance one.
        expect(/(^|\/)test\/gpu\//.test(t), `${m.name}: ${t}`).toBe(m.gpu === true);
      }
    });
  }
});
