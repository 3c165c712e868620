/**
 * The test embedders of test/backends/embedder.ts, asked directly: the fake
 * engine's own fake_text_embedding backend (test/models/text_embed), or on
 * real Triton the Python model computing the same vectors. Each text's
 * vector is embedText()'s bit for bit, in a request of several texts and in
 * a dynamic batch of several requests; on the fake, a config the backend
 * cannot serve fails its load saying why.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMBEDDING_SIZE, embedText, embedderUnderTest } from '@triton-node/test-support/backends/embedder.js';
import {
  fakeOnly,
  rejection,
  serverOptions,
  skipAllIf,
  skipIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { Server, TritonError } from '../../lib/index.js';

const embedder = embedderUnderTest();
skipAllIf(embedder.skip);
const server = useServer([embedder.model], { modelRepository: embedder.repositories }, embedder.skip);

async function embed(texts: string[]): Promise<{ shape: number[]; values: Float32Array }> {
  const r = await server()
    .model(embedder.model)
    .infer({ inputs: { TEXT: { data: texts, shape: [texts.length, 1], datatype: 'BYTES' } } });
  try {
    const out = r.outputs.EMBEDDING!;
    return { shape: out.shape, values: (out.data as Float32Array).slice() };
  } finally {
    r.dispose();
  }
}

describe('the test embedder', () => {
  it('answers each text of a request with embedText()’s vector, in order', async () => {
    const texts = ['a b c', 'ünïcödé wörds', '  spaced\tout\nwords  ', 'a b c', 'x'];
    const { shape, values } = await embed(texts);
    expect(shape).toEqual([texts.length, EMBEDDING_SIZE]);
    texts.forEach((t, i) =>
      expect(values.subarray(i * EMBEDDING_SIZE, (i + 1) * EMBEDDING_SIZE), t).toEqual(embedText(t)),
    );
    // Unit length; texts sharing words are closer than texts that share none.
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    expect(dot(embedText('a b c'), embedText('a b c'))).toBeCloseTo(1, 6);
    expect(dot(embedText('red green blue'), embedText('red green'))).toBeGreaterThan(
      dot(embedText('red green blue'), embedText('cat dog')),
    );
  });

  it('answers each request of a dynamic batch its own vectors', async () => {
    const texts = Array.from({ length: 12 }, (_, i) => `text number ${i} ${'z '.repeat(i)}`);
    const answers = await Promise.all(texts.map((t) => embed([t])));
    answers.forEach((a, i) => expect(a.values, texts[i]).toEqual(embedText(texts[i]!)));
  });
});

describe('fake_text_embedding configs', () => {
  it('refuses a config it cannot serve, saying why', async (ctx) => {
    skipIf(ctx, fakeOnly('fake_text_embedding is the fake engine’s own backend'));
    const repo = mkdtempSync(join(tmpdir(), 'tn-embed-config-'));
    const model = (name: string, maxBatch: number, input: string, output: string) => {
      mkdirSync(join(repo, name, '1'), { recursive: true });
      writeFileSync(
        join(repo, name, 'config.pbtxt'),
        `name: "${name}" backend: "fake_text_embedding" max_batch_size: ${maxBatch}
input [ { name: "TEXT" ${input} } ]
output [ { name: "EMBEDDING" ${output} } ]`,
      );
    };
    const ok = ['data_type: TYPE_STRING dims: [ 1 ]', 'data_type: TYPE_FP32 dims: [ 8 ]'] as const;
    model('unbatched', 0, ...ok);
    model('int_input', 4, 'data_type: TYPE_INT32 dims: [ 1 ]', ok[1]);
    model('wide_input', 4, 'data_type: TYPE_STRING dims: [ 2 ]', ok[1]);
    model('fp16_output', 4, ok[0], 'data_type: TYPE_FP16 dims: [ 8 ]');
    model('any_size', 4, ok[0], 'data_type: TYPE_FP32 dims: [ -1 ]');
    model('good', 4, ...ok);
    const s = await Server.create(serverOptions({ modelRepository: repo }));
    try {
      const cases: Array<[string, RegExp]> = [
        ['unbatched', /fake_text_embedding backend only supports models with max_batch_size > 0/],
        ['int_input', /expected TEXT datatype to be STRING, got TYPE_INT32/],
        ['wide_input', /expected TEXT shape to be \[1\], got \[2\]/],
        ['fp16_output', /expected EMBEDDING datatype to be FP32, got TYPE_FP16/],
        ['any_size', /expected EMBEDDING shape to be \[D\] with D from 1 to 65536, got \[-1\]/],
      ];
      for (const [name, message] of cases) {
        const err = await rejection(s.loadModel(name), TritonError);
        expect(err.message, name).toMatch(message);
      }
      await s.loadModel('good');
      const r = await s
        .model('good')
        .infer({ inputs: { TEXT: { data: ['a'], shape: [1, 1], datatype: 'BYTES' } } });
      expect(r.outputs.EMBEDDING!.data).toEqual(embedText('a', 8));
      r.dispose();
    } finally {
      await s.stop();
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
