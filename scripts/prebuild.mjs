// Prebuilt binaries for the package npm runs this in (its working folder):
// for linux-x64 and linux-arm64 (glibc), into prebuilds/linux-<arch>/.
// - triton-node: the addon, made with prebuildify (triton-node.glibc.node,
//   found by node-gyp-build);
// - @triton-node/fake-engine: libtritonserver.so, made with node-gyp
//   (found by the package's index.js).
//
//   node ../../scripts/prebuild.mjs [--arch x64] [--arch arm64]   build them (default: both)
//   node ../../scripts/prebuild.mjs --pack                        what `npm pack` runs (prepack)
//
// Each build runs in a temporary copy of exactly the sources the package
// ships (so the package's own source build is proven too, and the
// repository's build/ is left alone). arm64 is cross-built on an x64 host
// with Debian's cross toolchain (apt-get install g++-aarch64-linux-gnu).
//
// Builds are cached by a hash of their sources in build/prebuild-cache (or
// TRITON_NODE_PREBUILD_CACHE): packing twice compiles once. --pack keeps
// only prebuilds of the current sources: an architecture that cannot be
// built here is left out with a warning (the package then builds from source
// on it), or fails the pack when TRITON_NODE_RELEASE=1.
// TRITON_NODE_PREBUILD_ARCHES=x64 limits the architectures (the pack test).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = process.cwd();
const require = createRequire(join(root, 'package.json'));
const NAME = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name;
/** What each package ships as sources (walked from these folders) and the binary it prebuilds. */
const PACKAGES = {
  'triton-node': { dirs: ['native'], binary: 'triton-node.glibc.node' },
  '@triton-node/fake-engine': { dirs: ['src', 'include'], binary: 'libtritonserver.so' },
};
if (!(NAME in PACKAGES))
  throw new Error(`prebuild: run it in packages/triton-node or packages/fake-engine, not ${root}`);
const { dirs: SOURCE_DIRS, binary: BINARY } = PACKAGES[NAME];

/** Cross toolchain prefix and ELF e_machine of each target. */
const TARGETS = {
  x64: { triple: 'x86_64-linux-gnu', machine: 0x3e },
  arm64: { triple: 'aarch64-linux-gnu', machine: 0xb7 },
};

function say(line) {
  process.stderr.write(`prebuild: ${line}\n`);
}

/** The files the package ships for a source build (package.json "files"), relative to the root. */
function shippedSources() {
  const out = ['binding.gyp', 'package.json'];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else out.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) walk(dir);
  return out.sort();
}

