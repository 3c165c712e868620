/**
 * The fake engine's onnxruntime backend: real ONNX models computed by
 * onnxruntime-node's ONNX Runtime (the inference tests also run on a real
 * Triton with its onnxruntime backend). Loads (auto-complete, complete and broken
 * configs) compared with what real Tritons said, the fake imitating each
 * release in turn (test/fixtures/real-triton-r25.07/onnxruntime/ and
 * real-triton-r26.06/onnxruntime/: r26.06's backend has BF16), inference outputs compared
 * with onnxruntime-node's own, single and batched, and the error when ONNX
 * Runtime is missing.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type RealModelCopy,
  makeRealModelRepository,
  onnxRuntimeNode,
  realModelFiles,
  writeRealModelCopy,
} from '@triton-node/test-support/backends/real-models.js';
import {
  BACKEND_DIR,
  FIXTURES,
  LIBRARY_PATH,
  library,
  readUntil,
  rejectionAfterIdle,
  requestsSettled,
  runProcess,
  skipAllIf,
} from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelConfig, Server, TritonError, formatModelConfig } from '../../lib/index.js';
import type { FakeRelease } from '../../lib/testing.js';
import { ONNX_CASES, type OnnxOutcome, caseModes } from '../onnxruntime/cases.js';
import {
  ADD_BIAS,
  ADD_FOUR,
  DEFAULT_BIAS,
  IDENTITY_FP16,
  IDENTITY_STRING,
  SEQUENCE_CONTROLS,
  SEQUENCE_STRING_CORRID,
} from './tiny-onnx.js';

/** Whether the fake engine runs sequence batching (implicit state) yet. */
const SEQUENCE_BATCHER = true;
const RECORDER = fileURLToPath(new URL('../onnxruntime/record.ts', import.meta.url));
/** The releases whose onnxruntime loads were recorded; the fake imitates each in turn. */
const RELEASES: readonly FakeRelease[] = ['r25.07', 'r26.06'];
const recordedIn = (release: FakeRelease) => join(FIXTURES, `real-triton-${release}`, 'onnxruntime');
const files = realModelFiles();
const ortLibrary = onnxRuntimeNode();

function skipReason(): string | false {
  if (!library().isFake) return 'fake engine only (its own onnxruntime backend)';
  if (typeof files === 'string') return files;
  if (ortLibrary === undefined) return 'onnxruntime-node (a devDependency) is not installed';
  return false;
}

/**
 * Why the inference tests cannot run: they run on the fake with onnxruntime-node,
 * and on a real Triton whose backends include onnxruntime (same models, same
 * answers).
 */
function inferenceSkipReason(): string | false {
  if (typeof files === 'string') return files;
  if (ortLibrary === undefined) return 'onnxruntime-node (a devDependency) is not installed';
  if (library().isFake) return false;
  return BACKEND_DIR !== undefined && existsSync(join(BACKEND_DIR, 'onnxruntime'))
    ? false
    : 'real Triton without an onnxruntime backend in TRITON_BACKEND_DIR';
}

/**
 * How long a sequence of silero_vad may idle: far longer than a busy machine
 * pauses between the requests of a sequence. The test of the idle limit runs
 * on silero_vad_idle, a copy that ends a sequence idle for IDLE_US.
 */
const SEQUENCE_IDLE_US = 10_000_000;
const IDLE_US = 300_000;

/** A tiny model's folder: `bytes` as 1/model.onnx, and `config`. */
function writeTinyModel(repo: string, bytes: Uint8Array, config: ModelConfig): void {
  mkdirSync(join(repo, config.name!, '1'), { recursive: true });
  writeFileSync(join(repo, config.name!, '1', 'model.onnx'), bytes);
  writeFileSync(join(repo, config.name!, 'config.pbtxt'), formatModelConfig(config));
}

