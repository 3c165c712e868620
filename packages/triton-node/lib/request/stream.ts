/**
 * Streams of responses from decoupled models (one request, many responses).
 *
 * Triton cannot be paused: a decoupled backend sends responses at its own
 * pace. The stream buffers them for the consumer up to `highWaterMark`
 * responses and `highWaterMarkBytes` bytes of output data, and drops each one
 * as soon as the consumer takes it. A consumer that falls further behind than
 * that gets an error (and the request is cancelled), so memory stays bounded
 * instead of growing without limit. The limits are generous on purpose: one
 * wake-up of the JS thread delivers every response that arrived meanwhile
 * (thousands at a time from a fast backend), all buffered before even a tight
 * `for await` loop takes the first one.
 */
import { type TritonError, optionError, tritonError } from '../base/errors.js';
import type { InferResult } from './result.js';

export interface StreamOptions {
  /**
   * Most responses held for the consumer (default 65,536). Past it the
   * request is cancelled and the iterator throws a TritonError 'UNAVAILABLE'.
   */
  highWaterMark?: number;
  /**
   * Most bytes of output data held for the consumer (default 64 MiB); a
   * single response larger than that is still delivered when nothing else is
   * waiting. Past it the request is cancelled as for `highWaterMark`.
   */
  highWaterMarkBytes?: number;
}

/** Timing of a stream, measured in Node from submission (final once the stream ended). */
export interface StreamStats {
  /** Responses received. */
  responses: number;
  /** Submission to first response, ms (null before the first response). */
  timeToFirstResponseMs: number | null;
  /** Mean gap between consecutive responses, ms (null with fewer than two). */
  meanTimeBetweenResponsesMs: number | null;
}

export const DEFAULT_HIGH_WATER_MARK = 65_536;
export const DEFAULT_HIGH_WATER_MARK_BYTES = 64 * 1024 * 1024;

/** Bytes of output data a result holds (CPU, pinned or device memory). */
function resultBytes(result: InferResult): number {
  let bytes = 0;
  const outputs = result.outputs;
  for (const name in outputs) {
    const data = outputs[name]!.data as { byteLength?: number } | Buffer[];
    if (Array.isArray(data)) {
      for (const b of data) bytes += b.byteLength;
    } else {
      bytes += data.byteLength ?? 0;
    }
  }
  return bytes;
}

/** @internal Hooks the server gives a stream. */
export interface StreamHooks {
  /** Best-effort cancellation of the submitted request. */
  cancel(): void;
  /** Timing observations for the streaming histograms, when enabled. */
  observe?(kind: 'first' | 'between', ms: number, result: InferResult): void;
  /** The consumer is done with the stream (read its end, failed, or returned). */
  closed?(): void;
}

type State = 'starting' | 'open' | 'ended' | 'failed' | 'closed';

/**
 * An async iterable of the responses of one streamed request. Iterate it with
 * `for await`; leaving the loop early (`break`, `return`, an exception)
 * cancels the request. It can be iterated once.
 */
export class InferStream<T = InferResult> implements AsyncIterableIterator<T>, AsyncDisposable {
  readonly highWaterMark: number;
  readonly highWaterMarkBytes: number;
  #queue: InferResult[] = [];
  /** Output bytes of each queued result (parallel to #queue). */
  #sizes: number[] = [];
  #bufferedBytes = 0;
  #head = 0;
  #state: State = 'starting';
  #error: TritonError | undefined;
  #waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #hooks: StreamHooks | undefined;
  #cancelWanted = false;
  #submittedAt = 0;
  #firstAt = 0;
  #lastAt = 0;
  #count = 0;
  #maxBuffered = 0;
  #describe: string;

  /** @internal */
  constructor(describe: string, options: StreamOptions) {
    this.#describe = describe;
    this.highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
    const bytes = options.highWaterMarkBytes;
    if (bytes !== undefined && !(Number.isSafeInteger(bytes) && bytes > 0)) {
      throw optionError('highWaterMarkBytes', 'a positive integer', bytes);
    }
    this.highWaterMarkBytes = bytes ?? DEFAULT_HIGH_WATER_MARK_BYTES;
  }

  /** Bytes of output data waiting for the consumer now. */
  get bufferedBytes(): number {
    return this.#bufferedBytes;
  }

  /** Responses received but not yet taken by the consumer. */
  get buffered(): number {
    return this.#queue.length - this.#head;
  }

  /** The most responses that were ever buffered at once (never above highWaterMark). */
  get maxBuffered(): number {
    return this.#maxBuffered;
  }

  /** True once the stream ended (normally, with an error, or cancelled). */
  get ended(): boolean {
    return this.#state !== 'starting' && this.#state !== 'open';
  }

