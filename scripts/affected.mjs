// Runs the tests a change reaches: each changed package's own suite, plus
// the contract tests of the packages that consume it (their tests of what
// they use of it). A change outside the packages (docs, scripts, the root's
// configuration) runs everything, as `npm test` does.
//
//   npm run affected                      changes against origin/main (else main), committed or not
//   npm run affected -- --base HEAD~1     changes since a given commit
//   npm run affected -- --dry-run         print the plan, run nothing
//
// The consumers and their contract tests:
// - @triton-node/fake-engine is consumed by triton-node, whose whole
//   conformance suite is the fake's contract (the same tests pass on real Triton);
// - triton-node is consumed by @triton-node/gateway: the gateway files its
//   package.json names in contractTests["triton-node"];
// - @triton-node/test-support is every package's tests: all of them run.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** Each package's folder, its own projects and the build its tests need first. */
const PACKAGES = {
  'fake-engine': { projects: ['fake-engine'], build: [] },
  'triton-node': { projects: ['conformance', 'gpu', 'gpu-stub'], build: ['triton-node'] },
  gateway: {
    projects: ['gateway', 'gateway-dist', 'gateway-gpu', 'gateway-gpu-stub'],
    build: ['triton-node', '@triton-node/gateway'],
  },
};
const CONSUMERS = { 'fake-engine': ['triton-node'], 'triton-node': ['gateway'], gateway: [] };

function git(args) {
  const out = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`git ${args.join(' ')}: ${out.stderr.trim()}`);
  return out.stdout.split('\n').filter(Boolean);
}

function defaultBase() {
  for (const ref of ['origin/main', 'main']) {
    if (spawnSync('git', ['rev-parse', '--verify', '-q', ref], { cwd: root }).status === 0) return ref;
  }
  throw new Error('no origin/main or main to compare with: pass --base <commit>');
}

/** The files changed since `base` (merge base), committed, staged, unstaged or untracked. */
function changedFiles(base) {
  const committed = git(['diff', '--name-only', `${base}...HEAD`]);
  const local = git(['status', '--porcelain', '--untracked-files=all']).map((l) =>
    l.slice(3).split(' -> ').pop(),
  );
  return [...new Set([...committed, ...local])];
}

/** What `file` belongs to: a package folder name, or 'everything' (anything outside the three packages). */
export function ownerOf(file) {
  const m = /^packages\/([^/]+)\//.exec(file);
  if (m && m[1] in PACKAGES) return m[1];
  if (file.startsWith('bench/') && !file.startsWith('bench/package.json')) return 'bench';
  return 'everything';
}

/** The contract tests `consumer` names for `pkg` (paths from the root), or null: all its tests. */
function contractTests(consumer, pkg) {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', consumer, 'package.json'), 'utf8'));
  const files = manifest.contractTests?.[pkg === 'triton-node' ? 'triton-node' : `@triton-node/${pkg}`];
  return files ? files.map((f) => `packages/${consumer}/${f}`) : null;
}

/** The vitest runs a change needs: [{ why, projects, files? }], and the packages to build first. */
export function plan(files) {
  const owners = new Set(files.map(ownerOf));
  if (owners.has('everything'))
    return { runs: [{ why: 'outside the packages: everything', projects: [] }], build: 'all' };
  const changed = [...owners].filter((o) => o in PACKAGES);
  const runs = [];
  const build = new Set();
  for (const pkg of changed) {
    runs.push({ why: `${pkg} changed: its own tests`, projects: PACKAGES[pkg].projects });
    for (const b of PACKAGES[pkg].build) build.add(b);
  }
  for (const pkg of changed) {
    for (const consumer of CONSUMERS[pkg]) {
      if (owners.has(consumer)) continue;
      const files = contractTests(consumer, pkg);
      const projects = files ? [PACKAGES[consumer].projects[0]] : PACKAGES[consumer].projects;
      runs.push({
        why: `${consumer} consumes ${pkg}: its contract tests`,
        projects,
        files: files ?? undefined,
      });
      for (const b of PACKAGES[consumer].build) build.add(b);
    }
  }
  return { runs, build: [...build] };
}

function run(command, args) {
  process.stderr.write(`affected: ${command} ${args.join(' ')}\n`);
  const child = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  return child.status ?? 1;
}

async function main() {
  const { values } = parseArgs({ options: { base: { type: 'string' }, 'dry-run': { type: 'boolean' } } });
  const base = values.base ?? defaultBase();
  const files = changedFiles(base);
  if (files.length === 0) {
    process.stderr.write(`affected: nothing changed since ${base}\n`);
    return 0;
  }
  const { runs, build } = plan(files);
  for (const r of runs) {
    const what = r.projects.length ? r.projects.join(', ') : 'every project';
    process.stderr.write(`affected: ${r.why} (${what}${r.files ? `: ${r.files.length} files` : ''})\n`);
  }
  if (values['dry-run']) return 0;
  if (build === 'all') return run('npm', ['test']);
  for (const name of build) {
    const status = run('npm', ['run', 'build:ts', '--workspace', name]);
    if (status !== 0) return status;
  }
  let failed = 0;
  for (const r of runs) {
    const args = ['vitest', 'run', ...r.projects.flatMap((p) => ['--project', p]), ...(r.files ?? [])];
    if (run('npx', args) !== 0) failed += 1;
  }
  return failed === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main();
