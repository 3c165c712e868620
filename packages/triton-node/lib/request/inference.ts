/**
 * Inference and streams of one server: request preparation (model spec,
 * validation, the addon's request form), submission, and the routing of the
 * addon's events to their requests by token.
 * @internal
 * @packageDocumentation
 */
import { performance } from 'node:perf_hooks';
import type { NativeErrorInfo, NativeEvent, NativeServer } from '../abi/binding.js';
import {
  TritonError,
  abortError,
  captureStack,
  copyError,
  fromErrorInfo,
  fromNativeError,
  optionError,
  stackHere,
  stoppedError,
  tritonError,
  withCallHint,
} from '../base/errors.js';
import type { StreamMetrics } from '../metrics/metrics.js';
import { type OutputDestination, type Tensor, toTensor, toTiming } from '../tensor/tensor.js';
import { exportSpans, spanParent } from './otel.js';
import { type ModelIo, parseModelIo } from './plan.js';
import { type InferResult, Result } from './result.js';
import { InferStream, type StreamHooks, type StreamOptions } from './stream.js';
import { type BuiltRequest, buildRequest, withPlacementHint } from './submit-layout.js';
import type { InferRequest } from './types.js';
import { checkRequestShape } from './validate.js';

/** Where a request came from: its model, the version asked for, its id, its sequence. */
interface RequestContext {
  model: string;
  version: number;
  requestId?: string;
  correlationId?: number | bigint | string;
}

/** A stream's submitted request: its token (-1 until submitted); `done` once FINAL came or it was aborted. */
interface StreamState {
  token: number;
  done: boolean;
}

/** Receives the events of one submitted request. */
interface Pending {
  event(ev: NativeEvent): void;
  /** The server stopped and no FINAL came. */
  abandon(err: TritonError): void;
  /** The server is stopping (streams end at once; single inferences run to completion). */
  stopping?(): void;
}

/** The inference half of a Server (one per server). */
export class Inference {
  readonly #native: NativeServer;
  readonly #streamMetrics: StreamMetrics | undefined;
  readonly #pending = new Map<number, Pending>();
  /** Whether `submit()` is running (its events may arrive inside it). */
  #submitting = false;
  /** Events that arrived while `submit()` was running (synchronous callbacks); made on the first. */
  #early: NativeEvent[] | null = null;
  /** submit()'s numbers, reused (the addon reads them before submit() returns). */
  #nums = new Float64Array(64);
  /** Model specs by name, then version (no key string made per request). */
  readonly #specs = new Map<string, Map<number, ModelIo | Promise<ModelIo>>>();
  #stopping = false;
  /** What a request after the stop is told (the default: the server was stopped). */
  #stoppedMessage: string | undefined;

  constructor(native: NativeServer, streamMetrics: StreamMetrics | undefined) {
    this.#native = native;
    this.#streamMetrics = streamMetrics;
  }

