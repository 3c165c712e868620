/**
 * Streamed answers (OpenAI `stream: true`, `generate_stream`, gRPC
 * `ModelStreamInfer`) to a client that reads slower than its model writes.
 * Triton cannot be paused: a decoupled model sends its responses at its own
 * pace, and they wait in the request's InferStream while the route waits for
 * the client's socket to drain (the route takes no response meanwhile). So
 * what a slow client can cost is bounded twice: while the route waits, the
 * stream may hold at most `highWaterMark` responses and `highWaterMarkBytes`
 * bytes for it (past either the model's request is cancelled and what was
 * held is dropped), and a client that takes nothing for `writeTimeoutMs` is
 * cut (its connection closed, which cancels the request too).
 */
import { optionError } from 'triton-node/internal';

/** `GatewayOptions.streams`: what a streamed answer may hold for a slow client. */
export interface GatewayStreamOptions {
  /**
   * Responses a stream may hold for a client whose connection takes nothing
   * more for now (its socket's buffers full); past it the model's request is
   * cancelled (default 1,024).
   */
  highWaterMark?: number;
  /** Bytes of output data a stream may hold for such a client (default 16 MiB). */
  highWaterMarkBytes?: number;
  /**
   * How long a stream waits for a client that takes nothing of what was
   * written to it before it is cut and its model's request cancelled, ms
   * (default 30,000).
   */
  writeTimeoutMs?: number;
}

export type ResolvedStreamOptions = Required<GatewayStreamOptions>;

export const STREAM_DEFAULTS: ResolvedStreamOptions = {
  highWaterMark: 1024,
  highWaterMarkBytes: 16 * 1024 * 1024,
  writeTimeoutMs: 30_000,
};

/** Checks `GatewayOptions.streams`; a mistake throws a TypeError naming it. */
export function resolveStreamOptions(value: unknown): ResolvedStreamOptions {
  if (value === undefined) return STREAM_DEFAULTS;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw optionError('streams', 'an object { highWaterMark, highWaterMarkBytes, writeTimeoutMs }', value);
  const o = value as GatewayStreamOptions;
  const positive = (name: keyof GatewayStreamOptions) => {
    const v = o[name] ?? STREAM_DEFAULTS[name];
    if (!Number.isSafeInteger(v) || v <= 0)
      throw optionError(`streams.${name}`, 'a positive whole number', v);
    return v;
  };
  return {
    highWaterMark: positive('highWaterMark'),
    highWaterMarkBytes: positive('highWaterMarkBytes'),
    writeTimeoutMs: positive('writeTimeoutMs'),
  };
}

/** What a route writes a stream to: a node:http response or a grpc-js duplex call. */
export interface StreamTarget {
  readonly destroyed: boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** What the model's stream holds for the client meanwhile (an InferStream). */
export interface HeldResponses {
  readonly buffered: number;
  readonly bufferedBytes: number;
  cancel(): void;
}

/**
 * How a wait for the client ended: it drained (or left: the route sees that
 * itself), it took nothing for `writeTimeoutMs` (the route cuts it), or the
 * model's stream held more than the limits for it meanwhile and was
 * cancelled (the route ends the answer with that error).
 */
export type ClientWait = 'drained' | 'timeout' | 'overflow';

/** How often the responses held for a waiting client are counted, ms. */
const HELD_CHECK_MS = 20;

/**
 * Waits until `out` can take more. Meanwhile the model goes on sending into
 * `held`, its stream (Triton cannot be paused): past `limits.highWaterMark`
 * responses or `limits.highWaterMarkBytes` bytes more held while waiting, the
 * stream is cancelled, which cancels the model's request and drops what it held. The
 * stream's own bounds (the library's, generous for a consumer that merely
 * lags a fast model by a few thousand responses) apply while the client
 * reads; these, while it does not.
 */
export function awaitClient(
  out: StreamTarget,
  held: HeldResponses | undefined,
  limits: ResolvedStreamOptions,
): Promise<ClientWait> {
  if (out.destroyed) return Promise.resolve('drained');
  // What the stream held already (the route lagging a fast model) is the library's to bound.
  const responses = held?.buffered ?? 0;
  const bytes = held?.bufferedBytes ?? 0;
  return new Promise((resolve) => {
    const overflowing = () =>
      held !== undefined &&
      (held.buffered - responses > limits.highWaterMark ||
        held.bufferedBytes - bytes > limits.highWaterMarkBytes);
    const done = (how: ClientWait) => {
      clearTimeout(timer);
      clearInterval(check);
      out.off('drain', onDrain);
      out.off('close', onDrain);
      if (how === 'overflow') held!.cancel();
      resolve(how);
    };
    const onDrain = () => done('drained');
    const timer = setTimeout(() => done('timeout'), limits.writeTimeoutMs);
    const check = setInterval(() => {
      if (overflowing()) done('overflow');
    }, HELD_CHECK_MS);
    out.once('drain', onDrain);
    out.once('close', onDrain);
    if (overflowing()) done('overflow');
  });
}

/** The reason a stream was cut, for its audit line and the log. */
export function slowClientMessage(timeoutMs: number): string {
  return `the client took nothing of the stream for ${timeoutMs} ms: the stream was cut and its request cancelled`;
}

/** The error a stream ends with when it held too much for a client that read nothing. */
export function slowClientOverflow(limits: ResolvedStreamOptions): string {
  return `the client read too slowly: its stream held more than ${limits.highWaterMark} responses or ${limits.highWaterMarkBytes} bytes for it, and its request was cancelled`;
}

/** A response end()ed: what the route still has to do with it. */
export interface EndedTarget {
  readonly writableFinished: boolean;
  end(chunk?: string): unknown;
  destroy(): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Ends `out` (with `chunk`), and cuts it if the client has not taken the rest
 * within `timeoutMs`: an ended answer to a client that stopped reading would
 * otherwise stay open (and in flight) until the client leaves.
 */
export function endWithin(out: EndedTarget, timeoutMs: number, chunk?: string): void {
  out.end(chunk);
  if (out.writableFinished) return;
  const timer = setTimeout(() => out.destroy(), timeoutMs);
  timer.unref();
  out.once('close', () => clearTimeout(timer));
}
