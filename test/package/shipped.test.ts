/**
 * What ships, built from this checkout: tsup writes the bundles into a
 * package folder of their own (its package.json this repository's, the
 * addon and the fake engine this checkout's build/), and a consumer project
 * next to it has that folder as node_modules/triton-node. Node then loads
 * the bundles as it loads an installed package, each entry point by its
 * name, ESM and CommonJS.
 *
 * - One copy of the library: dist/core.js (core.cjs) defines its classes and
 *   no other bundle does, so a TritonError is one class whichever entry
 *   point made it; the OpenAI routes, which tell a library error by
 *   `instanceof TritonError`, answer the library's NOT_FOUND with code
 *   "not_found" (the built package answered "internal" while the gateway
 *   carried a copy of TritonError), from an application (ESM and CommonJS)
 *   and from `triton-node serve`, asked with the official openai client.
 * - The .d.ts files compile in a consumer with `skipLibCheck: false`, also
 *   one whose tsconfig lists no types (`"types": []`).
 * test/package/package.test.ts does the same with the packed tarball, installed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
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
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DIR, LIBRARY_PATH, MODELS } from '../helpers.js';
import { typeCheckConsumer } from './consumer-types.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'triton-node-shipped-'));
const pkg = join(work, 'triton-node');
const consumer = join(work, 'consumer');

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

beforeAll(async () => {
  mkdirSync(pkg);
  copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  for (const dir of ['build', 'proto', 'node_modules']) symlinkSync(join(ROOT, dir), join(pkg, dir));
  const tsup = join(ROOT, 'node_modules', 'tsup', 'dist', 'cli-default.js');
  const built = await node([tsup, '--out-dir', join(pkg, 'dist'), '--silent'], ROOT);
  expect(built.status, built.output).toBe(0);
  mkdirSync(join(consumer, 'node_modules'), { recursive: true });
  symlinkSync(pkg, join(consumer, 'node_modules', 'triton-node'));
  cpSync(join(ROOT, 'test', 'fixtures', 'consumer-package.json'), join(consumer, 'package.json'));
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Names of the classes a bundle defines (esbuild's `var Name = class`, a numbered suffix dropped). */
function classesOf(file: string): Set<string> {
  const text = readFileSync(join(pkg, 'dist', file), 'utf8');
  const found = text.matchAll(
    /^(?:var|let|const) ([A-Za-z_$][\w$]*?)\d* = class\b|^class ([A-Za-z_$][\w$]*?)\d*\b/gm,
  );
  return new Set([...found].map((m) => (m[1] ?? m[2])!));
}

describe('one copy of the library in the built package', () => {
  it('dist/core.js and core.cjs define the library’s classes, and no other bundle defines one of them', () => {
    const bundles = readdirSync(join(pkg, 'dist')).filter((f) => /\.c?js$/.test(f));
    expect(bundles).toEqual(
      expect.arrayContaining(['core.js', 'core.cjs', 'index.js', 'index.cjs', 'cli.js']),
    );
    const library = classesOf('core.js');
    expect([...library]).toEqual(expect.arrayContaining(['TritonError', 'Server', 'CudaBuffer', 'Tensor']));
    expect([...classesOf('core.cjs')].sort()).toEqual([...library].sort());
    for (const bundle of bundles.filter((f) => !f.startsWith('core.'))) {
      const copies = [...classesOf(bundle)].filter((name) => library.has(name));
      expect(copies, `${bundle} carries its own copy of these classes of the library`).toEqual([]);
      // Each format its own core: CommonJS requiring the ESM one needs Node's
      // require(esm) (not before 20.19), and ESM importing core.cjs would be a
      // second copy beside core.js.
      const other = bundle.endsWith('.cjs') ? './core.js' : './core.cjs';
      expect(readFileSync(join(pkg, 'dist', bundle), 'utf8'), bundle).not.toContain(`"${other}"`);
    }
  });

  for (const [format, fixture] of [
    ['ESM', 'openai-consumer.mjs'],
    ['CommonJS', 'openai-consumer.cjs'],
  ] as const) {
    it(`the OpenAI routes of an application (${format}) answer the library’s NOT_FOUND with code not_found`, async () => {
      copyFileSync(join(ROOT, 'test', 'fixtures', fixture), join(consumer, fixture));
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
    const args = [join(pkg, 'dist', 'cli.js'), 'serve', '--repository', MODELS, '--library', LIBRARY_PATH];
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
    const results = await typeCheckConsumer(join(consumer, 'typecheck'));
    for (const [setting, result] of Object.entries(results)) {
      expect(result.output, `tsc (${setting}) of a consumer of the built package`).toBe('');
      expect(result.status, setting).toBe(0);
    }
  }, 240_000);
});