const cpu = [{ kind: 'KIND_CPU' as const, count: 1 }];
/** The tiny models of the inference tests (test/backends/tiny-onnx.ts). */
const TINY_INFERENCE: Array<[Uint8Array, ModelConfig]> = [
  [
    IDENTITY_FP16,
    {
      name: 'identity_fp16',
      backend: 'onnxruntime',
      max_batch_size: 4,
      input: [{ name: 'x', data_type: 'TYPE_FP16', dims: [2] }],
      output: [{ name: 'y', data_type: 'TYPE_FP16', dims: [2] }],
      instance_group: cpu,
    },
  ],
  [
    ADD_BIAS,
    {
      name: 'add_bias',
      backend: 'onnxruntime',
      max_batch_size: 0,
      input: [
        { name: 'x', data_type: 'TYPE_FP32', dims: [-1, 4] },
        { name: 'bias', data_type: 'TYPE_FP32', dims: [4], optional: true },
      ],
      output: [{ name: 'y', data_type: 'TYPE_FP32', dims: [-1, 4] }],
      instance_group: cpu,
    },
  ],
  [
    // Three requests make a batch (and nothing runs before they are there):
    // a run that fails fails all three.
    ADD_FOUR,
    {
      name: 'add_four',
      backend: 'onnxruntime',
      max_batch_size: 4,
      input: [{ name: 'x', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'y', data_type: 'TYPE_FP32', dims: [4] }],
      dynamic_batching: { preferred_batch_size: [3], max_queue_delay_microseconds: 10_000_000 },
      instance_group: cpu,
    },
  ],
  [
    // Four rows make a batch (and nothing runs before they are there).
    IDENTITY_STRING,
    {
      name: 'identity_string',
      backend: 'onnxruntime',
      max_batch_size: 4,
      input: [{ name: 'x', data_type: 'TYPE_STRING', dims: [3] }],
      output: [{ name: 'y', data_type: 'TYPE_STRING', dims: [3] }],
      dynamic_batching: { preferred_batch_size: [4], max_queue_delay_microseconds: 10_000_000 },
      instance_group: cpu,
    },
  ],
  [
    SEQUENCE_CONTROLS,
    {
      name: 'sequence_controls',
      backend: 'onnxruntime',
      max_batch_size: 4,
      sequence_batching: {
        max_sequence_idle_microseconds: SEQUENCE_IDLE_US,
        control_input: [
          { name: 'START', control: [{ kind: 'CONTROL_SEQUENCE_START', int32_false_true: [7, 9] }] },
          { name: 'END', control: [{ kind: 'CONTROL_SEQUENCE_END', fp32_false_true: [-1.5, 2.5] }] },
          { name: 'READY', control: [{ kind: 'CONTROL_SEQUENCE_READY', bool_false_true: [false, true] }] },
          { name: 'CORRID', control: [{ kind: 'CONTROL_SEQUENCE_CORRID', data_type: 'TYPE_UINT64' }] },
        ],
      },
      input: [{ name: 'INPUT', data_type: 'TYPE_INT32', dims: [1] }],
      output: [
        { name: 'OUTPUT', data_type: 'TYPE_INT32', dims: [1] },
        { name: 'START_OUT', data_type: 'TYPE_INT32', dims: [1] },
        { name: 'END_OUT', data_type: 'TYPE_FP32', dims: [1] },
        { name: 'READY_OUT', data_type: 'TYPE_BOOL', dims: [1] },
        { name: 'CORRID_OUT', data_type: 'TYPE_UINT64', dims: [1] },
      ],
      instance_group: cpu,
    },
  ],
  [
    // Two instances: a sequence's queued requests could run on either.
    SEQUENCE_CONTROLS,
    {
      name: 'sequence_controls_two',
      backend: 'onnxruntime',
      max_batch_size: 4,
      sequence_batching: {
        max_sequence_idle_microseconds: SEQUENCE_IDLE_US,
        control_input: [
          { name: 'START', control: [{ kind: 'CONTROL_SEQUENCE_START', int32_false_true: [0, 1] }] },
          { name: 'END', control: [{ kind: 'CONTROL_SEQUENCE_END', fp32_false_true: [0, 1] }] },
          { name: 'READY', control: [{ kind: 'CONTROL_SEQUENCE_READY', bool_false_true: [false, true] }] },
          { name: 'CORRID', control: [{ kind: 'CONTROL_SEQUENCE_CORRID', data_type: 'TYPE_UINT64' }] },
        ],
      },
      input: [{ name: 'INPUT', data_type: 'TYPE_INT32', dims: [1] }],
      output: [{ name: 'OUTPUT', data_type: 'TYPE_INT32', dims: [1] }],
      instance_group: [{ kind: 'KIND_CPU', count: 2 }],
    },
  ],
  [
    SEQUENCE_STRING_CORRID,
    {
      name: 'sequence_string_corrid',
      backend: 'onnxruntime',
      max_batch_size: 0,
      // The fake sleeps this long in each execution (real Triton's onnxruntime backend ignores it).
      parameters: { execute_delay_ms: { string_value: '200' } },
      sequence_batching: {
        max_sequence_idle_microseconds: SEQUENCE_IDLE_US,
        oldest: { max_candidate_sequences: 4 },
        control_input: [
          { name: 'CORRID', control: [{ kind: 'CONTROL_SEQUENCE_CORRID', data_type: 'TYPE_STRING' }] },
        ],
      },
      input: [{ name: 'TEXT', data_type: 'TYPE_STRING', dims: [1] }],
      output: [
        { name: 'TEXT_OUT', data_type: 'TYPE_STRING', dims: [1] },
        { name: 'CORRID_OUT', data_type: 'TYPE_STRING', dims: [1] },
      ],
      instance_group: cpu,
    },
  ],
];

/** The rows the batching tests send at once (requests of 1, 2 and 1 rows). */
const BATCH_ROWS = [1, 2, 1];

/**
 * Copies of the models for one test each: `<model>_batched`, whose batcher
 * waits for exactly BATCH_ROWS' rows (preferred_batch_size) for up to 30 s,
 * so that requests sent together run as one execution however slowly the
 * machine submits them; silero_vad_idle, one instance ending sequences idle
 * for IDLE_US.
 */
const COPIES: RealModelCopy[] = [
  ...(['ocr_det', 'ocr_cls'] as const).map((of) => ({
    of,
    name: `${of}_batched`,
    change: (c: ModelConfig): ModelConfig => ({
      ...c,
      dynamic_batching: {
        preferred_batch_size: [BATCH_ROWS.reduce((a, b) => a + b, 0)],
        max_queue_delay_microseconds: 30_000_000,
      },
    }),
  })),
  {
    of: 'silero_vad',
    name: 'silero_vad_idle',
    change: (c) => ({
      ...c,
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
      sequence_batching: { ...c.sequence_batching, max_sequence_idle_microseconds: IDLE_US },
    }),
  },
];