  /**
   * The server is stopping: no new request is accepted, open streams end at
   * once (single inferences run to completion).
   */
  beginStop(message?: string): void {
    this.#stopping = true;
    this.#stoppedMessage = message;
    this.#streamMetrics?.dispose();
    for (const p of [...this.#pending.values()]) p.stopping?.();
  }

  /** The server stopped: requests still waiting for their FINAL fail. */
  abandonAll(): void {
    const left = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of left)
      p.abandon(tritonError('UNAVAILABLE', 'the server stopped before the request completed'));
    this.#specs.clear();
  }

  /** Drops the cached specs of a model (it is being loaded or unloaded). */
  forget(name: string): void {
    this.#specs.delete(name);
  }

  /** Routes addon events to their requests (JS thread). */
  dispatch(events: NativeEvent[]): void {
    for (const ev of events) {
      const pending = this.#pending.get(ev.token);
      if (pending === undefined) {
        if (!this.#submitting) continue;
        this.#early ??= [];
        this.#early.push(ev);
        continue;
      }
      if (ev.final) this.#pending.delete(ev.token);
      try {
        pending.event(ev);
      } catch (err) {
        // A handler bug must not lose the other events of this batch.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** Submits a built request; its events go to `pending`. Throws TritonError when Triton refuses it. */
  #submit(built: BuiltRequest, pending: Pending, holder?: Error): number {
    let token: number;
    let early: NativeEvent[] | null;
    this.#submitting = true;
    try {
      const src = built.nums;
      let nums = this.#nums;
      if (nums.length < src.length) {
        nums = new Float64Array(Math.max(src.length, nums.length * 2));
        this.#nums = nums;
      }
      for (let i = 0; i < src.length; i++) nums[i] = src[i]!;
      token = this.#native.submit(nums, ...built.args);
    } catch (err) {
      // The addon's argument errors (a NUL in a name, a resizable destination)
      // stay TypeErrors/RangeErrors, as the same mistakes caught in TS are.
      if (err instanceof TypeError || err instanceof RangeError) throw err;
      const context = { model: built.model, version: built.version, requestId: built.id };
      throw fromNativeError(err, { ...context, correlationId: built.args[2] }, holder);
    } finally {
      this.#submitting = false;
      early = this.#early;
      this.#early = null;
    }
    this.#pending.set(token, pending);
    if (early !== null) {
      const mine = early.filter((ev) => ev.token === token);
      if (mine.length > 0) this.dispatch(mine);
    }
    return token;
  }

  #cancel(token: number): void {
    try {
      this.#native.cancel(token);
    } catch {
      // Best effort: the request may have been released already.
    }
  }

  /** The cached model spec, or a Promise of it (fetched once per loaded model). */
  #spec(name: string, version: number, holder?: Error): ModelIo | Promise<ModelIo> {
    let versions = this.#specs.get(name);
    const cached = versions?.get(version);
    if (cached !== undefined) return cached;
    if (versions === undefined) {
      versions = new Map();
      this.#specs.set(name, versions);
    }
    const specs = versions;
    // A cache miss (once per model): the call-time capture is affordable here,
    // and the fetch's error goes to every caller waiting for it.
    holder ??= captureStack();
    const fetch = (async () => {
      let text: string;
      try {
        text = await this.#native.modelConfig(name, version);
      } catch (err) {
        const e = fromNativeError(err, { model: name, version }, holder);
        if (e.code !== 'NOT_FOUND') throw e;
        throw withCallHint(e, { kind: 'load', model: name, ...(version === -1 ? {} : { version }) });
      }
      return parseModelIo(text, name, version);
    })();
    specs.set(version, fetch);
    // A model forgotten meanwhile has a new map (or none): this one is gone with it.
    fetch.then(
      (spec) => {
        if (specs.get(version) === fetch) specs.set(version, spec);
      },
      () => {
        if (specs.get(version) === fetch) specs.delete(version);
      },
    );
    return fetch;
  }

  #result(
    name: string,
    version: number,
    ev: NativeEvent,
    requestId: string | undefined,
    destinations: Map<string, OutputDestination> | undefined,
  ): InferResult {
    const outputs: Record<string, Tensor> = {};
    for (const out of ev.outputs ?? []) outputs[out.name] = toTensor(out, destinations?.get(out.name));
    const result = new Result(
      ev.model ?? name,
      ev.version ?? version,
      ev.id ?? requestId ?? '',
      outputs,
      ev.parameters ?? {},
    );
    if (ev.timing !== undefined) result.timing = toTiming(ev.timing);
    return result;
  }

  /** Throws when the server is stopping or the request's signal was aborted. */
  #checkOpen(ctx: RequestContext, signal: AbortSignal | undefined, holder?: Error): void {
    if (this.#stopping) throw stoppedError(holder, ctx, this.#stoppedMessage);
    if (signal?.aborted) throw abortError(ctx, signal.reason, holder);
  }

  /**
   * What inferences and streams both do before submitting, once the caller
   * checked that the server runs and the request was not aborted: the model's
   * spec (fetched once per model), the request built against it, and those
   * two checks again. Synchronous when the spec is cached. `single`: an
   * inference, which a decoupled model cannot answer. Without `holder`
   * (inferences, which rewrite stacks themselves) each caller gets its own
   * copy of a spec-fetch failure shared by several calls.
   */
  #prepare(
    request: InferRequest,
    ctx: RequestContext,
    single: boolean,
    holder?: Error,
  ): BuiltRequest | Promise<BuiltRequest> {
    const cached = this.#spec(ctx.model, ctx.version, holder);
    if (!(cached instanceof Promise)) return this.#build(cached, request, ctx, single, holder);
    const spec =
      holder === undefined
        ? cached.catch((e: unknown) => {
            throw e instanceof TritonError ? copyError(e, ctx) : e;
          })
        : cached;
    return spec.then((s) => this.#build(s, request, ctx, single, holder));
  }

  #build(
    spec: ModelIo,
    request: InferRequest,
    ctx: RequestContext,
    single: boolean,
    holder: Error | undefined,
  ): BuiltRequest {
    if (single && spec.decoupled) {
      throw withCallHint(
        tritonError(
          'UNSUPPORTED',
          `model '${ctx.model}' is decoupled (it may send any number of responses)`,
          ctx,
        ),
        { kind: 'stream', model: ctx.model },
      );
    }
    const built = buildRequest(spec, request, ctx.version, holder);
    this.#checkOpen(ctx, request.signal, holder);
    return built;
  }

