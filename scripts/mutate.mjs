#!/usr/bin/env node
// npm run mutate [-- --only name1,name2] [--list] [--keep]
//
// Mutation check: applies each mutation of scripts/mutations.mjs, one at a
// time, to a copy of the repository (tracked and untracked, not ignored,
// files; node_modules linked), rebuilds the addon when the mutation is in
// native code, runs the mutation's test files, and reports whether a test
// failed (KILLED) or all passed (SURVIVED). Exit code 0 only when every
// mutation was killed.
//
// The suite is first run unmutated on the same files (a failing baseline
// makes every kill meaningless). TypeScript mutations run first, on the
// unmutated build; native ones are grouped by file so each rebuild compiles
// one file (and the previous file's restored text) on 2 cores. GPU
// mutations run the GPU project on the CUDA stub (packages/test-support/gpu/stub-cudart.c),
// which needs gcc. Set TRITON_SERVER_LIB / TRITON_BACKEND_DIR to run the
// conformance files against a real Triton instead of the fake engine.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTATIONS } from './mutations.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TEST_TIMEOUT_MS = 120_000; // the stop-race stress test takes over 30 s on a busy 2-core machine
const RUN_LIMIT_MS = 10 * 60_000;

function usage(message) {
  if (message) console.error(message);
  console.error('usage: npm run mutate [-- --only name1,name2] [--list] [--keep]');
  process.exit(2);
}

function parseArgs(argv) {
  const out = { only: undefined, list: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--list') out.list = true;
    else if (a === '--keep') out.keep = true;
    else if (a === '--only' || a.startsWith('--only=')) {
      out.only = a === '--only' ? (argv[++i] ?? '') : a.slice('--only='.length);
      if (out.only === '') usage('--only needs a comma-separated list of names');
    } else usage(`unknown argument '${a}'`);
  }
  return out;
}

const args = parseArgs(process.argv.slice(2));

if (args.list) {
  for (const m of MUTATIONS) console.log(`${m.name.padEnd(28)} ${m.file.padEnd(24)} ${m.why}`);
  process.exit(0);
}

let selected = MUTATIONS;
if (args.only !== undefined) {
  const names = args.only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !MUTATIONS.some((m) => m.name === n));
  if (unknown.length > 0) usage(`unknown mutation(s): ${unknown.join(', ')} (see --list)`);
  selected = MUTATIONS.filter((m) => names.includes(m.name));
}

/** The package whose native build a mutation changes, or null (TypeScript, Python, docs...). */
const NATIVE_SOURCES = {
  'packages/triton-node/native/': 'packages/triton-node',
  'packages/fake-engine/src/': 'packages/fake-engine',
};
const nativePackage = (m) =>
  Object.entries(NATIVE_SOURCES).find(([dir]) => m.file.startsWith(dir))?.[1] ?? null;
const isNative = (m) => nativePackage(m) !== null;
/** The vitest project a test file runs in (the GPU ones over the CUDA stub). */
function projectOf(test) {
  const gpu = /(^|\/)test\/gpu\//.test(test);
  if (test.startsWith('packages/triton-node/')) return gpu ? 'gpu' : 'conformance';
  if (test.startsWith('packages/gateway/')) return gpu ? 'gateway-gpu' : 'gateway';
  if (test.startsWith('packages/fake-engine/')) return 'fake-engine';
  return 'repository';
}
// TypeScript first (they need no build), then native grouped by file.
const order = [
  ...selected.filter((m) => !isNative(m)),
  ...selected.filter(isNative).sort((a, b) => a.file.localeCompare(b.file)),
];

const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

function run(cmd, argv, options = {}) {
  return spawnSync(cmd, argv, {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    ...options,
  });
}

// ---- the copy ---------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'triton-node-mutate-'));
function cleanup() {
  if (!args.keep) rmSync(work, { recursive: true, force: true });
}
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT });
if (listed.status !== 0) {
  console.error(`git ls-files failed: ${listed.stderr}`);
  process.exit(2);
}
for (const rel of listed.stdout.split('\0').filter(Boolean)) {
  const from = join(ROOT, rel);
  if (!existsSync(from) || rel === 'node_modules') continue;
  mkdirSync(dirname(join(work, rel)), { recursive: true });
  cpSync(from, join(work, rel), { preserveTimestamps: true });
}
// The copy's node_modules: the repository's packages, but its own workspace
// packages (triton-node and @triton-node/*) are the copy's, mutated.
const modules = realpathSync(join(ROOT, 'node_modules'));
mkdirSync(join(work, 'node_modules', '@triton-node'), { recursive: true });
for (const name of readdirSync(modules)) {
  if (name === 'triton-node' || name === '@triton-node') continue;
  symlinkSync(join(modules, name), join(work, 'node_modules', name));
}
symlinkSync(join(work, 'packages', 'triton-node'), join(work, 'node_modules', 'triton-node'));
for (const name of readdirSync(join(modules, '@triton-node'))) {
  const target = realpathSync(join(modules, '@triton-node', name)).slice(ROOT.length);
  symlinkSync(join(work, target), join(work, 'node_modules', '@triton-node', name));
}

