// One release of every published package: @triton-node/fake-engine,
// triton-node and @triton-node/gateway share one version, pinned in each
// other's manifests, and are packed (and published) together, in that order.
//
//   node scripts/release.mjs --version 0.2.0        set the version everywhere (and the pins)
//   node scripts/release.mjs --check                check that every package has one version, pinned
//   node scripts/release.mjs --dry-run [--out DIR]  check, then pack each into DIR (default release/);
//                                                   what was packed, as JSON, on stdout
//   node scripts/release.mjs --publish-packed FILE  npm publish the tarballs a dry run listed (its
//                                                   JSON in FILE), in order, with provenance
//
// Packing runs each package's prepack: tsup, and for triton-node and the fake
// engine their prebuilt binaries (scripts/prebuild.mjs, cached by a hash of
// their sources). docs/releasing.md describes the process;
// .github/workflows/release.yml runs it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/** The published packages, in the order they are packed and published (dependencies first). */
export const PUBLISHED = [
  { name: '@triton-node/fake-engine', dir: 'packages/fake-engine' },
  { name: 'triton-node', dir: 'packages/triton-node' },
  { name: '@triton-node/gateway', dir: 'packages/gateway' },
];
const ALL = [...PUBLISHED, { name: '@triton-node/test-support', dir: 'packages/test-support' }];
const PINS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'devDependencies'];

function say(line) {
  process.stderr.write(`release: ${line}\n`);
}

function manifest(root, dir) {
  const file = join(root, dir, 'package.json');
  return { file, json: JSON.parse(readFileSync(file, 'utf8')) };
}

/** Every disagreement: a package at another version, or a pin of a sibling that is not exactly it. */
export function versionProblems(root) {
  const problems = [];
  const version = manifest(root, 'packages/triton-node').json.version;
  const names = new Set(ALL.map((p) => p.name));
  for (const { dir } of ALL) {
    const { json } = manifest(root, dir);
    if (json.version !== version)
      problems.push(`${json.name} is at ${json.version}, triton-node at ${version}`);
    for (const field of PINS) {
      for (const [dep, range] of Object.entries(json[field] ?? {})) {
        if (names.has(dep) && range !== version)
          problems.push(`${json.name} ${field} pins ${dep} to ${range}, not ${version}`);
      }
    }
  }
  return { version, problems };
}

/** Sets `version` on every package and every pin between them. */
export function setVersion(root, version) {
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) throw new Error(`not a version: ${version}`);
  const names = new Set(ALL.map((p) => p.name));
  for (const { dir } of [...ALL, { dir: '.' }, { dir: 'bench' }]) {
    const { file, json } = manifest(root, dir);
    json.version = version;
    for (const field of PINS)
      for (const dep of Object.keys(json[field] ?? {})) if (names.has(dep)) json[field][dep] = version;
    writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  }
}

function npm(args, cwd, env = process.env) {
  const cli = process.env.npm_execpath;
  const [command, prefix] = cli?.endsWith('.js') ? [process.execPath, [cli]] : ['npm', []];
  return spawnSync(command, [...prefix, ...args], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** Packs every published package into `out`; returns npm's JSON for each (filename, size, files). */
export function packAll(root, out) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const results = [];
  for (const { name } of PUBLISHED) {
    say(`packing ${name}`);
    const child = npm(['pack', '--json', '--workspace', name, '--pack-destination', out], root);
    if (child.status !== 0) throw new Error(`npm pack of ${name} failed:\n${child.stdout}\n${child.stderr}`);
    // Lifecycle scripts print to the same stdout; the JSON is the last thing there.
    const json = child.stdout.slice(child.stdout.lastIndexOf('\n[\n') + 1);
    const [result] = JSON.parse(json.startsWith('[') ? json : child.stdout);
    results.push({ name, ...result, path: join(out, result.filename) });
  }
  return results;
}

/** Publishes what a dry run packed (its JSON), dependencies first; stops at the first failure. */
function publishPacked(root, file) {
  const { version, packages } = JSON.parse(readFileSync(file, 'utf8'));
  const order = PUBLISHED.map((p) => packages.find((q) => q.name === p.name));
  if (order.some((p) => p === undefined))
    throw new Error(`${file} does not list every package: ${PUBLISHED.map((p) => p.name)}`);
  for (const { name, path } of order) {
    say(`publishing ${name} ${version}`);
    const child = npm(['publish', path, '--provenance', '--access', 'public'], root);
    process.stderr.write(child.stderr);
    if (child.status !== 0) return child.status ?? 1;
  }
  return 0;
}

function main() {
  const { values } = parseArgs({
    options: {
      version: { type: 'string' },
      check: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      'publish-packed': { type: 'string' },
      root: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const root = resolve(values.root ?? dirname(dirname(new URL(import.meta.url).pathname)));
  if (values.version) {
    setVersion(root, values.version);
    say(`every package is at ${values.version}`);
    if (!values['dry-run']) return 0;
  }
  if (values['publish-packed']) return publishPacked(root, resolve(values['publish-packed']));
  const { version, problems } = versionProblems(root);
  if (problems.length > 0) {
    for (const p of problems) say(p);
    say('run `node scripts/release.mjs --version X.Y.Z` to set one version everywhere');
    return 1;
  }
  say(`every package is at ${version}`);
  if (!values['dry-run']) return 0;
  const out = resolve(values.out ?? join(root, 'release'));
  const packed = packAll(root, out);
  process.stdout.write(`${JSON.stringify({ version, packages: packed }, null, 2)}\n`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main();
