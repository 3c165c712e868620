import {
  eventually,
  readUntil,
  requestsSettled,
  serverOptions,
  useServer,
} from '@triton-node/test-support/helpers.js';
// Ensembles: models of platform "ensemble" whose steps run other models
// (test/models/ensemble_*), on the fake and on real Triton r25.07. What is
// asserted here was seen on the real CPU build first; the fake follows it.
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { type ModelStatistics, Server, TritonError } from '../../lib/index.js';

const IN = Float32Array.of(1.5, -2, 3);

function floats(r: { outputs: Record<string, { data: unknown } | undefined> }, name: string): number[] {
  return Array.from(r.outputs[name]!.data as Float32Array);
}

async function inferIdentity(server: Server): Promise<number[]> {
  return floats(await server.infer('ensemble_identity', { inputs: { IN } }), 'OUT');
}

async function stats(server: Server, model: string): Promise<ModelStatistics> {
  return (await server.model(model, 1).statistics())[0]!;
}

async function readyModels(server: Server): Promise<string[]> {
  return (await server.modelIndex({ readyOnly: true })).map((e) => e.name).sort();
}

/** An ensemble config (Triton's JSON form) of the given steps, for load-time checks. */
function ensembleConfig(
  steps: Array<{
    model: string;
    version?: number;
    inputs: Record<string, string>;
    outputs: Record<string, string>;
  }>,
  tensors: { in?: string; inDims?: number[]; out?: string; maxBatchSize?: number } = {},
) {
  return {
    name: 'ensemble_crossed',
    platform: 'ensemble',
    max_batch_size: tensors.maxBatchSize ?? 0,
    input: [{ name: 'A', data_type: tensors.in ?? 'TYPE_FP32', dims: tensors.inDims ?? [-1] }],
    output: [{ name: 'OUT', data_type: tensors.out ?? 'TYPE_FP32', dims: [-1] }],
    ensemble_scheduling: {
      step: steps.map((s) => ({
        model_name: s.model,
        model_version: s.version ?? -1,
        input_map: s.inputs,
        output_map: s.outputs,
      })),
    },
  };
}

describe('an ensemble of two identity steps (ensemble_identity)', () => {
  const server = useServer(['ensemble_identity']);

  it('loads the models its steps name', async () => {
    expect(await readyModels(server())).toEqual(['ensemble_identity', 'identity_fp32']);
  });

  it('answers with its output, made by the steps in turn, as a response of the ensemble', async () => {
    const r = await server().infer('ensemble_identity', { id: 'two-steps', inputs: { IN } });
    expect(r.model).toBe('ensemble_identity');
    expect(r.version).toBe(1);
    expect(r.id).toBe('two-steps');
    expect(r.outputs.OUT).toMatchObject({ datatype: 'FP32', shape: [1, 3] });
    expect(floats(r, 'OUT')).toEqual([1.5, -2, 3]);
    // Triton's ensembles add the sequence of the outputs (the request's).
    expect(r.parameters).toEqual({ sequence_id: 0, sequence_start: false, sequence_end: false });
    const seven = await server().infer('ensemble_identity', { correlationId: 7, inputs: { IN } });
    expect(seven.parameters.sequence_id).toBe(7);
  });

  it('batches as its max_batch_size says', async () => {
    const data = Float32Array.of(1, 2, 3, 4);
    const r = await server().infer('ensemble_identity', { inputs: { IN: { data, shape: [2, 2] } } });
    expect(r.outputs.OUT!.shape).toEqual([2, 2]);
    expect(floats(r, 'OUT')).toEqual([1, 2, 3, 4]);
  });

  it('writes its output into the caller’s destination, through the caller’s allocator', async () => {
    const into = new Float32Array(3);
    const r = await server().infer('ensemble_identity', { inputs: { IN }, outputs: { OUT: { into } } });
    expect(Array.from(into)).toEqual([1.5, -2, 3]);
    expect(r.outputs.OUT!.data).toBe(into);
  });

  it('fails with the failing step’s error, prefixed with the ensemble', async () => {
    // The identity backend refuses a string correlation ID.
    const request = { correlationId: 'session-1', inputs: { IN } };
    const err = await server()
      .infer('ensemble_identity', request)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    expect(err).toMatchObject({
      code: 'INVALID_ARG',
      // Triton's text, then the sequence the request was of (triton-node names it where Triton does not).
      message:
        "in ensemble 'ensemble_identity', [request id: <id_unknown>] correlation ID in request is not an unsigned int (sequence session-1)",
      correlationId: 'session-1',
    });
    // A destination too small for the output: the caller's allocator says so.
    const small = await server()
      .infer('ensemble_identity', { inputs: { IN }, outputs: { OUT: { into: new Float32Array(1) } } })
      .catch((e: unknown) => e);
    expect(small).toMatchObject({ code: 'INVALID_ARG' });
    expect((small as Error).message).toMatch(/^in ensemble 'ensemble_identity', output 'OUT' needs 12 bytes/);
  });

  it('reports its metadata and config as Triton does', async () => {
    const model = server().model('ensemble_identity');
    expect(await model.metadata()).toMatchObject({
      name: 'ensemble_identity',
      platform: 'ensemble',
      inputs: [{ name: 'IN', datatype: 'FP32', shape: [-1, -1] }],
      outputs: [{ name: 'OUT', datatype: 'FP32', shape: [-1, -1] }],
    });
    const config = await model.config();
    expect(config).toMatchObject({
      platform: 'ensemble',
      backend: '',
      instance_group: [],
      model_transaction_policy: { decoupled: false },
      ensemble_scheduling: {
        step: [
          {
            model_name: 'identity_fp32',
            model_version: -1,
            input_map: { INPUT0: 'IN' },
            output_map: { OUTPUT0: 'MIDDLE' },
            model_namespace: '',
          },
          { model_name: 'identity_fp32', model_version: 1, input_map: { INPUT0: 'MIDDLE' } },
        ],
      },
    });
    expect(config).not.toHaveProperty('optimization');
  });
});

