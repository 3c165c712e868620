/**
 * Real ONNX models (PaddleOCR's text detector and direction classifier) on
 * Triton's onnxruntime backend give the answers onnxruntime-node 1.22 gives
 * for the same inputs with the same thread settings: single requests, a
 * batch in one request, and single-sample requests the dynamic batcher
 * merges (model statistics show batches of more than one). ocr_cls_auto is
 * the classifier with no config.pbtxt, as Triton's auto-complete fills it in.
 */
import { join } from 'node:path';
import { FIXTURES, eventually, settledStatistics } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelStatistics, Server } from '../../lib/index.js';
import {
  DiffTable,
  compareOutput,
  decodePng,
  maxAbsDiff,
  ort,
  random,
  referenceSession,
  toChw,
  useRealModelServer,
} from './onnx-helpers.js';

/** Long enough that concurrent single requests meet in the dynamic batcher. */
const BATCH_DELAY_US = 20_000;

const real = useRealModelServer(['ocr_det', 'ocr_cls', 'ocr_cls_auto'], {
  maxQueueDelayMicroseconds: BATCH_DELAY_US,
});
const table = new DiffTable();
afterAll(() => table.print('onnx-models: Triton vs onnxruntime-node 1.22'));

const DET_OUT = 'sigmoid_0.tmp_0';
const CLS_OUT = 'softmax_0.tmp_0';
const DET_MEAN = [0.485, 0.456, 0.406];
const DET_STD = [0.229, 0.224, 0.225];
const CLS_MEAN = [0.5, 0.5, 0.5];
const CLS_STD = [0.5, 0.5, 0.5];

let det: ort.InferenceSession;
let cls: ort.InferenceSession;
beforeAll(async () => {
  if (real.skipReason() !== undefined) return;
  det = await referenceSession(real.files().ocrDet);
  cls = await referenceSession(real.files().ocrCls);
}, 60_000);

/** Pseudo-random values in [-2, 2] over a smooth pattern, so the detector sees structure and noise. */
function structured(shape: readonly number[], seed: number): Float32Array {
  const next = random(seed);
  const [n, c, h, w] = shape as [number, number, number, number];
  const out = new Float32Array(n * c * h * w);
  for (let i = 0; i < out.length; i++) {
    const x = i % w;
    const y = Math.floor(i / w) % h;
    const stripe = Math.sin((x + seed) / 5) * Math.cos(y / 7) > 0.3 ? 1.5 : -1.5;
    out[i] = stripe + (next() - 0.5);
  }
  return out;
}

async function reference(
  session: ort.InferenceSession,
  data: Float32Array,
  shape: readonly number[],
): Promise<ort.Tensor> {
  const result = await session.run({ x: new ort.Tensor('float32', data, shape) });
  return result[session.outputNames[0]!]!;
}

function batchSizes(
  before: ModelStatistics | undefined,
  after: ModelStatistics | undefined,
): Map<number, number> {
  const counts = new Map<number, number>();
  for (const b of after?.batchStats ?? []) {
    const was = before?.batchStats.find((x) => x.batchSize === b.batchSize)?.computeInfer.count ?? 0;
    if (b.computeInfer.count > was) counts.set(b.batchSize, b.computeInfer.count - was);
  }
  return counts;
}

/**
 * Sends `inputs` as concurrent single-sample requests and checks each answer
 * against the reference; returns the executions by batch size.
 */
