// Stand-in backends of the fake engine (fakeEngine.standIns in
// triton-node/testing): a repository whose models need backends the fake
// does not have loads on it when asked, and says everywhere that it answers
// with stand-ins. Real Triton has no such thing: there the models fail to
// load with Triton's error, which the fake gives too without stand-ins.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onnxRuntimeNode } from '@triton-node/test-support/backends/real-models.js';
import {
  BACKEND_DIR,
  fakeOnly,
  library,
  serverOptions,
  skipAllIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Server, TritonError } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

const unableToFind = (model: string, backend: string) =>
  `load failed for model '${model}': version 1 is at UNAVAILABLE state: Invalid argument: unable to find backend library for backend '${backend}', try specifying runtime on the model configuration.;\n`;

/**
 * Whether the library under test has an onnxruntime backend: a real Triton's
 * backends directory with one, or the fake with onnxruntime-node's ONNX
 * Runtime (test/backends/fake-onnxruntime.test.ts).
 */
function hasOnnxRuntimeBackend(): boolean {
  if (library().isFake) return onnxRuntimeNode() !== undefined || !!process.env.TRITON_NODE_ONNXRUNTIME_LIB;
  return BACKEND_DIR !== undefined && existsSync(join(BACKEND_DIR, 'onnxruntime'));
}

/** Why an onnxruntime model of test/models fails to load: no backend, or the backend's own error. */
function onnxLoadError(model: string): string | RegExp {
  if (!hasOnnxRuntimeBackend()) return unableToFind(model, 'onnxruntime');
  // onnx_scores has an empty version folder; onnx_by_file's model.onnx is not a model.
  return model === 'onnx_scores'
    ? /^load failed for model 'onnx_scores': version 1 is at UNAVAILABLE state: Internal: failed to stat file \S+\/onnx_scores\/1\/model\.onnx;\n$/
    : new RegExp(
        `^load failed for model '${model}': version 1 is at UNAVAILABLE state: Internal: onnx runtime error \\d+: `,
      );
}

describe('models of backends the library does not have (both libraries)', () => {
  const server = useServer([]);

  it('fail to load with Triton’s error; the backend comes from the platform or the model file as in Triton', async () => {
    for (const [model, backend] of [
      ['onnx_scores', 'onnxruntime'], // platform onnxruntime_onnx
      ['onnx_by_file', 'onnxruntime'], // no backend or platform: 1/model.onnx says
      ['torch_passthrough', 'pytorch'],
    ] as const) {
      const err = await server()
        .loadModel(model)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonError);
      expect(err).toMatchObject({
        code: 'INVALID_ARG',
        message:
          backend === 'onnxruntime'
            ? expect.stringMatching(onnxLoadError(model))
            : unableToFind(model, backend),
      });
    }
  });

  it('fakeEngine.standIns() does nothing on a real Triton (and returns false)', async () => {
    library();
    const applied = fakeEngine.standIns({ onnxruntime: 'zeros' });
    try {
      expect(applied).toBe(library().isFake);
      if (!applied) {
        await expect(server().loadModel('onnx_scores')).rejects.toMatchObject({ code: 'INVALID_ARG' });
      }
    } finally {
      fakeEngine.standIns(null);
    }
  });

  it('fakeEngine.standIns() refuses what it cannot do, naming it (before it looks at the library)', () => {
    expect(() => fakeEngine.standIns({ onnxruntime: 'random' as never })).toThrow(
      /Expected 'zeros' or 'echo' for standIns.onnxruntime/,
    );
    expect(() => fakeEngine.standIns({ identity: 'zeros' })).toThrow(/runs the identity backend itself/);
    expect(() => fakeEngine.standIns({ onnxruntime: (() => null) as never })).toThrow(
      /handlers are not supported/,
    );
    expect(() => fakeEngine.standIns({ 'a,b': 'zeros' })).toThrow(TypeError);
    expect(() => fakeEngine.standIns([] as never)).toThrow(TypeError);
  });
});

