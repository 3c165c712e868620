/**
 * What ships, built from this checkout: tsup writes triton-node's and the
 * gateway's bundles into package folders of their own (their package.json
 * the repository's, the addon this checkout's build/, the fake engine its
 * package), and a consumer project has them as node_modules/triton-node and
 * node_modules/@triton-node/gateway. Node then loads the bundles as it loads
 * installed packages, each entry point by its name, ESM and CommonJS.
 *
 * - One copy of the library: one chunk of triton-node's dist/ per format
 *   defines its classes, and no other file of either package does, so a
 *   TritonError is one class whichever entry point or package made it; the
 *   OpenAI routes, which tell a library error by `instanceof TritonError`,
 *   answer the library's NOT_FOUND with code "not_found" (the built package
 *   answered "internal" while the gateway carried a copy of TritonError), from
 *   an application (ESM and CommonJS) and from `triton-node serve`, asked
 *   with the official openai client.
 * - The .d.ts files compile in a consumer with `skipLibCheck: false`, also
 *   one whose tsconfig lists no types (`"types": []`).
 * test/package.test.ts does the same with the packed tarballs, installed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKEND_DIR, LIBRARY_PATH, MODELS } from '@triton-node/test-support/helpers.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typeCheckConsumer } from './consumer-types.js';

const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));
const TRITON_NODE = join(REPOSITORY, 'packages', 'triton-node');
const GATEWAY = join(REPOSITORY, 'packages', 'gateway');
const work = mkdtempSync(join(tmpdir(), 'triton-node-shipped-'));
const consumer = join(work, 'consumer');
const modules = join(consumer, 'node_modules');
// Built into the consumer's node_modules (not linked: Node resolves a package's imports from where it is).
const pkg = join(modules, 'triton-node');
const gatewayPkg = join(modules, '@triton-node', 'gateway');
const TSUP = join(REPOSITORY, 'node_modules', 'tsup', 'dist', 'cli-default.js');

interface Ran {
  status: number | null;
  stdout: string;
  output: string;
}

/** Runs node with `args` in `cwd` without blocking this worker (the build takes a while). */
function node(args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, timeout: 240_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += String(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += String(d);
    });
    child.on('error', (err) =>
      resolve({ status: null, stdout, output: `${stdout}\n${stderr}\n${err.message}` }),
    );
    child.on('close', (status) => resolve({ status, stdout, output: `${stdout}\n${stderr}` }));
  });
}

/** A package folder `into`, with `from`'s package.json, its `links` and a dist/ built by its tsup config. */
async function buildInto(from: string, into: string, links: string[]): Promise<void> {
  mkdirSync(into);
  copyFileSync(join(from, 'package.json'), join(into, 'package.json'));
  for (const dir of links) symlinkSync(join(from, dir), join(into, dir));
  const built = await node([TSUP, '--out-dir', join(into, 'dist'), '--silent'], from);
  expect(built.status, built.output).toBe(0);
}