async function batched(
  server: Server,
  model: string,
  output: string,
  session: ort.InferenceSession,
  inputs: Float32Array[],
  shape: readonly number[],
): Promise<Map<number, number>> {
  const expected = await Promise.all(inputs.map((x) => reference(session, x, shape)));
  // The earlier tests' executions are all counted first (settledStatistics).
  const before = await settledStatistics(server.model(model));
  const results = await Promise.all(
    inputs.map((x, i) => server.infer(model, { id: `${model}-${i}`, inputs: { x: { data: x, shape } } })),
  );
  results.forEach((r, i) => {
    expect(r.id).toBe(`${model}-${i}`);
    table.add(model, output, 'dynamic batch', compareOutput(r.outputs[output], expected[i]!));
  });
  // The backend reports an execution's statistics after its responses: wait until all are counted.
  let sizes = new Map<number, number>();
  const samples = () => [...sizes].reduce((sum, [size, count]) => sum + size * count, 0);
  await eventually(async () => {
    sizes = batchSizes(before, (await server.model(model).statistics())[0]);
    return samples() >= inputs.length;
  });
  expect(samples()).toBe(inputs.length);
  const shown = [...sizes].map(([size, count]) => `${count} of batch ${size}`).join(', ');
  console.log(`${model}: ${inputs.length} concurrent single requests ran as executions: ${shown}`);
  expect(
    [...sizes.keys()].some((size) => size > 1),
    `executions: ${shown}`,
  ).toBe(true);
  return sizes;
}

describe('ocr_det (PaddleOCR v4 text detection)', () => {
  it('single requests of two sizes from structured pseudo-random input', async () => {
    for (const [shape, seed] of [
      [[1, 3, 96, 160], 1],
      [[1, 3, 64, 128], 2],
    ] as const) {
      const x = structured(shape, seed);
      const expected = await reference(det, x, shape);
      expect(expected.dims).toEqual([1, 1, shape[2], shape[3]]);
      const r = await real.server().infer('ocr_det', { inputs: { x: { data: x, shape } } });
      table.add('ocr_det', DET_OUT, `single ${shape.join('x')}`, compareOutput(r.outputs[DET_OUT], expected));
    }
  });

  it('a real text image (test/fixtures/text-page.png): same map, and it finds the text', async () => {
    const image = decodePng(join(FIXTURES, 'text-page.png'));
    const shape = [1, 3, image.height, image.width];
    const x = toChw(image, DET_MEAN, DET_STD);
    const expected = await reference(det, x, shape);
    const r = await real.server().infer('ocr_det', { inputs: { x: { data: x, shape } } });
    table.add('ocr_det', DET_OUT, 'text image 320x96', compareOutput(r.outputs[DET_OUT], expected));
    // A detector that works marks text pixels (> 0.3, PaddleOCR's threshold) and not the whole page.
    const map = r.outputs[DET_OUT]!.data as Float32Array;
    const text = map.filter((p) => p > 0.3).length / map.length;
    expect(text).toBeGreaterThan(0.02);
    expect(text).toBeLessThan(0.6);
  });

  it('a batch of 3 in one request', async () => {
    const shape = [3, 3, 64, 96];
    const x = structured(shape, 3);
    const expected = await reference(det, x, shape);
    const r = await real.server().infer('ocr_det', { inputs: { x: { data: x, shape } } });
    table.add('ocr_det', DET_OUT, 'batch of 3 in a request', compareOutput(r.outputs[DET_OUT], expected));
  });

  it('concurrent single requests merged by the dynamic batcher answer as one by one', async () => {
    const shape = [1, 3, 64, 96];
    const inputs = Array.from({ length: 8 }, (_, i) => structured(shape, 10 + i));
    await batched(real.server(), 'ocr_det', DET_OUT, det, inputs, shape);
  });
});

