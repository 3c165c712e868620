/**
 * Shared setup of the real-model tests (onnx-models, onnx-vad): one server
 * per test file on a repository of the real ONNX models (test/backends/real-models.ts)
 * in a temp dir, onnxruntime-node sessions as the reference, and the
 * comparisons and inputs both files use.
 *
 * The tests run wherever an onnxruntime backend is: real Triton with
 * TRITON_BACKEND_DIR, or the fake engine once it computes ONNX models with
 * onnxruntime-node's library. A fake without one (or, for silero_vad,
 * without sequence batching) answers the load with an error, and the tests
 * skip with that error as the reason; any other failed load fails the file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import {
  type RealModelCopy,
  type RealModelFiles,
  type RealModelName,
  type RealRepositoryOptions,
  makeRealModelRepository,
  realModelFiles,
  writeRealModelCopy,
} from '@triton-node/test-support/backends/real-models.js';
import { library, needsBackend, serverOptions } from '@triton-node/test-support/helpers.js';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { Server, type Tensor } from '../../lib/index.js';

export { ort };

/** The ONNX Runtime thread settings the Triton configs and the reference sessions share. */
export const THREADS = { intraOpThreads: 1, interOpThreads: 1 } as const;

/** A reference session with the settings the Triton backend uses by default (graph level 'all', sequential). */
export function referenceSession(file: string): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(file, {
    intraOpNumThreads: THREADS.intraOpThreads,
    interOpNumThreads: THREADS.interOpThreads,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
}

/**
 * How a fake engine that cannot run a real model yet answers its load: no
 * onnxruntime backend (Triton's wording), or a scheduler it lacks
 * ("sequence batching is not supported by the fake engine").
 */
const FAKE_CANNOT_YET =
  /unable to find backend library for backend 'onnxruntime'|no onnxruntime backend|not supported by the fake engine/i;

export interface RealModelServer {
  /** The running server (throws when the file skips). */
  server(): Server;
  /** The model files (throws when they are missing). */
  files(): RealModelFiles;
  /** Why the file's tests skip, once its beforeAll ran (undefined: they run). */
  skipReason(): string | undefined;
}

/**
 * Starts a server on a temp repository of `models` before the file's tests
 * and stops it after. Every test of the file skips, with the reason, when the
 * model packages are missing or the library has no onnxruntime backend (the
 * fake without one); any other failed load fails.
 */
export function useRealModelServer(
  models: readonly RealModelName[],
  repository: RealRepositoryOptions = {},
  copies: readonly RealModelCopy[] = [],
): RealModelServer {
  let server: Server | undefined;
  let skip: string | undefined;
  let dir: string | undefined;
  const found = realModelFiles();
  beforeAll(async () => {
    if (typeof found === 'string') {
      skip = found;
      return;
    }
    const noOnnxRuntime = needsBackend('onnxruntime');
    if (noOnnxRuntime !== false) {
      skip = noOnnxRuntime;
      return;
    }
    dir = mkdtempSync(join(tmpdir(), 'triton-real-models-'));
    makeRealModelRepository(dir, { ...THREADS, ...repository, models });
    for (const copy of copies) writeRealModelCopy(dir, copy, { ...THREADS, ...repository });
    const isFake = library().isFake;
    server = await Server.create(serverOptions({ modelRepository: dir, strictModelConfig: false }));
    try {
      for (const model of [...models, ...copies.map((c) => c.name)]) await server.loadModel(model);
    } catch (err) {
      const message = (err as Error).message.replace(/\s+/g, ' ').trim();
      if (!isFake || !FAKE_CANNOT_YET.test(message)) throw err;
      skip = `the fake engine cannot run the real models yet (loading them: ${message})`;
    }
  }, 120_000);
  beforeEach((ctx) => {
    if (skip !== undefined) ctx.skip(skip);
  });
  afterAll(async () => {
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    server: () => {
      if (server === undefined || skip !== undefined) throw new Error('server not started');
      return server;
    },
    files: () => {
      if (typeof found === 'string') throw new Error(found);
      return found;
    },
    skipReason: () => skip,
  };
}

/** The largest |a[i] - b[i]|; throws when the lengths differ. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    if (!(d <= max)) max = d; // NaN on either side counts as the largest difference
  }
  return max;
}

/** Checks a Triton output against a reference tensor (shape and values) and returns the max difference. */
export function compareOutput(
  actual: Tensor | undefined,
  expected: ort.Tensor,
  shape: readonly number[] = expected.dims,
  tolerance = 1e-5,
): number {
  expect(actual, 'output missing').toBeDefined();
  expect(actual!.datatype).toBe('FP32');
  expect(actual!.shape).toEqual([...shape]);
  const diff = maxAbsDiff(actual!.data as Float32Array, expected.data as Float32Array);
  expect(diff).toBeLessThanOrEqual(tolerance);
  return diff;
}

/** Max differences by `model output (case)`, printed as one table at the end of the file. */
export class DiffTable {
  readonly #rows = new Map<string, { model: string; output: string; case: string; n: number; max: number }>();

  add(model: string, output: string, kind: string, diff: number): void {
    const key = `${model}\u0000${output}\u0000${kind}`;
    const row = this.#rows.get(key) ?? { model, output, case: kind, n: 0, max: 0 };
    row.n += 1;
    row.max = Math.max(row.max, diff);
    this.#rows.set(key, row);
  }

  print(title: string): void {
    if (this.#rows.size === 0) return;
    const lines = [...this.#rows.values()].map(
      (r) => `| ${r.model} | ${r.output} | ${r.case} | ${r.n} | ${r.max.toExponential(2)} |`,
    );
    console.log(
      [
        `${title} (library: ${library().isFake ? 'fake engine' : 'real Triton'})`,
        '| model | output | case | answers | max abs diff |',
        '|---|---|---|---|---|',
        ...lines,
      ].join('\n'),
    );
  }
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A decoded 8-bit image: `channels` values per pixel, row by row. */
export interface Image {
  width: number;
  height: number;
  channels: number;
  pixels: Uint8Array;
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/**
 * Decodes an 8-bit, non-interlaced PNG (grayscale, RGB, with or without
 * alpha): what ImageMagick writes for the fixtures. Anything else throws.
 */
export function decodePng(file: string): Image {
  const png = readFileSync(file);
  if (png.readUInt32BE(0) !== 0x89504e47) throw new Error(`${file}: not a PNG`);
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, color, , , interlace] = [data[8], data[9], data[10], data[11], data[12]];
      channels = PNG_CHANNELS[color!] ?? 0;
      if (depth !== 8 || channels === 0 || interlace !== 0) {
        throw new Error(
          `${file}: only 8-bit non-interlaced gray/RGB(A) PNGs (depth ${depth}, color ${color})`,
        );
      }
    } else if (type === 'IDAT') {
      idat.push(data);
    }
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const up = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[x - channels]! : 0;
      const b = up[x]!;
      const c = x >= channels ? up[x - channels]! : 0;
      let predictor: number;
      if (filter === 0) predictor = 0;
      else if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else throw new Error(`${file}: PNG filter ${filter} on row ${y}`);
      out[x] = (line[x]! + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/**
 * An image as a [3, H, W] float tensor: (v / 255 - mean[c]) / std[c] per
 * channel (a gray image gives all three), as PaddleOCR normalizes.
 */
export function toChw(image: Image, mean: readonly number[], std: readonly number[]): Float32Array {
  const { width, height, channels, pixels } = image;
  const out = new Float32Array(3 * height * width);
  for (let c = 0; c < 3; c++) {
    const source = channels >= 3 ? c : 0;
    for (let i = 0; i < height * width; i++) {
      out[c * height * width + i] = (pixels[i * channels + source]! / 255 - mean[c]!) / std[c]!;
    }
  }
  return out;
}
