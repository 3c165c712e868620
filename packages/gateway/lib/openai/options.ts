/**
 * The OpenAI routes' settings: which OpenAI model id maps to which Triton
 * model, how a chat turns into a prompt, and how tokens are counted.
 */
import { optionError } from 'triton-node/internal';
import {
  type EmbeddingModelOptions,
  type OpenAIModelKind,
  type ResolvedEmbedding,
  resolveKind,
} from './embedding-options.js';

/**
 * How chat messages become one prompt: each message is `message` with
 * `{role}` and `{content}` replaced, joined, between `prefix` and `suffix`
 * (the suffix opens the assistant's turn).
 */
export interface ChatTemplate {
  /** Default `'<|{role}|>\n{content}\n'`. */
  message?: string;
  /** Default `''`. */
  prefix?: string;
  /** Default `'<|assistant|>\n'`. */
  suffix?: string;
}

/** One OpenAI model id of `GatewayOptions.openai`: the Triton model behind it. */
export interface OpenAIModelOptions extends EmbeddingModelOptions {
  /**
   * The Triton model: for kind 'generation', decoupled, with a BYTES `text_input` and `text_output`
   * (Triton's vLLM example's shape); for 'embeddings', a batching model from texts to FP32 vectors.
   */
  model: string;
  /**
   * What the id serves: `'generation'` (default; `/v1/completions`, `/v1/chat/completions`) or
   * `'embeddings'` (`/v1/embeddings`; `input`, `output`, `truncateDimensions` apply).
   */
  kind?: OpenAIModelKind;
  /** Its version (default: the highest ready one). */
  version?: number;
  /** How `/v1/chat/completions` turns messages into the prompt (default: `<|role|>` lines, see ChatTemplate). */
  chatTemplate?: ChatTemplate;
  /** `max_tokens` sent when a request gives none (default: none sent; the model decides). */
  maxTokensDefault?: number;
  /**
   * How tokens are counted for `usage`, limits and metrics when the model does not report its own
   * (the vLLM backend's `num_input_tokens`/`num_output_tokens`): `'words'` (default; whitespace-separated
   * words of the text) or `'responses'` (one per response of the model, as an LLM backend that streams
   * token by token sends them).
   */
  tokenCount?: 'words' | 'responses';
  /** `owned_by` in `/v1/models` (default `'triton-node'`). */
  ownedBy?: string;
  /**
   * The most choices (`n`) one request may ask for, each its own Triton request run at the same
   * time (default 16, at most 128); above it the request is a 400 naming `n`.
   */
  maxChoices?: number;
}

/** A model entry once checked, defaults filled in. */
export interface ResolvedOpenAIModel {
  id: string;
  model: string;
  version: number;
  template: Required<ChatTemplate>;
  maxTokensDefault: number | undefined;
  tokenCount: 'words' | 'responses';
  ownedBy: string;
  maxChoices: number;
  kind: OpenAIModelKind;
  /** Kind 'embeddings' only. */
  embedding: ResolvedEmbedding | undefined;
}

/** `maxChoices`' default, and the most it may be. */
export const DEFAULT_MAX_CHOICES = 16;
export const MAX_CHOICES = 128;

const DEFAULT_TEMPLATE: Required<ChatTemplate> = {
  message: '<|{role}|>\n{content}\n',
  prefix: '',
  suffix: '<|assistant|>\n',
};

function text(value: unknown, name: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw optionError(name, 'a string', value);
  return value;
}

function template(value: unknown, name: string): Required<ChatTemplate> {
  if (value === undefined) return DEFAULT_TEMPLATE;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw optionError(name, 'an object { message, prefix, suffix }', value);
  const t = value as ChatTemplate;
  return {
    message: text(t.message, `${name}.message`, DEFAULT_TEMPLATE.message),
    prefix: text(t.prefix, `${name}.prefix`, DEFAULT_TEMPLATE.prefix),
    suffix: text(t.suffix, `${name}.suffix`, DEFAULT_TEMPLATE.suffix),
  };
}

function resolveModel(id: string, value: unknown): ResolvedOpenAIModel {
  const at = `openai['${id}']`;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw optionError(at, 'an object { model, ... }', value);
  const o = value as OpenAIModelOptions;
  if (typeof o.model !== 'string' || o.model === '')
    throw optionError(`${at}.model`, 'a Triton model name', o.model);
  const version = o.version ?? -1;
  if (!Number.isSafeInteger(version) || (version < 1 && o.version !== undefined))
    throw optionError(`${at}.version`, 'a positive whole number', o.version);
  const max = o.maxTokensDefault;
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 1))
    throw optionError(`${at}.maxTokensDefault`, 'a positive whole number', max);
  const maxChoices = o.maxChoices ?? DEFAULT_MAX_CHOICES;
  if (!Number.isSafeInteger(maxChoices) || maxChoices < 1 || maxChoices > MAX_CHOICES)
    throw optionError(`${at}.maxChoices`, `a whole number from 1 to ${MAX_CHOICES}`, o.maxChoices);
  const tokenCount = o.tokenCount ?? 'words';
  if (tokenCount !== 'words' && tokenCount !== 'responses')
    throw optionError(`${at}.tokenCount`, "'words' or 'responses'", tokenCount);
  return {
    id,
    ...resolveKind(at, value as Record<string, unknown>),
    model: o.model,
    version,
    template: template(o.chatTemplate, `${at}.chatTemplate`),
    maxTokensDefault: max,
    tokenCount,
    ownedBy: text(o.ownedBy, `${at}.ownedBy`, 'triton-node'),
    maxChoices,
  };
}

/** Checks `GatewayOptions.openai`; a map by OpenAI model id. Mistakes throw a TypeError. */
export function resolveOpenAIOptions(value: unknown): Map<string, ResolvedOpenAIModel> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw optionError('openai', 'an object mapping OpenAI model ids to { model, ... }', value);
  const models = new Map<string, ResolvedOpenAIModel>();
  for (const [id, entry] of Object.entries(value)) {
    if (id === '') throw optionError('openai', 'non-empty model ids', id);
    models.set(id, resolveModel(id, entry));
  }
  return models;
}
