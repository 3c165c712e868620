/**
 * The release's dry run: the packages as a user gets them. scripts/release.mjs
 * packs @triton-node/fake-engine, triton-node and @triton-node/gateway (one
 * version), and they are installed into an empty project whose PATH has node
 * and sh and no compiler, make or python, with nothing from the network but
 * the npm registry (its cache, first).
 *
 * First triton-node alone (with its optional dependency, the fake engine):
 * the install must use the prebuilt binaries, the quickstart and `demo` must
 * run on the fake engine, `triton-node doctor` must run, `serve` must say
 * which package it needs, and a consumer must type-check. Then
 * @triton-node/gateway is added: the KServe and OpenAI routes must answer
 * from an application, and `triton-node serve` must serve. publint and
 * arethetypeswrong check the same tarballs.
 *
 * Packing runs each prepack in a copy of the repository (tsup, and the
 * prebuilt binaries for this machine's architecture, cached by a hash of
 * their sources in build/prebuild-cache: a second run compiles nothing).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipAllIf } from '@triton-node/test-support/helpers.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServing } from '../packages/gateway/test/serve-helpers.js';
// @ts-expect-error: a script of the repository, in JavaScript
import { packAll } from '../scripts/release.mjs';
import { NEWEST_TYPESCRIPT, type TypeCheck, typeCheckConsumer } from './consumer-types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(ROOT, 'packages', 'test-support', 'fixtures');
const GATEWAY_FIXTURES = join(ROOT, 'packages', 'gateway', 'test', 'fixtures');
const work = mkdtempSync(join(tmpdir(), 'triton-node-package-'));
const consumer = join(work, 'consumer');
const bin = join(work, 'bin');
const installed = join(consumer, 'node_modules', 'triton-node');
const installedFake = join(consumer, 'node_modules', '@triton-node', 'fake-engine');

/** npm's own CLI script (npm is a node program; PATH will not have it). */
function npmCli(): string {
  const fromNpm = process.env.npm_execpath;
  if (fromNpm?.endsWith('npm-cli.js')) return fromNpm;
  return join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
}

/** An environment without compilers: PATH is a folder with node and sh only. */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: bin, HOME: process.env.HOME ?? work, ...extra };
  for (const key of ['npm_config_cache', 'npm_config_nodedir', 'npm_config_registry', 'TMPDIR']) {
    if (process.env[key] !== undefined) env[key] = process.env[key];
  }
  return env;
}

interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
  output: string;
}

/**
 * Runs a command without blocking this worker's event loop (packing takes
 * minutes where it compiles, and a blocked worker misses vitest's calls).
 */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, timeout: 540_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += String(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += String(d);
    });
    const done = (status: number | null, error?: Error) =>
      resolve({ status, stdout, stderr, output: `${stdout}\n${stderr}${error ? `\n${error.message}` : ''}` });
    child.on('error', (err) => done(null, err));
    child.on('close', (code) => done(code));
  });
}

/**
 * Files of the repository as git sees them (tracked, and new files not
 * ignored), but node_modules: a checkout whose node_modules is a symlink
 * (a git worktree sharing one) lists it, since `node_modules/` in
 * .gitignore matches folders only; the copy links its own.
 */
function repositoryFiles(): string[] {
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split('\0')
    .filter((f) => f !== '' && f !== 'node_modules' && statSync(join(ROOT, f), { throwIfNoEntry: false }));
}

interface PackResult {
  name: string;
  filename: string;
  path: string;
  size: number;
  unpackedSize: number;
  files: Array<{ path: string; size: number }>;
}

/** Each published package's tarball, by name. */
const packed: Record<string, PackResult> = {};
const tarball = (name: string): string => packed[name]!.path;

