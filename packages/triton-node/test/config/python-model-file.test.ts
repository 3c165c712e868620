/**
 * A Python model whose version folder lacks its file (model.py, or the one
 * `default_model_filename` names). r25.07's stub exits on it before it
 * reports to the server, and the python backend waits for it without end:
 * the load never returns. triton-node's loadModel refuses such a load
 * before Triton sees it, in the stub's words ("Python model file not found
 * in '<path>'"), on every library; the fake engine refuses it the same way
 * when it loads the model itself (startupModels). On the fake, python
 * models run on a stand-in (the fake cannot run Python); without one the
 * fake says so.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BACKEND_DIR,
  library,
  needsBackend,
  serverOptions,
  skipIf,
} from '@triton-node/test-support/helpers.js';
import { rawServer } from '@triton-node/test-support/hostile/raw-server.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Server, TritonError } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';
import { pythonModelConfig } from '../backends/python-models.js';

const ADD_PY = `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "A").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "B").as_numpy()
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("SUM", a + b)]))
        return responses
`;

const repo = mkdtempSync(join(tmpdir(), 'triton-py-file-'));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/** A py_add-shaped model `name` with `extra` config lines and `files` (`<version>/<file>`). */
function model(name: string, files: string[], extra = ''): string {
  const config = pythonModelConfig('py_add').replace('name: "py_add"', `name: "${name}"`);
  mkdirSync(join(repo, name), { recursive: true });
  writeFileSync(join(repo, name, 'config.pbtxt'), `${config}${extra}`);
  for (const file of files) {
    mkdirSync(join(repo, name, file.split('/')[0]!), { recursive: true });
    writeFileSync(join(repo, name, file), ADD_PY);
  }
  return name;
}

model('py_nofile', ['1/README']);
model('py_named_missing', ['1/model.py'], 'default_model_filename: "adder.py"\n');
model('py_named', ['1/adder.py'], 'default_model_filename: "adder.py"\n');
// Only the latest version is loaded (Triton's default policy): version 1's folder may lack it.
model('py_old_version_empty', ['1/README', '2/model.py']);
model('py_all_versions', ['1/README', '2/model.py'], 'version_policy: { all: {} }\n');
// Specific versions: only those named need it.
model('py_specific_served', ['1/README', '2/model.py'], 'version_policy: { specific: { versions: [2] } }\n');
model('py_specific_missing', ['1/README', '2/model.py'], 'version_policy: { specific: { versions: [1] } }\n');
// The latest 2 of 3: the oldest may lack it, the middle one may not.
model(
  'py_latest2_served',
  ['1/README', '2/model.py', '3/model.py'],
  'version_policy: { latest: { num_versions: 2 } }\n',
);
model(
  'py_latest2_missing',
  ['1/model.py', '2/README', '3/model.py'],
  'version_policy: { latest: { num_versions: 2 } }\n',
);

function pythonBackendReason(): string | false {
  return needsBackend('python');
}

/** A full config of py_nofile, as a load's override. */
const pyNofileOverride = {
  name: 'py_nofile',
  backend: 'python',
  max_batch_size: 0,
  input: [
    { name: 'A', data_type: 'TYPE_FP32' as const, dims: [-1] },
    { name: 'B', data_type: 'TYPE_FP32' as const, dims: [-1] },
  ],
  output: [{ name: 'SUM', data_type: 'TYPE_FP32' as const, dims: [-1] }],
};

async function loadError(server: Server, name: string): Promise<TritonError> {
  const err = await server.loadModel(name).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TritonError);
  return err as TritonError;
}