// One server for the inference tests: real Triton r25.07's onnxruntime
// backend fails every load of a second server in one process.
let shared: { repo: string; server: Server } | undefined;
beforeAll(async () => {
  if (inferenceSkipReason() !== false) return;
  const options = {
    maxQueueDelayMicroseconds: 200_000,
    maxSequenceIdleMicroseconds: SEQUENCE_IDLE_US,
    perModel: { silero_vad: { instances: 2 } },
  };
  const repo = makeRealModelRepository(realpathSync(mkdtempSync(join(tmpdir(), 'fake-ort-infer-'))), {
    ...options,
    models: ['ocr_det', 'ocr_cls', 'silero_vad'],
  });
  for (const [bytes, config] of TINY_INFERENCE) writeTinyModel(repo, bytes, config);
  const copies = COPIES.map((copy) => writeRealModelCopy(repo, copy, options));
  const server = await Server.create({
    library: LIBRARY_PATH,
    modelRepository: repo,
    ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
    log: { warn: false },
  });
  shared = { repo, server };
  const models = ['ocr_det', 'ocr_cls', 'silero_vad', ...TINY_INFERENCE.map(([, c]) => c.name!), ...copies];
  await Promise.all(models.map((m) => server.loadModel(m)));
}, 60_000);
afterAll(async () => {
  await shared?.server.stop();
  if (shared !== undefined) rmSync(shared.repo, { recursive: true, force: true });
});

/** The recorded outcomes, by case. */
function recorded(release: FakeRelease): Map<string, OnnxOutcome> {
  const out = new Map<string, OnnxOutcome>();
  for (const f of readdirSync(recordedIn(release))) {
    if (!f.endsWith('.json')) continue;
    const doc = JSON.parse(readFileSync(join(recordedIn(release), f), 'utf8')) as OnnxOutcome;
    out.set(doc.case, doc);
  }
  return out;
}

/** The fields of a model config that say what the model is and how it is served. */
function essentials(c: ModelConfig | undefined): unknown {
  if (c === undefined) return undefined;
  const db = c.dynamic_batching;
  return {
    name: c.name,
    platform: c.platform,
    backend: c.backend,
    max_batch_size: c.max_batch_size,
    input: c.input,
    output: c.output,
    dynamic_batching: db === undefined ? undefined : { preferred_batch_size: db.preferred_batch_size },
    sequence_batching: c.sequence_batching === undefined ? undefined : true,
    instance_group: c.instance_group?.map((g) => ({ name: g.name, kind: g.kind, count: g.count })),
    default_model_filename: c.default_model_filename,
  };
}

