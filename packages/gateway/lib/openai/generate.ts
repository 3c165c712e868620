/**
 * One generation on Triton: the request for a text model of the vLLM
 * example's shape (`text_input`, and `stream`, `sampling_parameters`,
 * `exclude_input_in_output` where the model has them; the sampling
 * parameters also as request parameters), and what each response carries:
 * its text, and where the model has the vLLM backend's additional outputs
 * (inputs `return_finish_reason`, `return_num_input_tokens`,
 * `return_num_output_tokens`, set true), its finish reason and token counts.
 */
import type { InferRequest, InferResult, ParameterValue } from 'triton-node';
import type { GatewayContext } from '../context.js';
import type { ResolvedOpenAIModel } from './options.js';
import { OpenAIError } from './protocol.js';
import type { Generation } from './protocol.js';

/** The additional outputs the gateway asks a model for, by the BOOL input that asks for each. */
const REPORTS = ['return_finish_reason', 'return_num_input_tokens', 'return_num_output_tokens'] as const;

/** The input names of each model (by `name/version`), read once from its metadata. */
export class ModelInputs {
  readonly #ctx: GatewayContext;
  readonly #known = new Map<string, Promise<Set<string>>>();

  constructor(ctx: GatewayContext) {
    this.#ctx = ctx;
  }

  /** The model's inputs; rejects as the metadata request does (404 for a model not loaded). */
  get(entry: ResolvedOpenAIModel): Promise<Set<string>> {
    const key = `${entry.model}/${entry.version}`;
    let known = this.#known.get(key);
    if (known === undefined) {
      known = this.#ctx.server
        .model(entry.model, entry.version)
        .metadata()
        .then((m) => new Set(m.inputs.map((i) => i.name)));
      // A failure (the model not loaded yet) is asked again next time.
      known.catch(() => this.#known.delete(key));
      this.#known.set(key, known);
    }
    return known;
  }
}

/** The Triton request of a generation: always streamed, so the first token can go out as it comes. */
export function tritonRequest(
  entry: ResolvedOpenAIModel,
  inputs: Set<string>,
  g: Generation,
  seed?: number,
): InferRequest {
  if (!inputs.has('text_input'))
    throw new OpenAIError(
      500,
      `model '${entry.model}' has no input 'text_input'; the OpenAI routes need a model of the vLLM example's shape`,
    );
  const tensors: InferRequest['inputs'] = { text_input: [g.prompt] };
  if (inputs.has('stream')) tensors.stream = [true];
  if (inputs.has('exclude_input_in_output')) tensors.exclude_input_in_output = [true];
  // The model's own finish reason and token counts, where it can tell them.
  for (const name of REPORTS) if (inputs.has(name)) tensors[name] = [true];
  // Choice i of a request with a seed samples with seed + i: the choices differ, the answer repeats.
  const sampling = seed === undefined ? g.sampling : { ...g.sampling, seed };
  if (inputs.has('sampling_parameters')) tensors.sampling_parameters = [JSON.stringify(sampling)];
  const parameters: Record<string, ParameterValue> = {};
  for (const [key, value] of Object.entries(sampling)) {
    parameters[key] = Array.isArray(value) ? JSON.stringify(value) : value;
  }
  return { inputs: tensors, parameters };
}

/** What one response of the model says. */
export interface ModelResponse {
  /** Its `text_output` elements joined; '' when it has none. */
  text: string;
  /** `finish_reason`, mapped to OpenAI's (finishReason()); undefined where absent or not finished yet. */
  finishReason: string | undefined;
  /** `num_input_tokens`: the prompt's tokens, as the model's tokenizer counts them. */
  inputTokens: number | undefined;
  /** `num_output_tokens`: tokens generated since the previous response. */
  outputTokens: number | undefined;
}

/** The first element of a numeric output as a count; undefined when absent or not a count. */
function count(result: InferResult, name: string): number | undefined {
  const out = result.outputs[name];
  if (out === undefined || out.datatype === 'BYTES') return undefined;
  const v = Number(out.toJSON().data?.[0]);
  return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/**
 * A model's finish reason as OpenAI names it: vLLM's 'stop' and 'length' as
 * they are, 'content_filter' too; other words for the same ('eos',
 * 'stop_sequence', 'max_tokens'...) mapped to them; vLLM's 'None' (not
 * finished yet) and '' are no reason; any other (vLLM's 'abort') is 'stop'.
 */
export function finishReason(reported: string): 'stop' | 'length' | 'content_filter' | undefined {
  const r = reported.trim().toLowerCase();
  if (r === '' || r === 'none' || r === 'null') return undefined;
  if (r === 'length' || r === 'max_tokens' || r === 'max_length' || r === 'max_new_tokens') return 'length';
  if (r === 'content_filter') return 'content_filter';
  return 'stop';
}

/** Reads one response of the model. */
export function readResponse(result: InferResult): ModelResponse {
  const out = result.outputs.text_output;
  const reason = result.outputs.finish_reason;
  const reasons = reason?.datatype === 'BYTES' ? reason.strings() : [];
  return {
    text: out === undefined ? '' : out.strings().join(''),
    finishReason: reasons.length > 0 ? finishReason(reasons[0]!) : undefined,
    inputTokens: count(result, 'num_input_tokens'),
    outputTokens: count(result, 'num_output_tokens'),
  };
}

/**
 * Tokens in a piece of text, as the model's `tokenCount` counts them: one per
 * response for 'responses' (when `responses` is given: generated text), else words.
 */
export function countTokens(entry: ResolvedOpenAIModel, text: string, responses?: number): number {
  if (entry.tokenCount === 'responses' && responses !== undefined) return responses;
  let n = 0;
  for (const word of text.split(/\s+/)) if (word !== '') n++;
  return n;
}
