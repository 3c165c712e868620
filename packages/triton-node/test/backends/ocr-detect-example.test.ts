// examples/ocr-detect.ts end to end on the real PaddleOCR detector: the
// committed image's three lines of text come out as three boxes where the
// text was drawn, and a blank page gives none. Runs where the library has an
// onnxruntime backend: real Triton (TRITON_SERVER_LIB + TRITON_BACKEND_DIR),
// or the fake engine once it runs ONNX Runtime.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { realModelFiles } from '@triton-node/test-support/backends/real-models.js';
import { BACKEND_DIR, LIBRARY_PATH } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NO_ORT = /unable to find backend library for backend 'onnxruntime'/;

interface Output {
  width: number;
  height: number;
  boxes: Array<{ x: number; y: number; width: number; height: number; score: number }>;
}

interface Run {
  output?: Output;
  noBackend?: string;
  code: number | null;
  stderr: string;
}

/** Runs an example on `image` (default: its own); the JSON it prints, or why it could not run. */
function runExample(image?: string, example = 'examples/ocr-detect.ts'): Promise<Run> {
  const args = ['--import', 'tsx', example, ...(image === undefined ? [] : [image])];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      TRITON_SERVER_LIB: LIBRARY_PATH,
      ...(BACKEND_DIR === undefined ? {} : { TRITON_BACKEND_DIR: BACKEND_DIR }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => {
    out += String(d);
  });
  proc.stderr!.on('data', (d) => {
    err += String(d);
  });
  return new Promise((resolve, reject) => {
    proc.on('exit', (code) => {
      if (code !== 0 && NO_ORT.test(err))
        return resolve({ noBackend: err.match(NO_ORT)![0], code, stderr: err });
      if (code === 2) return resolve({ code, stderr: err });
      if (code !== 0) return reject(new Error(`${example} exited ${code}: ${err}`));
      resolve({ output: JSON.parse(out.trim().split('\n').at(-1)!) as Output, code, stderr: err });
    });
  });
}

/** A white RGB PNG (filter 0 rows), written with node:zlib. */
function blankPng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, body: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(body.length, 0);
    head.write(type, 4, 'ascii');
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE(crc(Buffer.concat([head.subarray(4), body])), 0);
    return Buffer.concat([head, body, tail]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 3 + 1) * height, 0xff);
  for (let y = 0; y < height; y++) raw[y * (width * 3 + 1)] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'ocr-detect-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('examples/ocr-detect.ts', () => {
  it('finds the three lines of text of examples/images/text-lines.png where they were drawn', async (ctx) => {
    const files = realModelFiles();
    if (typeof files === 'string') ctx.skip(files);
    const run = await runExample();
    if (run.noBackend !== undefined) ctx.skip(`the library has no onnxruntime backend (${run.noBackend})`);
    const { width, height, boxes } = run.output!;
    expect([width, height]).toEqual([480, 200]);
    // The image (ImageMagick, DejaVu Sans 28 pt) has text at x = 24 with
    // baselines at y = 50, 110 and 170: a line's box sits just above its
    // baseline, about 20-40 px tall, 200-320 px wide.
    expect(boxes).toHaveLength(3);
    boxes.forEach((b, i) => {
      const baseline = 50 + 60 * i;
      expect(b.x, `line ${i + 1} left`).toBeGreaterThanOrEqual(10);
      expect(b.x, `line ${i + 1} left`).toBeLessThanOrEqual(35);
      expect(b.y, `line ${i + 1} top`).toBeGreaterThanOrEqual(baseline - 40);
      expect(b.y + b.height, `line ${i + 1} bottom`).toBeLessThanOrEqual(baseline + 14);
      expect(b.y + b.height, `line ${i + 1} bottom`).toBeGreaterThanOrEqual(baseline - 4);
      expect(b.width).toBeGreaterThan(200);
      expect(b.width).toBeLessThan(320);
      expect(b.score).toBeGreaterThan(0.6);
    });
  }, 120_000);

  it('finds no text on a blank page', async (ctx) => {
    const files = realModelFiles();
    if (typeof files === 'string') ctx.skip(files);
    const file = path.join(dir, 'blank.png');
    writeFileSync(file, blankPng(320, 160));
    const run = await runExample(file);
    if (run.noBackend !== undefined) ctx.skip(`the library has no onnxruntime backend (${run.noBackend})`);
    expect(run.output!.boxes).toEqual([]);
    expect([run.output!.width, run.output!.height]).toEqual([320, 160]);
  }, 120_000);
});

// The same detection as one ensemble (Python pre- and post-processing around
// the ONNX detector) behind the gateway: the same boxes as the JS steps.
describe('examples/ocr-pipeline.ts', () => {
  const python =
    BACKEND_DIR !== undefined && existsSync(path.join(BACKEND_DIR, 'python', 'libtriton_python.so'));

  it('says it needs real Triton with the python backend, and exits with 2, where there is none', async (ctx) => {
    if (python) ctx.skip('this library has a python backend (the next test runs the example)');
    const run = await runExample(undefined, 'examples/ocr-pipeline.ts');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /needs real Triton with its python and onnxruntime backends.*TRITON_BACKEND_DIR/,
    );
  }, 60_000);

  it('answers through the gateway with the boxes the JS steps find', async (ctx) => {
    if (!python) ctx.skip('needs real Triton with a python backend (TRITON_BACKEND_DIR/python)');
    const files = realModelFiles();
    if (typeof files === 'string') ctx.skip(files);
    const viaPipeline = await runExample(undefined, 'examples/ocr-pipeline.ts');
    const viaJs = await runExample();
    expect(viaPipeline.output!.boxes).toHaveLength(3);
    expect(viaPipeline.output!.boxes.length).toBe(viaJs.output!.boxes.length);
    viaPipeline.output!.boxes.forEach((b, i) => {
      const js = viaJs.output!.boxes[i]!;
      for (const k of ['x', 'y', 'width', 'height'] as const)
        expect(Math.abs(b[k] - js[k]), `box ${i} ${k}`).toBeLessThanOrEqual(1);
      expect(Math.abs(b.score - js.score)).toBeLessThan(0.01);
    });
  }, 180_000);
});
