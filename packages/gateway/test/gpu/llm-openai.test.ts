// Issue 42: the gateway's OpenAI routes over the GPU LLM of
// test/gpu/llm/make_llm.py (a Llama-shaped transformers model, continuous
// batching on the GPU, the vLLM backend's tensors and additional outputs),
// asked with the official `openai` client: completions and chat, streamed
// and not, n > 1 with a seed, stop, max_tokens, usage from the model's own
// token counts; greedy text equal to transformers' own tokens; TTFT and TPOT
// in the Prometheus output; a client that leaves frees its cache blocks; lint
// judging the model's gpu_memory_utilization against the cache it made.
// Skips, saying why, without a GPU, without real Triton's python backend, or
// without a Python that has torch with CUDA and transformers.
//
// TRITON_NODE_GPU_LLM=DIR keeps the model there (made once).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type FinishedLine,
  LLM,
  type LlmManifest,
  type StartLine,
  gauge,
  generate,
  readReport,
} from '@triton-node/test-support/gpu/llm/llm.js';
import { llmSkipReason, onCpu, useLlm } from '@triton-node/test-support/gpu/llm/use-llm.js';
import { until } from '@triton-node/test-support/helpers.js';
import OpenAI from 'openai';
import { lint } from 'triton-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, createGateway } from '../../lib/index.js';

