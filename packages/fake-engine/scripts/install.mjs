// @triton-node/fake-engine's install step (package.json "install"). It needs only Node.
//
// 1. A library that fits this machine is used as it is: the prebuilt one in
//    prebuilds/<platform>-<arch>/ (linux x64 and arm64, glibc), or a build
//    already in build/fake.
// 2. Otherwise it is built from source with node-gyp (g++, make, python3).
//    The fake engine is an optional dependency of triton-node: when it cannot
//    be built, the install says why and goes on without it (triton-node works
//    with real Triton; only its demo and tests need the fake).
//
// In the repository (where test/native exists) prebuilds are never used: the
// suite must run on the code as it is, so a missing build/fake is built, and
// a failed build fails the install. TRITON_NODE_BUILD_FROM_SOURCE=1 builds
// from source everywhere.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
const inRepository = existsSync(join(root, 'test', 'native'));
const platformName = `${process.platform}-${process.arch}`;
const MACHINES = { x64: 0x3e, arm64: 0xb7 };

function say(line) {
  process.stderr.write(`@triton-node/fake-engine: ${line}\n`);
}

/** Whether `file` is an ELF shared library for this CPU (a prebuild for another one does not count). */
function fits(file) {
  if (!existsSync(file)) return false;
  const header = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt32BE(0) === 0x7f454c46 && header.readUInt16LE(18) === MACHINES[process.arch];
}

function fromSourceRequested() {
  const flag = process.env.npm_config_build_from_source;
  return process.env.TRITON_NODE_BUILD_FROM_SOURCE === '1' || flag === 'true';
}

function nodeGypCommand() {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return [process.execPath, fromNpm];
  try {
    return [process.execPath, require.resolve('node-gyp/bin/node-gyp.js')];
  } catch {
    return ['node-gyp'];
  }
}

function buildFromSource() {
  say(
    inRepository ? 'building from source (repository checkout)' : `building from source for ${platformName}`,
  );
  const [command, ...args] = nodeGypCommand();
  const jobs = String(Math.min(availableParallelism(), 8));
  const child = spawnSync(command, [...args, 'rebuild', `--jobs=${jobs}`], { cwd: root, stdio: 'inherit' });
  if (child.status !== 0) {
    say('the build from source failed (node-gyp says why above): it needs g++ 8+ (C++17), make and python3.');
    if (inRepository) return child.status ?? 1;
    say('triton-node works without it on real Triton; its demo and tests need it.');
    return 0;
  }
  if (!inRepository) rmSync(join(root, 'build', 'Release', 'obj.target'), { recursive: true, force: true });
  return 0;
}

function main() {
  const built = join(root, 'build', 'fake', 'libtritonserver.so');
  const prebuilt = join(root, 'prebuilds', platformName, 'libtritonserver.so');
  if (!fromSourceRequested()) {
    if (fits(built)) return 0;
    if (!inRepository && fits(prebuilt)) return 0;
  }
  return buildFromSource();
}

process.exitCode = main();
