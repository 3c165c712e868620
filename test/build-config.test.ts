import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface GypTarget {
  target_name: string;
  sources?: string[];
}

/** binding.gyp is a Python literal; ours stays within JSON plus # comments. */
function gypTargets(): Map<string, string[]> {
  const text = readFileSync(`${ROOT}binding.gyp`, 'utf8')
    .split('\n')
    .map((line) => line.replace(/^\s*#.*$/, ''))
    .join('\n');
  const gyp = JSON.parse(text.replace(/,(\s*[}\]])/g, '$1')) as { targets: GypTarget[] };
  const out = new Map<string, string[]>();
  for (const t of gyp.targets) if (t.sources) out.set(t.target_name, [...t.sources].sort());
  return out;
}

function cmakeTargets(): Map<string, string[]> {
  const text = readFileSync(`${ROOT}CMakeLists.txt`, 'utf8').replace(/#.*$/gm, '');
  const vars = new Map<string, string[]>();
  for (const m of text.matchAll(/set\(\s*(\w+)\s+([^)]*)\)/g)) {
    vars.set(m[1]!, m[2]!.split(/\s+/).filter(Boolean));
  }
  const out = new Map<string, string[]>();
  for (const m of text.matchAll(/add_(?:library|executable)\(\s*(\w+)\s+([^)]*)\)/g)) {
    const sources: string[] = [];
    for (const word of m[2]!.split(/\s+/).filter(Boolean)) {
      const ref = /^\$\{(\w+)\}$/.exec(word);
      if (ref) {
        if (ref[1] === 'CMAKE_JS_SRC') continue;
        sources.push(...(vars.get(ref[1]!) ?? []));
      } else if (/\.(cc|cpp|c)$/.test(word)) {
        sources.push(word);
      }
    }
    out.set(m[1]!, sources.sort());
  }
  return out;
}

describe('build files', () => {
  const gyp = gypTargets();
  const cmake = cmakeTargets();

  it('binding.gyp and CMakeLists.txt build the same targets', () => {
    expect([...cmake.keys()].sort()).toEqual([...gyp.keys()].sort());
  });

  for (const [target, sources] of gyp) {
    it(`target ${target}: the same source list in both`, () => {
      expect(cmake.get(target)).toEqual(sources);
    });
  }

  it('every listed source file exists', () => {
    const missing = [...gyp.values()].flat().filter((s) => !existsSync(`${ROOT}${s}`));
    expect(missing).toEqual([]);
  });
});
