// The client side of `bench --vs torch --models llm` over the OpenAI route:
// `concurrency` loops of the official `openai` client against the gateway,
// in a worker thread so that the serving thread's event loop measures the
// server alone. Each loop sends `rounds` completions (streamed or not) and
// records, per request, the time to the first text, the time to the last
// and the tokens the usage reports. Posts { requests, errors, firstError }.
import { parentPort, workerData } from 'node:worker_threads';
import OpenAI from 'openai';

const { baseURL, model, prompts, maxTokens, concurrency, rounds, stream } = workerData;
const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0, timeout: 600_000 });
const requests = [];
let errors = 0;
let firstError;

async function once(slot, i) {
  const prompt = prompts[(slot + i) % prompts.length];
  const start = performance.now();
  let first;
  let tokens = 0;
  if (stream) {
    const s = await client.completions.create({
      model,
      prompt,
      max_tokens: maxTokens,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let chunks = 0;
    for await (const chunk of s) {
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
      if (chunk.choices[0]?.text) {
        chunks += 1;
        first ??= performance.now();
      }
    }
    if (tokens === 0) tokens = chunks;
  } else {
    const r = await client.completions.create({ model, prompt, max_tokens: maxTokens, temperature: 0 });
    first = performance.now();
    tokens = r.usage?.completion_tokens ?? 0;
  }
  const end = performance.now();
  requests.push({ start, first: first ?? end, end, tokens });
}

await Promise.all(
  Array.from({ length: concurrency }, async (_, slot) => {
    for (let i = 0; i < rounds; i += 1) {
      try {
        await once(slot, i);
      } catch (e) {
        errors += 1;
        firstError ??= String(e?.message ?? e);
      }
    }
  }),
);
parentPort.postMessage({ requests, errors, firstError });