describe('statistics of an ensemble and of its steps’ models', () => {
  const server = useServer(['ensemble_identity']);

  it('count each request once for the ensemble and once per step; a failure twice for the ensemble', async () => {
    for (const data of [Float32Array.of(1), Float32Array.of(1, 2)]) {
      await server().infer('ensemble_identity', { inputs: { IN: data } });
    }
    await server().infer('ensemble_identity', {
      inputs: { IN: { data: Float32Array.of(1, 2), shape: [2, 1] } },
    });
    await expect(server().infer('ensemble_identity', { correlationId: 'x', inputs: { IN } })).rejects.toThrow(
      /in ensemble/,
    );
    // The ensemble counts a request when it is released, after its response
    // and after its steps' requests were released (their identity backend
    // counts each before the release): once every request is released, the
    // counts are final.
    expect(await requestsSettled()).toBe(true);
    const ensemble = await readUntil(
      () => stats(server(), 'ensemble_identity'),
      (s) => s.inferenceStats.success.count === 3 && s.inferenceStats.fail.count === 2,
    );
    expect(ensemble.inferenceStats.success.count).toBe(3);
    // Triton counts a failed ensemble request twice: its error response, then its end.
    expect(ensemble.inferenceStats.fail.count).toBe(2);
    expect(ensemble.inferenceCount).toBe(4);
    expect(ensemble.executionCount).toBe(3);
    expect(ensemble.batchStats.map((b) => [b.batchSize, b.computeInput.count])).toEqual([
      [1, 2],
      [2, 1],
    ]);
    // Its compute times are its steps' (two per request).
    const steps = await stats(server(), 'identity_fp32');
    expect(steps.inferenceStats.success.count).toBe(6);
    expect(steps.inferenceStats.fail.count).toBe(1);
    expect(steps.inferenceCount).toBe(8);
    expect(ensemble.inferenceStats.computeInfer.ns).toBe(steps.inferenceStats.computeInfer.ns);
  });
});

describe('an ensemble of parallel steps (ensemble_crossed)', () => {
  const server = useServer(['ensemble_crossed']);
  const inputs = { A: Float32Array.of(1), B: Float32Array.of(2, 3) };

  it('gives each step the tensor its input map names, and each output the tensor its output map names', async () => {
    const r = await server().infer('ensemble_crossed', { inputs });
    expect(floats(r, 'FROM_A')).toEqual([1]);
    expect(floats(r, 'FROM_B')).toEqual([2, 3]);
    expect(Object.keys(r.outputs).sort()).toEqual(['FROM_A', 'FROM_B']);
  });

  it('runs only the steps the requested outputs need', async () => {
    // A step's execution is counted after the response (by its backend,
    // before it releases the step's request), and an ensemble's request is
    // released after its steps' requests: the earlier tests' executions are
    // all counted once every request is released, and so is this one's.
    expect(await requestsSettled()).toBe(true);
    const before = (await stats(server(), 'identity_nobatch')).executionCount;
    const r = await server().infer('ensemble_crossed', { inputs, outputs: ['FROM_A'] });
    expect(Object.keys(r.outputs)).toEqual(['FROM_A']);
    expect(floats(r, 'FROM_A')).toEqual([1]);
    expect(await requestsSettled()).toBe(true);
    const after = await readUntil(
      () => stats(server(), 'identity_nobatch'),
      (s) => s.executionCount > before,
    );
    expect(after.executionCount - before).toBe(1);
    // Real r25.07 walks back from an unrequested output through an ensemble
    // input as if step 0 wrote it, and so also leaves out step 0 when only
    // its output is asked for: the request then ends in Triton's deadlock
    // error. The fake does the same.
    await expect(server().infer('ensemble_crossed', { inputs, outputs: ['FROM_B'] })).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message:
        "in ensemble 'ensemble_crossed', [request id: <id_unknown>] unexpected deadlock, at least one output is not set while no more ensemble steps can be made",
    });
  });
});