describe('the OpenAI routes over the GPU LLM, with the official client', () => {
  const llm = useLlm();
  const server = () => llm.server;
  let gateway: Gateway | undefined;
  let listener: http.Server | undefined;
  let client: OpenAI;
  let base = '';
  let dir = '';
  let manifest: LlmManifest;

  beforeAll(async () => {
    if (llmSkipReason !== false) return;
    manifest = llm.manifest;
    dir = llm.dir;
    gateway = createGateway(server(), { openai: { llm: { model: LLM } } });
    listener = http.createServer(gateway.handler);
    await new Promise<void>((resolve) => listener!.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    gateway?.close();
    listener?.closeAllConnections();
    if (listener) await new Promise((resolve) => listener!.close(resolve));
  });

  const refs = () => manifest.references;

  it('a completion, not streamed: transformers’ greedy text, and the model’s own token counts', async () => {
    for (const ref of refs().slice(0, 4)) {
      const r = await client.completions.create({
        model: 'llm',
        prompt: ref.prompt,
        max_tokens: manifest.new_tokens,
        temperature: 0,
      });
      expect(r.choices).toHaveLength(1);
      expect(r.choices[0]!.text, ref.prompt).toBe(ref.text);
      expect(r.choices[0]!.finish_reason).toBe(ref.tokens.length < manifest.new_tokens ? 'stop' : 'length');
      // Tokens, not words: the byte tokenizer's count, with the begin token.
      expect(r.usage).toMatchObject({
        prompt_tokens: ref.prompt_tokens.length,
        completion_tokens: ref.tokens.length,
        total_tokens: ref.prompt_tokens.length + ref.tokens.length,
      });
    }
  }, 300_000);

  it('a completion, streamed with usage: the same text in pieces, then the usage chunk', async () => {
    const ref = refs()[2]!;
    const stream = await client.completions.create({
      model: 'llm',
      prompt: ref.prompt,
      max_tokens: manifest.new_tokens,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let pieces = 0;
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const c = chunk.choices[0];
      if (c?.text) {
        text += c.text;
        pieces += 1;
      }
      if (c?.finish_reason) finish = c.finish_reason;
    }
    expect(text).toBe(ref.text);
    expect(pieces).toBeGreaterThan(1);
    expect(finish).toBe('length');
    expect(usage).toMatchObject({
      prompt_tokens: ref.prompt_tokens.length,
      completion_tokens: ref.tokens.length,
    });
  }, 120_000);

  it('chat, streamed and not: the templated prompt’s greedy text both ways', async () => {
    const messages = [{ role: 'user' as const, content: 'Say something about GPUs.' }];
    const prompt = '<|user|>\nSay something about GPUs.\n<|assistant|>\n';
    const direct = await generate(server(), prompt, { max_tokens: 32, temperature: 0 });
    const whole = await client.chat.completions.create({
      model: 'llm',
      messages,
      max_tokens: 32,
      temperature: 0,
    });
    expect(whole.choices[0]!.message.content).toBe(direct.text);
    expect(whole.usage?.prompt_tokens).toBe(direct.promptTokens);
    expect(whole.usage?.completion_tokens).toBe(32);
    const stream = await client.chat.completions.create({
      model: 'llm',
      messages,
      max_tokens: 32,
      temperature: 0,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(direct.text);
  }, 120_000);

  it('n = 4 with a seed: four sampled choices, the same again for the same seed, usage summed', async () => {
    const ask = () =>
      client.completions.create({
        model: 'llm',
        prompt: refs()[0]!.prompt,
        max_tokens: 24,
        temperature: 1,
        n: 4,
        seed: 11,
      });
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a.choices.map((c) => c.index).sort()).toEqual([0, 1, 2, 3]);
    const texts = (r: OpenAI.Completion) =>
      [...r.choices].sort((x, y) => x.index - y.index).map((c) => c.text);
    expect(texts(b)).toEqual(texts(a));
    expect(new Set(texts(a)).size).toBeGreaterThan(1);
    // Choice i is the request with seed 11 + i (a sampled end token may end one early).
    const direct = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        generate(server(), refs()[0]!.prompt, { max_tokens: 24, temperature: 1, seed: 11 + i }),
      ),
    );
    expect(direct.map((d) => d.text)).toEqual(texts(a));
    expect(a.usage?.completion_tokens).toBe(direct.reduce((n, d) => n + d.tokens.length, 0));
    const stream = await client.completions.create({
      model: 'llm',
      prompt: refs()[0]!.prompt,
      max_tokens: 24,
      temperature: 1,
      n: 4,
      seed: 11,
      stream: true,
    });
    const streamed = ['', '', '', ''];
    for await (const chunk of stream) for (const c of chunk.choices) streamed[c.index] += c.text;
    expect(streamed).toEqual(texts(a));
  }, 120_000);

  it('stop and max_tokens: the text before the stop string, finish_reason stop; a short length', async () => {
    const ref = refs().find((r) => new Set(r.text).size > 2) ?? refs()[0]!;
    const at = Math.max(1, Math.floor(ref.text.length / 2));
    const stop = ref.text.slice(at, at + 2);
    const r = await client.completions.create({
      model: 'llm',
      prompt: ref.prompt,
      max_tokens: manifest.new_tokens,
      temperature: 0,
      stop,
    });
    expect(r.choices[0]!.text).toBe(ref.text.slice(0, ref.text.indexOf(stop)));
    expect(r.choices[0]!.finish_reason).toBe('stop');
    const short = await client.completions.create({
      model: 'llm',
      prompt: ref.prompt,
      max_tokens: 3,
      temperature: 0,
    });
    expect(short.choices[0]!.text).toBe(ref.text.slice(0, 3));
    expect(short.usage?.completion_tokens).toBe(3);
    expect(short.choices[0]!.finish_reason).toBe('length');
  }, 120_000);

  it('16 concurrent streams over HTTP, each the greedy text of its own prompt', async () => {
    const order = Array.from({ length: 16 }, (_, i) => refs()[i % refs().length]!);
    const texts = await Promise.all(
      order.map(async (ref) => {
        const s = await client.completions.create({
          model: 'llm',
          prompt: ref.prompt,
          max_tokens: manifest.new_tokens,
          temperature: 0,
          stream: true,
        });
        let t = '';
        for await (const chunk of s) t += chunk.choices[0]?.text ?? '';
        return t;
      }),
    );
    texts.forEach((t, i) => expect(t, order[i]!.prompt).toBe(order[i]!.text));
  }, 300_000);

  it('a client that leaves mid-stream frees its cache blocks; the model saw it as aborted', async () => {
    const controller = new AbortController();
    const stream = await client.completions.create(
      { model: 'llm', prompt: 'walk away', max_tokens: 900, temperature: 0, stream: true },
      { signal: controller.signal },
    );
    let pieces = 0;
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.text) pieces += 1;
        if (pieces === 3) controller.abort();
      }
    } catch {
      // The client's own abort error.
    }
    let seen: string[] = [];
    await until(
      'the model to free every block and report an aborted request',
      async () => {
        const m = await server().metrics();
        seen = m.split('\n').filter((l) => l.startsWith('llm_kv_cache_blocks_used'));
        const aborted = readReport(dir).some(
          (l): l is FinishedLine => l.event === 'finished' && l.reason === 'abort' && l.tokens < 900,
        );
        return gauge(m, 'llm_kv_cache_blocks_used') === 0 && aborted;
      },
      () => seen,
    );
  }, 120_000);

  it('TTFT and TPOT histograms per OpenAI model id in /metrics', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const count = (name: string) =>
      Number(new RegExp(`^${name}_count\\{model="llm"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    expect(count('triton_node_openai_time_to_first_token_us')).toBeGreaterThanOrEqual(20);
    expect(count('triton_node_openai_time_per_output_token_us')).toBeGreaterThanOrEqual(20);
    expect(text).toMatch(/^triton_node_openai_output_tokens_total\{model="llm"\} \d+/m);
    expect(text).toMatch(/^llm_kv_cache_blocks_total\{model="llm_gpu"\} \d+/m);
  }, 60_000);

  it('lint judges gpu_memory_utilization against the GPU the cache was sized on', async (ctx) => {
    if (onCpu) ctx.skip('a model made for the CPU is given its number of blocks');
    const start = readReport(dir).findLast((l): l is StartLine => l.event === 'start')!;
    const total = start.memory.total_bytes;
    const repo = mkdtempSync(join(tmpdir(), 'tn-llm-lint-'));
    try {
      const config = readFileSync(join(dir, LLM, 'config.pbtxt'), 'utf8');
      const copy = (name: string, u: number) => {
        cpSync(join(dir, LLM), join(repo, name), { recursive: true, filter: (f) => !f.includes('weights') });
        writeFileSync(
          join(repo, name, 'config.pbtxt'),
          config
            .replace(`name: "${LLM}"`, `name: "${name}"`)
            .replace(/("gpu_memory_utilization" value: \{ string_value: ")[^"]*/, `$1${u}`),
        );
      };
      copy('as_made', manifest.gpu_memory_utilization);
      const alone = lint(repo, { gpuMemoryBytes: total }).findings;
      expect(alone.filter((f) => f.rule.startsWith('gpu-memory'))).toEqual([]);
      // What the model reserved is what lint counts for it: u × the GPU's memory, to one block.
      const m = start.memory;
      expect(Math.abs(m.budget_bytes - manifest.gpu_memory_utilization * total)).toBeLessThan(1);
      copy('greedy', 0.95);
      const both = lint(repo, { gpuMemoryBytes: total }).findings;
      expect(both.find((f) => f.rule === 'gpu-memory-headroom' && f.model === 'greedy')?.severity).toBe(
        'warning',
      );
      // 0.5 + 0.95 of one GPU: more than it has.
      expect(both.some((f) => f.rule === 'gpu-memory-budget' && f.severity === 'error')).toBe(true);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  }, 60_000);
});
