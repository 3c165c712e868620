// triton-node's install step (package.json "install"). It needs only Node.
//
// 1. A binary that fits this machine is used as it is: a prebuilt one from
//    prebuilds/<platform>-<arch>/ (linux x64 and arm64, glibc), or a build
//    already in build/Release. node-gyp-build picks it, here and at run time,
//    so an install with --ignore-scripts works as well wherever one fits.
// 2. Otherwise the addon is built from source with
//    node-gyp, after checking that the tools it needs are there: when one is
//    missing, the error names it and says how to get it, instead of make's
//    or node-gyp's own messages.
//
// In the repository (where test/ exists) prebuilds are never
// used: the suite must run on the code as it is, so a missing build/ is built.
// TRITON_NODE_BUILD_FROM_SOURCE=1 or `npm install --build-from-source`
// builds from source everywhere.
import { spawnSync } from 'node:child_process';
import { constants, accessSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
const inRepository = existsSync(join(root, 'test'));
const platformName = `${process.platform}-${process.arch}`;

function say(line) {
  process.stderr.write(`triton-node: ${line}\n`);
}

function fromSourceRequested() {
  const flag = process.env.npm_config_build_from_source;
  return process.env.TRITON_NODE_BUILD_FROM_SOURCE === '1' || flag === 'true' || flag === 'triton-node';
}

/** The binary node-gyp-build would load, or null; in the repository only a build of ours counts. */
function existingBinary() {
  if (inRepository) {
    const built = join(root, 'build', 'Release', 'triton_node.node');
    return existsSync(built) ? built : null;
  }
  try {
    return require('node-gyp-build').resolve(root);
  } catch {
    return null;
  }
}

/** Loads the binary in a child process (a binary for another glibc or CPU fails here, not later). */
function loads(binary) {
  const child = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(binary)})`], {
    encoding: 'utf8',
  });
  if (child.status === 0) return true;
  say(`${binary} does not load here: ${(child.stderr || '').trim().split('\n')[0]}`);
  return false;
}

/** The first of `names` that is an executable file on PATH (a name with a slash is checked as it is). */
function onPath(names) {
  const dirs = (process.env.PATH || '').split(delimiter).filter(Boolean);
  for (const name of names) {
    const candidates = name.includes('/') ? [name] : dirs.map((d) => join(d, name));
    for (const file of candidates) {
      try {
        accessSync(file, constants.X_OK);
        return file;
      } catch {
        // not there, or not executable
      }
    }
  }
  return null;
}

function firstWord(value) {
  return value ? value.trim().split(/\s+/)[0] : undefined;
}

/** What node-gyp needs that is missing, each with what it is for. */
function missingTools() {
  const missing = [];
  const make = firstWord(process.env.MAKE) ?? 'make';
  if (!onPath([make])) missing.push(`\`${make}\` (node-gyp drives the build with it)`);
  const cxx = firstWord(process.env.CXX) ?? 'g++';
  if (!onPath([cxx])) missing.push(`\`${cxx}\`, a C++17 compiler (or set CXX to yours)`);
  const python = firstWord(process.env.PYTHON ?? process.env.npm_config_python);
  if (!onPath(python ? [python] : ['python3', 'python'])) {
    missing.push('`python3` (node-gyp runs gyp with it)');
  }
  try {
    require.resolve('node-addon-api');
  } catch {
    missing.push('the node-addon-api package (a dependency of triton-node: reinstall it)');
  }
  return missing;
}

function printCannotBuild(missing) {
  const why = inRepository
    ? 'the repository builds from source'
    : fromSourceRequested()
      ? 'a build from source was asked for (--build-from-source or TRITON_NODE_BUILD_FROM_SOURCE=1)'
      : `no prebuilt binary fits ${platformName}`;
  const lines = [
    `${why}, and it cannot be built here. Missing:`,
    ...missing.map((m) => `  - ${m}`),
    'To fix it, install the build tools and run `npm rebuild triton-node`:',
    '  Debian/Ubuntu: apt-get install -y g++ make python3',
    '  RHEL/Fedora:   dnf install -y gcc-c++ make python3',
    '  Alpine (musl has no prebuilt binary): apk add g++ make python3',
    fromSourceRequested() && !inRepository
      ? 'Or leave the build from source out: the prebuilt binary for this machine needs no tools'
      : 'Or install on linux-x64 or linux-arm64 with glibc, where prebuilt binaries need no tools',
    '(a multi-stage Dockerfile can also build in a full image and copy node_modules to a slim one).',
  ];
  for (const line of lines) say(line);
}

/** node-gyp: the one npm runs install scripts with, else ours, else the one on PATH. */
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
  const missing = missingTools();
  if (missing.length > 0) {
    printCannotBuild(missing);
    return 1;
  }
  say(
    inRepository ? 'building from source (repository checkout)' : `building from source for ${platformName}`,
  );
  const [command, ...args] = nodeGypCommand();
  const jobs = String(Math.min(availableParallelism(), 8));
  const child = spawnSync(command, [...args, 'rebuild', `--jobs=${jobs}`], { cwd: root, stdio: 'inherit' });
  if (child.status !== 0) {
    say('the build from source failed (node-gyp says why above).');
    say('It needs g++ 8+ (C++17), make, python3 and Node.js headers: node-gyp reads them from');
    say('npm_config_nodedir when set, else downloads them once. Then run `npm rebuild triton-node`.');
    return child.status ?? 1;
  }
  // An install keeps the addon, not the objects behind it.
  if (!inRepository) rmSync(join(root, 'build', 'Release', 'obj.target'), { recursive: true, force: true });
  return 0;
}

function main() {
  if (!fromSourceRequested()) {
    const binary = existingBinary();
    if (binary !== null && loads(binary)) {
      if (!inRepository) say(`using ${binary.slice(root.length + 1)}`);
      return 0;
    }
  }
  return buildFromSource();
}

process.exitCode = main();