/** scripts/release.mjs's dry run, in a copy of the repository (its prepacks write prebuilds/ and dist/). */
async function pack(): Promise<void> {
  const copy = join(work, 'repo');
  for (const file of repositoryFiles()) cpSync(join(ROOT, file), join(copy, file), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  const env = {
    ...process.env,
    TRITON_NODE_PREBUILD_ARCHES: process.arch,
    TRITON_NODE_PREBUILD_CACHE: join(ROOT, 'build', 'prebuild-cache'),
  };
  const script = join(copy, 'scripts', 'release.mjs');
  const child = await run(process.execPath, [script, '--dry-run', '--out', join(work, 'release')], {
    cwd: copy,
    env,
  });
  expect(child.status, child.output).toBe(0);
  const { packages } = JSON.parse(child.stdout) as { packages: PackResult[] };
  for (const p of packages) packed[p.name] = p;
}

function npmInstall(...specs: string[]): Promise<RunResult> {
  const args = [
    npmCli(),
    'install',
    ...specs,
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--foreground-scripts',
  ];
  return run(process.execPath, args, { cwd: consumer, env: bareEnv() });
}

/** triton-node alone: with the fake engine, its optional dependency (not on the registry yet: the tarball). */
function install(): Promise<RunResult> {
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  mkdirSync(consumer);
  cpSync(join(FIXTURES, 'consumer-package.json'), join(consumer, 'package.json'));
  return npmInstall(tarball('@triton-node/fake-engine'), tarball('triton-node'));
}

/** Bytes under `dir`, symlinks not followed. */
function sizeOf(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += sizeOf(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

let installResult: RunResult;

let newestCompiler: Promise<string> | undefined;
/**
 * The newest TypeScript's tsc, installed once from the registry (its cache
 * first) outside the consumer, whose node_modules stays as the install made it.
 */
function newestTsc(): Promise<string> {
  newestCompiler ??= (async () => {
    const dir = join(work, 'typescript-newest');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true }));
    const args = [npmCli(), 'install', NEWEST_TYPESCRIPT, '--prefer-offline', '--no-audit', '--no-fund'];
    const added = await run(process.execPath, args, { cwd: dir, env: bareEnv() });
    expect(added.status, added.output).toBe(0);
    return join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
  })();
  return newestCompiler;
}

/** Every setting's errors at once (TypeScript 7's beside 5.8's), and both of TypeScript 7's checks ran. */
function expectAllPass(results: Record<string, TypeCheck>): void {
  const failed = Object.entries(results).filter(([, r]) => r.status !== 0 || r.output !== '');
  expect(
    Object.fromEntries(failed.map(([setting, r]) => [setting, `exit ${r.status}: ${r.output}`])),
    'tsc of a consumer of the installed tarballs',
  ).toEqual({});
  expect(Object.keys(results).filter((s) => s.includes('tsc --init'))).toHaveLength(2);
}