const nodeGyp = join(work, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
const vitest = join(work, 'node_modules', 'vitest', 'vitest.mjs');
const tsup = join(work, 'node_modules', 'tsup', 'dist', 'cli-default.js');

function build(kind, pkg) {
  const r = run(process.execPath, [nodeGyp, kind, '-j', '2'], { cwd: join(work, pkg) });
  return { ok: r.status === 0, log: `${r.stdout}${r.stderr}` };
}

/** Rebuilds a package's dist/ (a mutated library file reaches the gateway's tests through it). */
function bundle(pkg) {
  const r = run(process.execPath, [tsup, '--silent'], { cwd: join(work, pkg) });
  return { ok: r.status === 0, log: `${r.stdout}${r.stderr}` };
}
const BUNDLED = ['packages/triton-node', 'packages/gateway'];
const bundledPackage = (m) => BUNDLED.find((pkg) => m.file.startsWith(`${pkg}/lib/`)) ?? null;

console.log(`mutate: ${order.length} mutation(s) in ${work}`);
// Each package's build: copied, then rebuilt where a mutation changes its native code.
for (const pkg of ['packages/triton-node', 'packages/fake-engine']) {
  const built = join(ROOT, pkg, 'build');
  if (!existsSync(join(built, 'Release'))) {
    console.error(`mutate: no ${pkg}/build here; run \`npm install\` (or npm run build in ${pkg}) first`);
    cleanup();
    process.exit(2);
  }
  cpSync(built, join(work, pkg, 'build'), { recursive: true, preserveTimestamps: true });
}
for (const pkg of BUNDLED) {
  cpSync(join(ROOT, pkg, 'dist'), join(work, pkg, 'dist'), { recursive: true, preserveTimestamps: true });
}
for (const pkg of new Set(order.map(nativePackage).filter(Boolean))) {
  const t = Date.now();
  const configured = run(process.execPath, [nodeGyp, 'configure'], { cwd: join(work, pkg) });
  const b = configured.status === 0 ? build('build', pkg) : { ok: false, log: configured.stderr };
  if (!b.ok) {
    console.error(b.log.slice(-4000));
    console.error(`mutate: the unmutated copy of ${pkg} does not build`);
    cleanup();
    process.exit(2);
  }
  console.log(`mutate: built ${pkg} (${seconds(t)})`);
}

let stubEnv = {};
if (order.some((m) => m.gpu)) {
  const dir = join(work, '.stubcuda');
  mkdirSync(dir, { recursive: true });
  const lib = join(dir, 'libcudart.so');
  const r = run('gcc', [
    '-shared',
    '-fPIC',
    '-o',
    lib,
    join(work, 'packages/test-support/gpu/stub-cudart.c'),
    '-lpthread',
    '-lrt',
  ]);
  if (r.status !== 0) {
    console.error(`mutate: cannot build the CUDA stub: ${r.stderr}`);
    cleanup();
    process.exit(2);
  }
  stubEnv = {
    LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
    TRITON_NODE_CUDART: lib,
  };
}

// ---- running tests ----------------------------------------------------------

/** Runs test files of one project; returns { passed, failures: string[], output }. */
function runTests(files, gpu) {
  const projects = [...new Set(files.map(projectOf))].flatMap((p) => ['--project', p]);
  const report = join(work, '.mutate-report.json');
  rmSync(report, { force: true });
  const r = run(
    process.execPath,
    [
      vitest,
      'run',
      ...projects,
      ...files,
      '--bail=1',
      `--testTimeout=${TEST_TIMEOUT_MS}`,
      '--reporter=json',
      `--outputFile=${report}`,
    ],
    { cwd: work, env: { ...process.env, ...(gpu ? stubEnv : {}) }, timeout: RUN_LIMIT_MS },
  );
  const output = `${r.stdout}${r.stderr}`;
  if (r.error?.code === 'ETIMEDOUT' || r.signal === 'SIGTERM') {
    return { passed: false, failures: [`no result within ${RUN_LIMIT_MS / 60_000} min (hung)`], output };
  }
  const failures = [];
  let ran = 0;
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'));
    ran = json.numPassedTests ?? 0;
    for (const file of json.testResults ?? []) {
      const name = file.name.startsWith(work) ? file.name.slice(work.length + 1) : file.name;
      for (const t of file.assertionResults ?? []) {
        if (t.status !== 'failed') continue;
        const why = String(t.failureMessages?.[0] ?? '')
          .split('\n')[0]
          .replace(/\x1b\[[0-9;]*m/g, '')
          .slice(0, 160);
        failures.push(`${[name, ...(t.ancestorTitles ?? []), t.title].join(' > ')}${why ? ` (${why})` : ''}`);
      }
      if (file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed')) {
        failures.push(`${name}: ${(file.message || 'the file failed').split('\n')[0]}`);
      }
    }
  } catch {
    // No report: the test process died (a crash is a kill too); say how.
    const clean = output.replace(/\x1b\[[0-9;]*m/g, '');
    const line = clean
      .split('\n')
      .map((l) => l.trim())
      .find((l) => /Segmentation|SIG[A-Z]+|Abort|double free|terminate called|Error:|FAIL/.test(l));
    failures.push(
      `vitest exited with ${r.status ?? r.signal} and no report (a test process died${line ? `: ${line.slice(0, 160)}` : ''})`,
    );
  }
  if (r.status !== 0 && failures.length === 0) failures.push(`vitest exited with ${r.status ?? r.signal}`);
  return { passed: r.status === 0 && failures.length === 0 && ran > 0, failures, output };
}

// Baseline: the same files, unmutated, must pass.
for (const gpu of [false, true]) {
  const files = [...new Set(order.filter((m) => (m.gpu === true) === gpu).flatMap((m) => m.tests))];
  if (files.length === 0) continue;
  const t = Date.now();
  const base = runTests(files, gpu);
  if (!base.passed) {
    console.error(base.output.slice(-6000));
    console.error(
      `mutate: the unmutated ${gpu ? 'GPU (stub) ' : ''}suite fails: ${base.failures.join('; ')}`,
    );
    cleanup();
    process.exit(2);
  }
  console.log(`mutate: baseline passes: ${files.join(' ')}${gpu ? ' (CUDA stub)' : ''} (${seconds(t)})`);
}

// ---- the mutations ----------------------------------------------------------

const originals = new Map();
const results = [];
for (const [i, m] of order.entries()) {
  const t = Date.now();
  const path = join(work, m.file);
  if (!originals.has(m.file)) originals.set(m.file, readFileSync(path, 'utf8'));
  const text = originals.get(m.file);
  const count = text.split(m.search).length - 1;
  let status;
  let detail;
  if (count !== 1) {
    status = 'STALE';
    detail = `search text found ${count} times in ${m.file} (update scripts/mutations.mjs)`;
  } else {
    writeFileSync(
      path,
      text.replace(m.search, () => m.replace),
    );
    const native = nativePackage(m);
    const bundled = bundledPackage(m);
    const outside = bundled !== null && m.tests.some((t) => !t.startsWith(`${bundled}/`));
    const b = native !== null ? build('build', native) : outside ? bundle(bundled) : { ok: true };
    if (!b.ok) {
      status = 'NO-BUILD';
      detail = b.log.split('\n').find((l) => /error/.test(l)) ?? 'the build failed';
    } else {
      const r = runTests(m.tests, m.gpu === true);
      status = r.passed ? 'SURVIVED' : 'KILLED';
      detail = r.passed ? `all of ${m.tests.join(' ')} passed` : `by ${r.failures.slice(0, 2).join('; ')}`;
    }
    // Restored; a native file is recompiled with the next native mutation's build.
    writeFileSync(path, text);
    const native2 = nativePackage(m);
    const bundled2 = bundledPackage(m);
    if (bundled2 !== null && native2 === null && m.tests.some((t) => !t.startsWith(`${bundled2}/`)))
      bundle(bundled2);
    // The package's build back to the original before another package's mutations run.
    const next = order[i + 1];
    if (native2 !== null && (next === undefined || nativePackage(next) !== native2)) build('build', native2);
  }
  results.push({ m, status });
  console.log(
    `${status.padEnd(8)} ${m.name.padEnd(28)} ${m.file.padEnd(22)} ${seconds(t).padStart(7)}  ${detail}`,
  );
}

const count = (s) => results.filter((r) => r.status === s).length;
const killed = count('KILLED');
const bad = results.length - killed;
console.log(
  `mutate: ${results.length} mutation(s): ${killed} killed, ${count('SURVIVED')} survived` +
    `${count('STALE') ? `, ${count('STALE')} stale` : ''}${count('NO-BUILD') ? `, ${count('NO-BUILD')} did not build` : ''}` +
    ` (${seconds(started)})`,
);
cleanup();
process.exit(bad === 0 ? 0 : 1);