function sourceHash(arch, files) {
  const hash = createHash('sha256');
  hash.update(`${arch}\n${require('node-addon-api/package.json').version}\n`);
  for (const file of files) {
    hash.update(`${file}\n`);
    // package.json changes with every version bump; only its name matters to the build.
    hash.update(file === 'package.json' ? NAME : readFileSync(join(root, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

function onPath(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).status === 0;
}

/** Compiler settings for `arch`, or the tools that are missing to build it here. */
function toolchain(arch) {
  if (arch === process.arch) return { env: {}, strip: 'strip', missing: onPath('strip') ? [] : ['strip'] };
  const { triple } = TARGETS[arch];
  const tools = { CC: `${triple}-gcc`, CXX: `${triple}-g++`, LINK: `${triple}-g++`, AR: `${triple}-ar` };
  const strip = `${triple}-strip`;
  const missing = [...Object.values(tools), strip].filter((t, i, all) => all.indexOf(t) === i && !onPath(t));
  return { env: tools, strip, missing };
}

/** Node's own headers (node-gyp would download them otherwise, and this machine may not reach that). */
function nodeHeadersEnv() {
  if (process.env.npm_config_nodedir) return {};
  const prefix = dirname(dirname(process.execPath));
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? { npm_config_nodedir: prefix } : {};
}

/** The ELF machine of a file (e_machine, bytes 18-19, little-endian), or -1. */
function elfMachine(file) {
  const header = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  readSync(fd, header, 0, 20, 0);
  if (header.readUInt32BE(0) !== 0x7f454c46) return -1;
  return header.readUInt16LE(18);
}

function runPrebuildify(arch, tools, work) {
  const bin = require.resolve('prebuildify/bin.js');
  const args = [bin, '--napi', '--strip', '--tag-libc', `--arch=${arch}`, `--strip-bin=${tools.strip}`];
  const env = { ...process.env, ...nodeHeadersEnv(), ...tools.env, JOBS: '2' };
  say(`building ${arch} in ${work}`);
  const child = spawnSync(process.execPath, args, { cwd: work, env, stdio: 'inherit' });
  if (child.status !== 0) throw new Error(`prebuildify for ${arch} failed (exit ${child.status})`);
}

/** The fake engine is no addon: node-gyp builds it, and its library is stripped into prebuilds/. */
function runNodeGyp(arch, tools, work) {
  const gyp = require.resolve('node-gyp/bin/node-gyp.js');
  const env = { ...process.env, ...nodeHeadersEnv(), ...tools.env };
  say(`building ${arch} in ${work}`);
  const child = spawnSync(process.execPath, [gyp, 'rebuild', `--arch=${arch}`, '-j', '2'], {
    cwd: work,
    env,
    stdio: 'inherit',
  });
  if (child.status !== 0) throw new Error(`node-gyp for ${arch} failed (exit ${child.status})`);
  const out = join(work, 'prebuilds', `linux-${arch}`);
  mkdirSync(out, { recursive: true });
  cpSync(join(work, 'build', 'fake', BINARY), join(out, BINARY));
  const strip = spawnSync(tools.strip, ['--strip-unneeded', join(out, BINARY)], { stdio: 'inherit' });
  if (strip.status !== 0) throw new Error(`${tools.strip} failed on ${BINARY}`);
}

/** Builds `arch` in a temporary copy of the shipped sources; returns the folder holding the two binaries. */
function build(arch, files, tools) {
  const work = mkdtempSync(join(tmpdir(), `triton-node-prebuild-${arch}-`));
  try {
    for (const file of files) cpSync(join(root, file), join(work, file));
    // The workspace keeps the packages at its root: the build finds node-addon-api there.
    symlinkSync(dirname(dirname(require.resolve('node-addon-api/package.json'))), join(work, 'node_modules'));
    if (NAME === 'triton-node') runPrebuildify(arch, tools, work);
    else runNodeGyp(arch, tools, work);
    const out = join(work, 'prebuilds', `linux-${arch}`);
    for (const file of [BINARY]) {
      const machine = elfMachine(join(out, file));
      if (machine !== TARGETS[arch].machine) {
        throw new Error(`${file} for ${arch} has ELF machine 0x${machine.toString(16)}: wrong compiler?`);
      }
    }
    const cached = join(cacheDir(), `${arch}-${sourceHash(arch, files)}`);
    rmSync(cached, { recursive: true, force: true });
    mkdirSync(dirname(cached), { recursive: true });
    writeFileSync(join(cacheDir(), 'README'), 'Prebuilt binaries by source hash (scripts/prebuild.mjs).\n');
    cpSync(out, cached, { recursive: true });
    return cached;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function cacheDir() {
  return process.env.TRITON_NODE_PREBUILD_CACHE || join(root, 'build', 'prebuild-cache');
}

function cachedBuild(arch, files) {
  const dir = join(cacheDir(), `${arch}-${sourceHash(arch, files)}`);
  return existsSync(join(dir, BINARY)) ? dir : null;
}

function install(arch, from) {
  const dest = join(root, 'prebuilds', `linux-${arch}`);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  cpSync(join(from, BINARY), join(dest, BINARY));
  say(`prebuilds/linux-${arch}: ${BINARY} (${relative(root, from)})`);
}

/** Builds (or takes from the cache) one architecture; false when it cannot be built here. */
function prebuild(arch, files, { force }) {
  const cached = force ? null : cachedBuild(arch, files);
  if (cached) {
    install(arch, cached);
    return true;
  }
  const tools = toolchain(arch);
  if (tools.missing.length > 0) {
    const fix = arch === 'arm64' ? 'apt-get install -y g++-aarch64-linux-gnu' : 'install g++ and binutils';
    say(`cannot build ${arch} here: ${tools.missing.join(', ')} not on PATH (${fix})`);
    return false;
  }
  install(arch, build(arch, files, tools));
  return true;
}

function main() {
  const { values } = parseArgs({
    options: {
      arch: { type: 'string', multiple: true },
      pack: { type: 'boolean' },
      force: { type: 'boolean' },
    },
  });
  const limit = process.env.TRITON_NODE_PREBUILD_ARCHES?.split(',').filter(Boolean);
  const arches = values.arch ?? limit ?? Object.keys(TARGETS);
  for (const arch of arches) if (!(arch in TARGETS)) throw new Error(`unknown --arch ${arch}: x64 or arm64`);
  const files = shippedSources();
  let failed = false;
  if (values.pack) rmSync(join(root, 'prebuilds'), { recursive: true, force: true });
  for (const arch of arches) {
    if (prebuild(arch, files, { force: values.force === true })) continue;
    failed = true;
    if (values.pack) say(`the package will have no ${arch} prebuild: it builds from source there`);
  }
  const strict = !values.pack || process.env.TRITON_NODE_RELEASE === '1';
  if (failed && strict) process.exitCode = 1;
}

main();
