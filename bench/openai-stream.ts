/**
 * The OpenAI routes under streaming load, on the fake engine's
 * fake_text_stream backend, or with TRITON_SERVER_LIB and TRITON_BACKEND_DIR
 * set on real Triton's Python backend with the LLM model of
 * test/backends/python-llm.ts (a Markov chain, `--delay` ms per token): the `openai`
 * client streams completions through
 * the gateway on loopback, a closed loop of `--concurrency` requests, each of
 * `--tokens` words; the model waits `--delay` ms per word. Prints the
 * client's time to first token and time per output token (p50/p99), tokens/s
 * and requests/s, and the server's own TTFT/TPOT means from `/metrics`: what
 * the gateway adds to a model's pace.
 *
 *   npx tsx bench/openai-stream.ts [--delay 0] [--tokens 256] [--concurrency 8] [--requests 80]
 *
 * Results go to docs/benchmarks.md by hand, never into a test assertion.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGateway } from '@triton-node/gateway';
import { writeLlmModel } from '@triton-node/test-support/backends/python-llm.js';
import * as hdr from 'hdr-histogram-js';
import OpenAI from 'openai';
import { Server } from 'triton-node';
import { fakeEngine } from 'triton-node/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    delay: { type: 'string', default: '0' },
    tokens: { type: 'string', default: '256' },
    concurrency: { type: 'string', default: '8' },
    requests: { type: 'string', default: '80' },
  },
});

/** A repository with test/models/text_words at the asked delay per word. */
function repository(delayMs: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'openai-bench-'));
  mkdirSync(path.join(dir, 'text_words', '1'), { recursive: true });
  const config = readFileSync(path.join(ROOT, 'test/models/text_words/config.pbtxt'), 'utf8');
  writeFileSync(
    path.join(dir, 'text_words', 'config.pbtxt'),
    config.replace(
      /key: "word_delay_ms" value: \{ string_value: "[^"]*" \}/,
      `key: "word_delay_ms" value: { string_value: "${delayMs}" }`,
    ),
  );
  return dir;
}

const histogram = () =>
  hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600e6, numberOfSignificantValueDigits: 3 });

/** Real Triton's Python backend with our LLM model, when the environment names a real Triton. */
const REAL = process.env.TRITON_SERVER_LIB;

async function main(): Promise<void> {
  let server: Server;
  if (REAL !== undefined && REAL !== '') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'openai-bench-llm-'));
    writeLlmModel(dir, { name: 'text_words', tokenDelayMs: Number(values.delay) });
    server = await Server.create({
      library: REAL,
      modelRepository: dir,
      modelControlMode: 'none',
      ...(process.env.TRITON_BACKEND_DIR ? { backendDirectory: process.env.TRITON_BACKEND_DIR } : {}),
    });
  } else {
    server = await Server.create({
      library: fakeEngine.libraryPath,
      modelRepository: repository(values.delay!),
      modelControlMode: 'none',
    });
  }
  const gateway = createGateway(server, {
    openai: { words: { model: 'text_words', tokenCount: 'responses' } },
  });
  const listener = http.createServer(gateway.handler);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'bench', maxRetries: 0 });
  const ttft = histogram();
  const tpot = histogram();
  let left = Number(values.requests);
  let tokens = 0;
  const started = performance.now();
  const worker = async () => {
    while (left-- > 0) {
      const t0 = performance.now();
      let first = 0;
      let n = 0;
      const stream = await client.completions.create({
        model: 'words',
        prompt: 'the quick brown fox jumps over the lazy dog',
        max_tokens: Number(values.tokens),
        stream: true,
      });
      for await (const chunk of stream) {
        if (!chunk.choices[0]?.text) continue;
        if (n++ === 0) first = performance.now();
      }
      const end = performance.now();
      tokens += n;
      ttft.recordValue(Math.round((first - t0) * 1000));
      if (n > 1) tpot.recordValue(Math.max(1, Math.round(((end - first) * 1000) / (n - 1))));
    }
  };
  await Promise.all(Array.from({ length: Number(values.concurrency) }, worker));
  const seconds = (performance.now() - started) / 1000;
  const metrics = await (await fetch(`${base}/metrics`)).text();
  const series = (name: string) =>
    Number(new RegExp(`^${name}\\{model="words"\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
  const mean = (name: string) => series(`${name}_sum`) / series(`${name}_count`) / 1000;
  const ms = (h: hdr.Histogram, p: number) => (h.getValueAtPercentile(p) / 1000).toFixed(3);
  console.log(REAL ? `real Triton ${REAL}, Python LLM model` : 'fake engine, fake_text_stream');
  console.log(
    `delay ${values.delay} ms/word, ${values.tokens} tokens, concurrency ${values.concurrency}, ${values.requests} requests`,
  );
  console.log(
    `client TTFT p50 ${ms(ttft, 50)} ms, p99 ${ms(ttft, 99)} ms; TPOT p50 ${ms(tpot, 50)} ms, p99 ${ms(tpot, 99)} ms`,
  );
  console.log(
    `server TTFT mean ${mean('triton_node_openai_time_to_first_token_us').toFixed(3)} ms, TPOT mean ${mean('triton_node_openai_time_per_output_token_us').toFixed(3)} ms`,
  );
  console.log(
    `${(tokens / seconds).toFixed(0)} tokens/s, ${(Number(values.requests) / seconds).toFixed(1)} requests/s`,
  );
  listener.closeAllConnections();
  listener.close();
  gateway.close();
  await server.stop();
}

await main();
