/**
 * The OpenAI routes' metrics, kept in Triton's registry beside the
 * gateway's (so `/metrics` serves them), labelled by OpenAI model id (the
 * ids of the config: few values):
 *
 * - `triton_node_openai_time_to_first_token_us{model}`: from a request's
 *   arrival to its first generated text being written (histogram);
 * - `triton_node_openai_time_per_output_token_us{model}`: from the first
 *   token to the last, divided by the tokens after the first, per request
 *   of two tokens or more (histogram);
 * - `triton_node_openai_output_tokens_total{model}`,
 *   `triton_node_openai_prompt_tokens_total{model}`: tokens generated and
 *   read (counters, counted as the model's `tokenCount` says);
 * - `triton_node_openai_embeddings_total{model}`: vectors `/v1/embeddings`
 *   answered (counter; its texts' words count as prompt tokens).
 */
import type { Metric, Server } from 'triton-node';
import { MetricSeries } from '../metrics.js';

/** 1 ms to 60 s. */
const TTFT_BUCKETS_US = [
  1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
  10_000_000, 30_000_000, 60_000_000,
];
/** 100 µs to 5 s. */
const TPOT_BUCKETS_US = [
  100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 5_000_000,
];

export const OPENAI_METRICS = [
  'triton_node_openai_time_to_first_token_us',
  'triton_node_openai_time_per_output_token_us',
  'triton_node_openai_output_tokens_total',
  'triton_node_openai_prompt_tokens_total',
  'triton_node_openai_embeddings_total',
] as const;

export class OpenAIMetrics {
  readonly #server: Server;
  readonly #series: MetricSeries;

  constructor(server: Server) {
    this.#server = server;
    this.#series = new MetricSeries(server);
  }

  #metric(key: string, make: () => Metric): Metric | undefined {
    return this.#series.get(key, make);
  }

  #histogram(name: string, description: string, model: string, buckets: number[]): Metric | undefined {
    return this.#metric(`${name}/${model}`, () =>
      this.#server.createMetric({ kind: 'histogram', name, description, labels: { model }, buckets }),
    );
  }

  #counter(name: string, description: string, model: string): Metric | undefined {
    return this.#metric(`${name}/${model}`, () =>
      this.#server.createMetric({ kind: 'counter', name, description, labels: { model } }),
    );
  }

  /** Records one finished generation (first and last token times in ms, performance.now()). */
  record(model: string, arrived: number, first: number | undefined, last: number, tokens: number): void {
    try {
      if (first !== undefined) {
        this.#histogram(
          OPENAI_METRICS[0],
          'Time from an OpenAI request arriving to its first generated text, microseconds',
          model,
          TTFT_BUCKETS_US,
        )?.observe((first - arrived) * 1000);
        if (tokens > 1)
          this.#histogram(
            OPENAI_METRICS[1],
            'Time per generated token after the first, per request, microseconds',
            model,
            TPOT_BUCKETS_US,
          )?.observe(((last - first) * 1000) / (tokens - 1));
      }
      if (tokens > 0)
        this.#counter(OPENAI_METRICS[2], 'Tokens the OpenAI routes generated', model)?.increment(tokens);
    } catch {
      // Metrics must never fail a request.
    }
  }

  /** Counts the vectors of an embeddings request. */
  embedded(model: string, vectors: number): void {
    try {
      this.#counter(OPENAI_METRICS[4], 'Vectors the OpenAI embeddings route answered', model)?.increment(
        vectors,
      );
    } catch {
      // Metrics must never fail a request.
    }
  }

  /** Counts the tokens of a prompt. */
  prompt(model: string, tokens: number): void {
    try {
      if (tokens > 0)
        this.#counter(OPENAI_METRICS[3], 'Prompt tokens the OpenAI routes read', model)?.increment(tokens);
    } catch {
      // Metrics must never fail a request.
    }
  }
}
