/**
 * The text embedding models the gateway's /v1/embeddings tests run on,
 * chosen by the library under test: the fake engine's fake_text_embedding
 * backend (test/models/text_embed and text_embed_gathered), or on real
 * Triton a Python model computing the same vectors, written into a temp
 * repository at test time. Both take TEXT (BYTES, dims [1], max_batch_size
 * > 0) and answer EMBEDDING (FP32, dims [64]): each text a hashed bag of
 * words (32-bit FNV-1a of each word's bytes, words split at ASCII
 * whitespace; element hash % D gains 1, or loses 1 when the hash's top bit
 * is set), L2-normalized in double and rounded to float once.
 * `embedText()` is the same in TypeScript: the tests' reference, equal to
 * the models' answers bit for bit.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { BACKEND_DIR, MODELS, library, needsBackend } from '../helpers.js';

/** The vector size of the test models. */
export const EMBEDDING_SIZE = 64;

function isSpace(b: number): boolean {
  return b === 0x20 || (b >= 0x09 && b <= 0x0d);
}

function fnv1a(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The test models' vector of one text (the reference the tests compare with). */
export function embedText(text: string, size = EMBEDDING_SIZE): Float32Array {
  const bytes = Buffer.from(text, 'utf8');
  const v = new Float64Array(size);
  let i = 0;
  while (i < bytes.length) {
    while (i < bytes.length && isSpace(bytes[i]!)) i++;
    const start = i;
    while (i < bytes.length && !isSpace(bytes[i]!)) i++;
    if (i === start) break;
    const h = fnv1a(bytes, start, i);
    v[h % size]! += h >= 0x80000000 ? -1 : 1;
  }
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  return Float32Array.from(v, (x) => (norm > 0 ? x / norm : 0));
}

/** The Python model of real Triton: the same vectors as the fake's backend. */
export const EMBED_MODEL_PY = `import numpy as np
import triton_python_backend_utils as pb_utils


def fnv1a(word):
    h = 2166136261
    for b in word:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def embed(text, size):
    v = np.zeros(size, dtype=np.float64)
    for word in text.split():
        h = fnv1a(word)
        v[h % size] += -1.0 if h & 0x80000000 else 1.0
    norm = np.sqrt(np.sum(v * v))
    return (v / norm if norm > 0 else v).astype(np.float32)


class TritonPythonModel:
    def initialize(self, args):
        import json

        config = json.loads(args["model_config"])
        self.input = config["input"][0]["name"]
        self.output = config["output"][0]["name"]
        self.size = int(config["output"][0]["dims"][0])

    def execute(self, requests):
        responses = []
        for request in requests:
            texts = pb_utils.get_input_tensor_by_name(request, self.input).as_numpy().reshape(-1)
            rows = [embed(t if isinstance(t, bytes) else str(t).encode("utf-8"), self.size) for t in texts]
            out = np.stack(rows) if rows else np.zeros((0, self.size), dtype=np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(self.output, out)]))
        return responses
`;

function embedConfig(name: string, maxBatch: number, batching: string): string {
  return `name: "${name}"
backend: "python"
max_batch_size: ${maxBatch}
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "EMBEDDING" data_type: TYPE_FP32 dims: [ ${EMBEDDING_SIZE} ] } ]
dynamic_batching { ${batching} }
instance_group [ { count: 1 kind: KIND_CPU } ]
`;
}

export interface EmbedderUnderTest {
  /** Why the tests skip (real Triton without the Python backend), else false. */
  skip: string | false;
  /** The model for most tests (max_batch_size 8). */
  model: string;
  /** The model whose batcher waits for 4 requests (up to 5 s), max_batch_size 4. */
  gathered: string;
  /** The server's model repositories. */
  repositories: string[];
}

/** The embedding models for this library. Call it before the file's useServer(). */
export function embedderUnderTest(): EmbedderUnderTest {
  if (library().isFake)
    return { skip: false, model: 'text_embed', gathered: 'text_embed_gathered', repositories: [MODELS] };
  const names = { skip: false as const, model: 'text_embed_py', gathered: 'text_embed_py_gathered' };
  const noPython = needsBackend('python');
  if (noPython !== false) return { ...names, skip: noPython, repositories: [MODELS] };
  const repo = mkdtempSync(join(tmpdir(), 'tn-embed-'));
  // Registered before the file's useServer(): runs after the server (and the stubs) stopped.
  afterAll(() => rmSync(repo, { recursive: true, force: true }));
  const write = (name: string, config: string) => {
    mkdirSync(join(repo, name, '1'), { recursive: true });
    writeFileSync(join(repo, name, 'config.pbtxt'), config);
    writeFileSync(join(repo, name, '1', 'model.py'), EMBED_MODEL_PY);
  };
  write(names.model, embedConfig(names.model, 8, ''));
  write(
    names.gathered,
    embedConfig(names.gathered, 4, 'preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 5000000'),
  );
  return { ...names, repositories: [MODELS, repo] };
}