  /**
   * Runs one inference; see Server.infer.
   * No stack is captured on the way in (Error.captureStackTrace costs ~30k
   * instructions per call, as much as the rest of a small inference). Every
   * error leaves through the catch below, which gives it the stack of this
   * frame: before the first `await` that is the caller's synchronous stack;
   * after it (Triton's errors, aborts, a stopping server) V8 appends the
   * functions awaiting this call ("at async handler (app.ts:12)"), which is
   * why those errors are created here after the `await` and not in the event
   * callbacks.
   */
  async infer(name: string, modelVersion: number, request: InferRequest): Promise<InferResult> {
    try {
      checkRequestShape(request);
      const ctx: RequestContext = {
        model: name,
        version: request.version ?? modelVersion,
        requestId: request.id,
        correlationId: request.correlationId,
      };
      this.#checkOpen(ctx, request.signal);
      // Read in the caller's async context, before the request is sent.
      const spans =
        request.trace === undefined || request.trace === false ? undefined : await spanParent(request.trace);
      // The first calls to a model share one config fetch.
      const prepared = this.#prepare(request, ctx, true);
      const built = prepared instanceof Promise ? await prepared : prepared;
      const outcome = await this.#settle(built, ctx, request.signal);
      if (typeof outcome === 'function') throw outcome();
      const result = this.#result(name, ctx.version, outcome, request.id, built.destinations);
      if (spans !== undefined && result.timing !== undefined) exportSpans(spans, result.timing);
      return result;
    } catch (err) {
      throw err instanceof TritonError ? stackHere(err) : err;
    }
  }

  /**
   * Submits a single inference. Settles with its final event (the response's
   * outputs with the final event's timing), or with a function making the
   * error, for `_infer` to create it with its own stack.
   */
  #settle(
    built: BuiltRequest,
    ctx: RequestContext,
    signal: AbortSignal | undefined,
  ): Promise<NativeEvent | (() => TritonError)> {
    return new Promise((settle) => {
      const single = new SingleInference(settle, built, ctx, signal, this);
      try {
        single.token = this.#submit(built, single);
      } catch (err) {
        single.finish();
        settle(() => err as TritonError);
        return;
      }
      if (!single.settled && signal !== undefined) single.listen(signal);
    });
  }

  /** Cancels a submitted request, best effort (it may have been released already). */
  cancel(token: number): void {
    this.#cancel(token);
  }

  /** Starts a stream; see Server.stream. */
  stream(name: string, modelVersion: number, request: InferRequest, options: StreamOptions): InferStream {
    const holder = captureStack();
    checkRequestShape(request);
    if (typeof options !== 'object' || options === null)
      throw optionError('stream options', 'an object', options);
    const hwm = options.highWaterMark;
    if (hwm !== undefined && !(Number.isSafeInteger(hwm) && hwm > 0)) {
      throw optionError('highWaterMark', 'a positive integer', hwm);
    }
    const ctx: RequestContext = {
      model: name,
      version: request.version ?? modelVersion,
      requestId: request.id,
      correlationId: request.correlationId,
    };
    const stream = new InferStream(`stream of model '${name}'`, options);
    void this.#startStream(stream, request, ctx, holder).catch((err: unknown) => {
      stream._fail(err instanceof TritonError ? err : (err as TritonError), false);
    });
    return stream;
  }

  async #startStream(
    stream: InferStream,
    request: InferRequest,
    ctx: RequestContext,
    holder: Error,
  ): Promise<void> {
    // Submit on the next microtask: a consumer that gives up at once
    // (`stream.return()` right away) then sends nothing to Triton.
    await undefined;
    if (stream.ended) return;
    const signal = request.signal;
    this.#checkOpen(ctx, signal, holder);
    const prepared = this.#prepare(request, ctx, false, holder);
    const built = prepared instanceof Promise ? await prepared : prepared;
    if (stream.ended) return; // the consumer gave up before submission
    // `done`: Triton sent FINAL (nothing left to cancel). The abort listener
    // stays until the consumer is done: an abort also drops unread responses.
    const state: StreamState = { token: -1, done: false };
    const onAbort = () => {
      if (!state.done && state.token >= 0) this.#cancel(state.token);
      state.done = true;
      stream._fail(abortError(ctx, signal!.reason, holder), true);
    };
    const pending = this.#streamPending(stream, built, ctx, holder, state);
    signal?.addEventListener('abort', onAbort, { once: true });
    // Open before submitting: responses may arrive inside submit() itself.
    stream._open(
      this.#streamHooks(state, () => signal?.removeEventListener('abort', onAbort)),
      performance.now(),
    );
    try {
      state.token = this.#submit(built, pending, holder);
    } catch (err) {
      signal?.removeEventListener('abort', onAbort);
      throw err;
    }
  }

  /** Routes a stream's events: responses pushed, errors failing it, FINAL ending it. */
  #streamPending(
    stream: InferStream,
    built: BuiltRequest,
    ctx: RequestContext,
    holder: Error,
    state: StreamState,
  ): Pending {
    const fail = (err: TritonError, final: boolean) => {
      if (!final) this.#cancel(state.token);
      stream._fail(err, false);
    };
    return {
      event: (ev) => {
        if (ev.final) state.done = true;
        if (stream.ended) return;
        if (ev.error !== undefined) {
          return fail(fromErrorInfo(withPlacementHint(ev.error, built), ctx, holder), ev.final);
        }
        if (ev.outputs !== undefined) {
          let result: InferResult;
          try {
            result = this.#result(ctx.model, ctx.version, ev, ctx.requestId, built.destinations);
          } catch (err) {
            return fail(err as TritonError, ev.final);
          }
          stream._push(result, performance.now());
        }
        if (ev.final) stream._end();
      },
      abandon: (err) => {
        state.done = true;
        stream._fail(fromErrorInfo(err, ctx, holder), false);
      },
      stopping: () => {
        if (state.done) return;
        this.#cancel(state.token);
        const message = `the server is stopping; stream of model '${ctx.model}' ended`;
        stream._fail(tritonError('UNAVAILABLE', message, ctx, holder), false);
      },
    };
  }

  /** What the stream calls back: cancel, timing observations (streaming metrics), closed. */
  #streamHooks(state: StreamState, closed: () => void): StreamHooks {
    const metrics = this.#streamMetrics;
    return {
      cancel: () => {
        if (!state.done && state.token >= 0) this.#cancel(state.token);
      },
      observe:
        metrics === undefined
          ? undefined
          : (kind, ms, result) =>
              // Labelled with the version that answered, not the one asked for (-1).
              kind === 'first'
                ? metrics.recordTimeToFirstResponse(result.model, result.version, ms)
                : metrics.recordTimeBetweenResponses(result.model, result.version, ms),
      closed,
    };
  }
}