describe('the fake onnxruntime backend without ONNX Runtime', () => {
  skipAllIf(
    !library().isFake
      ? 'fake engine only'
      : process.env.TRITON_NODE_ONNXRUNTIME_LIB
        ? 'TRITON_NODE_ONNXRUNTIME_LIB is set'
        : typeof files === 'string'
          ? files
          : false,
  );
  let repo: string;
  beforeAll(() => {
    repo = makeRealModelRepository(realpathSync(mkdtempSync(join(tmpdir(), 'fake-ort-none-'))), {
      models: ['ocr_cls'],
    });
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('fails the load saying what was tried and how to install it', async () => {
    const server = await Server.create({
      library: LIBRARY_PATH,
      modelRepository: repo,
      log: { warn: false, error: false },
      // What lib/ hands over when onnxruntime-node cannot be resolved.
      backendConfig: {
        onnxruntime: {
          'fake-onnxruntime-library': '',
          'fake-onnxruntime-searched': 'onnxruntime-node, not resolvable',
        },
      },
    });
    try {
      const err = await server.loadModel('ocr_cls').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TritonError);
      const message = (err as TritonError).message;
      expect((err as TritonError).code).toBe('INVALID_ARG');
      expect(message).toContain("load failed for model 'ocr_cls'");
      expect(message).toContain('TRITON_NODE_ONNXRUNTIME_LIB, unset; onnxruntime-node, not resolvable');
      expect(message).toContain('npm install onnxruntime-node');
    } finally {
      await server.stop();
    }
  });

  it('names a library that cannot be opened', async () => {
    const server = await Server.create({
      library: LIBRARY_PATH,
      modelRepository: repo,
      log: { warn: false, error: false },
      backendConfig: { onnxruntime: { 'fake-onnxruntime-library': '/nonexistent/libonnxruntime.so.1' } },
    });
    try {
      const err = (await server.loadModel('ocr_cls').catch((e: unknown) => e)) as TritonError;
      expect(err).toBeInstanceOf(TritonError);
      // Opened first: cannot open it; after another ONNX Runtime was opened in
      // this process (the inference tests' server): refused, as a second copy.
      expect(err.message).toMatch(
        /cannot open '\/nonexistent\/libonnxruntime\.so\.1'|already open from '.*' in this process; cannot open a second one from '\/nonexistent\/libonnxruntime\.so\.1'/,
      );
    } finally {
      await server.stop();
    }
  });
});

for (const release of RELEASES) {
  describe(`loads of real models on the fake onnxruntime backend, against real Triton ${release}`, () => {
    skipAllIf(skipReason());
    const outcomes = new Map<string, OnnxOutcome>();
    beforeAll(async () => {
      // As recorded: each mode in a process of its own (after a failed
      // onnxruntime load, no later server of a process starts the backend).
      // Not spawnSync: vitest's worker must answer its runner meanwhile.
      const out = mkdtempSync(join(tmpdir(), 'fake-ort-cases-'));
      try {
        for (const mode of caseModes()) {
          // The library under test is the fake here (the describe skips elsewhere).
          const run = await runProcess(process.execPath, ['--import', 'tsx', RECORDER, out, mode], {
            timeoutMs: 120_000,
            env: { ...process.env, TRITONFAKE_RELEASE: release },
          });
          if (run.status !== 0) throw new Error(`the ${mode} cases failed: ${run.stderr}`);
        }
        for (const f of readdirSync(out)) {
          const o = JSON.parse(readFileSync(join(out, f), 'utf8')) as OnnxOutcome;
          outcomes.set(o.case, o);
        }
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    }, 480_000);

    const real = recorded(release);
    it('has a recorded outcome for every case', () => {
      expect([...real.keys()].sort()).toEqual(ONNX_CASES.map((c) => c.name).sort());
    });

    for (const c of ONNX_CASES) {
      it(`${c.name}: as real Triton`, (ctx) => {
        if (c.config?.sequence_batching !== undefined && !SEQUENCE_BATCHER) {
          ctx.skip('the fake engine has no sequence batcher yet');
        }
        const want = real.get(c.name);
        const got = outcomes.get(c.name);
        expect(got).toBeDefined();
        expect(want).toBeDefined();
        expect({ loaded: got?.loaded, error: got?.error }).toEqual({
          loaded: want?.loaded,
          error: want?.error,
        });
        expect(essentials(got?.config)).toEqual(essentials(want?.config));
      });
    }
  });
}

describe('inference on the onnxruntime backend, against onnxruntime-node', () => {
  skipAllIf(inferenceSkipReason());
  // onnxruntime-node's InferenceSession, over the same library (one copy by SONAME).
  let ort: typeof import('onnxruntime-node');
  beforeAll(async () => {
    ort = await import('onnxruntime-node');
  });
  const server = () => shared!.server;

  /** Deterministic input data in [0, 1). */
  function image(n: number, h: number, w: number, seed: number): Float32Array {
    const data = new Float32Array(n * 3 * h * w);
    let x = seed;
    for (let i = 0; i < data.length; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      data[i] = x / 2147483648;
    }
    return data;
  }

  async function reference(
    file: string,
    input: Float32Array,
    shape: number[],
    output: string,
  ): Promise<Float32Array> {
    const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    try {
      const result = await session.run({ x: new ort.Tensor('float32', input, shape) });
      return result[output]!.data as Float32Array;
    } finally {
      await session.release();
    }
  }

  function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
    expect(a.length).toBe(b.length);
    let max = 0;
    for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
    return max;
  }

  const cases = [
    {
      model: 'ocr_det',
      output: 'sigmoid_0.tmp_0',
      h: 64,
      w: 96,
      file: () => (files as { ocrDet: string }).ocrDet,
    },
    {
      model: 'ocr_cls',
      output: 'softmax_0.tmp_0',
      h: 48,
      w: 192,
      file: () => (files as { ocrCls: string }).ocrCls,
    },
  ];

  for (const k of cases) {
    it(`${k.model}: one request, outputs as onnxruntime-node's (<= 1e-5)`, async () => {
      const x = image(1, k.h, k.w, 7);
      const result = await server().infer(k.model, {
        inputs: { x: { datatype: 'FP32', shape: [1, 3, k.h, k.w], data: x } },
      });
      const out = result.outputs[k.output]!;
      const want = await reference(k.file(), x, [1, 3, k.h, k.w], k.output);
      expect(out.datatype).toBe('FP32');
      expect(maxDifference(out.data as Float32Array, want)).toBeLessThanOrEqual(1e-5);
    });

    it(`${k.model}: concurrent requests batched into one execution, each its own rows`, async () => {
      // The batched copy waits for all the rows (its preferred batch size),
      // so the requests run together whenever each one is submitted.
      const batched = `${k.model}_batched`;
      const sizes = BATCH_ROWS;
      const inputs = sizes.map((n, i) => image(n, k.h, k.w, 100 + i));
      const results = await Promise.all(
        inputs.map((x, i) =>
          server().infer(batched, {
            inputs: { x: { datatype: 'FP32', shape: [sizes[i]!, 3, k.h, k.w], data: x } },
          }),
        ),
      );
      // Triton's onnxruntime backend counts the execution after it released
      // the requests, which may be after their responses: wait for it.
      expect(await requestsSettled()).toBe(true);
      const after = await readUntil(
        async () => (await server().model(batched).statistics())[0]!,
        (s) => s.executionCount >= 1 && s.inferenceCount >= 4,
      );
      expect(after.executionCount).toBe(1);
      expect(after.inferenceCount).toBe(4);
      expect(after.batchStats.map((b) => [b.batchSize, b.computeInfer.count])).toEqual([[4, 1]]);
      for (let i = 0; i < sizes.length; i++) {
        const out = results[i]!.outputs[k.output]!;
        expect(out.shape[0]).toBe(sizes[i]);
        const want = await reference(k.file(), inputs[i]!, [sizes[i]!, 3, k.h, k.w], k.output);
        expect(maxDifference(out.data as Float32Array, want)).toBeLessThanOrEqual(1e-5);
      }
    });
  }

  it('a request the model rejects at run time fails with ONNX Runtime words, the server keeps serving', async () => {
    // The detector's feature pyramid cannot add up the levels of a 33x33 image.
    const err = await server()
      .infer('ocr_det', {
        inputs: { x: { datatype: 'FP32', shape: [1, 3, 33, 33], data: image(1, 33, 33, 1) } },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).code).toBe('INTERNAL');
    expect((err as TritonError).message).toMatch(
      /^onnx runtime error \d+: Non-zero status code returned while running/,
    );
    const ok = await server().infer('ocr_cls', {
      inputs: { x: { datatype: 'FP32', shape: [1, 3, 48, 192], data: image(1, 48, 192, 3) } },
    });
    expect(ok.outputs['softmax_0.tmp_0']!.shape).toEqual([1, 2]);
  });
});

describe('tiny models on the onnxruntime backend: FP16, an optional input, a batch whose run fails', () => {
  skipAllIf(inferenceSkipReason());
  const server = () => shared!.server;

  it('FP16 goes through as FP16, bit for bit', async () => {
    // 1, -2, 0.5, 65504 (the largest FP16) as their 16 bits.
    const bits = Uint16Array.of(0x3c00, 0xc000, 0x3800, 0x7bff);
    const r = await server().infer('identity_fp16', {
      inputs: { x: { datatype: 'FP16', shape: [2, 2], data: bits } },
    });
    expect(r.outputs.y!.datatype).toBe('FP16');
    expect(r.outputs.y!.shape).toEqual([2, 2]);
    expect(Array.from(r.outputs.y!.data as Uint16Array)).toEqual(Array.from(bits));
  });

  it('an optional input left out takes the default the model gives it; given, it replaces it', async () => {
    const x = Float32Array.of(1, 2, 3, 4);
    const without = await server().infer('add_bias', { inputs: { x: { shape: [1, 4], data: x } } });
    expect(Array.from(without.outputs.y!.data as Float32Array)).toEqual(
      DEFAULT_BIAS.map((b, i) => b + x[i]!),
    );
    const given = await server().infer('add_bias', {
      inputs: { x: { shape: [1, 4], data: x }, bias: { shape: [4], data: Float32Array.of(1, 1, 1, 1) } },
    });
    expect(Array.from(given.outputs.y!.data as Float32Array)).toEqual([2, 3, 4, 5]);
  });

  it('a run that fails fails every request of its batch, with the ONNX Runtime error', async () => {
    // 3 wide against the model's 4 constants: the Add cannot broadcast.
    const outcomes = await Promise.allSettled(
      [0, 1, 2].map((i) =>
        server().infer('add_four', { inputs: { x: { shape: [1, 3], data: Float32Array.of(i, i, i) } } }),
      ),
    );
    for (const [i, o] of outcomes.entries()) {
      expect(o.status, `request ${i} of the batch`).toBe('rejected');
      const err = (o as PromiseRejectedResult).reason as TritonError;
      expect(err, `request ${i}`).toBeInstanceOf(TritonError);
      expect(err.code).toBe('INTERNAL');
      expect(err.message).toMatch(
        /^onnx runtime error \d+: Non-zero status code returned while running Add node/,
      );
    }
    // The model still serves a batch it can run.
    const ok = await Promise.all(
      [0, 1, 2].map((i) =>
        server().infer('add_four', { inputs: { x: { shape: [1, 4], data: Float32Array.of(i, i, i, i) } } }),
      ),
    );
    expect(ok.map((r) => Array.from(r.outputs.y!.data as Float32Array))).toEqual([
      [1, 2, 3, 4],
      [2, 3, 4, 5],
      [3, 4, 5, 6],
    ]);
  });
});

describe('string tensors on the onnxruntime backend (TYPE_STRING as ONNX strings)', () => {
  skipAllIf(inferenceSkipReason());
  const server = () => shared!.server;

  it('round-trips strings, batched with other requests, each its own rows', async () => {
    const rows = [
      [['a', '', 'héllo ✓']],
      [
        ['x'.repeat(1000), 'b', 'c'],
        ['d', 'e', ''],
      ],
      [['🚀', 'f', 'g']],
    ];
    const results = await Promise.all(
      rows.map((r) =>
        server().infer('identity_string', {
          inputs: { x: { datatype: 'BYTES', shape: [r.length, 3], data: r.flat() } },
        }),
      ),
    );
    results.forEach((res, i) => {
      expect(res.outputs.y!.datatype).toBe('BYTES');
      expect(res.outputs.y!.shape).toEqual([rows[i]!.length, 3]);
      expect(res.outputs.y!.strings()).toEqual(rows[i]!.flat());
    });
  });

  it('an element ends at its first NUL byte, as ONNX Runtime takes C strings', async () => {
    const elements = [Buffer.from('ab\0cd'), Buffer.from('\0x'), Buffer.from('plain')];
    const results = await Promise.all(
      [0, 1].map(() =>
        server().infer('identity_string', {
          inputs: { x: { datatype: 'BYTES', shape: [2, 3], data: [...elements, ...elements] } },
        }),
      ),
    );
    for (const r of results) expect(r.outputs.y!.strings()).toEqual(['ab', '', 'plain', 'ab', '', 'plain']);
  });
});

describe('sequence control inputs on the onnxruntime backend (START, END, READY, CORRID)', () => {
  skipAllIf(inferenceSkipReason());
  const server = () => shared!.server;

  function step(id: number | string, value: number, start: boolean, end: boolean) {
    return server().infer('sequence_controls', {
      inputs: { INPUT: { datatype: 'INT32', shape: [1, 1], data: Int32Array.of(value) } },
      correlationId: id,
      sequenceStart: start,
      sequenceEnd: end,
    });
  }

  it('gives each request the configured false/true values of its flags, READY true and its correlation id', async () => {
    const id = 2n ** 40n + 5n;
    const seen = [];
    for (const [i, flags] of [
      [true, false],
      [false, false],
      [false, true],
    ].entries()) {
      const r = await server().infer('sequence_controls', {
        inputs: { INPUT: { datatype: 'INT32', shape: [1, 1], data: Int32Array.of(i) } },
        correlationId: id,
        sequenceStart: flags[0],
        sequenceEnd: flags[1],
      });
      for (const name of ['START_OUT', 'END_OUT', 'READY_OUT', 'CORRID_OUT'])
        expect(r.outputs[name]!.shape, name).toEqual([1, 1]);
      seen.push({
        output: Array.from(r.outputs.OUTPUT!.data as Int32Array),
        start: Array.from(r.outputs.START_OUT!.data as Int32Array),
        end: Array.from(r.outputs.END_OUT!.data as Float32Array),
        ready: Array.from(r.outputs.READY_OUT!.data as Uint8Array).map(Boolean),
        corrid: Array.from(r.outputs.CORRID_OUT!.data as BigUint64Array),
      });
    }
    expect(seen).toEqual([
      { output: [0], start: [9], end: [-1.5], ready: [true], corrid: [id] },
      { output: [1], start: [7], end: [-1.5], ready: [true], corrid: [id] },
      { output: [2], start: [7], end: [2.5], ready: [true], corrid: [id] },
    ]);
    // START and END on one request: both true.
    const both = await step(3, 4, true, true);
    expect(Array.from(both.outputs.START_OUT!.data as Int32Array)).toEqual([9]);
    expect(Array.from(both.outputs.END_OUT!.data as Float32Array)).toEqual([2.5]);
  });

  it('a string CORRID control gets a string correlation id; a number for it, or a string for a numeric one, is refused', async () => {
    const r = await server().infer('sequence_string_corrid', {
      inputs: { TEXT: { datatype: 'BYTES', shape: [1], data: ['hello'] } },
      correlationId: 'session-ä',
      sequenceStart: true,
      sequenceEnd: true,
    });
    expect(r.outputs.TEXT_OUT!.strings()).toEqual(['hello']);
    expect(r.outputs.CORRID_OUT!.strings()).toEqual(['session-ä']);
    await expect(
      server().infer('sequence_string_corrid', {
        inputs: { TEXT: { datatype: 'BYTES', shape: [1], data: ['x'] } },
        correlationId: 12,
        sequenceStart: true,
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringContaining(
        "sequence batching control 'CORRID' data-type is 'UINT64', but model 'sequence_string_corrid' expects 'BYTES'",
      ),
    });
    await expect(step('text-id', 1, true, true)).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringContaining(
        "sequence batching control 'CORRID' data-type is 'BYTES', but model 'sequence_controls' expects 'UINT64'",
      ),
    });
  });

  it("refuses control inputs the model cannot take or the config gets wrong, in Triton's words", async () => {
    const base = TINY_INFERENCE.find(([, c]) => c.name === 'sequence_controls')![1];
    type Controls = NonNullable<NonNullable<ModelConfig['sequence_batching']>['control_input']>;
    const controls: Controls = base.sequence_batching!.control_input!;
    const broken: Array<[string, ModelConfig['sequence_batching'], string]> = [
      [
        'sequence_controls_unknown',
        {
          control_input: [
            ...controls.filter((c) => c.name !== 'CORRID'),
            { name: 'NOPE', control: [{ kind: 'CONTROL_SEQUENCE_CORRID', data_type: 'TYPE_INT32' }] },
          ] as Controls,
        },
        "configuration specified sequence control 'NOPE', but model does not provide that input",
      ],
      [
        'sequence_controls_type',
        {
          control_input: controls.map((c) =>
            c.name === 'START'
              ? { name: 'START', control: [{ kind: 'CONTROL_SEQUENCE_START', fp32_false_true: [0, 1] }] }
              : c,
          ),
        },
        "unable to load model 'sequence_controls_type', sequence control 'START', the model expects data-type INT32 but the model configuration specifies data-type TYPE_FP32",
      ],
      [
        'sequence_controls_entries',
        {
          control_input: controls.map((c) =>
            c.name === 'END'
              ? { name: 'END', control: [{ kind: 'CONTROL_SEQUENCE_END', int32_false_true: [0, 1, 2] }] }
              : c,
          ),
        },
        // A config Triton refuses while reading the repository: the reason goes to its log only.
        "failed to load 'sequence_controls_entries', failed to poll from model repository",
      ],
    ];
    for (const [name, sequence_batching, message] of broken) {
      writeTinyModel(shared!.repo, SEQUENCE_CONTROLS, { ...base, name, sequence_batching });
      const err = await server()
        .loadModel(name)
        .catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(TritonError);
      expect((err as TritonError).message, name).toContain(message);
    }
  });

  it('forgets a sequence once its END request is submitted: a request sent right after needs START', async () => {
    // Sent while the END request still runs (the fake's copy of the model sleeps 200 ms in
    // each execution, execute_delay_ms; real Triton forgot the id when it queued the END anyway).
    const text = (id: string, start: boolean, end: boolean) =>
      server().infer('sequence_string_corrid', {
        inputs: { TEXT: { datatype: 'BYTES', shape: [1], data: ['x'] } },
        correlationId: id,
        sequenceStart: start,
        sequenceEnd: end,
      });
    const ending = text('s-601', true, true);
    const late = text('s-601', false, false).then(
      () => 'served',
      (e: unknown) => e,
    );
    await ending;
    expect(await late).toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringContaining(
        "inference request for sequence s-601 to model 'sequence_string_corrid' must specify the START flag",
      ),
    });
    // A new sequence of that id starts as any.
    const again = await Promise.all([text('s-601', true, false), text('s-601', false, true)]);
    expect(again.map((r) => r.outputs.CORRID_OUT!.strings())).toEqual([['s-601'], ['s-601']]);
  });

  it("a sequence's responses arrive in its requests' order, its requests queued at once on two instances", async () => {
    // The next request of a sequence may run only once the response before it went out:
    // were it queued earlier, the other instance could answer it first.
    const sequences = [501, 502, 503, 504];
    const steps = 12;
    const arrived = new Map<number, number[]>(sequences.map((id) => [id, []]));
    await Promise.all(
      sequences.flatMap((id) =>
        Array.from({ length: steps }, (_, i) =>
          server()
            .infer('sequence_controls_two', {
              inputs: { INPUT: { datatype: 'INT32', shape: [1, 1], data: Int32Array.of(i) } },
              correlationId: id,
              sequenceStart: i === 0,
              sequenceEnd: i === steps - 1,
            })
            .then((r) => arrived.get(id)!.push((r.outputs.OUTPUT!.data as Int32Array)[0]!)),
        ),
      ),
    );
    for (const id of sequences)
      expect(arrived.get(id), `sequence ${id}`).toEqual(Array.from({ length: steps }, (_, i) => i));
  });

  it("a request cannot give a control input (it is the batcher's)", async () => {
    const err = await server()
      .infer('sequence_controls', {
        inputs: {
          INPUT: { datatype: 'INT32', shape: [1, 1], data: Int32Array.of(1) },
          START: { datatype: 'INT32', shape: [1, 1], data: Int32Array.of(1) },
        },
        correlationId: 77,
        sequenceStart: true,
        sequenceEnd: true,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).code).toBe('INVALID_ARG');
  });
});

