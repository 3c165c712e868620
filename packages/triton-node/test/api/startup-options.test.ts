// Startup options: exitOnError, strictReadiness, modelLoadThreads, on the
// fake and on real Triton (a repository with a model whose backend is missing).
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODELS, serverOptions } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { Server } from '../../lib/index.js';

describe('startup with a model that fails to load', () => {
  /** A repository of one good model and one whose backend does not exist (it fails to load). */
  function repository(): string {
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-exit-on-error-'));
    for (const name of ['identity_fp32', 'unknown_backend']) {
      cpSync(join(MODELS, name), join(dir, name), { recursive: true });
    }
    return dir;
  }

  it('exitOnError (default true) fails Server.create; false starts with the models that loaded', async () => {
    const dir = repository();
    try {
      const options = serverOptions({ modelRepository: dir, modelControlMode: 'none' });
      // The error keeps Triton's words and names the model and its reason (Triton only logs them).
      const err = await Server.create(options).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'TritonError', code: 'INTERNAL' });
      expect((err as Error).message).toMatch(/failed to load all models/);
      expect((err as Error).message).toMatch(/model 'unknown_backend'.*UNAVAILABLE.*no_such_backend/);
      expect((err as Error).message).not.toMatch(/identity_fp32/);
      const s = await Server.create({ ...options, exitOnError: false });
      try {
        const index = await s.modelIndex();
        expect(index.find((e) => e.name === 'identity_fp32')).toMatchObject({ state: 'READY' });
        expect(index.find((e) => e.name === 'unknown_backend')).toMatchObject({
          state: 'UNAVAILABLE',
          reason: expect.stringContaining('no_such_backend'),
        });
        const r = await s.infer('identity_fp32', { inputs: { INPUT0: Float32Array.of(2) } });
        expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([2]);
        // Strict readiness (the default): a model that failed to load keeps the server not ready.
        expect(await s.isReady()).toBe(false);
      } finally {
        await s.stop();
      }
      const lenient = await Server.create({ ...options, exitOnError: false, strictReadiness: false });
      try {
        expect(await lenient.isReady()).toBe(true);
      } finally {
        await lenient.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a startup model that is not in the repositories is named in the error', async () => {
    const err = await Server.create(
      serverOptions({ startupModels: ['identity_fp32', 'no_such_model'] }),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TritonError', code: 'INTERNAL' });
    expect((err as Error).message).toMatch(/model 'no_such_model': not in the model repositories/);
  });

  it('with exitOnError false, a server that failed before its models is refused, not handed out', async () => {
    // Triton returns such a server not live, and its model calls would
    // dereference a null model repository.
    const missing = join(tmpdir(), 'triton-node-no-such-repository');
    const err = await Server.create(serverOptions({ modelRepository: missing, exitOnError: false })).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'TritonError' });
    expect((err as Error).message).toContain(missing);
    expect((err as Error).message).toMatch(/modelRepository/);
  });

  it('the new options are checked, each error naming its option', async () => {
    await expect(Server.create(serverOptions({ exitOnError: 'no' as never }))).rejects.toThrow(TypeError);
    await expect(Server.create(serverOptions({ exitOnError: 'no' as never }))).rejects.toThrow(/exitOnError/);
    await expect(Server.create(serverOptions({ strictReadiness: 1 as never }))).rejects.toThrow(
      /strictReadiness/,
    );
    await expect(Server.create(serverOptions({ modelLoadThreads: 0 }))).rejects.toThrow(RangeError);
    await expect(Server.create(serverOptions({ modelLoadThreads: 1.5 }))).rejects.toThrow(/modelLoadThreads/);
    const s = await Server.create(serverOptions({ modelLoadThreads: 2, startupModels: ['identity_fp32'] }));
    try {
      expect(await s.model('identity_fp32').isReady()).toBe(true);
    } finally {
      await s.stop();
    }
  });
});
