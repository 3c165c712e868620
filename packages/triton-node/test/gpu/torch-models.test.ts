// Issue 41: real models on the GPU, through real Triton's pytorch and python
// backends, against torch itself on the same GPU. The models are made here
// by test/gpu/torch/make_models.py with the machine's torch (real
// architectures, random weights): ResNet-50 as TorchScript on the pytorch
// backend and the same file in a Python model that batches each execute(),
// a BERT-shaped sentence encoder and a GPU similarity model in Python.
// Every answer is compared with torch's own on the same inputs, from host,
// pinned and device memory, alone and dynamically batched. Skips, saying
// why, without a GPU, without real Triton's pytorch and python backends, or
// without a Python that has torch with CUDA.
//
// TRITON_NODE_GPU_MODELS=DIR keeps the models there (made once);
// TRITON_NODE_GPU_REPORT=FILE writes the answers table as JSON.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  PLACEMENTS,
  type Placement,
  gpuSkipReason,
  place,
  readFloats,
} from '@triton-node/test-support/gpu/gpu-env.js';
import {
  type Manifest,
  cosine,
  makeGpuModels,
  maxAbsDiff,
  readF32,
  readTexts,
  row,
  torchMissing,
} from '@triton-node/test-support/gpu/torch/models.js';
import {
  BACKEND_DIR,
  LIBRARY_PATH,
  library,
  readUntil,
  requestsSettled,
  settledStatistics,
  skipAllIf,
} from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CudaBuffer, type InferResult, Server, type Tensor } from '../../lib/index.js';

const IMAGE = 3 * 224 * 224;
const CLASSES = 1000;

function backendMissing(): string | false {
  if (!BACKEND_DIR)
    return 'needs real Triton (TRITON_SERVER_LIB and TRITON_BACKEND_DIR) with the pytorch and python backends';
  for (const [name, file] of [
    ['pytorch', 'libtriton_pytorch.so'],
    ['python', 'libtriton_python.so'],
  ]) {
    if (!existsSync(join(BACKEND_DIR, name!, file!)))
      return `needs Triton's ${name} backend (${join(BACKEND_DIR, name!, file!)})`;
  }
  return false;
}

const reason = gpuSkipReason || backendMissing() || torchMissing();

/** One row of the answers table: the largest difference to torch's answer. */
interface Answer {
  model: string;
  output: string;
  how: string;
  placement: Placement | 'mixed';
  maxAbsDiff: number;
  /** The largest |value| of the reference, for scale. */
  refMaxAbs: number;
  identical: boolean;
  cosineMin?: number;
}

const answers: Answer[] = [];

function maxAbs(a: Float32Array): number {
  let m = 0;
  for (const v of a) m = Math.max(m, Math.abs(v));
  return m;
}

function record(answer: Omit<Answer, 'identical'>): Answer {
  const full = { ...answer, identical: answer.maxAbsDiff === 0 };
  answers.push(full);
  return full;
}

/**
 * The tolerance of one comparison with torch. Singles run the same kernels
 * as torch's batch of 1: the goal is bit-identical, 1e-5 relative at most.
 * A dynamic batch of another size may pick other cuDNN algorithms (TF32
 * convolutions): compared with the nearer of torch's single and batched
 * answers, 1e-3 relative to the logits' scale.
 */
const SINGLE_TOLERANCE = 1e-5;
const BATCHED_TOLERANCE = 1e-3;