describe('Silero VAD on the onnxruntime backend: a sequence with implicit state', () => {
  skipAllIf(inferenceSkipReason());
  let ort: typeof import('onnxruntime-node');
  beforeAll(async () => {
    ort = await import('onnxruntime-node');
  });
  const server = () => shared!.server;

  /** A 512-sample chunk of a tone with noise, different per chunk. */
  function chunk(i: number, samples = 512): Float32Array {
    const a = new Float32Array(samples);
    for (let t = 0; t < a.length; t++)
      a[t] = 0.3 * Math.sin((t + i * 512) * 0.07) + 0.01 * Math.cos(t * 13.1 + i);
    return a;
  }

  function vadRequest(i: number, id: number, start: boolean, end: boolean, samples = 512) {
    return {
      inputs: {
        input: { datatype: 'FP32' as const, shape: [1, samples], data: chunk(i, samples) },
        sr: { datatype: 'INT64' as const, shape: [1], data: new BigInt64Array([16000n]) },
      },
      correlationId: id,
      sequenceStart: start,
      sequenceEnd: end,
    };
  }

  /** onnxruntime-node over the same chunks, carrying h and c by hand from zeros. */
  async function referenceProbabilities(chunks: number, samples = 512): Promise<number[]> {
    const session = await ort.InferenceSession.create((files as { sileroVad: string }).sileroVad, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    });
    try {
      let h = new ort.Tensor('float32', new Float32Array(128), [2, 1, 64]);
      let c = new ort.Tensor('float32', new Float32Array(128), [2, 1, 64]);
      const out: number[] = [];
      for (let i = 0; i < chunks; i++) {
        const r = await session.run({
          input: new ort.Tensor('float32', chunk(i, samples), [1, samples]),
          sr: new ort.Tensor('int64', new BigInt64Array([16000n]), []),
          h,
          c,
        });
        out.push((r.output!.data as Float32Array)[0]!);
        h = r.hn as typeof h;
        c = r.cn as typeof c;
      }
      return out;
    } finally {
      await session.release();
    }
  }

  it('carries h and c from one request of a sequence to the next, as onnxruntime-node does by hand', async () => {
    const want = await referenceProbabilities(6);
    // Two sequences at once, interleaved: each keeps its own state.
    const got: Record<number, number[]> = { 7: [], 8: [] };
    for (let i = 0; i < 6; i++) {
      const [a, b] = await Promise.all([
        server().infer('silero_vad', vadRequest(i, 7, i === 0, i === 5)),
        server().infer('silero_vad', vadRequest(i, 8, i === 0, i === 5)),
      ]);
      got[7]!.push((a.outputs.output!.data as Float32Array)[0]!);
      got[8]!.push((b.outputs.output!.data as Float32Array)[0]!);
      expect(a.outputs.output!.shape).toEqual([1, 1]);
      expect(Object.keys(a.outputs)).toEqual(['output']);
    }
    for (const id of [7, 8]) {
      for (let i = 0; i < 6; i++) expect(Math.abs(got[id]![i]! - want[i]!)).toBeLessThanOrEqual(1e-5);
    }
    // Without the state the later chunks would differ: the state matters.
    const fresh = await server().infer('silero_vad', vadRequest(5, 9, true, true));
    expect(Math.abs((fresh.outputs.output!.data as Float32Array)[0]! - want[5]!)).toBeGreaterThan(1e-4);
  });

  it('requests queued at once run in order, one after the other', async () => {
    // Long chunks (a few ms each), all submitted at once on a model of two
    // instances: run side by side they would read a state not yet written.
    const n = 12;
    const want = await referenceProbabilities(n, 8000);
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        server().infer('silero_vad', vadRequest(i, 11, i === 0, i === n - 1, 8000)),
      ),
    );
    results.forEach((r, i) => {
      expect(Math.abs((r.outputs.output!.data as Float32Array)[0]! - want[i]!)).toBeLessThanOrEqual(1e-5);
    });
  });

  it('refuses a sequence that did not start, one that ended, and one idle past max_sequence_idle_microseconds', async () => {
    const notStarted = `inference request for sequence 21 to model 'silero_vad' must specify the START flag on the first request of the sequence`;
    await expect(server().infer('silero_vad', vadRequest(0, 21, false, false))).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: notStarted,
    });
    await server().infer('silero_vad', vadRequest(0, 22, true, true));
    await expect(server().infer('silero_vad', vadRequest(1, 22, false, false))).rejects.toMatchObject({
      message: notStarted.replace('21', '22'),
    });
    // On the copy that ends a sequence idle for IDLE_US.
    await server().infer('silero_vad_idle', vadRequest(0, 23, true, false));
    await server().infer('silero_vad_idle', vadRequest(1, 23, false, false));
    const idled = await rejectionAfterIdle(
      () => server().infer('silero_vad_idle', vadRequest(2, 23, false, false)),
      IDLE_US / 1000,
    );
    expect(idled).toMatchObject({
      message: notStarted.replace('21', '23').replace("'silero_vad'", "'silero_vad_idle'"),
    });
  });

  it("a request cannot give a state input (it is the batcher's)", async () => {
    const request = vadRequest(0, 31, true, true);
    const withState = {
      ...request,
      inputs: {
        ...request.inputs,
        h: { datatype: 'FP32' as const, shape: [2, 1, 64], data: new Float32Array(128) },
      },
    };
    const err = await server()
      .infer('silero_vad', withState)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).message).toContain("has no input 'h'");
  });
});

