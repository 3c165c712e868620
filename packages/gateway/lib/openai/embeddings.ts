/**
 * `POST /v1/embeddings`: OpenAI's embeddings API over a Triton model from
 * texts to vectors (an OpenAI model id of kind 'embeddings'). The texts of
 * one HTTP request go to Triton as ONE request of shape [n, 1], so that the
 * model's dynamic batcher merges concurrent HTTP requests into one
 * execution. The body is read after admission (routes.ts), its model named
 * to the guard, checked (keys looked up as own properties only, unknown
 * ones ignored), and answered `{ object: 'list', data: [{ object:
 * 'embedding', index, embedding }], model, usage }` with each vector as
 * numbers or, for `encoding_format: 'base64'`, its little-endian float32
 * bytes in base64 (what the official clients ask for by default).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelConfig, ModelMetadata } from 'triton-node';
import type { GatewayContext } from '../context.js';
import type { Exchange } from '../exchange.js';
import { readBody } from '../http/body.js';
import { ROUTES, type Route } from '../routes.js';
import type { ResolvedEmbedding } from './embedding-options.js';
import { countTokens } from './generate.js';
import type { OpenAIMetrics } from './metrics.js';
import type { ResolvedOpenAIModel } from './options.js';
import { OpenAIError, invalid, modelNotFound } from './protocol.js';

/** OpenAI's own cap on the texts of one request; a model's max_batch_size may lower it. */
export const MAX_EMBEDDING_INPUTS = 2048;

type Body = Record<string, unknown>;

/** A key of the body, if the body itself has it (never one of Object.prototype's). */
function own(body: Body, key: string): unknown {
  return Object.hasOwn(body, key) ? body[key] : undefined;
}

/** The 400 of a model id used on a route of the other kind, naming what it serves. */
export function wrongKind(entry: ResolvedOpenAIModel, route: Route): OpenAIError {
  const serves =
    entry.kind === 'embeddings'
      ? 'embeddings (POST /v1/embeddings)'
      : 'text generation (POST /v1/completions and POST /v1/chat/completions)';
  const asked =
    route === ROUTES.embeddings ? 'embeddings' : route === ROUTES.chat ? 'chat completions' : 'completions';
  return invalid(`The model '${entry.id}' serves ${serves}, not ${asked}`, 'model', 'model_not_supported');
}

/** What an embeddings request asks for, once checked. */
export interface EmbeddingRequest {
  texts: string[];
  base64: boolean;
  dimensions: number | undefined;
}

function tokenArrays(): OpenAIError {
  return invalid(
    "'input' as token arrays is not supported by this server (its models tokenize): send the text",
    'input',
    'unsupported_input',
  );
}

function texts(input: unknown): string[] {
  if (typeof input === 'string') input = [input];
  if (!Array.isArray(input)) {
    throw invalid(
      `'input' must be a string or an array of strings; received ${input === null ? 'null' : typeof input}`,
      'input',
    );
  }
  if (input.length === 0) throw invalid("'input' must not be an empty array", 'input');
  const isNumber = (t: unknown) => typeof t === 'number';
  if (input.every(isNumber) || input.every((t) => Array.isArray(t) && t.every(isNumber))) throw tokenArrays();
  for (const [i, text] of input.entries()) {
    if (typeof text !== 'string')
      throw invalid(
        `'input[${i}]' must be a string; received ${text === null ? 'null' : typeof text}`,
        'input',
      );
    if (text === '') throw invalid(`'input[${i}]' must not be empty`, 'input');
  }
  return input as string[];
}

/** Checks a `/v1/embeddings` body: `input`, `encoding_format`, `dimensions`, `user`; other keys are ignored. */
export function embeddingRequest(body: Body): EmbeddingRequest {
  const list = texts(own(body, 'input'));
  if (list.length > MAX_EMBEDDING_INPUTS)
    throw invalid(`'input' has ${list.length} texts; at most ${MAX_EMBEDDING_INPUTS} per request`, 'input');
  const format = own(body, 'encoding_format') ?? 'float';
  if (format !== 'float' && format !== 'base64')
    throw invalid(
      `'encoding_format' must be 'float' or 'base64'; received ${JSON.stringify(format)}`,
      'encoding_format',
    );
  const dimensions = own(body, 'dimensions') ?? undefined;
  if (dimensions !== undefined && (!Number.isSafeInteger(dimensions) || (dimensions as number) < 1))
    throw invalid(
      `'dimensions' must be a whole number of at least 1; received ${JSON.stringify(dimensions)}`,
      'dimensions',
    );
  const user = own(body, 'user') ?? undefined;
  if (user !== undefined && typeof user !== 'string') throw invalid("'user' must be a string", 'user');
  return { texts: list, base64: format === 'base64', dimensions: dimensions as number | undefined };
}

