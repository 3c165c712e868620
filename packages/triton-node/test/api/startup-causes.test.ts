/**
 * A repository with one model of each kind of breakage, through
 * `Server.create` and `triton-node serve`: each failed model is named with
 * its real cause (Triton's index names a failed version's reason, but lists
 * a model whose config fails its poll with no state, and one with no
 * version folder not at all), `--exit-on-error=false` serves the models
 * that loaded, and readiness follows `--strict-readiness`. Same test on the
 * fake engine and on a real Triton.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BACKEND_DIR,
  LIBRARY_PATH,
  MODELS,
  needsBackend,
  serverOptions,
  skipIf,
} from '@triton-node/test-support/helpers.js';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startServing } from '../../../gateway/test/serve-helpers.js';
import { Server, type StartupFailure } from '../../lib/index.js';

const CLI = fileURLToPath(new URL('../../lib/cli/main.ts', import.meta.url));
const IO =
  'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\n' +
  'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\n';

/** Each broken model, and what its cause must say. */
const CAUSES: Record<string, RegExp> = {
  bad_config: /^config\.pbtxt does not parse: line 5, column \d+: /,
  no_version: /^no version folder in .*no_version: the model's files go in a numbered folder/,
  // With strictModelConfig true (the library's default) it is the missing file; false (serve's
  // default, as tritonserver): nothing a backend could complete a config from.
  no_config:
    /^no config\.pbtxt in .*no_config( \(Triton needs one while strictModelConfig is true\)|, and no model file in its version folders)/,
  bad_dims: /^config\.pbtxt: input 'INPUT0' dims \[0\]: each dimension must be an integer >= 1, or -1/,
  unknown_backend: /^UNAVAILABLE: .*unable to find backend library for backend 'no_such_backend'/,
  missing_file: /^UNAVAILABLE: .*model\.onnx/,
  wrong_name:
    /^config\.pbtxt names the model 'another_name' but its folder is 'wrong_name' \(the two must be equal\)/,
};

const dir = mkdtempSync(join(tmpdir(), 'triton-node-broken-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
for (const name of ['identity_fp32', 'bad_config', 'no_version', 'unknown_backend'])
  cpSync(join(MODELS, name), join(dir, name), { recursive: true });
function model(name: string, config: string | null): void {
  mkdirSync(join(dir, name, '1'), { recursive: true });
  if (config !== null) writeFileSync(join(dir, name, 'config.pbtxt'), config);
}
model('no_config', null);
model('wrong_name', `name: "another_name"\nbackend: "identity"\nmax_batch_size: 8\n${IO}`);
model('missing_file', `name: "missing_file"\nbackend: "onnxruntime"\nmax_batch_size: 0\n${IO}`);
model(
  'bad_dims',
  'name: "bad_dims"\nbackend: "identity"\nmax_batch_size: 8\n' +
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 0 ] } ]\n' +
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\n',
);

function expectCauses(failures: readonly StartupFailure[]): void {
  expect(failures.map((f) => f.model).sort()).toEqual(Object.keys(CAUSES).sort());
  for (const f of failures) expect(f.reason, f.model).toMatch(CAUSES[f.model]!);
}

describe('a repository with a model of each kind of breakage', () => {
  const options = serverOptions({ modelRepository: dir, modelControlMode: 'none' });

  it('Server.create fails naming every model with its own cause', async (ctx) => {
    // missing_file's cause is its model file only where the backend exists.
    skipIf(ctx, needsBackend('onnxruntime'));
    const err = (await Server.create(options).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ name: 'TritonError', code: 'INTERNAL' });
    expect(err.message).toMatch(/^failed to load all models \(/);
    for (const [name, cause] of Object.entries(CAUSES)) {
      const said = new RegExp(`model '${name}'(?: version \\d+)?: ([^;]*)`).exec(err.message);
      expect(said, name).not.toBeNull();
      expect(said![1], name).toMatch(new RegExp(cause.source.replace(/^\^/, '')));
    }
    expect(err.message).not.toContain('no version was loaded');
    expect(err.message).not.toContain("'identity_fp32'");
  });

  it('with exitOnError false, starts with the model that loaded and lists the others with their causes', async (ctx) => {
    // missing_file's cause is its model file only where the backend exists.
    skipIf(ctx, needsBackend('onnxruntime'));
    const s = await Server.create({ ...options, exitOnError: false });
    try {
      expectCauses(s.startupFailures);
      expect(await s.model('identity_fp32').isReady()).toBe(true);
      expect(await s.isReady()).toBe(false); // strict readiness, as Triton
    } finally {
      await s.stop();
    }
    const lenient = await Server.create({ ...options, exitOnError: false, strictReadiness: false });
    try {
      expect(await lenient.isReady()).toBe(true);
      expect(lenient.startupFailures.length).toBe(Object.keys(CAUSES).length);
    } finally {
      await lenient.stop();
    }
  });

  it('`serve --exit-on-error=false --strict-readiness=false` serves what loaded, logs each cause, is ready', async (ctx) => {
    // missing_file's cause is its model file only where the backend exists.
    skipIf(ctx, needsBackend('onnxruntime'));
    const args = [
      '--import',
      'tsx',
      CLI,
      'serve',
      dir,
      '--library',
      LIBRARY_PATH,
      ...(BACKEND_DIR ? ['--backend-dir', BACKEND_DIR] : []),
      '--no-grpc',
      '--host',
      '127.0.0.1',
      '--http-port',
      '0',
      '--exit-on-error=false',
    ];
    for (const strict of [false, true]) {
      const running = await startServing(
        process.execPath,
        strict ? args : [...args, '--strict-readiness=false'],
        process.env,
      );
      try {
        const logged = running.lines
          .filter((l) => typeof l.model === 'string' && l.reason !== undefined)
          .map((l) => ({ model: l.model as string, reason: l.reason as string }));
        expectCauses(logged);
        const base = `http://127.0.0.1:${running.httpPort}`;
        const status = async (path: string) => {
          const r = await request(`${base}${path}`);
          await r.body.dump();
          return r.statusCode;
        };
        expect(await status('/v2/health/ready')).toBe(strict ? 400 : 200);
        expect(await status('/v2/models/identity_fp32/ready')).toBe(200);
        expect(await status('/v2/models/bad_dims/ready')).not.toBe(200);
        const warned = running.lines.some((l) => String(l.msg).startsWith('strict readiness:'));
        expect(warned).toBe(strict);
      } finally {
        running.child.kill('SIGTERM');
      }
      expect(await running.exit).toBe(0);
    }
  });

  it('`serve` with the default --exit-on-error exits 1 naming each cause', async () => {
    const args = ['--import', 'tsx', CLI, 'serve', '--repository', dir, '--library', LIBRARY_PATH];
    if (BACKEND_DIR) args.push('--backend-dir', BACKEND_DIR);
    const { spawnSync } = await import('node:child_process');
    const child = spawnSync(process.execPath, [...args, '--no-grpc', '--http-port', '0'], {
      encoding: 'utf8',
    });
    expect(child.status).toBe(1);
    const line = child.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; err?: string })
      .find((l) => l.msg === 'the server did not start');
    for (const name of Object.keys(CAUSES)) expect(line?.err).toContain(`model '${name}'`);
    const bad = spawnSync(process.execPath, [...args, '--exit-on-error=maybe'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("Expected true or false for --exit-on-error but received 'maybe'");
  });
});
