import {
  type FinishedLine,
  LLM,
  type LlmManifest,
  type StartLine,
  gauge,
  generate,
  readReport,
} from '@triton-node/test-support/gpu/llm/llm.js';
import { onCpu, useLlm } from '@triton-node/test-support/gpu/llm/use-llm.js';
import { until } from '@triton-node/test-support/helpers.js';
// Issue 42: a real transformer generating tokens on the GPU through
// triton-node. The Llama-shaped LM of test/gpu/llm/make_llm.py (random
// weights, fixed seed, byte tokens) is served by real Triton's python backend
// as a decoupled model that batches every running sequence into one decode
// pass over a paged KV cache (test/gpu/llm/engine.py). Greedy tokens must
// equal transformers' own generate(do_sample=False) token for token, alone
// and with many streams decoding together; a client that leaves frees its
// cache blocks; a request that cannot fit is refused with the numbers.
// Skips, saying why, without a GPU, without real Triton's python backend, or
// without a Python that has torch with CUDA and transformers.
//
// TRITON_NODE_GPU_LLM=DIR keeps the model there (made once).
import { beforeAll, describe, expect, it } from 'vitest';
import { TritonError } from '../../lib/index.js';

describe('a Llama-shaped LM on the GPU, against transformers', () => {
  const llm = useLlm();
  const server = () => llm.server;
  let manifest: LlmManifest;
  let dir = '';
  beforeAll(() => {
    manifest = llm.manifest;
    dir = llm.dir;
  });

  const greedy = () => ({ max_tokens: manifest.new_tokens, temperature: 0 });

  async function gauges(): Promise<Record<string, number | undefined>> {
    const text = await server().metrics();
    const names = [
      'llm_kv_cache_blocks_used',
      'llm_kv_cache_blocks_total',
      'llm_running_sequences',
      'llm_waiting_sequences',
      'llm_decode_steps',
      'llm_decoded_tokens',
    ];
    return Object.fromEntries(names.map((n) => [n, gauge(text, n)]));
  }

  async function idle(): Promise<Record<string, number | undefined>> {
    let seen: Record<string, number | undefined> = {};
    await until(
      'the model to hold no cache block and run no sequence',
      async () => {
        seen = await gauges();
        return seen.llm_kv_cache_blocks_used === 0 && seen.llm_running_sequences === 0;
      },
      () => seen,
    );
    return seen;
  }

  it('each prompt alone, streamed: the tokens of transformers’ generate(do_sample=False)', async () => {
    for (const ref of manifest.references) {
      const got = await generate(server(), ref.prompt, greedy());
      expect(got.tokens, ref.prompt).toEqual(ref.tokens);
      expect(got.text).toBe(ref.text);
      expect(got.counted).toBe(ref.tokens.length);
      expect(got.promptTokens).toBe(ref.prompt_tokens.length);
      expect(got.finishReason).toBe(ref.tokens.length < manifest.new_tokens ? 'stop' : 'length');
    }
  }, 300_000);

  it('each prompt alone, not streamed: one response with the same tokens and text', async () => {
    for (const ref of manifest.references) {
      const got = await generate(server(), ref.prompt, greedy(), { stream: false });
      expect(got.responses).toBe(1);
      expect(got.tokens, ref.prompt).toEqual(ref.tokens);
      expect(got.text).toBe(ref.text);
    }
  }, 300_000);

  it('32 concurrent streams decode together, each with its own prompt’s tokens', async () => {
    await idle();
    const before = await gauges();
    const order = Array.from({ length: 32 }, (_, i) => manifest.references[i % manifest.references.length]!);
    const got = await Promise.all(order.map((ref) => generate(server(), ref.prompt, greedy())));
    got.forEach((g, i) => expect(g.tokens, `stream ${i}: ${order[i]!.prompt}`).toEqual(order[i]!.tokens));
    const after = await idle();
    const steps = after.llm_decode_steps! - before.llm_decode_steps!;
    const tokens = after.llm_decoded_tokens! - before.llm_decoded_tokens!;
    // Alone, 32 streams of 47 decoded tokens would take 1,504 passes of one sequence each.
    expect(tokens).toBe(got.reduce((n, g) => n + g.tokens.length - 1, 0));
    expect(tokens / steps).toBeGreaterThan(8);
  }, 300_000);

  it('a request that joins between steps of a running one changes neither', async () => {
    const [a, b] = manifest.references;
    const long = { max_tokens: 600, temperature: 0 };
    const first = generate(server(), a!.prompt, long);
    const before = (await gauges()).llm_decode_steps!;
    await until('the long request to decode', async () => (await gauges()).llm_decode_steps! > before + 3);
    const second = await generate(server(), b!.prompt, greedy());
    expect(second.tokens).toEqual(b!.tokens);
    const full = await first;
    expect(full.tokens.slice(0, a!.tokens.length)).toEqual(a!.tokens);
    expect(full.counted).toBe(full.tokens.length);
  }, 300_000);

  it('a client that leaves frees its cache blocks, and the model reports it ended as aborted', async () => {
    await idle();
    const id = `leaver-${Date.now()}`;
    const total = (await gauges()).llm_kv_cache_blocks_total!;
    const stream = server()
      .model(LLM)
      .stream({
        id,
        inputs: {
          text_input: ['leave early'],
          stream: [true],
          sampling_parameters: [JSON.stringify({ max_tokens: 900, temperature: 0 })],
        },
      });
    let read = 0;
    for await (const _ of stream) {
      read += 1;
      if (read === 3) {
        const held = (await gauges()).llm_kv_cache_blocks_used!;
        // Blocks for its prompt and all 900 tokens, reserved when it was admitted.
        expect(held).toBe(Math.ceil((1 + 'leave early'.length + 900) / 16));
        expect(held).toBeLessThan(total);
        break;
      }
    }
    await idle();
    let line: FinishedLine | undefined;
    await until('the model to report the request', () => {
      line = readReport(dir).find((l): l is FinishedLine => l.event === 'finished' && l.id === id);
      return line !== undefined;
    });
    expect(line!.reason).toBe('abort');
    expect(line!.tokens).toBeLessThan(900);
  }, 300_000);

  it('a request beyond max_model_len is refused with the numbers, and the model serves on', async () => {
    const error = await generate(server(), 'too long', { max_tokens: 5000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TritonError);
    expect((error as TritonError).code).toBe('INVALID_ARG');
    expect((error as TritonError).message).toMatch(
      new RegExp(`maximum context length is ${manifest.max_model_len} tokens.*asks for ${5000 + 9}`),
    );
    const bad = await generate(server(), 'x', { top_p: 2 }).catch((e: unknown) => e);
    expect((bad as TritonError).message).toMatch(/top_p must be in \(0, 1\]/);
    const ref = manifest.references[0]!;
    expect((await generate(server(), ref.prompt, greedy())).tokens).toEqual(ref.tokens);
  }, 300_000);

  it('stop strings end the text before them; max_tokens and the seed are kept', async () => {
    const ref = manifest.references.find((r) => new Set(r.text).size > 2) ?? manifest.references[0]!;
    // A stop string that first occurs after the start of the text.
    const at = Math.max(1, Math.floor(ref.text.length / 2));
    const stop = ref.text.slice(at, at + 2);
    const cut = ref.text.indexOf(stop);
    const stopped = await generate(server(), ref.prompt, { ...greedy(), stop: [stop] });
    expect(stopped.text).toBe(ref.text.slice(0, cut));
    expect(stopped.finishReason).toBe('stop');
    const short = await generate(server(), ref.prompt, { max_tokens: 5 });
    expect(short.tokens).toEqual(ref.tokens.slice(0, 5));
    expect(short.finishReason).toBe('length');
    const sampled = { max_tokens: 32, temperature: 1, top_p: 0.95, seed: 7 };
    const [one, two, other] = await Promise.all([
      generate(server(), ref.prompt, sampled),
      generate(server(), ref.prompt, sampled),
      generate(server(), ref.prompt, { ...sampled, seed: 8 }),
    ]);
    expect(one.tokens).toEqual(two.tokens);
    expect(other.tokens).not.toEqual(one.tokens);
  }, 300_000);

  it('the KV cache takes what gpu_memory_utilization leaves after weights and activations', async (ctx) => {
    if (onCpu) ctx.skip('a model made for the CPU is given its number of blocks');
    const start = readReport(dir).findLast((l): l is StartLine => l.event === 'start')!;
    const m = start.memory;
    expect(m.budget_bytes).toBe(Math.floor(manifest.gpu_memory_utilization * m.total_bytes));
    expect(m.weight_bytes).toBeGreaterThanOrEqual(manifest.weight_bytes);
    const used = m.cache_bytes + m.weight_bytes + m.activation_bytes + m.graph_reserve_bytes;
    expect(used).toBeLessThanOrEqual(m.budget_bytes);
    // Less than one block short of the budget.
    expect(m.budget_bytes - used).toBeLessThan(2 * m.block_bytes);
    expect((await gauges()).llm_kv_cache_blocks_total).toBe(m.num_blocks - 1);
  }, 60_000);
});