describe('real GPU models against torch on the same GPU', () => {
  skipAllIf(reason);
  let server: Server | undefined;
  let dir = '';
  let made = false;
  let manifest: Manifest;
  let images: Float32Array;
  let single: Float32Array;
  let batched: Float32Array;
  const loadMs: Record<string, number> = {};

  beforeAll(async () => {
    if (reason !== false) return;
    library();
    dir = process.env.TRITON_NODE_GPU_MODELS || mkdtempSync(join(tmpdir(), 'tn-gpu-models-'));
    made = !process.env.TRITON_NODE_GPU_MODELS;
    manifest = await makeGpuModels(dir);
    images = readF32(dir, manifest.resnet50.inputs);
    single = readF32(dir, manifest.resnet50.single);
    batched = readF32(dir, manifest.resnet50.batched);
    server = await Server.create({
      modelRepository: dir,
      library: LIBRARY_PATH,
      ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
      exitTimeoutSeconds: 30,
    });
    for (const name of ['resnet50_pt', 'resnet50_py', 'encoder', 'similarity']) {
      const t0 = performance.now();
      await server.loadModel(name);
      loadMs[name] = performance.now() - t0;
    }
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
    if (process.env.TRITON_NODE_GPU_REPORT) {
      writeFileSync(
        process.env.TRITON_NODE_GPU_REPORT,
        `${JSON.stringify({ gpu: manifest?.gpu, torch: manifest?.torch, loadMs, answers }, null, 2)}\n`,
      );
    }
    if (made && dir !== '') rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  function image(i: number): Float32Array {
    return images.subarray(i * IMAGE, (i + 1) * IMAGE);
  }

  async function classify(model: string, i: number, where: Placement): Promise<Float32Array> {
    const input = model === 'resnet50_pt' ? 'INPUT__0' : 'INPUT0';
    const output = model === 'resnet50_pt' ? 'OUTPUT__0' : 'OUTPUT0';
    const data = place(image(i).slice(), where);
    try {
      const r = await server!.model(model).infer({
        inputs: { [input]: { data, shape: [1, 3, 224, 224], datatype: 'FP32' } },
      });
      const logits = readFloats(r.outputs[output]!).slice();
      r.dispose();
      return logits;
    } finally {
      if (!(data instanceof Float32Array)) data.dispose();
    }
  }

  for (const model of ['resnet50_pt', 'resnet50_py']) {
    for (const where of PLACEMENTS) {
      it(`${model}: each image alone from ${where} memory equals torch's batch of 1`, async () => {
        const n = manifest.resnet50.images;
        let worst = 0;
        for (let i = 0; i < n; i += 1) {
          const got = await classify(model, i, where);
          worst = Math.max(worst, maxAbsDiff(got, row(single, i, CLASSES)));
        }
        const scale = maxAbs(single);
        record({
          model,
          output: 'logits',
          how: 'single',
          placement: where,
          maxAbsDiff: worst,
          refMaxAbs: scale,
        });
        expect(worst).toBeLessThanOrEqual(SINGLE_TOLERANCE * Math.max(1, scale));
      });
    }

    it(`${model}: concurrent requests from every placement are batched by Triton and agree with torch`, async () => {
      const n = manifest.resnet50.images;
      // The earlier tests' executions counted first (settledStatistics).
      const before = await settledStatistics(server!.model(model));
      const wheres = Array.from({ length: n * 3 }, (_, k) => PLACEMENTS[k % 3]!);
      const got = await Promise.all(wheres.map((w, k) => classify(model, k % n, w)));
      let worst = 0;
      for (let k = 0; k < got.length; k += 1) {
        const i = k % n;
        const d = Math.min(
          maxAbsDiff(got[k]!, row(single, i, CLASSES)),
          maxAbsDiff(got[k]!, row(batched, i, CLASSES)),
        );
        worst = Math.max(worst, d);
      }
      const scale = maxAbs(single);
      record({
        model,
        output: 'logits',
        how: `batched (${got.length} concurrent)`,
        placement: 'mixed',
        maxAbsDiff: worst,
        refMaxAbs: scale,
      });
      expect(worst).toBeLessThanOrEqual(BATCHED_TOLERANCE * Math.max(1, scale));
      // Counted after the responses (the execution maybe after the release).
      expect(await requestsSettled()).toBe(true);
      const after = await readUntil(
        async () => (await server!.model(model).statistics())[0]!,
        (s) =>
          s.inferenceCount - before.inferenceCount >= got.length && s.executionCount > before.executionCount,
      );
      const inferences = after.inferenceCount - before.inferenceCount;
      const executions = after.executionCount - before.executionCount;
      expect(inferences).toBe(got.length);
      // Dynamic batching ran several requests per execution.
      expect(executions).toBeLessThan(inferences);
    });
  }

  it("resnet50_py: an input in another process's device memory (CUDA IPC) equals torch", async () => {
    // The other process allocates one image on the GPU and exports it; this
    // one opens the handle, writes image 2 there and sends the mapping as the
    // input (Triton and the stub open it again by its IPC handle).
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('./ipc-child.ts', import.meta.url)),
        'export',
        String(IMAGE * 4),
      ],
      { stdio: 'pipe' },
    );
    let err = '';
    child.stderr.on('data', (d) => {
      err += String(d);
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    try {
      const first = await lines.next();
      expect(first.done, `the child exported nothing: ${err}`).toBe(false);
      const { handle, byteLength } = JSON.parse(first.value as string) as {
        handle: string;
        byteLength: number;
      };
      const shared = CudaBuffer.fromIpcHandle(new Uint8Array(Buffer.from(handle, 'base64')), byteLength);
      expect(shared.imported).toBe(true);
      shared.copyFrom(image(2));
      const r = await server!.model('resnet50_py').infer({
        inputs: { INPUT0: { data: shared, shape: [1, 3, 224, 224], datatype: 'FP32' } },
      });
      const got = readFloats(r.outputs.OUTPUT0!).slice();
      r.dispose();
      shared.dispose();
      const d = maxAbsDiff(got, row(single, 2, CLASSES));
      record({
        model: 'resnet50_py',
        output: 'logits',
        how: 'single, CUDA IPC input',
        placement: 'gpu',
        maxAbsDiff: d,
        refMaxAbs: maxAbs(single),
      });
      expect(d).toBeLessThanOrEqual(SINGLE_TOLERANCE * Math.max(1, maxAbs(single)));
    } finally {
      child.stdin.write('close\n');
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });

  async function embed(texts: string[], memory: 'cpu' | 'gpu' = 'cpu'): Promise<InferResult> {
    return server!.model('encoder').infer({
      inputs: { TEXT: { data: texts, shape: [texts.length, 1], datatype: 'BYTES' } },
      outputs: { EMBEDDING: { memory } },
    });
  }

  it('encoder: each text alone, and all at once, agree with torch (cosine and max difference)', async () => {
    const texts = readTexts(dir, manifest);
    const size = manifest.encoder.size;
    const ref = readF32(dir, manifest.encoder.single);
    let worst = 0;
    let worstCos = 1;
    for (let i = 0; i < texts.length; i += 1) {
      const r = await embed([texts[i]!]);
      const v = readFloats(r.outputs.EMBEDDING!);
      worst = Math.max(worst, maxAbsDiff(v, row(ref, i, size)));
      worstCos = Math.min(worstCos, cosine(v, row(ref, i, size)));
      r.dispose();
    }
    record({
      model: 'encoder',
      output: 'embedding',
      how: 'single',
      placement: 'cpu',
      maxAbsDiff: worst,
      refMaxAbs: 1,
      cosineMin: worstCos,
    });
    expect(worstCos).toBeGreaterThanOrEqual(0.99999);

    const refBatched = readF32(dir, manifest.encoder.batched);
    const all = await embed(texts);
    const v = readFloats(all.outputs.EMBEDDING!);
    expect(all.outputs.EMBEDDING!.shape).toEqual([texts.length, size]);
    let cosAll = 1;
    for (let i = 0; i < texts.length; i += 1)
      cosAll = Math.min(cosAll, cosine(row(v, i, size), row(refBatched, i, size)));
    record({
      model: 'encoder',
      output: 'embedding',
      how: `one request of ${texts.length}`,
      placement: 'cpu',
      maxAbsDiff: maxAbsDiff(v, refBatched),
      refMaxAbs: 1,
      cosineMin: cosAll,
    });
    expect(cosAll).toBeGreaterThanOrEqual(0.99999);
    all.dispose();
  });

  it('encoder: concurrent requests are batched by Triton, each answer its own text', async () => {
    const texts = readTexts(dir, manifest);
    const size = manifest.encoder.size;
    const ref = readF32(dir, manifest.encoder.single);
    const before = await settledStatistics(server!.model('encoder'));
    const results = await Promise.all(texts.map((t) => embed([t])));
    let worstCos = 1;
    results.forEach((r, i) => {
      worstCos = Math.min(worstCos, cosine(readFloats(r.outputs.EMBEDDING!), row(ref, i, size)));
      r.dispose();
    });
    record({
      model: 'encoder',
      output: 'embedding',
      how: `batched (${texts.length} concurrent)`,
      placement: 'cpu',
      maxAbsDiff: Number.NaN,
      refMaxAbs: 1,
      cosineMin: worstCos,
    });
    expect(worstCos).toBeGreaterThanOrEqual(0.99999);
    expect(await requestsSettled()).toBe(true);
    const after = await readUntil(
      async () => (await server!.model('encoder').statistics())[0]!,
      (s) =>
        s.inferenceCount - before.inferenceCount >= texts.length && s.executionCount > before.executionCount,
    );
    expect(after.executionCount - before.executionCount).toBeLessThan(texts.length);
  });

  it('encoder output stays on the GPU and goes into the similarity model without a host copy', async () => {
    const texts = readTexts(dir, manifest);
    const size = manifest.encoder.size;
    const ref = readF32(dir, manifest.encoder.batched);
    const docs = await embed(texts, 'gpu');
    const query = await embed([texts[3]!], 'gpu');
    const d: Tensor = docs.outputs.EMBEDDING!;
    const q: Tensor = query.outputs.EMBEDDING!;
    expect(d.memoryType).toBe('gpu');
    expect(q.memoryType).toBe('gpu');
    const r = await server!.model('similarity').infer({
      inputs: {
        QUERY: { data: q.data, shape: [size], datatype: 'FP32' },
        DOCS: { data: d.data, shape: [texts.length, size], datatype: 'FP32' },
      },
      outputs: { SCORES: { memory: 'cpu' }, ON_GPU: { memory: 'cpu' } },
    });
    // Both inputs reached the model in device memory: no host round trip.
    expect(Array.from(r.outputs.ON_GPU!.data as Int32Array)).toEqual([1, 1]);
    const scores = readFloats(r.outputs.SCORES!);
    expect(scores.length).toBe(texts.length);
    const refQuery = row(readF32(dir, manifest.encoder.single), 3, size);
    for (let i = 0; i < texts.length; i += 1) {
      expect(scores[i]).toBeCloseTo(cosine(refQuery, row(ref, i, size)), 4);
    }
    expect(scores.indexOf(Math.max(...scores))).toBe(3);
    r.dispose();
    docs.dispose();
    query.dispose();
  });
});
