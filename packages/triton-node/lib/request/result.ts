/**
 * The result of one inference: its outputs, parameters and timing, and how
 * its pooled output memory goes back.
 */
import type { InferTiming, Tensor, TensorJSON } from '../tensor/tensor.js';

/** The result of one inference (or one response of a stream). */
export interface InferResult {
  model: string;
  version: number;
  /** The request id (`request.id`), '' when none was given. */
  id: string;
  outputs: Record<string, Tensor>;
  /** Response parameters the backend set. */
  parameters: Record<string, string | number | boolean>;
  /** Triton's per-request timing, when the request asked for it (`timing: true`). */
  timing?: InferTiming;
  /** Disposes every output tensor (see `tensor.dispose()`): the outputs' pooled memory goes back at once. */
  dispose(): void;
  /** Same as dispose(), for `using result = await model.infer(...)`. */
  [Symbol.dispose](): void;
  /** A plain, JSON-ready form (`JSON.stringify(result)` uses it): outputs as `Tensor.toJSON()` gives them. */
  toJSON(): ResultJSON;
}

/** What `InferResult.toJSON()` returns. */
export interface ResultJSON {
  model: string;
  version: number;
  id: string;
  outputs: Record<string, TensorJSON>;
  parameters: Record<string, string | number | boolean>;
  timing?: InferTiming;
}

/** @internal The InferResult the server builds: one shape, dispose() on the prototype. */
export class Result implements InferResult {
  readonly model: string;
  readonly version: number;
  readonly id: string;
  readonly outputs: Record<string, Tensor>;
  readonly parameters: Record<string, string | number | boolean>;
  declare timing?: InferTiming;

  constructor(
    model: string,
    version: number,
    id: string,
    outputs: Record<string, Tensor>,
    parameters: Record<string, string | number | boolean>,
  ) {
    this.model = model;
    this.version = version;
    this.id = id;
    this.outputs = outputs;
    this.parameters = parameters;
  }

  dispose(): void {
    for (const name in this.outputs) this.outputs[name]!.dispose();
  }

  /** A plain, JSON-ready form: each output as `Tensor.toJSON()` gives it. */
  toJSON(): ResultJSON {
    const outputs: Record<string, TensorJSON> = {};
    for (const name in this.outputs) outputs[name] = this.outputs[name]!.toJSON();
    const json: ResultJSON = {
      model: this.model,
      version: this.version,
      id: this.id,
      outputs,
      parameters: this.parameters,
    };
    if (this.timing !== undefined) json.timing = this.timing;
    return json;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}