/**
 * One inference in flight (one object, not a closure per callback): settles
 * once, with its final event or a function making its error.
 */
class SingleInference implements Pending {
  settled = false;
  token = -1;
  #response: NativeEvent | undefined = undefined;
  #error: NativeErrorInfo | undefined = undefined;
  #onAbort: (() => void) | undefined = undefined;
  readonly #settle: (outcome: NativeEvent | (() => TritonError)) => void;
  readonly #built: BuiltRequest;
  readonly #ctx: RequestContext;
  readonly #signal: AbortSignal | undefined;
  readonly #inference: Inference;

  constructor(
    settle: (outcome: NativeEvent | (() => TritonError)) => void,
    built: BuiltRequest,
    ctx: RequestContext,
    signal: AbortSignal | undefined,
    inference: Inference,
  ) {
    this.#settle = settle;
    this.#built = built;
    this.#ctx = ctx;
    this.#signal = signal;
    this.#inference = inference;
  }

  /** Settles at once when the signal aborts; whatever Triton still sends for the token is dropped. */
  listen(signal: AbortSignal): void {
    this.#onAbort = () => {
      if (this.settled) return;
      this.settled = true;
      if (this.token >= 0) this.#inference.cancel(this.token);
      this.#settle(() => abortError(this.#ctx, signal.reason));
    };
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  finish(): void {
    this.settled = true;
    if (this.#onAbort !== undefined) this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  event(ev: NativeEvent): void {
    if (this.settled) return;
    if (ev.error !== undefined) this.#error ??= ev.error;
    else if (ev.outputs !== undefined && this.#response === undefined) this.#response = ev;
    if (!ev.final) return;
    this.finish();
    const error = this.#error;
    if (error !== undefined) {
      const built = this.#built;
      const ctx = this.#ctx;
      this.#settle(() => fromErrorInfo(withPlacementHint(error, built), ctx));
      return;
    }
    const response = this.#response;
    // The common case: one response, final itself.
    if (response === undefined || response === ev) this.#settle(ev);
    else this.#settle({ ...response, timing: ev.timing ?? response.timing });
  }

  abandon(err: TritonError): void {
    if (this.settled) return;
    this.finish();
    const ctx = this.#ctx;
    this.#settle(() => fromErrorInfo(err, ctx));
  }
}