describe('the package, packed and installed where there is no compiler', () => {
  // A machine with node but no npm (the GPU machine) cannot pack: skip, saying so.
  skipAllIf(existsSync(npmCli()) ? false : `no npm here (looked for ${npmCli()})`);
  beforeAll(async () => {
    if (!existsSync(npmCli())) return;
    await pack();
    installResult = await install();
  }, 600_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('packs three packages of one version, each with its LICENSE and no source maps, tests or benchmarks', () => {
    expect(Object.keys(packed)).toEqual(['@triton-node/fake-engine', 'triton-node', '@triton-node/gateway']);
    const versions = new Set(
      Object.values(packed).map((p) => p.filename.replace(/^.*-(\d+\.\d+\.\d+)\.tgz$/, '$1')),
    );
    expect(versions.size).toBe(1);
    for (const p of Object.values(packed)) {
      const paths = p.files.map((f) => f.path);
      expect(paths, p.name).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
      expect(paths.filter((f) => f.endsWith('.map'))).toEqual([]);
      expect(paths.filter((f) => /^(bench|test|docs\/bench)\//.test(f))).toEqual([]);
      console.log(`${p.name}: ${p.size} bytes, ${p.unpackedSize} unpacked, ${paths.length} files`);
    }
  });

  it('triton-node ships the prebuilt addon and the CLI once; the fake engine its prebuilt library', () => {
    const paths = packed['triton-node']!.files.map((f) => f.path);
    expect(paths).toContain(`prebuilds/linux-${process.arch}/triton-node.glibc.node`);
    expect(paths.filter((p) => p.endsWith('libtritonserver.so'))).toEqual([]);
    expect(paths.filter((p) => /(^|\/)cli\.(c?js)$/.test(p))).toEqual(['dist/cli.js']);
    expect(paths).toEqual(
      expect.arrayContaining([
        'scripts/install.mjs',
        'examples/quickstart.mjs',
        'binding.gyp',
        'bin/triton-node.js',
      ]),
    );
    const fake = packed['@triton-node/fake-engine']!.files.map((f) => f.path);
    expect(fake).toContain(`prebuilds/linux-${process.arch}/libtritonserver.so`);
    expect(fake).toEqual(
      expect.arrayContaining(['index.cjs', 'index.d.cts', 'binding.gyp', 'include/triton_capi.h']),
    );
    const gateway = packed['@triton-node/gateway']!.files.map((f) => f.path);
    expect(gateway).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/index.cjs',
        'dist/index.d.ts',
        'dist/cli.js',
        'proto/kserve_v2.proto',
      ]),
    );
  });

  it('publint finds nothing, not even a suggestion', async () => {
    const { publint } = await import('publint');
    const { formatMessage } = await import('publint/utils');
    for (const name of Object.keys(packed)) {
      const bytes = readFileSync(tarball(name));
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      const result = await publint({ pack: { tarball: buffer }, level: 'suggestion', strict: true });
      expect(
        result.messages.map((m) => formatMessage(m, result.pkg)),
        name,
      ).toEqual([]);
    }
  });

  it('arethetypeswrong finds no problem for node10, node16 (CJS and ESM) and bundlers', async () => {
    const attw = join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js');
    // The gateway's ./cli is for triton-node's command, which is ESM: it has no CommonJS build.
    const options: Record<string, string[]> = {
      'triton-node': [],
      '@triton-node/gateway': ['--exclude-entrypoints', './cli'],
    };
    for (const [name, extra] of Object.entries(options)) {
      const child = await run(process.execPath, [attw, tarball(name), '--format', 'ascii', ...extra], {
        cwd: work,
        env: process.env,
      });
      expect(child.status, `${name}: ${child.output}`).toBe(0);
      expect(child.stdout).toContain('No problems found');
    }
  });

  it('installs from the prebuilt binaries: no compiler runs, no build/ is left', () => {
    expect(installResult.status, installResult.output).toBe(0);
    expect(installResult.output).toContain(
      `triton-node: using prebuilds/linux-${process.arch}/triton-node.glibc.node`,
    );
    expect(readdirSync(installed)).not.toContain('build');
    expect(readdirSync(installedFake)).not.toContain('build');
  });

  it('pulls in at most 3 runtime dependencies, under 2 MB besides triton-node and its fake engine', () => {
    const modules = readdirSync(join(consumer, 'node_modules')).filter((n) => !n.startsWith('.'));
    const others = modules.filter((n) => n !== 'triton-node' && n !== '@triton-node');
    const bytes = others.reduce((sum, n) => sum + sizeOf(join(consumer, 'node_modules', n)), 0);
    console.log(
      `consumer node_modules: ${others.length} dependencies (${others.join(', ')}), ${bytes} bytes; ` +
        `triton-node itself ${sizeOf(installed)} bytes`,
    );
    expect(others.length).toBeLessThanOrEqual(3);
    expect(bytes).toBeLessThan(2_000_000);
  });

  it('runs the quickstart from the installed package on the fake engine', async () => {
    const quickstart = join(installed, 'examples', 'quickstart.mjs');
    const child = await run(process.execPath, [quickstart], { cwd: consumer, env: bareEnv() });
    expect(child.status, child.output).toBe(0);
    expect(child.stdout).toContain('identity_fp32 v1: OUTPUT0 FP32 [1,4] = [ 1, 2, 3, 4 ]');
  });

  it('loads from CommonJS too', async () => {
    const code = "const t = require('triton-node'); console.log(typeof t.Server.create, typeof t.doctor)";
    const child = await run(process.execPath, ['-e', code], { cwd: consumer, env: bareEnv() });
    expect(child.stdout.trim(), child.output).toBe('function function');
  });

  it('runs `triton-node doctor --json`, which says the addon is a prebuild', async () => {
    const cli = join(consumer, 'node_modules', '.bin', 'triton-node');
    const child = await run(process.execPath, [cli, 'doctor', '--json'], { cwd: consumer, env: bareEnv() });
    const report = JSON.parse(child.stdout) as {
      ok: boolean;
      addon: { kind: string; fakeEngine: string };
      checks: Array<{ status: string; topic: string }>;
    };
    expect(report.addon.kind).toBe('prebuild');
    expect(report.addon.fakeEngine).toBe(
      join(installedFake, 'prebuilds', `linux-${process.arch}`, 'libtritonserver.so'),
    );
    // No Triton in the consumer: exit code 3 when that is all that fails (the fake engine works).
    const onlyTriton = report.checks.filter((c) => c.status === 'fail').every((c) => c.topic === 'library');
    expect(child.status).toBe(report.ok ? 0 : onlyTriton ? 3 : 1);
  });

  it('`npx triton-node demo` runs the packaged example models on the fake engine and says so', async () => {
    const args = [npmCli(), 'exec', '--no', '--', 'triton-node', 'demo'];
    const child = await run(process.execPath, args, { cwd: consumer, env: bareEnv() });
    expect(child.status, child.output).toBe(0);
    expect(child.stdout).toContain("on the FAKE ENGINE (triton-node's own libtritonserver.so, not Triton)");
    expect(child.stdout).toContain(join(installed, 'examples', 'models'));
    expect(child.stdout).toContain('identity_fp32: INPUT0 [1,2,3,4] -> OUTPUT0 FP32 [1,4] = [1,2,3,4]');
    expect(child.stdout).toContain('repeat_int32: IN [10,20,30] -> 3 responses, OUT = [10,20,30]');
  });

  it('`npx triton-node doctor` with no Triton says how to try without it and exits 3', async () => {
    const args = [npmCli(), 'exec', '--no', '--', 'triton-node', 'doctor'];
    const child = await run(process.execPath, args, { cwd: consumer, env: bareEnv() });
    expect(child.status, child.output).toBe(3);
    expect(child.stdout).toContain('npx triton-node demo');
    expect(child.stdout).toContain('npx triton-node serve --fake-engine');
    const version = await run(
      process.execPath,
      [npmCli(), 'exec', '--no', '--', 'triton-node', '--version'],
      {
        cwd: consumer,
        env: bareEnv(),
      },
    );
    expect(version.stdout.trim(), version.output).toBe(
      JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version,
    );
  });

  it('type-checks a consumer of triton-node and /testing alone: strict, skipLibCheck false, nodenext, bundler, no types; and TypeScript 7’s tsc --init', async () => {
    const newest = await newestTsc();
    expectAllPass(await typeCheckConsumer(join(consumer, 'typecheck-alone'), { gateway: false, newest }));
  }, 240_000);

  it('`triton-node serve` without @triton-node/gateway exits 2 naming the package to install', async () => {
    const cli = join(consumer, 'node_modules', '.bin', 'triton-node');
    const child = await run(process.execPath, [cli, 'serve', '--fake-engine'], {
      cwd: consumer,
      env: bareEnv(),
    });
    expect(child.status, child.output).toBe(2);
    expect(child.stderr).toContain('`serve` is in the package @triton-node/gateway, not installed here.');
    expect(child.stderr).toContain('npm install @triton-node/gateway');
  });

  it('adds @triton-node/gateway to the same project, from its tarball, with nothing to build', async () => {
    const added = await npmInstall(tarball('@triton-node/gateway'));
    expect(added.status, added.output).toBe(0);
    expect(readdirSync(join(consumer, 'node_modules', '@triton-node')).sort()).toEqual([
      'fake-engine',
      'gateway',
    ]);
  });

  it('loads @triton-node/gateway (ESM and CommonJS) without its optional peers, which are not installed', async () => {
    const modules = readdirSync(join(consumer, 'node_modules'));
    for (const peer of ['pino', '@grpc']) expect(modules).not.toContain(peer);
    const esm = "const g = await import('@triton-node/gateway'); console.log(typeof g.createGateway)";
    const fromEsm = await run(process.execPath, ['--input-type=module', '-e', esm], {
      cwd: consumer,
      env: bareEnv(),
    });
    expect(fromEsm.stdout.trim(), fromEsm.output).toBe('function');
    const cjs = "console.log(typeof require('@triton-node/gateway').createGateway)";
    const fromCjs = await run(process.execPath, ['-e', cjs], { cwd: consumer, env: bareEnv() });
    expect(fromCjs.stdout.trim(), fromCjs.output).toBe('function');
  });

  it('serves the KServe v2 routes from an application, with Triton’s errors as their statuses', async () => {
    const app = join(consumer, 'gateway-app.mjs');
    cpSync(join(GATEWAY_FIXTURES, 'gateway-consumer.mjs'), app);
    const child = await run(process.execPath, [app], { cwd: consumer, env: bareEnv() });
    expect(child.status, child.output).toBe(0);
    const [ok, badShape, unknown] = child.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: number; body: { error?: string; outputs?: unknown } });
    expect(ok!.status).toBe(200);
    expect(ok!.body.outputs).toEqual([{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }]);
    expect(badShape!.status, badShape!.body.error).toBe(400);
    expect([400, 404]).toContain(unknown!.status);
    expect(unknown!.body.error).toMatch(/no_such_model/);
  });

  it('answers a NOT_FOUND of the library on the OpenAI routes as code not_found, from ESM and CommonJS', async () => {
    // The routes tell a library error by `instanceof TritonError`: this fails
    // when the gateway bundle carries a TritonError of its own.
    const models = join(installed, 'examples', 'models');
    for (const fixture of ['openai-consumer.mjs', 'openai-consumer.cjs']) {
      cpSync(join(GATEWAY_FIXTURES, fixture), join(consumer, fixture));
      const child = await run(process.execPath, [fixture, models], { cwd: consumer, env: bareEnv() });
      expect(child.status, child.output).toBe(0);
      const answer = JSON.parse(child.stdout.trim()) as { status: number; body: { error: { code: string } } };
      expect(answer.status, `${fixture}: ${child.output}`).toBe(404);
      expect(answer.body.error.code, `${fixture}: ${child.output}`).toBe('not_found');
    }
  });

  it('type-checks a consumer of triton-node, /testing and the gateway: strict, skipLibCheck false, nodenext, bundler, no types; and TypeScript 7’s tsc --init', async () => {
    const results = await typeCheckConsumer(join(consumer, 'typecheck'), {
      gateway: true,
      newest: await newestTsc(),
    });
    expectAllPass(results);
  }, 240_000);

  it('`triton-node serve` without the gateway’s peers exits 1 naming them and the npm command', async () => {
    const cli = join(consumer, 'node_modules', '.bin', 'triton-node');
    const args = [cli, 'serve', '--repository', join(installed, 'examples', 'models')];
    const child = await run(process.execPath, args, { cwd: consumer, env: bareEnv() });
    expect(child.status, child.output).toBe(1);
    expect(child.stderr).toContain(
      "triton-node serve needs 'pino', '@grpc/grpc-js' and '@grpc/proto-loader' (optional peer dependencies of @triton-node/gateway)",
    );
    expect(child.stderr).toContain('npm install pino @grpc/grpc-js @grpc/proto-loader');
  });

  it('`npx triton-node serve --fake-engine` serves the example models (pino installed), and stops with npx', async () => {
    // Last but one: the test above needs the peers absent.
    const added = await run(
      process.execPath,
      [npmCli(), 'install', 'pino', '--prefer-offline', '--no-audit', '--no-fund'],
      {
        cwd: consumer,
        env: bareEnv(),
      },
    );
    expect(added.status, added.output).toBe(0);
    const args = [npmCli(), 'exec', '--no', '--', 'triton-node', 'serve', '--fake-engine', '--no-grpc'];
    const running = await startServing(
      process.execPath,
      [...args, '--host', '127.0.0.1', '--http-port', '0'],
      bareEnv(),
      consumer,
    );
    const serving = running.lines.find((l) => l.msg === 'serving')!;
    expect(serving).toMatchObject({ engine: 'fake', models: join(installed, 'examples', 'models') });
    const res = await request(`http://127.0.0.1:${running.httpPort}/v2/models/identity_fp32/infer`, {
      method: 'POST',
      body: JSON.stringify({
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }],
      }),
    });
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data).toEqual([
      1, 2, 3,
    ]);
    running.child.kill('SIGTERM'); // to npm, which does not pass it on
    await running.logged('stopped');
    await running.closed;
  });

  it('a build from source with no tools says which are missing and how to get them', async () => {
    const script = join(installed, 'scripts', 'install.mjs');
    const env = bareEnv({ TRITON_NODE_BUILD_FROM_SOURCE: '1' });
    const child = await run(process.execPath, [script], { cwd: installed, env });
    expect(child.status).toBe(1);
    expect(child.stderr).toContain('`make` (node-gyp drives the build with it)');
    expect(child.stderr).toContain('`g++`, a C++17 compiler');
    expect(child.stderr).toContain('`python3`');
    expect(child.stderr).toContain('npm rebuild triton-node');
    expect(child.stderr).toContain('apt-get install -y g++ make python3');
  });
});
