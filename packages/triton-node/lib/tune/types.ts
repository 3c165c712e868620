/**
 * What tune() takes, reports as it goes, and returns: the options, the
 * progress, one measured point, the result with its recommendation.
 */
import type { ModelConfig } from '../config/model-config.js';
import type { InputValue } from '../request/types.js';

export interface TuneOptions {
  /** The latency SLA: the p99 a configuration must stay within, ms. */
  slaP99Ms: number;
  /** Requests in flight to measure each configuration at (default [1, 8, 32]). */
  concurrency?: readonly number[];
  /** Instance counts to try (default [1, 2]). */
  instances?: readonly number[];
  /** Preferred batch sizes, raised in this order (default: powers of 2 up to max_batch_size). */
  preferredBatchSizes?: readonly number[];
  /** Queue-delay caps tried for the best preferred size, µs, in this order (default 100, 500, 1000, 5000, 10000). */
  queueDelaysUs?: readonly number[];
  /** Measurement window per configuration and concurrency, ms (default 3000). */
  durationMs?: number;
  /** Load before each window, not measured, ms (default 300). */
  warmupMs?: number;
  /** The request's inputs (default: zeros of each input's dims, -1 as 16, batch 1). */
  inputs?: Record<string, InputValue>;
  /** Tune a decoupled model or an LLM backend anyway (they batch internally: Triton's batching rarely helps). */
  force?: boolean;
  /** Stops the run; the original config is put back and tune() rejects with an AbortError. */
  signal?: AbortSignal;
  /** Called before each measurement and once at the end. */
  onProgress?: (progress: TuneProgress) => void;
}

export interface TuneProgress {
  /**
   * Steps done of `planned`: measurements taken, plus those the run left out
   * because the SLA broke earlier (larger sizes and delays only wait longer).
   */
  done: number;
  /** Every step the run could take (each measurement, and the recheck of the pick): fixed for the run. */
  planned: number;
  /** Of `done`, the steps left out. */
  skipped: number;
  /** What is measured now. */
  what: string;
}

/** One measured configuration at one concurrency. */
export interface TunePoint {
  instances: number;
  /** null: no dynamic batching (the baseline). */
  preferredBatchSize: number | null;
  queueDelayUs: number;
  concurrency: number;
  /** Inferences (batch elements) per second. */
  throughput: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Per request, from Triton's statistics over the window, µs. */
  queueUs: number;
  computeUs: number;
  /** Mean batch size Triton executed. */
  meanBatchSize: number;
  requests: number;
  errors: number;
  /** GPU memory in use at the end of the window (from Triton's metrics; absent without GPU metrics). */
  gpuMemoryBytes?: number;
  meetsSla: boolean;
}

export interface TuneResult {
  model: string;
  slaP99Ms: number;
  points: TunePoint[];
  /** The best throughput within the SLA (undefined when no point met it). */
  best?: TunePoint;
  /** Without a pick: why, in numbers ("a single request already took 20.5 ms (p99) against 20 ms"). */
  reason?: string;
  /** The pick measured again. */
  recheck?: TunePoint;
  /** The recommended config: the original with the pick's instance count and batching. */
  config?: ModelConfig;
  /** The recommendation as config.pbtxt text. */
  configText?: string;
  /** The original config (put back at the end). */
  original: ModelConfig;
  startedAt: string;
  finishedAt: string;
}
