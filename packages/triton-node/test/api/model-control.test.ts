import { eventually, rejection, serverOptions, useServer } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { type ModelConfig, Server, TritonError } from '../../lib/index.js';

const server = useServer([]);

async function states(name: string) {
  return (await server().modelIndex()).filter((e) => e.name === name);
}

describe('model control', () => {
  it('lists never-loaded models by name only', async () => {
    const index = await server().modelIndex();
    const entry = index.find((e) => e.name === 'identity_multi');
    expect(entry).toEqual({ name: 'identity_multi' });
    expect(await server().modelIndex({ readyOnly: true })).not.toContainEqual(
      expect.objectContaining({ name: 'identity_multi' }),
    );
  });

  it('loads, unloads and reloads a model', async () => {
    const model = server().model('identity_nobatch');
    await server().loadModel('identity_nobatch');
    expect(await model.isReady()).toBe(true);
    expect(await states('identity_nobatch')).toEqual([
      { name: 'identity_nobatch', version: 1, state: 'READY' },
    ]);
    const r1 = await model.infer({ inputs: { INPUT0: new Float32Array([1, 2]) } });
    expect(Array.from(r1.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2]);

    await server().unloadModel('identity_nobatch', { wait: true });
    expect(await model.isReady()).toBe(false);
    expect(await states('identity_nobatch')).toEqual([
      { name: 'identity_nobatch', version: 1, state: 'UNAVAILABLE', reason: 'unloaded' },
    ]);
    const err = await rejection(model.infer({ inputs: { INPUT0: new Float32Array([1]) } }));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.model).toBe('identity_nobatch');

    await server().loadModel('identity_nobatch');
    expect(await model.isReady()).toBe(true);
    const r2 = await model.infer({ inputs: { INPUT0: new Float32Array([3]) } });
    expect(Array.from(r2.outputs.OUTPUT0!.data as Float32Array)).toEqual([3]);
  });

  it('unload without wait returns at once; the model leaves READY', async () => {
    await server().loadModel('identity_bytes');
    await server().unloadModel('identity_bytes');
    expect(await eventually(async () => !(await server().model('identity_bytes').isReady()))).toBe(true);
    expect(
      await eventually(async () => (await states('identity_bytes')).every((e) => e.state === 'UNAVAILABLE')),
    ).toBe(true);
  });

  it('serves only v1, then v2, then rolls back to v1', async () => {
    const s = server();
    const v1 = s.model('two_versions', 1);
    const v2 = s.model('two_versions', 2);
    const latest = s.model('two_versions');
    const input = { inputs: { INPUT0: new Float32Array([7]) } };

    await s.loadModel('two_versions', { versions: [1] });
    expect(await v1.isReady()).toBe(true);
    expect(await v2.isReady()).toBe(false);
    expect(await latest.versions()).toEqual([{ version: 1, state: 'READY' }]);
    expect((await latest.infer(input)).version).toBe(1);
    expect((await latest.metadata()).versions).toEqual([1]);
    expect((await rejection(v2.infer(input))).code).toBe('NOT_FOUND');

    await s.loadModel('two_versions', { versions: [2] });
    expect(await v2.isReady()).toBe(true);
    expect(await eventually(async () => !(await v1.isReady()))).toBe(true);
    expect(
      await eventually(async () => {
        const v = await latest.versions();
        return v.find((e) => e.version === 1)?.state === 'UNAVAILABLE';
      }),
    ).toBe(true);
    const afterV2 = await latest.versions();
    expect(afterV2.find((e) => e.version === 2)).toEqual({ version: 2, state: 'READY' });
    expect(afterV2.find((e) => e.version === 1)).toMatchObject({ version: 1, state: 'UNAVAILABLE' });
    expect((await latest.infer(input)).version).toBe(2);
    expect((await v2.infer(input)).version).toBe(2);
    expect((await rejection(v1.infer(input))).code).toBe('UNAVAILABLE');

    await s.loadModel('two_versions', { versions: [1] });
    expect(await v1.isReady()).toBe(true);
    expect(await eventually(async () => !(await v2.isReady()))).toBe(true);
    expect(
      await eventually(async () => {
        const v = await latest.versions();
        return v.find((e) => e.version === 2)?.state === 'UNAVAILABLE';
      }),
    ).toBe(true);
    expect((await latest.versions()).find((e) => e.version === 1)).toEqual({ version: 1, state: 'READY' });
    const back = await latest.infer(input);
    expect(back.version).toBe(1);
    expect(Array.from(back.outputs.OUTPUT0!.data as Float32Array)).toEqual([7]);
    expect((await rejection(v2.infer(input))).code).toBe('UNAVAILABLE');
  });

  it('an unknown model fails to load and to infer', async () => {
    const load = await rejection(server().loadModel('no_such_model'));
    expect(load.code).toBe('INTERNAL');
    expect(load.message).toContain('no_such_model');
    expect(load.model).toBe('no_such_model');
    const infer = await rejection(server().infer('no_such_model', { inputs: {} }));
    expect(infer.code).toBe('NOT_FOUND');
    expect(await server().model('no_such_model').isReady()).toBe(false);
  });

  it('errors name what is missing and how to fix it, keeping Triton’s code and text', async () => {
    // A model no repository has: the models that are there.
    const load = await rejection(server().loadModel('no_such_model'));
    expect(load.code).toBe('INTERNAL');
    expect(load.message).toMatch(
      /no model 'no_such_model' in the model repositories; the models there: .*'identity_fp32'/,
    );
    // A model that is not loaded: how to load it.
    const infer = await rejection(server().infer('no_such_model', { inputs: {} }));
    expect(infer.message).toMatch(/unknown model.*server\.loadModel\('no_such_model'\) loads it/s);
    // Nothing to unload.
    const absent = await rejection(server().unloadModel('no_such_model'));
    expect(absent.code).toBe('NOT_FOUND');
    expect(absent.message).toContain('no model of that name is in the model repositories');
    await server().loadModel('identity_nobatch');
    await server().unloadModel('identity_nobatch', { wait: true });
    const twice = await rejection(server().unloadModel('identity_nobatch'));
    expect(twice.code).toBe('NOT_FOUND');
    expect(twice.message).toBe("model 'identity_nobatch' is not loaded, so there is nothing to unload");
    // A plain array of numbers for a numeric input: the TypedArray it takes.
    await server().loadModel('identity_fp32');
    await expect(server().infer('identity_fp32', { inputs: { INPUT0: [1, 2] as never } })).rejects.toThrow(
      /INPUT0.* is FP32: give its data as a Float32Array \(Float32Array\.from\(\[\.\.\.\]\)\), not a plain array of numbers/,
    );
    // A repository that does not exist: the option named.
    const missing = '/no/such/repository/anywhere';
    const start = await rejection(Server.create(serverOptions({ modelRepository: missing })));
    expect(start.message).toContain(`modelRepository: '${missing}' does not exist`);
  });

  it('a bad config fails to load while other models keep serving', async () => {
    await server().loadModel('identity_fp32');
    const bad = await rejection(server().loadModel('bad_config'));
    expect(bad.code).toBe('INTERNAL');
    expect(bad.message).toContain('bad_config');
    const backend = await rejection(server().loadModel('unknown_backend'));
    expect(backend.code).toBe('INVALID_ARG');
    expect(backend.message).toContain('no_such_backend');
    const entry = (await states('unknown_backend'))[0];
    expect(entry).toMatchObject({ version: 1, state: 'UNAVAILABLE' });
    expect(entry?.reason).toContain('no_such_backend');
    const noVersion = await rejection(server().loadModel('no_version'));
    expect(noVersion.code).toBe('INVALID_ARG');

    const r = await server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([4, 5]) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([4, 5]);
    expect(await server().model('identity_fp32').isReady()).toBe(true);
  });

  it('loads several models concurrently', async () => {
    const names = [
      'identity_multi',
      'identity_optional',
      'identity_fixed',
      'identity_all_types',
      'square_int32',
    ];
    await Promise.all(names.map((n) => server().loadModel(n)));
    const ready = await Promise.all(names.map((n) => server().model(n).isReady()));
    expect(ready).toEqual(names.map(() => true));
  });

  it('stress: concurrent loads and queries settle, round after round', async () => {
    // A lost wake-up once left a query's Promise pending forever when its
    // result landed while the JS thread was settling an earlier one.
    const names = ['identity_multi', 'identity_optional', 'identity_fixed', 'square_int32'];
    for (let round = 0; round < 25; round++) {
      await Promise.all(names.map((n) => server().loadModel(n)));
      const ready = await Promise.all(names.map((n) => server().model(n).isReady()));
      expect(ready).toEqual(names.map(() => true));
      await Promise.all(names.map((n) => server().unloadModel(n, { wait: true })));
    }
  });

  it('reports model metadata and config', async () => {
    await server().loadModel('identity_fp32');
    const meta = await server().model('identity_fp32').metadata();
    expect(meta).toEqual({
      name: 'identity_fp32',
      versions: [1],
      platform: 'identity',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, -1] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [-1, -1] }],
    });
    const config = await server().model('identity_fp32').config();
    expect(config.name).toBe('identity_fp32');
    expect(config.max_batch_size).toBe(8);
    expect(config.dynamic_batching).toMatchObject({ preferred_batch_size: [8] });
  });

  it('a config override takes effect and the cached config is refreshed', async () => {
    const s = server();
    const model = s.model('identity_delay');
    await s.loadModel('identity_delay');
    const three = { inputs: { INPUT0: { data: new Float32Array(3), shape: [3, 1] } } };
    expect((await model.infer(three)).outputs.OUTPUT0!.shape).toEqual([3, 1]);
    const config = await model.config();
    await s.loadModel('identity_delay', { config: { ...config, max_batch_size: 2 } });
    expect((await model.config()).max_batch_size).toBe(2);
    const err = await rejection(model.infer(three));
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toContain('max_batch_size 2');
    const two = await model.infer({ inputs: { INPUT0: { data: new Float32Array(2), shape: [2, 1] } } });
    expect(two.outputs.OUTPUT0!.shape).toEqual([2, 1]);
  });

  it('loads an in-memory model from a config and files', async () => {
    const config = {
      name: 'in_memory_identity',
      backend: 'identity',
      max_batch_size: 0,
      input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [-1] }],
    } satisfies ModelConfig;
    await server().loadModel('in_memory_identity', {
      config,
      files: { '1/placeholder.txt': 'identity needs no file' },
    });
    const model = server().model('in_memory_identity');
    expect(await model.isReady()).toBe(true);
    const r = await model.infer({ inputs: { INPUT0: new Int32Array([5, 6]) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Int32Array)).toEqual([5, 6]);
    await server().unloadModel('in_memory_identity', { wait: true });
    await expect(server().loadModel('x', { files: { '1/a': 'b' } })).rejects.toThrow(/config/);
    for (const path of ['../1/a', '/1/a', '1/../../a', '']) {
      const err = await server()
        .loadModel('x', { config, files: { [path]: 'b' } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toContain(`files['${path}']`);
    }
  });

  it('a failed reload keeps the serving version READY and serving (Triton swaps only a complete load)', async () => {
    const s = server();
    const model = s.model('identity_bytes');
    await s.loadModel('identity_bytes');
    const input = { inputs: { INPUT0: ['kept'] } };
    // A version set naming a version that does not exist.
    const missing = await rejection(s.loadModel('identity_bytes', { versions: [7] }));
    expect(missing.code).toBe('INVALID_ARG');
    expect(missing.message).toContain('at least one version must be available');
    // A config override naming a backend that does not exist.
    const config = await model.config();
    const unknown = await rejection(
      s.loadModel('identity_bytes', { config: { ...config, backend: 'no_such_backend' } }),
    );
    expect(unknown.code).toBe('INVALID_ARG');
    expect(unknown.message).toContain('no_such_backend');
    for (const probe of [model.isReady(), s.model('identity_bytes', 1).isReady()]) {
      expect(await probe).toBe(true);
    }
    expect(await states('identity_bytes')).toEqual([{ name: 'identity_bytes', version: 1, state: 'READY' }]);
    expect((await model.config()).backend).toBe('identity');
    expect((await model.infer(input)).outputs.OUTPUT0!.strings()).toEqual(['kept']);
  });

  it('option mistakes are TypeErrors naming the option', async () => {
    await expect(server().loadModel('identity_fp32', { versions: [] })).rejects.toThrow(TypeError);
    await expect(server().loadModel('identity_fp32', { versions: [] })).rejects.toThrow(/versions/);
    await expect(server().loadModel('', {})).rejects.toThrow(/model name/);
    await expect(server().loadModel('identity_fp32', { bogus: 1 } as never)).rejects.toThrow(/bogus/);
    await expect(server().unloadModel('identity_fp32', { wait: 'yes' } as never)).rejects.toThrow(/wait/);
    expect(() => server().model('identity_fp32', 1.5)).toThrow(TypeError);
  });
});