beforeAll(async () => {
  mkdirSync(join(modules, '@triton-node'), { recursive: true });
  await buildInto(TRITON_NODE, pkg, ['build', 'bin', 'examples']);
  await buildInto(GATEWAY, gatewayPkg, ['proto']);
  symlinkSync(join(REPOSITORY, 'packages', 'fake-engine'), join(modules, '@triton-node', 'fake-engine'));
  // The bundles' own dependencies (node-gyp-build, the gateway's peers), as the repository installed them.
  for (const name of readdirSync(join(REPOSITORY, 'node_modules'))) {
    if (!existsSync(join(modules, name)))
      symlinkSync(join(REPOSITORY, 'node_modules', name), join(modules, name));
  }
  cpSync(
    join(REPOSITORY, 'packages', 'test-support', 'fixtures', 'consumer-package.json'),
    join(consumer, 'package.json'),
  );
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Names of the classes a bundle defines (esbuild's `var Name = class`, a numbered suffix dropped). */
function classesOf(dir: string, file: string): Set<string> {
  const text = readFileSync(join(dir, 'dist', file), 'utf8');
  const found = text.matchAll(
    /^(?:var|let|const) ([A-Za-z_$][\w$]*?)\d* = class\b|^class ([A-Za-z_$][\w$]*?)\d*\b/gm,
  );
  return new Set([...found].map((m) => (m[1] ?? m[2])!));
}

describe('one copy of the library in the built packages', () => {
  it('one chunk per format defines the library’s classes; no other file of triton-node or the gateway does', () => {
    const bundles = (dir: string) => readdirSync(join(dir, 'dist')).filter((f) => /\.c?js$/.test(f));
    const ours = bundles(pkg);
    expect(ours).toEqual(
      expect.arrayContaining(['index.js', 'index.cjs', 'testing.js', 'internal.cjs', 'cli.js']),
    );
    /** Each class of a format's files, with the files that define it. */
    const definitions = (format: RegExp) => {
      const out = new Map<string, string[]>();
      for (const f of ours.filter((b) => format.test(b))) {
        for (const name of classesOf(pkg, f)) out.set(name, [...(out.get(name) ?? []), f]);
      }
      return out;
    };
    const esm = definitions(/\.js$/);
    const cjs = definitions(/\.cjs$/);
    expect([...esm.keys()]).toEqual(
      expect.arrayContaining(['TritonError', 'Server', 'CudaBuffer', 'Tensor']),
    );
    // The CLI is ESM only: its own classes are in the ESM files alone.
    expect([...esm.keys()]).toEqual(expect.arrayContaining([...cjs.keys()]));
    expect([...cjs.keys()]).toEqual(
      expect.arrayContaining(['TritonError', 'Server', 'CudaBuffer', 'Tensor']),
    );
    for (const [name, files] of [...esm, ...cjs])
      expect(files, `${name} is defined in more than one file`).toHaveLength(1);
    const library = new Set(esm.keys());
    for (const bundle of bundles(gatewayPkg)) {
      const copies = [...classesOf(gatewayPkg, bundle)].filter((name) => library.has(name));
      expect(
        copies,
        `the gateway's dist/${bundle} carries its own copy of these classes of the library`,
      ).toEqual([]);
    }
    // Each format its own chunk: an ESM file requiring a .cjs one (or the
    // reverse) would be a second copy beside the other.
    for (const bundle of ours) {
      const text = readFileSync(join(pkg, 'dist', bundle), 'utf8');
      const other = bundle.endsWith('.cjs')
        ? /from ["']\.\/[^"']+\.js["']/
        : /require\(["']\.\/[^"']+\.cjs["']\)/;
      expect(other.test(text), bundle).toBe(false);
    }
  });

  for (const [format, fixture] of [
    ['ESM', 'openai-consumer.mjs'],
    ['CommonJS', 'openai-consumer.cjs'],
  ] as const) {
    it(`the OpenAI routes of an application (${format}) answer the library’s NOT_FOUND with code not_found`, async () => {
      copyFileSync(join(GATEWAY, 'test', 'fixtures', fixture), join(consumer, fixture));
      const child = await node([fixture, MODELS, LIBRARY_PATH], consumer);
      expect(child.status, child.output).toBe(0);
      const answer = JSON.parse(child.stdout.trim()) as { status: number; body: { error: { code: string } } };
      expect(answer.status, child.output).toBe(404);
      expect(answer.body.error.code, child.output).toBe('not_found');
    });
  }

  it('`triton-node serve` of the built package answers the official openai client a NOT_FOUND as code not_found', async () => {
    const config = join(work, 'serve.json');
    writeFileSync(config, JSON.stringify({ gateway: { openai: { ghost: { model: 'identity_fp32' } } } }));
    const args = [
      join(pkg, 'bin', 'triton-node.js'),
      'serve',
      '--repository',
      MODELS,
      '--library',
      LIBRARY_PATH,
    ];
    if (BACKEND_DIR !== undefined) args.push('--backend-dir', BACKEND_DIR);
    args.push('--model-control-mode', 'explicit', '--host', '127.0.0.1', '--http-port', '0', '--no-grpc');
    const child: ChildProcess = spawn(process.execPath, [...args, '--config', config], {
      cwd: consumer,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          out += String(d);
          const m = /"httpPort":(\d+)/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        child.stderr!.on('data', (d: Buffer) => {
          out += String(d);
        });
        void exit.then((code) => reject(new Error(`serve exited ${code}: ${out}`)));
      });
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0 });
      const err = await client.completions.create({ model: 'ghost', prompt: 'x' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, out).toBeInstanceOf(OpenAI.NotFoundError);
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).code, out).toBe('not_found');
    } finally {
      child.kill('SIGTERM');
      expect(await exit, out).toBe(0);
    }
  }, 60_000);
});

describe('the built type declarations', () => {
  it('compile in a consumer, strict with skipLibCheck false (nodenext, ESM and CommonJS; bundler; no types)', async () => {
    const results = await typeCheckConsumer(join(consumer, 'typecheck'), { gateway: true });
    for (const [setting, result] of Object.entries(results)) {
      expect(result.output, `tsc (${setting}) of a consumer of the built package`).toBe('');
      expect(result.status, setting).toBe(0);
    }
  }, 240_000);
});
