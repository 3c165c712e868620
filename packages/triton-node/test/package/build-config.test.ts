import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface GypTarget {
  target_name: string;
  sources?: string[];
}

interface GypFile {
  targets: GypTarget[];
  /** [condition, { targets }]: the repository-only targets (the fake's tests, the bench driver). */
  conditions?: Array<[string, { targets?: GypTarget[] }]>;
}

/** binding.gyp is a Python literal; ours stays within JSON plus # comments. */
function gypTargets(): Map<string, string[]> {
  const text = readFileSync(`${ROOT}binding.gyp`, 'utf8')
    .split('\n')
    .map((line) => line.replace(/^\s*#.*$/, ''))
    .join('\n');
  const gyp = JSON.parse(text.replace(/,(\s*[}\]])/g, '$1')) as GypFile;
  const targets = [...gyp.targets, ...(gyp.conditions ?? []).flatMap(([, then]) => then.targets ?? [])];
  const out = new Map<string, string[]>();
  for (const t of targets) if (t.sources) out.set(t.target_name, [...t.sources].sort());
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

  it('an install builds only the addon and the fake engine; the rest needs sources the package does not ship', () => {
    const text = readFileSync(`${ROOT}binding.gyp`, 'utf8').replace(/^\s*#.*$/gm, '');
    const parsed = JSON.parse(text.replace(/,(\s*[}\]])/g, '$1')) as GypFile;
    expect(parsed.targets.map((t) => t.target_name).sort()).toEqual([
      'fake_engine_layout',
      'triton_node',
      'tritonserver',
    ]);
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('!native/fake/test');
    expect(pkg.files.some((f) => f.startsWith('bench'))).toBe(false);
  });

  it('every listed source file exists', () => {
    const missing = [...gyp.values()].flat().filter((s) => !existsSync(`${ROOT}${s}`));
    expect(missing).toEqual([]);
  });
});
