/**
 * One generation on Triton: the request for a text model of the vLLM
 * example's shape (`text_input`, and `stream`, `sampling_parameters`,
 * `exclude_input_in_output` where the model has them; the sampling
 * parameters also as request parameters), and the text of each response.
 */
import type { InferRequest, InferResult, ParameterValue } from 'triton-node';
import type { GatewayContext } from '../context.js';
import type { ResolvedOpenAIModel } from './options.js';
import { OpenAIError } from './protocol.js';
import type { Generation } from './protocol.js';

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
export function tritonRequest(entry: ResolvedOpenAIModel, inputs: Set<string>, g: Generation): InferRequest {
  if (!inputs.has('text_input'))
    throw new OpenAIError(
      500,
      `model '${entry.model}' has no input 'text_input'; the OpenAI routes need a model of the vLLM example's shape`,
    );
  const tensors: InferRequest['inputs'] = { text_input: [g.prompt] };
  if (inputs.has('stream')) tensors.stream = [true];
  if (inputs.has('exclude_input_in_output')) tensors.exclude_input_in_output = [true];
  if (inputs.has('sampling_parameters')) tensors.sampling_parameters = [JSON.stringify(g.sampling)];
  const parameters: Record<string, ParameterValue> = {};
  for (const [key, value] of Object.entries(g.sampling)) {
    parameters[key] = Array.isArray(value) ? JSON.stringify(value) : value;
  }
  return { inputs: tensors, parameters };
}

/** The text of one response (its `text_output` elements joined); '' when it has none. */
export function responseText(result: InferResult): string {
  const out = result.outputs.text_output;
  if (out === undefined) return '';
  return out.strings().join('');
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