describe('an ensemble with a decoupled step (ensemble_square)', () => {
  const server = useServer(['ensemble_square']);

  it('is decoupled, and answers once per response of its decoupled step', async () => {
    const model = server().model('ensemble_square');
    expect(await model.config()).toMatchObject({ model_transaction_policy: { decoupled: true } });
    const echoes: number[][] = [];
    for await (const r of model.stream({ inputs: { COUNT: Int32Array.of(3) } })) {
      expect(r.model).toBe('ensemble_square');
      echoes.push(Array.from(r.outputs.ECHO!.data as Int32Array));
    }
    expect(echoes).toEqual([[3], [3], [3]]);
    const none: unknown[] = [];
    for await (const r of model.stream({ inputs: { COUNT: Int32Array.of(0) } })) none.push(r);
    expect(none).toEqual([]);
  });
});

describe('loading and unloading an ensemble (explicit model control)', () => {
  it('loads its steps’ models, which stay when it goes; unloading a step’s model takes it along, loading it again brings it back', async () => {
    const s = await Server.create(serverOptions());
    try {
      await s.loadModel('ensemble_identity');
      expect(await readyModels(s)).toEqual(['ensemble_identity', 'identity_fp32']);
      await s.unloadModel('ensemble_identity', { wait: true });
      expect(await readyModels(s)).toEqual(['identity_fp32']);
      await s.loadModel('ensemble_identity');
      await s.unloadModel('identity_fp32', { wait: true });
      expect(await eventually(async () => (await readyModels(s)).length === 0)).toBe(true);
      await s.loadModel('identity_fp32');
      expect(await readyModels(s)).toEqual(['ensemble_identity', 'identity_fp32']);
      expect(await inferIdentity(s)).toEqual([1.5, -2, 3]);
    } finally {
      await s.stop();
    }
  });

  it('unloadDependents unloads the steps’ models that were not loaded by name', async () => {
    const s = await Server.create(serverOptions());
    try {
      await s.loadModel('ensemble_identity');
      await s.unloadModel('ensemble_identity', { unloadDependents: true });
      expect(await eventually(async () => (await readyModels(s)).length === 0)).toBe(true);
      await s.loadModel('identity_fp32');
      await s.loadModel('ensemble_identity');
      await s.unloadModel('ensemble_identity', { unloadDependents: true, wait: true });
      expect(await readyModels(s)).toEqual(['identity_fp32']);
    } finally {
      await s.stop();
    }
  });
});