/** What the gateway needs of the Triton model, from its config and metadata. */
interface ModelShape {
  /** max_batch_size: the most texts of one request. */
  maxBatch: number;
  /** The vector size from the output's dims, if fixed. */
  size: number | undefined;
}

/** The shapes of the embeddings models (by `name/version`), read once. */
class EmbeddingModels {
  readonly #ctx: GatewayContext;
  readonly #known = new Map<string, Promise<[ModelConfig, ModelMetadata]>>();

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
  }

  /** The model's shape; rejects as the metadata request does (404 for a model not loaded), 500 for a model of the wrong shape. */
  async get(entry: ResolvedOpenAIModel, e: ResolvedEmbedding): Promise<ModelShape> {
    const key = `${entry.model}/${entry.version}`;
    let known = this.#known.get(key);
    if (known === undefined) {
      const model = this.#ctx.server.model(entry.model, entry.version);
      known = Promise.all([model.config(), model.metadata()]);
      // A failure (the model not loaded yet) is asked again next time.
      known.catch(() => this.#known.delete(key));
      this.#known.set(key, known);
    }
    const [config, metadata] = await known;
    const wrong = (what: string) =>
      new OpenAIError(
        500,
        `model '${entry.model}' ${what}; /v1/embeddings needs a batching model (max_batch_size > 0) with a BYTES input '${e.input}' of dims [1] and an FP32 output '${e.output}' (the input and output of openai['${entry.id}'])`,
      );
    const maxBatch = config.max_batch_size ?? 0;
    if (maxBatch < 1) throw wrong('has max_batch_size 0');
    const input = metadata.inputs.find((t) => t.name === e.input);
    if (input?.datatype !== 'BYTES')
      throw wrong(
        input === undefined ? `has no input '${e.input}'` : `has input '${e.input}' of ${input.datatype}`,
      );
    const output = metadata.outputs.find((t) => t.name === e.output);
    if (output?.datatype !== 'FP32')
      throw wrong(
        output === undefined
          ? `has no output '${e.output}'`
          : `has output '${e.output}' of ${output.datatype}`,
      );
    const last = output.shape.at(-1);
    return { maxBatch, size: output.shape.length > 1 && last !== undefined && last > 0 ? last : undefined };
  }
}

/** `dimensions` against the model's vector size: refused above it, and below it unless the model truncates. */
function checkDimensions(entry: ResolvedOpenAIModel, e: ResolvedEmbedding, wanted: number, size: number) {
  if (wanted > size)
    throw invalid(`'dimensions' ${wanted} is more than the ${size} of model '${entry.id}'`, 'dimensions');
  if (wanted < size && !e.truncateDimensions)
    throw invalid(
      `model '${entry.id}' does not support 'dimensions' other than its ${size} (its vectors cannot be shortened)`,
      'dimensions',
    );
}

/** The first `d` values of a vector, L2-normalized again (in double, rounded to float once). */
export function truncated(v: Float32Array, d: number): Float32Array {
  const head = v.subarray(0, d);
  let sum = 0;
  for (const x of head) sum += x * x;
  const norm = Math.sqrt(sum);
  return Float32Array.from(head, (x) => (norm > 0 ? x / norm : 0));
}

/** A vector as OpenAI's base64: its float32 values, little-endian. */
export function base64Of(v: Float32Array): string {
  const bytes = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) bytes.writeFloatLE(v[i]!, i * 4);
  return bytes.toString('base64');
}