  /** Timing of the stream so far; final once it ended. */
  get stats(): StreamStats {
    const n = this.#count;
    return {
      responses: n,
      timeToFirstResponseMs: n > 0 ? this.#firstAt - this.#submittedAt : null,
      meanTimeBetweenResponsesMs: n > 1 ? (this.#lastAt - this.#firstAt) / (n - 1) : null,
    };
  }

  /** @internal The request was submitted. */
  _open(hooks: StreamHooks, submittedAt: number): void {
    this.#submittedAt = submittedAt;
    if (this.#state === 'closed') {
      if (this.#cancelWanted) hooks.cancel();
      hooks.closed?.();
      return;
    }
    this.#hooks = hooks;
    if (this.#state === 'starting') this.#state = 'open';
  }

  /** @internal One response arrived. */
  _push(result: InferResult, at: number): void {
    if (this.#state !== 'open') return;
    if (this.#count === 0) {
      this.#firstAt = at;
      this.#hooks?.observe?.('first', at - this.#submittedAt, result);
    } else {
      this.#hooks?.observe?.('between', at - this.#lastAt, result);
    }
    this.#lastAt = at;
    this.#count++;
    if (this.#waiter !== undefined) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w.resolve({ value: result as T, done: false });
      return;
    }
    const waiting = this.buffered;
    if (waiting >= this.highWaterMark) {
      this.#overflow(`the consumer fell more than highWaterMark (${this.highWaterMark}) responses behind`);
      return;
    }
    const bytes = resultBytes(result);
    if (waiting > 0 && this.#bufferedBytes + bytes > this.highWaterMarkBytes) {
      this.#overflow(
        `the consumer fell more than highWaterMarkBytes (${this.highWaterMarkBytes}) bytes of responses behind`,
      );
      return;
    }
    this.#queue.push(result);
    this.#sizes.push(bytes);
    this.#bufferedBytes += bytes;
    const n = this.buffered;
    if (n > this.#maxBuffered) this.#maxBuffered = n;
  }

  #overflow(why: string): void {
    this.#hooks?.cancel();
    this._fail(tritonError('UNAVAILABLE', `${this.#describe}: ${why}; the request was cancelled`), true);
  }

  /** @internal The request finished (FINAL). */
  _end(): void {
    if (this.#state !== 'open' && this.#state !== 'starting') return;
    this.#state = 'ended';
    this.#settleWaiter();
  }

  /**
   * @internal The stream failed. `dropBuffered`: throw at once (abort,
   * overflow) instead of after the responses already buffered.
   */
  _fail(error: TritonError, dropBuffered: boolean): void {
    const running = this.#state === 'open' || this.#state === 'starting';
    // An abort still applies after FINAL while responses wait to be read.
    if (!running && !(dropBuffered && this.#state === 'ended')) return;
    this.#state = 'failed';
    this.#error = error;
    if (dropBuffered) this.#clear();
    this.#settleWaiter();
  }

  #clear(): void {
    this.#queue = [];
    this.#sizes = [];
    this.#head = 0;
    this.#bufferedBytes = 0;
  }

  #settleWaiter(): void {
    const w = this.#waiter;
    if (w === undefined) return;
    this.#waiter = undefined;
    this.next().then(w.resolve, w.reject);
  }

  #take(): InferResult {
    const value = this.#queue[this.#head]!;
    // Drop our reference at once: memory is held only until the consumer takes it.
    (this.#queue as Array<InferResult | undefined>)[this.#head] = undefined;
    this.#bufferedBytes -= this.#sizes[this.#head]!;
    this.#head++;
    if (this.#head === this.#queue.length) {
      // Drained: start over (cheaper than slicing later).
      this.#queue.length = 0;
      this.#sizes.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
    return value;
  }

  #close(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    const hooks = this.#hooks;
    this.#hooks = undefined;
    hooks?.closed?.();
  }

  next(): Promise<IteratorResult<T>> {
    // T is InferResult unless a typed Model narrowed it (types only).
    if (this.buffered > 0) return Promise.resolve({ value: this.#take() as T, done: false });
    if (this.#state === 'failed') {
      const err = this.#error!;
      this.#close();
      return Promise.reject(err);
    }
    if (this.#state === 'ended' || this.#state === 'closed') {
      this.#close();
      return Promise.resolve({ value: undefined, done: true });
    }
    if (this.#waiter !== undefined) {
      return Promise.reject(
        new TypeError(`${this.#describe}: next() called while a previous next() is pending`),
      );
    }
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /** Stops consuming: cancels the request if it is still running and drops buffered responses. */
  return(): Promise<IteratorResult<T>> {
    if (this.#state === 'open' || this.#state === 'starting') {
      if (this.#hooks) this.#hooks.cancel();
      else this.#cancelWanted = true;
    }
    this.#close();
    this.#clear();
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.resolve({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Same as `return()`: cancels the request. */
  cancel(): void {
    void this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }
}