describe('ocr_cls (PaddleOCR direction classifier)', () => {
  const shape = [1, 3, 48, 192];

  it('a real text line, upright and turned 180°', async () => {
    const image = decodePng(join(FIXTURES, 'text-line.png'));
    expect([image.width, image.height]).toEqual([192, 48]);
    const turned = { ...image, pixels: image.pixels.slice().reverse() };
    const answers: number[][] = [];
    for (const [name, img] of [
      ['upright', image],
      ['turned', turned],
    ] as const) {
      const x = toChw(img, CLS_MEAN, CLS_STD);
      const expected = await reference(cls, x, shape);
      const r = await real.server().infer('ocr_cls', { inputs: { x: { data: x, shape } } });
      table.add('ocr_cls', CLS_OUT, `text line ${name}`, compareOutput(r.outputs[CLS_OUT], expected));
      answers.push(Array.from(r.outputs[CLS_OUT]!.data as Float32Array));
    }
    console.log(`ocr_cls on text-line.png: upright [0°, 180°] = ${answers[0]}, turned = ${answers[1]}`);
  });

  it('a batch of 6 in one request, each sample as alone', async () => {
    const batch = [6, 3, 48, 192];
    const x = structured(batch, 20);
    const expected = await reference(cls, x, batch);
    const r = await real.server().infer('ocr_cls', { inputs: { x: { data: x, shape: batch } } });
    table.add('ocr_cls', CLS_OUT, 'batch of 6 in a request', compareOutput(r.outputs[CLS_OUT], expected));
    const per = 3 * 48 * 192;
    const out = r.outputs[CLS_OUT]!.data as Float32Array;
    for (let i = 0; i < 6; i++) {
      const alone = await reference(cls, x.slice(i * per, (i + 1) * per), shape);
      const diff = maxAbsDiff(out.subarray(i * 2, i * 2 + 2), alone.data as Float32Array);
      expect(diff).toBeLessThanOrEqual(1e-5);
      table.add('ocr_cls', CLS_OUT, 'batch of 6 vs each alone', diff);
    }
  });

  it('concurrent single requests merged by the dynamic batcher answer as one by one', async () => {
    const inputs = Array.from({ length: 12 }, (_, i) => structured(shape, 30 + i));
    await batched(real.server(), 'ocr_cls', CLS_OUT, cls, inputs, shape);
  });
});

describe('ocr_cls_auto (no config.pbtxt: Triton auto-completes it)', () => {
  it('the config as Triton reports it, filled in from the model file', async () => {
    const config = await real.server().model('ocr_cls_auto').config();
    expect(config.name).toBe('ocr_cls_auto');
    expect(config.backend).toBe('onnxruntime');
    expect(config.platform).toBe('onnxruntime_onnx');
    // The file's batch dim is symbolic: the backend batches, with its default max_batch_size of 4.
    expect(config.max_batch_size).toBe(4);
    expect(config.input?.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['x', 'TYPE_FP32', [3, -1, -1]],
    ]);
    expect(config.output?.map((o) => [o.name, o.data_type, o.dims])).toEqual([
      ['softmax_0.tmp_0', 'TYPE_FP32', [2]],
    ]);
    expect(config.dynamic_batching).toBeDefined();
    expect(config.instance_group?.map((g) => g.kind)).toEqual(['KIND_CPU']);
    expect(config.default_model_filename).toBe('model.onnx');
    const metadata = await real.server().model('ocr_cls_auto').metadata();
    expect(metadata.inputs).toEqual([{ name: 'x', datatype: 'FP32', shape: [-1, 3, -1, -1] }]);
    expect(metadata.outputs).toEqual([{ name: 'softmax_0.tmp_0', datatype: 'FP32', shape: [-1, 2] }]);
  });

  it('answers as onnxruntime-node: single, a batch of 4, and dynamically batched', async () => {
    const shape = [1, 3, 48, 192];
    const x = structured(shape, 40);
    const r = await real.server().infer('ocr_cls_auto', { inputs: { x: { data: x, shape } } });
    table.add(
      'ocr_cls_auto',
      CLS_OUT,
      'single',
      compareOutput(r.outputs[CLS_OUT], await reference(cls, x, shape)),
    );
    const batch = [4, 3, 48, 192];
    const xs = structured(batch, 41);
    const b = await real.server().infer('ocr_cls_auto', { inputs: { x: { data: xs, shape: batch } } });
    table.add(
      'ocr_cls_auto',
      CLS_OUT,
      'batch of 4 in a request',
      compareOutput(b.outputs[CLS_OUT], await reference(cls, xs, batch)),
    );
    // No queue delay here (auto-complete's dynamic_batching), two instances: enough requests that some wait.
    const inputs = Array.from({ length: 16 }, (_, i) => structured(shape, 50 + i));
    await batched(real.server(), 'ocr_cls_auto', CLS_OUT, cls, inputs, shape);
  });
});