function sendJson(res: ServerResponse, value: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(value);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Serves `POST /v1/embeddings` for the OpenAI routes (routes.ts), which answer what it throws. */
export class EmbeddingsRoute {
  readonly #ctx: GatewayContext;
  readonly #models: Map<string, ResolvedOpenAIModel>;
  readonly #metrics: OpenAIMetrics | undefined;
  readonly #shapes: EmbeddingModels;

  constructor(
    ctx: GatewayContext,
    models: Map<string, ResolvedOpenAIModel>,
    metrics: OpenAIMetrics | undefined,
  ) {
    this.#ctx = ctx;
    this.#models = models;
    this.#metrics = metrics;
    this.#shapes = new EmbeddingModels(ctx);
  }

  /** One admitted request: its body, its model named to the guard, its checks, Triton, the answer. */
  async serve(ex: Exchange, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST')
      throw new OpenAIError(405, `Method ${req.method} is not allowed on /v1/embeddings`);
    const raw = await readBody(req, this.#ctx.options.maxBodyBytes, ex.bodyCharge);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw invalid(`The request body is not valid JSON: ${(err as Error).message}`, null);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw invalid('The request body must be a JSON object', null);
    const entry = await this.#entry(ex, own(body as Body, 'model'), raw.length);
    if (this.#ctx.draining) throw new OpenAIError(503, 'the server is shutting down');
    const e = entry.embedding!;
    const ask = embeddingRequest(body as Body);
    const shape = await this.#shapes.get(entry, e);
    const n = ask.texts.length;
    if (n > shape.maxBatch)
      throw invalid(
        `'input' has ${n} texts; model '${entry.id}' takes at most ${shape.maxBatch} per request (its max_batch_size)`,
        'input',
      );
    if (ask.dimensions !== undefined && shape.size !== undefined)
      checkDimensions(entry, e, ask.dimensions, shape.size);
    const tokens = ask.texts.reduce((sum, t) => sum + countTokens(entry, t), 0);
    await this.#spend(ex, entry, tokens);
    this.#metrics?.prompt(entry.id, tokens);
    const vectors = await this.#infer(ex, res, entry, e, ask.texts);
    const size = vectors[0]!.length;
    if (ask.dimensions !== undefined) checkDimensions(entry, e, ask.dimensions, size);
    const d = ask.dimensions ?? size;
    this.#metrics?.embedded(entry.id, n);
    sendJson(res, {
      object: 'list',
      data: vectors.map((v, index) => {
        const out = d < size ? truncated(v, d) : v;
        return { object: 'embedding', index, embedding: ask.base64 ? base64Of(out) : Array.from(out) };
      }),
      model: entry.id,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  /** The entry of `id`, told to the guard; unknown and forbidden ids answer alike (404), another kind 400. */
  async #entry(ex: Exchange, id: unknown, bytes: number): Promise<ResolvedOpenAIModel> {
    if (typeof id !== 'string' || id === '') throw invalid("'model' must be a non-empty string", 'model');
    const entry = this.#models.get(id);
    const admission = ex.admission;
    if (admission !== undefined) {
      const model = entry?.model ?? id;
      try {
        if (admission.forModel !== undefined) await admission.forModel(model, bytes);
        else if (!admission.canSee(model)) throw modelNotFound(id);
      } catch (err) {
        // The guard's 404 would name the Triton model behind the id.
        throw (err as { status?: unknown }).status === 404 ? modelNotFound(id) : err;
      }
    }
    if (entry === undefined) throw modelNotFound(id);
    if (entry.kind !== 'embeddings') throw wrongKind(entry, ROUTES.embeddings);
    return entry;
  }

  /** Spends the texts' tokens against the tenant's token limit (429 over it); the audit line counts them. */
  async #spend(ex: Exchange, entry: ResolvedOpenAIModel, tokens: number): Promise<void> {
    const admission = ex.admission;
    if (tokens > 0 && admission !== undefined && !(await admission.spendTokens(tokens, entry.model)))
      throw new OpenAIError(
        429,
        `the ${tokens} tokens of this request are over the rate limit of this tenant`,
        null,
        'rate_limit_exceeded',
        admission.tokensRetryAfterSeconds(tokens, entry.model),
      );
    ex.tokens = tokens;
  }

  /** One Triton request of all the texts; cancelled by a client that leaves or a shutdown past its deadline. */
  async #infer(
    ex: Exchange,
    res: ServerResponse,
    entry: ResolvedOpenAIModel,
    e: ResolvedEmbedding,
    list: string[],
  ): Promise<Float32Array[]> {
    const abort = new AbortController();
    const cancel = () => abort.abort();
    this.#ctx.cancels.add(cancel);
    res.once('close', cancel);
    // The client may have left while the body was read.
    if (res.destroyed) cancel();
    const model = this.#ctx.server.model(entry.model, entry.version);
    try {
      const result = await ex.infer(
        {
          inputs: { [e.input]: { data: list, shape: [list.length, 1], datatype: 'BYTES' } },
          outputs: [e.output],
          signal: abort.signal,
        },
        (r) => model.infer(r),
      );
      try {
        ex.modelVersion = String(result.version);
        const out = result.outputs[e.output];
        const n = list.length;
        const rows = out?.shape[0];
        const values = out?.data;
        if (
          out === undefined ||
          !(values instanceof Float32Array) ||
          rows !== n ||
          values.length === 0 ||
          values.length % n !== 0
        )
          throw new OpenAIError(
            500,
            `model '${entry.model}' answered ${out === undefined ? `no output '${e.output}'` : `'${e.output}' of ${out.datatype} [${out.shape.join(', ')}]`} for ${n} texts; expected FP32 [${n}, size]`,
          );
        const size = values.length / n;
        return Array.from({ length: n }, (_, i) => values.slice(i * size, (i + 1) * size));
      } finally {
        result.dispose();
      }
    } finally {
      this.#ctx.cancels.delete(cancel);
      res.off('close', cancel);
    }
  }
}