describe('a python model without its file (both libraries)', () => {
  let server: Server | undefined;
  const skip = pythonBackendReason();
  beforeAll(async () => {
    if (skip !== false) return;
    if (library().isFake) fakeEngine.standIns({ python: 'zeros' });
    server = await Server.create(serverOptions({ modelRepository: repo }));
  });
  afterAll(async () => {
    await server?.stop();
    if (library().isFake) fakeEngine.standIns(null);
  });

  const missing = (name: string, version: number, file: string) =>
    `load failed for model '${name}': Python model file not found in '${join(repo, name, String(version), file)}'`;

  it("no model.py in the version folder: INVALID_ARG in the stub's words, at once", async (ctx) => {
    skipIf(ctx, skip);
    const err = await loadError(server!, 'py_nofile');
    expect(err.code).toBe('INVALID_ARG');
    expect(err.model).toBe('py_nofile');
    expect(err.message).toContain(missing('py_nofile', 1, 'model.py'));
    expect(err.message).toContain('the python backend would wait for the model');
  });

  it('default_model_filename names the file looked for', async (ctx) => {
    skipIf(ctx, skip);
    const err = await loadError(server!, 'py_named_missing');
    expect(err.message).toContain(missing('py_named_missing', 1, 'adder.py'));
    await server!.loadModel('py_named');
    expect(await server!.model('py_named').isReady()).toBe(true);
  });

  it('only the versions the policy loads need it', async (ctx) => {
    skipIf(ctx, skip);
    await server!.loadModel('py_old_version_empty');
    expect(await server!.model('py_old_version_empty').isReady()).toBe(true);
    const err = await loadError(server!, 'py_all_versions');
    expect(err.message).toContain(missing('py_all_versions', 1, 'model.py'));
  });

  it('specific versions: only the versions named need it', async (ctx) => {
    skipIf(ctx, skip);
    await server!.loadModel('py_specific_served');
    expect(await server!.model('py_specific_served').isReady()).toBe(true);
    const err = await loadError(server!, 'py_specific_missing');
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toContain(missing('py_specific_missing', 1, 'model.py'));
  });

  it('latest N: each of the N newest versions needs it, older ones do not', async (ctx) => {
    skipIf(ctx, skip);
    await server!.loadModel('py_latest2_served');
    expect(await server!.model('py_latest2_served').isReady()).toBe(true);
    const err = await loadError(server!, 'py_latest2_missing');
    expect(err.message).toContain(missing('py_latest2_missing', 2, 'model.py'));
  });

  it('loadModel with `versions`, or with a config override, is checked against the versions it loads', async (ctx) => {
    skipIf(ctx, skip);
    // Before: both went to Triton unchecked, and r25.07 waited for the stub without end.
    const err = await server!.loadModel('py_old_version_empty', { versions: [1] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).code).toBe('INVALID_ARG');
    expect((err as Error).message).toContain(missing('py_old_version_empty', 1, 'model.py'));
    expect((err as Error).message).toContain('triton-node refuses the load');
    const override = await server!
      .loadModel('py_nofile', { config: pyNofileOverride })
      .catch((e: unknown) => e);
    expect(override).toBeInstanceOf(TritonError);
    expect((override as Error).message).toContain(missing('py_nofile', 1, 'model.py'));
    expect((override as Error).message).toContain('triton-node refuses the load');
  });

  it('a model that loaded answers (the real backend computes; the fake stand-in gives zeros)', async (ctx) => {
    skipIf(ctx, skip);
    const r = await server!.infer('py_named', {
      inputs: {
        A: { data: Float32Array.of(1, 2), shape: [2] },
        B: { data: Float32Array.of(3, 4), shape: [2] },
      },
    });
    const sum = Array.from(r.outputs.SUM!.data as Float32Array);
    expect(sum).toEqual(library().isFake ? [0, 0] : [4, 6]);
  });
});

describe('startup models (both libraries)', () => {
  it('Server.create refuses a python startup model without its file, naming it', async (ctx) => {
    skipIf(ctx, pythonBackendReason());
    if (library().isFake) fakeEngine.standIns({ python: 'zeros' });
    try {
      const err = await Server.create(
        serverOptions({
          modelRepository: repo,
          modelControlMode: 'explicit',
          startupModels: ['py_named', 'py_nofile'],
        }),
      ).then(
        async (s) => {
          await s.stop();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TritonError);
      expect((err as TritonError).code).toBe('INVALID_ARG');
      expect((err as Error).message).toBe(
        `startup models cannot load (the python backend would wait for their stubs without end): py_nofile: Python model file not found in '${join(repo, 'py_nofile', '1', 'model.py')}'`,
      );
    } finally {
      if (library().isFake) fakeEngine.standIns(null);
    }
  });
});

describe('the fake engine on python models', () => {
  it('refuses a load without the file in the same words itself (through the addon, without the TS check)', async (ctx) => {
    skipIf(
      ctx,
      library().isFake ? false : 'fake engine only (real Triton would wait for the stub without end)',
    );
    fakeEngine.standIns({ python: 'zeros' });
    const server = await rawServer(repo);
    try {
      for (const config of [undefined, JSON.stringify(pyNofileOverride)]) {
        const err = await server.loadModel('py_nofile', config, []).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeDefined();
        expect((err as Error).message).toContain(
          `Python model file not found in '${join(repo, 'py_nofile', '1', 'model.py')}'`,
        );
        expect((err as Error).message).not.toContain('triton-node refuses');
      }
    } finally {
      await server.stop();
      fakeEngine.standIns(null);
    }
  });

  it("without a stand-in, says it cannot run Python (after Triton's words for a missing backend)", async (ctx) => {
    skipIf(ctx, library().isFake ? false : 'fake engine only');
    const server = await Server.create(serverOptions({ modelRepository: repo }));
    try {
      const err = await loadError(server, 'py_named');
      expect(err.message).toContain(
        "unable to find backend library for backend 'python', try specifying runtime on the model configuration. (the fake engine cannot run Python models: give it a stand-in, fakeEngine.standIns({ python: 'zeros' }))",
      );
    } finally {
      await server.stop();
    }
  });
});
