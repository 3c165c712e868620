/**
 * The OpenAI API's shapes: its error body (`{ error: { message, type,
 * param, code } }` with the status OpenAI gives it), and the checks of the
 * completion and chat requests, read into one `Generation`.
 */
import { TritonError } from 'triton-node';
import { GatewayError, errorMessage, httpStatus } from '../errors.js';
import type { ResolvedOpenAIModel } from './options.js';

/** An error answered in OpenAI's shape. */
export class OpenAIError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    status: number,
    message: string,
    param: string | null = null,
    code: string | null = null,
    retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'OpenAIError';
    this.status = status;
    this.type = errorType(status);
    this.param = param;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The response body. */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'invalid_request_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** A bad request (400) naming the parameter at fault. */
export function invalid(message: string, param: string | null, code: string | null = null): OpenAIError {
  return new OpenAIError(400, message, param, code);
}

/** The 404 of a model id that is not configured (or that the caller may not see: they answer alike). */
export function modelNotFound(id: string): OpenAIError {
  return new OpenAIError(
    404,
    `The model '${id}' does not exist or you do not have access to it.`,
    'model',
    'model_not_found',
  );
}

/** Any error of serving a request, in OpenAI's shape, with the status the gateway gives it. */
export function toOpenAIError(err: unknown): OpenAIError {
  if (err instanceof OpenAIError) return err;
  const status = httpStatus(err);
  const code =
    err instanceof TritonError || err instanceof GatewayError ? err.code.toLowerCase() : 'internal';
  const e = new OpenAIError(
    status,
    errorMessage(err, { protocol: 'openai', repositoryControl: false }),
    null,
    status === 429 ? 'rate_limit_exceeded' : code,
  );
  const retry = (err as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  if (typeof retry === 'number') (e as { retryAfterSeconds: number | undefined }).retryAfterSeconds = retry;
  return e;
}

/** What a completion or chat request asks the model for. */
export interface Generation {
  prompt: string;
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with the usage. */
  includeUsage: boolean;
  /** The limit sent to the model, if any (finish_reason 'length' once reached). */
  maxTokens: number | undefined;
  /** `n`: choices to generate, each its own Triton request (1 to the model's `maxChoices`). */
  n: number;
  /** The sampling parameters for the model (OpenAI's names, as vLLM takes them). */
  sampling: Record<string, number | string | string[]>;
}

type Body = Record<string, unknown>;

/**
 * The value of `key` in a client's JSON object, its own property only: a key
 * named like a member of `Object.prototype` (`toString`, `constructor`,
 * `__proto__`...) is absent unless the client wrote it, and is then just a
 * key. Every read of a request body goes through here.
 */
export function own(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
  return (value as Record<string, unknown>)[key];
}

function numberIn(body: Body, key: string, min: number, max: number): number | undefined {
  const v = own(body, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
    throw invalid(`'${key}' must be a number from ${min} to ${max}; received ${JSON.stringify(v)}`, key);
  return v;
}

function wholeNumber(body: Body, key: string, min: number): number | undefined {
  const v = own(body, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
    throw invalid(`'${key}' must be a whole number of at least ${min}; received ${JSON.stringify(v)}`, key);
  return v;
}

function stopList(body: Body): string[] | undefined {
  const v = own(body, 'stop');
  if (v === undefined || v === null) return undefined;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || list.some((s) => typeof s !== 'string' || s === ''))
    throw invalid("'stop' must be a string or an array of up to 4 non-empty strings", 'stop');
  return list as string[];
}

/**
 * Parameters OpenAI defines that the gateway cannot honour, with the only
 * value it accepts. A Map, so a client's key is looked up among these alone
 * (never among an object's inherited members).
 */
const UNSUPPORTED = new Map<string, (v: unknown) => boolean>([
  ['best_of', (v) => v === 1],
  ['echo', (v) => v === false],
  ['logprobs', (v) => v === false || v === null],
  ['top_logprobs', (v) => v === null || v === 0],
  ['suffix', (v) => v === null || v === ''],
  ['logit_bias', (v) => v === null || (typeof v === 'object' && Object.keys(v as object).length === 0)],
  ['tools', (v) => v === null || (Array.isArray(v) && v.length === 0)],
  ['tool_choice', (v) => v === null || v === 'none'],
  ['functions', (v) => v === null],
  ['function_call', (v) => v === null || v === 'none'],
  ['parallel_tool_calls', () => true],
  ['response_format', (v) => v === null || own(v, 'type') === 'text'],
]);

/** Parameters read below, or accepted and ignored. */
const KNOWN = new Set([
  'model',
  'n',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'user',
  'store',
  'metadata',
]);

/**
 * Every key of the body is a parameter this route reads (`route`: its prompt
 * or messages), one it accepts and ignores, or one it cannot honour with a
 * value it accepts; any other is a 400 naming it, as OpenAI answers an
 * unknown argument (a key named like an `Object.prototype` member included).
 */
function checkKeys(body: Body, route: string): void {
  for (const key of Object.keys(body)) {
    const value = own(body, key);
    if (value === undefined) continue;
    const accepts = UNSUPPORTED.get(key);
    if (accepts !== undefined) {
      if (!accepts(value))
        throw invalid(`'${key}' ${JSON.stringify(value)} is not supported by this server`, key);
    } else if (!KNOWN.has(key) && key !== route) {
      throw invalid(`Unrecognized request argument supplied: ${key}`, key);
    }
  }
}

function streamFlags(body: Body): { stream: boolean; includeUsage: boolean } {
  const stream = own(body, 'stream') ?? false;
  if (typeof stream !== 'boolean') throw invalid("'stream' must be a boolean", 'stream');
  const options = own(body, 'stream_options') ?? null;
  if (options !== null && (typeof options !== 'object' || Array.isArray(options)))
    throw invalid("'stream_options' must be an object", 'stream_options');
  const include = own(options, 'include_usage') ?? false;
  if (typeof include !== 'boolean')
    throw invalid("'stream_options.include_usage' must be a boolean", 'stream_options');
  if (options !== null && !stream)
    throw invalid("'stream_options' is only allowed when 'stream' is true", 'stream_options');
  return { stream, includeUsage: include };
}

/** The sampling parameters and flags shared by both routes. */
function common(body: Body, model: ResolvedOpenAIModel, prompt: string): Generation {
  const sampling: Generation['sampling'] = {};
  const maxTokens =
    wholeNumber(body, 'max_completion_tokens', 1) ??
    wholeNumber(body, 'max_tokens', 1) ??
    model.maxTokensDefault;
  if (maxTokens !== undefined) sampling.max_tokens = maxTokens;
  const set = (key: string, v: number | string[] | undefined) => {
    if (v !== undefined) sampling[key] = v;
  };
  set('temperature', numberIn(body, 'temperature', 0, 2));
  set('top_p', numberIn(body, 'top_p', 0, 1));
  set('presence_penalty', numberIn(body, 'presence_penalty', -2, 2));
  set('frequency_penalty', numberIn(body, 'frequency_penalty', -2, 2));
  const seed = wholeNumber(body, 'seed', Number.MIN_SAFE_INTEGER);
  set('seed', seed);
  set('stop', stopList(body));
  const n = choices(body, model);
  // Choice i samples with seed + i: each must be a seed too.
  if (seed !== undefined && !Number.isSafeInteger(seed + n - 1))
    throw invalid(`'seed' + n - 1 must be at most ${Number.MAX_SAFE_INTEGER}; received seed ${seed}`, 'seed');
  return { prompt, ...streamFlags(body), maxTokens, n, sampling };
}

/** `n`, bounded by the model entry's `maxChoices`: one HTTP request fans out to at most that many. */
function choices(body: Body, model: ResolvedOpenAIModel): number {
  const v = own(body, 'n');
  if (v === undefined || v === null) return 1;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > model.maxChoices)
    throw invalid(
      `'n' must be a whole number from 1 to ${model.maxChoices} for model '${model.id}'; received ${JSON.stringify(v)}`,
      'n',
    );
  return v;
}

/** A `/v1/completions` body. */
export function completionRequest(body: Body, model: ResolvedOpenAIModel): Generation {
  checkKeys(body, 'prompt');
  let prompt = own(body, 'prompt');
  if (Array.isArray(prompt) && prompt.length === 1) prompt = prompt[0];
  if (typeof prompt !== 'string')
    throw invalid("'prompt' must be a string (one prompt per request on this server)", 'prompt');
  return common(body, model, prompt);
}

/** The text of a message's content: a string, or text parts. */
function contentText(content: unknown, i: number): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content))
    throw invalid(`'messages[${i}].content' must be a string or an array`, 'messages');
  return content
    .map((part) => {
      const text = own(part, 'text');
      if (own(part, 'type') !== 'text' || typeof text !== 'string')
        throw invalid(`'messages[${i}].content': only text parts are supported`, 'messages');
      return text;
    })
    .join('');
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** A `/v1/chat/completions` body; the prompt is the messages through the model's template. */
export function chatRequest(body: Body, model: ResolvedOpenAIModel): Generation {
  checkKeys(body, 'messages');
  const messages = own(body, 'messages');
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalid("'messages' must be a non-empty array", 'messages');
  const t = model.template;
  let prompt = t.prefix;
  messages.forEach((m: unknown, i) => {
    const role = own(m, 'role');
    if (typeof role !== 'string' || !ROLES.has(role))
      throw invalid(`'messages[${i}].role' must be one of ${[...ROLES].join(', ')}`, 'messages');
    const content = contentText(own(m, 'content'), i);
    prompt += t.message.replaceAll('{role}', role).replaceAll('{content}', content);
  });
  return common(body, model, prompt + t.suffix);
}