describe('what Triton checks when an ensemble loads', () => {
  const server = useServer([]);
  const identityStep = { model: 'identity_nobatch', inputs: { INPUT0: 'A' }, outputs: { OUTPUT0: 'OUT' } };

  async function loadError(config: Record<string, unknown>): Promise<TritonError> {
    const err = await server()
      .loadModel('ensemble_crossed', { config })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    return err as TritonError;
  }

  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'a step model no repository has',
      ensembleConfig([{ ...identityStep, model: 'no_such_model' }]),
      'ensemble ensemble_crossed contains models that are not available or ambiguous: no_such_model',
    ],
    [
      'a model input left unmapped',
      ensembleConfig([{ ...identityStep, model: 'identity_multi' }]),
      'in ensemble ensemble_crossed, input INPUT1 in model identity_multi is not mapped to any ensemble tensors',
    ],
    [
      'a data type that differs from the step model’s',
      ensembleConfig([identityStep], { in: 'TYPE_INT32' }),
      'in ensemble ensemble_crossed, ensemble tensor A: inconsistent data type: TYPE_INT32 is inferred from model ensemble_crossed while TYPE_FP32 is inferred from model identity_nobatch',
    ],
    [
      'a shape that differs from the step model’s',
      ensembleConfig([identityStep], { inDims: [2, 3] }),
      'in ensemble ensemble_crossed, ensemble tensor A: inconsistent shape: [2,3] is inferred from model ensemble_crossed while [-1] is inferred from model identity_nobatch',
    ],
    [
      'an output the step model does not have',
      ensembleConfig([{ ...identityStep, outputs: { OUTPUT9: 'OUT' } }]),
      'in ensemble ensemble_crossed, ensemble tensor OUT is mapped from non-existing output OUTPUT9 in model identity_nobatch',
    ],
    [
      'a version the step model does not serve',
      ensembleConfig([{ ...identityStep, version: 7 }]),
      "ensemble 'ensemble_crossed' depends on 'identity_nobatch' whose required version 7 is not loaded.",
    ],
    [
      'a larger max_batch_size than a step model’s',
      ensembleConfig([{ ...identityStep, model: 'identity_fp32' }], { maxBatchSize: 16 }),
      'ensemble ensemble_crossed allows maximum batch size 16, but it contains model identity_fp32 which only allows maximum batch size to be 8',
    ],
    [
      'a step model that fails to load',
      ensembleConfig([{ ...identityStep, model: 'unknown_backend' }]),
      "ensemble 'ensemble_crossed' depends on 'unknown_backend' which has no loaded version. Model 'unknown_backend' loading failed with error: version 1 is at UNAVAILABLE state: Invalid argument: unable to find backend library for backend 'no_such_backend', try specifying runtime on the model configuration.;",
    ],
  ];

  it.each(cases)('%s: INVALID_ARG in Triton’s words', async (_what, config, reason) => {
    const err = await loadError(config);
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toBe(`load failed for model 'ensemble_crossed': ${reason}\n`);
    expect((await server().modelIndex({ readyOnly: true })).map((e) => e.name)).not.toContain(
      'ensemble_crossed',
    );
  });

  it('steps whose outputs come from different decoupled models: INVALID_ARG', async () => {
    const config = {
      ...ensembleConfig([]),
      input: [
        { name: 'A', data_type: 'TYPE_FP32', dims: [-1] },
        { name: 'COUNT', data_type: 'TYPE_INT32', dims: [1] },
      ],
      output: [
        { name: 'OUT', data_type: 'TYPE_FP32', dims: [-1] },
        { name: 'SQUARED', data_type: 'TYPE_INT32', dims: [1] },
      ],
      ensemble_scheduling: {
        step: [
          {
            model_name: 'identity_nobatch',
            model_version: -1,
            input_map: { INPUT0: 'A' },
            output_map: { OUTPUT0: 'OUT' },
          },
          {
            model_name: 'square_int32',
            model_version: -1,
            input_map: { IN: 'COUNT' },
            output_map: { OUT: 'SQUARED' },
          },
        ],
      },
    };
    expect((await loadError(config)).message).toBe(
      "load failed for model 'ensemble_crossed': in ensemble ensemble_crossed, step of model 'ensemble_crossed' receives inputs originated from different decoupled models\n",
    );
  });

  it('an output no step writes: the load fails while reading the repository (the reason goes to the log)', async () => {
    const config = ensembleConfig([identityStep]);
    config.output.push({ name: 'OTHER', data_type: 'TYPE_FP32', dims: [-1] });
    const err = await loadError(config);
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toMatch(/^failed to load 'ensemble_crossed', failed to poll from model repository/);
  });
});

describe('an ensemble while other servers of the process come and go', () => {
  // Triton's process-wide memory managers are torn down by the delete of
  // any server (and by a failed ServerNew): the addon keeps stopped servers
  // undeleted while another one runs, and sets the managers up again after
  // a failed start (native/triton/server_handles.h).
  const server = useServer(['ensemble_identity']);

  it('keeps answering after another server stopped', async () => {
    expect(await inferIdentity(server())).toEqual([1.5, -2, 3]);
    const other = await Server.create(serverOptions());
    await other.stop();
    expect(addon().addonStats().parkedServers).toBeGreaterThan(0);
    expect(await inferIdentity(server())).toEqual([1.5, -2, 3]);
  });

  it('keeps answering after another server failed to start', async () => {
    await expect(Server.create(serverOptions({ modelRepository: '/nonexistent' }))).rejects.toMatchObject({
      name: 'TritonError',
    });
    expect(await inferIdentity(server())).toEqual([1.5, -2, 3]);
  });

  it('deletes the parked servers with the last one', async () => {
    const other = await Server.create(serverOptions());
    await other.stop();
    await server().stop();
    expect(addon().addonStats().parkedServers).toBe(0);
  });
});
