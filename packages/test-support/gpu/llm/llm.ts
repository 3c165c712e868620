/**
 * The GPU LLM of test/gpu/llm/make_llm.py (issue 42), made at test (or
 * bench) time with the machine's torch and transformers, never committed:
 * its manifest (transformers' own greedy tokens per prompt), the model's
 * report file, and a way to run one generation through the in-process API
 * that keeps every token id the model sent. Shared by the llm tests and
 * bench/llm.ts.
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from 'triton-node';
import { runGenerator, torchPython } from '../torch/models.js';

export const MAKE_LLM = fileURLToPath(new URL('./make_llm.py', import.meta.url));

/** The Triton model's name. */
export const LLM = 'llm_gpu';

export interface LlmReference {
  prompt: string;
  prompt_tokens: number[];
  /** transformers' generate(do_sample=False), the prompt alone. */
  tokens: number[];
  text: string;
}

export interface LlmManifest {
  model: string;
  torch: string;
  gpu: string;
  dtype: string;
  parameters: number;
  weight_bytes: number;
  config: Record<string, number>;
  max_model_len: number;
  gpu_memory_utilization: number;
  new_tokens: number;
  references: LlmReference[];
}

/** Why the python backend is not there to serve it, or false. */
export function pythonBackendMissing(): string | false {
  // Not test/helpers.ts's BACKEND_DIR: the bench imports this file outside vitest.
  const BACKEND_DIR = process.env.TRITON_BACKEND_DIR;
  if (!BACKEND_DIR)
    return 'needs real Triton (TRITON_SERVER_LIB and TRITON_BACKEND_DIR) with the python backend';
  const file = join(BACKEND_DIR, 'python', 'libtriton_python.so');
  return existsSync(file) ? false : `needs Triton's python backend (${file})`;
}

/**
 * Whether TRITON_NODE_GPU_LLM names a model made for the CPU (`make_llm.py
 * --device cpu --num-blocks N`): a developer's way to run the LLM tests
 * without a GPU, on real Triton's CPU build with a Python that has torch.
 */
export function llmOnCpu(): boolean {
  const dir = process.env.TRITON_NODE_GPU_LLM;
  if (!dir) return false;
  try {
    return (
      (JSON.parse(readFileSync(join(dir, 'references', 'llm.json'), 'utf8')) as LlmManifest).gpu === 'cpu'
    );
  } catch {
    return false;
  }
}

/** The report file the model writes (one JSON line at start, one per finished request). */
export function reportFile(dir: string): string {
  return join(dir, 'llm-report.jsonl');
}

/**
 * Makes the model into `dir` unless it is there (then copies this checkout's
 * model.py and engine.py over the kept ones), and returns its manifest.
 * `utilization` is the config's gpu_memory_utilization (default 0.5: other
 * GPU tests may share the card).
 */
export async function makeLlm(
  dir: string,
  options: { utilization?: number; python?: string } = {},
): Promise<LlmManifest> {
  const manifest = join(dir, 'references', 'llm.json');
  if (!existsSync(manifest)) {
    await runGenerator(options.python ?? torchPython(), [
      MAKE_LLM,
      '--out',
      dir,
      '--report-file',
      reportFile(dir),
      '--gpu-memory-utilization',
      String(options.utilization ?? 0.5),
    ]);
  }
  // The weights are kept; the model's code is always this checkout's.
  for (const file of ['model.py', 'engine.py']) {
    copyFileSync(fileURLToPath(new URL(`./${file}`, import.meta.url)), join(dir, LLM, '1', file));
  }
  return JSON.parse(readFileSync(manifest, 'utf8')) as LlmManifest;
}

export interface StartLine {
  event: 'start';
  device: string;
  memory: {
    total_bytes: number;
    budget_bytes: number;
    weight_bytes: number;
    activation_bytes: number;
    /** What the decode passes' CUDA graphs were given, and what capturing them took. */
    graph_reserve_bytes: number;
    graph_bytes?: number;
    cache_bytes: number;
    cache_tokens: number;
    block_bytes: number;
    num_blocks: number;
  };
}

export interface FinishedLine {
  event: 'finished';
  id: string;
  prompt_tokens: number;
  tokens: number;
  reason: 'length' | 'stop' | 'abort';
  blocks_in_use: number;
}

/** The report's lines so far. */
export function readReport(dir: string): Array<StartLine | FinishedLine> {
  let text: string;
  try {
    text = readFileSync(reportFile(dir), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as StartLine | FinishedLine);
}

export interface Generated {
  tokens: number[];
  text: string;
  responses: number;
  finishReason: string;
  promptTokens: number;
  /** Sum of the responses' num_output_tokens. */
  counted: number;
}

/** One generation through `server.stream()`, keeping the token ids, the text and the counts. */
export async function generate(
  server: Server,
  prompt: string,
  sampling: Record<string, unknown>,
  options: { stream?: boolean; id?: string; signal?: AbortSignal } = {},
): Promise<Generated> {
  const stream = options.stream ?? true;
  const out: Generated = {
    tokens: [],
    text: '',
    responses: 0,
    finishReason: '',
    promptTokens: 0,
    counted: 0,
  };
  const results = server.model(LLM).stream({
    inputs: {
      text_input: [prompt],
      stream: [stream],
      exclude_input_in_output: [true],
      sampling_parameters: [JSON.stringify(sampling)],
      return_token_ids: [true],
      return_finish_reason: [true],
      return_num_input_tokens: [true],
      return_num_output_tokens: [true],
    },
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  for await (const r of results) {
    const o = r.outputs;
    if (o.text_output === undefined) continue;
    out.responses += 1;
    out.text += o.text_output.strings().join('');
    out.tokens.push(...Array.from(o.token_ids!.data as BigInt64Array, Number));
    out.counted += Number((o.num_output_tokens!.data as Uint32Array)[0]);
    out.promptTokens = Number((o.num_input_tokens!.data as Uint32Array)[0]);
    const reason = o.finish_reason?.strings()[0];
    if (reason !== undefined && reason !== '') out.finishReason = reason;
  }
  return out;
}

/** The value of a gauge the model publishes (`llm_kv_cache_blocks_used` ...), from Triton's metrics text. */
export function gauge(metrics: string, name: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`model="${LLM}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