describe('stand-in backends (fake engine)', () => {
  skipAllIf(fakeOnly('stand-in backends are the fake engine’s'));
  const server = useServer([], {}, fakeOnly());

  afterEach(async () => {
    fakeEngine.standIns(null);
    for (const model of ['onnx_scores', 'torch_passthrough', 'onnx_by_file']) {
      if ((await server().modelIndex({ readyOnly: true })).some((e) => e.name === model)) {
        await server().unloadModel(model, { wait: true });
      }
    }
  });

  it("'zeros': outputs of the configured datatype and shape, marked in every response", async () => {
    expect(fakeEngine.standIns({ onnxruntime: 'zeros' })).toBe(true);
    await server().loadModel('onnx_scores');
    const pixels = { data: Float32Array.of(1, 2, 3, 4, 5, 6), shape: [2, 3] };
    const r = await server().infer('onnx_scores', { inputs: { pixels } });
    expect(r.outputs.scores).toMatchObject({ datatype: 'FP32', shape: [2, 2] });
    expect(Array.from(r.outputs.scores!.data as Float32Array)).toEqual([0, 0, 0, 0]);
    expect(r.outputs.label).toMatchObject({ datatype: 'BYTES', shape: [2, 1] });
    expect((r.outputs.label!.data as Uint8Array[]).map((e) => e.length)).toEqual([0, 0]);
    expect(r.parameters).toEqual({ triton_node_stand_in: 'onnxruntime:zeros' });
  });

  it('the metadata of the model and of the server say stand-in; the config is the model’s', async () => {
    fakeEngine.standIns({ onnxruntime: 'zeros', '*': 'echo' });
    await server().loadModel('onnx_scores');
    const model = server().model('onnx_scores');
    expect(await model.metadata()).toMatchObject({
      platform: 'onnxruntime_onnx',
      standIn: 'onnxruntime:zeros',
    });
    expect(await model.config()).toMatchObject({
      backend: 'onnxruntime',
      platform: 'onnxruntime_onnx',
      default_model_filename: 'model.onnx',
    });
    expect((await server().metadata()).standIns).toEqual({ onnxruntime: 'zeros', '*': 'echo' });
    // The fake's own backends never are stand-ins.
    await server().loadModel('identity_nobatch');
    const identity = await server().infer('identity_nobatch', { inputs: { INPUT0: Float32Array.of(1) } });
    expect(identity.parameters).not.toHaveProperty('triton_node_stand_in');
    expect((await server().model('identity_nobatch').metadata()).standIn).toBeUndefined();
  });

  it("'echo': inputs copied to the outputs of the same name or position when they fit, zeros otherwise", async () => {
    fakeEngine.standIns({ '*': 'echo' });
    await server().loadModel('torch_passthrough');
    const r = await server().infer('torch_passthrough', {
      inputs: { INPUT__0: Float32Array.of(0.5, 1.5, 2.5), INPUT__1: BigInt64Array.of(7n, 8n) },
    });
    expect(Array.from(r.outputs.OUTPUT__0!.data as Float32Array)).toEqual([0.5, 1.5, 2.5]);
    expect(Array.from(r.outputs.OUTPUT__1!.data as BigInt64Array)).toEqual([7n, 8n]);
    // No input at its position: zeros, -1 dimensions as 1.
    expect(r.outputs.OUTPUT__2).toMatchObject({ datatype: 'INT32', shape: [1, 2] });
    expect(Array.from(r.outputs.OUTPUT__2!.data as Int32Array)).toEqual([0, 0]);
    expect(r.parameters).toEqual({ triton_node_stand_in: 'pytorch:echo' });
  });

  it('a -1 dimension of a zeros output follows the matching input', async () => {
    fakeEngine.standIns({ onnxruntime: 'zeros' });
    await server().loadModel('onnx_by_file');
    const r = await server().infer('onnx_by_file', { inputs: { x: new Float32Array(5) } });
    expect(r.outputs.y!.shape).toEqual([5]);
    expect(r.parameters.triton_node_stand_in).toBe('onnxruntime:zeros');
  });

  it('is never used unless asked for, and off again with null', async () => {
    // With an onnxruntime backend: its own error, or, once the earlier server
    // of this file failed onnxruntime loads, that the backend cannot start
    // again (as in Triton r25.07, test/backends/fake-onnxruntime.test.ts).
    const onnxError = onnxLoadError('onnx_scores');
    await expect(server().loadModel('onnx_scores')).rejects.toMatchObject({
      message:
        typeof onnxError === 'string'
          ? onnxError
          : expect.stringMatching(
              new RegExp(`Already exists: OnnxLoader singleton already initialized|${onnxError.source}`),
            ),
    });
    fakeEngine.standIns({ pytorch: 'zeros' });
    await expect(server().loadModel('onnx_scores')).rejects.toMatchObject({ code: 'INVALID_ARG' });
    fakeEngine.standIns(null);
    await expect(server().loadModel('torch_passthrough')).rejects.toMatchObject({
      message: unableToFind('torch_passthrough', 'pytorch'),
    });
    expect((await server().metadata()).standIns).toBeUndefined();
  });

  it('says so in the log when a model loads on a stand-in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-stand-in-log-'));
    const file = join(dir, 'triton.log');
    const s = await Server.create(serverOptions({ log: { file, warn: true } }));
    try {
      fakeEngine.standIns({ onnxruntime: 'zeros' });
      await s.loadModel('onnx_scores');
      expect(readFileSync(file, 'utf8')).toMatch(
        /W fake-engine\] model 'onnx_scores' version 1: backend 'onnxruntime' is a STAND-IN of the fake engine \(zeros\)/,
      );
    } finally {
      await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
