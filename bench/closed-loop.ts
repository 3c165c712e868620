/**
 * One closed-loop measurement: `concurrency` slots, each sending its next
 * request as soon as its last one settled, over a window that opens once the
 * warm-up time has passed and every slot has completed a request (a full
 * pipeline: at c=32 on a slow model the first completions come late). Besides
 * requests/s and latency it records the event loop's delay over the window
 * (perf_hooks.monitorEventLoopDelay): what the way of running a model costs
 * the one JS thread. Shared by `--vs onnxruntime-node` and `--vs torch`.
 */
import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';

/** One request's work for a slot of the loop (`slot`: 0..concurrency-1, `i`: the slot's count). */
export type Once = (slot: number, i: number) => Promise<void>;

export interface LoopRun {
  concurrency: number;
  requests: number;
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  /** The event loop's delay over the window (monitorEventLoopDelay, 1 ms resolution), ms. */
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  /** How many delays the monitor recorded (one per turn of the loop, at most one per ms). */
  eventLoopSamples: number;
  errors: number;
  firstError?: string;
}

export async function closedLoop(
  concurrency: number,
  once: Once,
  timing: { warmupS: number; durationS: number },
): Promise<LoopRun> {
  const histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600e9,
    numberOfSignificantValueDigits: 3,
  });
  const loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  const warmupEnd = performance.now() + timing.warmupS * 1000;
  let windowStart = Number.POSITIVE_INFINITY;
  let windowEnd = Number.POSITIVE_INFINITY;
  let warmSlots = 0;
  loop.enable();
  const slot = async (index: number): Promise<void> => {
    for (let i = 0; ; i++) {
      const t0 = performance.now();
      try {
        await once(index, i);
      } catch (e) {
        errors++;
        firstError ??=
          e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e);
      }
      const t1 = performance.now();
      if (i === 0) warmSlots++;
      if (windowStart === Number.POSITIVE_INFINITY && warmSlots === concurrency && t1 >= warmupEnd) {
        windowStart = t1;
        windowEnd = t1 + timing.durationS * 1000;
        // The window's delays only: what the warm-up left is dropped.
        loop.reset();
        continue;
      }
      if (t1 > windowStart && t1 < windowEnd) {
        histogram.recordValue(Math.max(1, Math.round((t1 - t0) * 1e6)));
        completed++;
      }
      if (t1 >= windowEnd) return;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => slot(i)));
  // A loop blocked to the end has its last delay still pending: let the
  // monitor's timer fire once more so that delay is counted (with
  // onnxruntime-node at c=32 one turn of the loop can outlast the window).
  await new Promise((resolve) => setTimeout(resolve, 5));
  loop.disable();
  const ms = (ns: number) => ns / 1e6;
  const run: LoopRun = {
    concurrency,
    requests: completed,
    throughput: completed / timing.durationS,
    p50Ms: ms(histogram.getValueAtPercentile(50)),
    p99Ms: ms(histogram.getValueAtPercentile(99)),
    eventLoopP99Ms: ms(loop.percentile(99)),
    eventLoopMaxMs: ms(loop.max),
    eventLoopSamples: loop.count,
    errors,
  };
  if (firstError !== undefined) run.firstError = firstError;
  histogram.destroy();
  return run;
}
