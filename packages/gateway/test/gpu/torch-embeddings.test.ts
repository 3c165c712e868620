// Issue 41: the gateway's OpenAI `POST /v1/embeddings` over a real GPU
// sentence encoder. The `encoder` model of test/gpu/torch/make_models.py (a
// BERT-shaped encoder in a Python model: TEXT BYTES [1] in, EMBEDDING FP32
// [256] out, max_batch_size 64, dynamic batching) is made with the
// machine's torch, served by real Triton's python backend, and asked
// through an in-process gateway with the official `openai` client: each
// reference text alone, all of them in one request, and 16 concurrent
// requests, which Triton's dynamic batcher must merge. Every vector is
// compared with torch's own answer for the same text (cosine >= 0.99999).
// Skips, saying why, without a GPU, without real Triton's python backend,
// or without a Python that has torch with CUDA.
//
// TRITON_NODE_GPU_MODELS=DIR keeps the models there (made once).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gpuSkipReason } from '@triton-node/test-support/gpu/gpu-env.js';
import {
  type Manifest,
  cosine,
  makeGpuModels,
  readF32,
  readTexts,
  row,
  torchMissing,
} from '@triton-node/test-support/gpu/torch/models.js';
import {
  BACKEND_DIR,
  LIBRARY_PATH,
  eventually,
  library,
  settledStatistics,
  skipAllIf,
} from '@triton-node/test-support/helpers.js';
import OpenAI from 'openai';
import { Server, statisticsDelta } from 'triton-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, createGateway } from '../../lib/index.js';

function pythonBackendMissing(): string | false {
  if (!BACKEND_DIR)
    return 'needs real Triton (TRITON_SERVER_LIB and TRITON_BACKEND_DIR) with the python backend';
  const file = join(BACKEND_DIR, 'python', 'libtriton_python.so');
  return existsSync(file) ? false : `needs Triton's python backend (${file})`;
}

const reason = gpuSkipReason || pythonBackendMissing() || torchMissing();

/** The cosine every answer must reach against torch's vector for its text. */
const MIN_COSINE = 0.99999;

describe('/v1/embeddings over the real GPU encoder, against torch', () => {
  skipAllIf(reason);
  let server: Server | undefined;
  let gateway: Gateway | undefined;
  let listener: http.Server | undefined;
  let client: OpenAI;
  let dir = '';
  let made = false;
  let manifest: Manifest;
  let texts: string[];
  let single: Float32Array;
  let batched: Float32Array;

  beforeAll(async () => {
    if (reason !== false) return;
    library();
    dir = process.env.TRITON_NODE_GPU_MODELS || mkdtempSync(join(tmpdir(), 'tn-gpu-models-'));
    made = !process.env.TRITON_NODE_GPU_MODELS;
    manifest = await makeGpuModels(dir);
    texts = readTexts(dir, manifest);
    single = readF32(dir, manifest.encoder.single);
    batched = readF32(dir, manifest.encoder.batched);
    server = await Server.create({
      modelRepository: dir,
      library: LIBRARY_PATH,
      ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
      exitTimeoutSeconds: 30,
    });
    await server.loadModel('encoder');
    gateway = createGateway(server, { openai: { 'gpu-encoder': { model: 'encoder', kind: 'embeddings' } } });
    listener = http.createServer(gateway.handler);
    await new Promise<void>((resolve) => listener!.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as AddressInfo;
    client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 600_000);

  afterAll(async () => {
    gateway?.close();
    listener?.closeAllConnections();
    if (listener) await new Promise((resolve) => listener!.close(resolve));
    await server?.stop();
    if (made && dir !== '') rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  /** The worst cosine of `vectors` against rows of `ref`, row i for vector i (or `rows[i]`). */
  function worstCosine(vectors: number[][], ref: Float32Array, rows?: number[]): number {
    const size = manifest.encoder.size;
    let worst = 1;
    vectors.forEach((v, i) => {
      expect(v).toHaveLength(size);
      worst = Math.min(worst, cosine(Float32Array.from(v), row(ref, rows?.[i] ?? i, size)));
    });
    return worst;
  }

  it('each reference text alone (float and the client’s default base64) matches torch', async () => {
    const floats: number[][] = [];
    const decoded: number[][] = [];
    for (const input of texts) {
      const f = await client.embeddings.create({ model: 'gpu-encoder', input, encoding_format: 'float' });
      expect(f.data).toHaveLength(1);
      floats.push(f.data[0]!.embedding);
      const b = await client.embeddings.create({ model: 'gpu-encoder', input });
      decoded.push(b.data[0]!.embedding);
    }
    expect(worstCosine(floats, single)).toBeGreaterThanOrEqual(MIN_COSINE);
    expect(worstCosine(decoded, single)).toBeGreaterThanOrEqual(MIN_COSINE);
    // base64 carries the same float32 values as the JSON numbers.
    decoded.forEach((v, i) => expect(Float32Array.from(v)).toEqual(Float32Array.from(floats[i]!)));
  }, 120_000);

  it('all texts in one request: one Triton request, matching torch’s batch', async () => {
    const r = await client.embeddings.create({
      model: 'gpu-encoder',
      input: texts,
      encoding_format: 'float',
    });
    expect(r.data.map((d) => d.index)).toEqual(texts.map((_, i) => i));
    expect(
      worstCosine(
        r.data.map((d) => d.embedding),
        batched,
      ),
    ).toBeGreaterThanOrEqual(MIN_COSINE);
  }, 120_000);

  it('16 concurrent requests are batched by Triton, each answer its own text', async () => {
    const n = 16;
    const order = Array.from({ length: n }, (_, i) => i % texts.length);
    const before = [await settledStatistics(server!.model('encoder'))];
    const answers = await Promise.all(
      order.map((t) =>
        client.embeddings.create({ model: 'gpu-encoder', input: texts[t]!, encoding_format: 'float' }),
      ),
    );
    expect(
      worstCosine(
        answers.map((a) => a.data[0]!.embedding),
        single,
        order,
      ),
    ).toBeGreaterThanOrEqual(MIN_COSINE);
    let delta = statisticsDelta(before, await server!.model('encoder').statistics());
    const settled = await eventually(async () => {
      delta = statisticsDelta(before, await server!.model('encoder').statistics());
      return delta.inferences >= n;
    }, 30_000);
    expect(settled, `statistics after ${n} requests: ${JSON.stringify(delta)}`).toBe(true);
    expect(delta.requests).toBe(n);
    expect(delta.executions, `statistics: ${JSON.stringify(delta)}`).toBeLessThan(n);
  }, 120_000);
});