describe('a second server of the process after a failed onnxruntime load (as real Triton r25.07)', () => {
  skipAllIf(inferenceSkipReason());
  const SCRIPT = join(FIXTURES, 'onnxruntime-second-server.ts');
  async function run(mode: 'broken' | 'missing' | 'good'): Promise<{ first: string; second: string }> {
    const child = await runProcess(process.execPath, ['--import', 'tsx', SCRIPT, mode], {
      timeoutMs: 120_000,
    });
    if (child.status !== 0) throw new Error(`${SCRIPT} exited ${child.status}: ${child.stderr}`);
    return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { first: string; second: string };
  }

  it('cannot start the onnxruntime backend again', async () => {
    const said = await run('broken');
    expect(said.first).toContain("unexpected inference input 'image', allowed inputs are: x");
    expect(said.second).toContain(
      "load failed for model 'ocr_cls': version 1 is at UNAVAILABLE state: Already exists: OnnxLoader singleton already initialized",
    );
  }, 120_000);

  it('starts it again when no load failed, or one failed before making its session (no model file)', async () => {
    expect(await run('good')).toEqual({ first: 'loaded', second: 'loaded' });
    const missing = await run('missing');
    expect(missing.first).toContain('Internal: failed to stat file ');
    expect(missing.second).toBe('loaded');
  }, 240_000);
});
