// The packages' native builds: binding.gyp and CMakeLists.txt agree in each
// package that has them, an install builds only what the package ships, and
// the one C API header both build against is the same file in each.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = {
  'triton-node': { install: ['triton_node'], tests: 'test' },
  'fake-engine': { install: ['fake_engine_layout', 'tritonserver'], tests: 'test/native' },
} as const;

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
function gypTargets(ROOT: string): Map<string, string[]> {
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

function cmakeTargets(ROOT: string): Map<string, string[]> {
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
    if (sources.length > 0) out.set(m[1]!, sources.sort());
  }
  return out;
}

for (const [name, { install, tests }] of Object.entries(PACKAGES)) {
  const ROOT = `${REPOSITORY}packages/${name}/`;
  describe(`${name}: build files`, () => {
    const gyp = gypTargets(ROOT);
    const cmake = cmakeTargets(ROOT);

    it('binding.gyp and CMakeLists.txt build the same targets', () => {
      expect([...cmake.keys()].sort()).toEqual([...gyp.keys()].sort());
    });

    for (const [target, sources] of gyp) {
      it(`target ${target}: the same source list in both`, () => {
        expect(cmake.get(target)).toEqual(sources);
      });
    }

    it('an install builds only what the package ships; its tests are not shipped', () => {
      const text = readFileSync(`${ROOT}binding.gyp`, 'utf8').replace(/^\s*#.*$/gm, '');
      const parsed = JSON.parse(text.replace(/,(\s*[}\]])/g, '$1')) as GypFile;
      expect(parsed.targets.map((t) => t.target_name).sort()).toEqual([...install]);
      const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { files: string[] };
      expect(pkg.files.some((f) => f === 'test' || f.startsWith('test/') || f.startsWith(tests))).toBe(false);
    });

    it('every listed source file exists', () => {
      const missing = [...gyp.values()].flat().filter((s) => !existsSync(`${ROOT}${s}`));
      expect(missing).toEqual([]);
    });
  });
}

describe("Triton's C API header", () => {
  it('is one file: the fake engine builds against the same text as the addon and the benchmark driver', () => {
    const addon = readFileSync(`${REPOSITORY}packages/triton-node/native/include/triton_capi.h`, 'utf8');
    const fake = readFileSync(`${REPOSITORY}packages/fake-engine/include/triton_capi.h`, 'utf8');
    expect(
      fake === addon,
      "packages/fake-engine/include/triton_capi.h differs from the addon's: copy it over",
    ).toBe(true);
    const bench = readFileSync(`${REPOSITORY}bench/binding.gyp`, 'utf8');
    expect(bench).toContain('../packages/triton-node/native/include');
  });
});
