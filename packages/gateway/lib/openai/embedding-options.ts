/**
 * What an OpenAI model id serves (`kind`), and the settings of an
 * embeddings model: the Triton model's text input and vector output, and
 * whether `dimensions` may shorten its vectors. Checked with the rest of
 * `GatewayOptions.openai` (options.ts); mistakes throw a TypeError.
 */
import { describe, optionError } from 'triton-node/internal';

/** What an OpenAI model id serves: text generation (completions and chat) or embeddings. */
export type OpenAIModelKind = 'generation' | 'embeddings';

/** The options of an id of kind `'embeddings'` (part of `OpenAIModelOptions`). */
export interface EmbeddingModelOptions {
  /** The Triton model's BYTES input, dims `[1]`, one text per batch element (default `'TEXT'`). */
  input?: string;
  /** Its FP32 output, dims `[D]`: one vector per text (default `'EMBEDDING'`). */
  output?: string;
  /**
   * Whether a request's `dimensions` below the model's size keeps the first
   * `dimensions` values of each vector and L2-normalizes them again (as
   * OpenAI's text-embedding-3 models do; right only for a model trained for
   * it, Matryoshka-style). Default false: such a request answers 400.
   */
  truncateDimensions?: boolean;
}

/** An embeddings model's settings once checked. */
export interface ResolvedEmbedding {
  input: string;
  output: string;
  truncateDimensions: boolean;
}

const GENERATION_ONLY = ['chatTemplate', 'maxTokensDefault', 'tokenCount', 'maxChoices'] as const;
const EMBEDDINGS_ONLY = ['input', 'output', 'truncateDimensions'] as const;

function name(value: unknown, at: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '') throw optionError(at, 'a Triton tensor name', value);
  return value;
}

/**
 * The kind of the entry at `at` (`openai['id']`) and, for embeddings, its
 * settings; an option of the other kind is a mistake.
 */
export function resolveKind(
  at: string,
  o: Record<string, unknown>,
): { kind: OpenAIModelKind; embedding: ResolvedEmbedding | undefined } {
  const kind = o.kind ?? 'generation';
  if (kind !== 'generation' && kind !== 'embeddings')
    throw optionError(`${at}.kind`, "'generation' or 'embeddings'", kind);
  const foreign = kind === 'embeddings' ? GENERATION_ONLY : EMBEDDINGS_ONLY;
  const other = kind === 'embeddings' ? 'generation' : 'embeddings';
  for (const key of foreign) {
    if (o[key] !== undefined)
      throw new TypeError(
        `${at}.${key} is an option of kind '${other}', but this model is of kind '${kind}': leave it out (received ${describe(o[key])})`,
      );
  }
  if (kind === 'generation') return { kind, embedding: undefined };
  const truncate = o.truncateDimensions ?? false;
  if (typeof truncate !== 'boolean') throw optionError(`${at}.truncateDimensions`, 'a boolean', truncate);
  return {
    kind,
    embedding: {
      input: name(o.input, `${at}.input`, 'TEXT'),
      output: name(o.output, `${at}.output`, 'EMBEDDING'),
      truncateDimensions: truncate,
    },
  };
}
