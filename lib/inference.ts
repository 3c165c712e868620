/**
 * Inference and streams of one server: request preparation (model spec,
 * validation, the addon's request form), submission, and the routing of the
 * addon's events to their requests by token.
 * @internal
 * @packageDocumentation
 */
import { performance } from 'node:perf_hooks';
import type { NativeErrorInfo, NativeEvent, NativeServer } from './binding.js';
import {
  TritonError,
  abortError,
  captureStack,
  copyError,
  fromErrorInfo,
  fromNativeError,
  optionError,
  stackHere,
  tritonError,
} from './errors.js';
import type { StreamMetrics } from './metrics.js';
import { type InferResult, InferStream, Result, type StreamHooks, type StreamOptions } from './stream.js';
import { type OutputDestination, type Tensor, toTensor, toTiming } from './tensor.js';
import {
  type BuiltRequest,
  type InferRequest,
  type ModelSpec,
  buildRequest,
  checkRequestShape,
  parseModelSpec,
  withPlacementHint,
} from './validate.js';

/** Where a request came from: its model, the version asked for, its id. */
interface RequestContext {
  model: string;
  version: number;
  requestId?: string;
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
  /** Events that arrived while `submit()` was still running (synchronous callbacks). */
  #early: NativeEvent[] | null = null;
  /** submit()'s numbers, reused (the addon reads them before submit() returns). */
  #nums = new Float64Array(64);
  readonly #specs = new Map<string, ModelSpec | Promise<ModelSpec>>();
  #stopping = false;

  constructor(native: NativeServer, streamMetrics: StreamMetrics | undefined) {
    this.#native = native;
    this.#streamMetrics = streamMetrics;
  }

  /**
   * The server is stopping: no new request is accepted, open streams end at
   * once (single inferences run to completion).
   */
  beginStop(): void {
    this.#stopping = true;
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
    const prefix = `${name}\u0000`;
    for (const key of this.#specs.keys()) if (key.startsWith(prefix)) this.#specs.delete(key);
  }

  #closedError(holder?: Error, context: { model?: string; version?: number } = {}): TritonError {
    return tritonError('UNAVAILABLE', 'the server was stopped', context, holder);
  }

  /** Routes addon events to their requests (JS thread). */
  dispatch(events: NativeEvent[]): void {
    for (const ev of events) {
      const pending = this.#pending.get(ev.token);
      if (pending === undefined) {
        this.#early?.push(ev);
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
    this.#early = [];
    let token: number;
    let early: NativeEvent[];
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
      throw fromNativeError(err, { model: built.model, version: built.version, requestId: built.id }, holder);
    } finally {
      early = this.#early;
      this.#early = null;
    }
    this.#pending.set(token, pending);
    const mine = early.filter((ev) => ev.token === token);
    if (mine.length > 0) this.dispatch(mine);
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
  #spec(name: string, version: number, holder?: Error): ModelSpec | Promise<ModelSpec> {
    const key = `${name}\u0000${version}`;
    const cached = this.#specs.get(key);
    if (cached !== undefined) return cached;
    // A cache miss (once per model): the call-time capture is affordable here,
    // and the fetch's error goes to every caller waiting for it.
    holder ??= captureStack();
    const fetch = (async () => {
      let text: string;
      try {
        text = await this.#native.modelConfig(name, version);
      } catch (err) {
        throw fromNativeError(err, { model: name, version }, holder);
      }
      return parseModelSpec(text, name, version);
    })();
    this.#specs.set(key, fetch);
    fetch.then(
      (spec) => {
        if (this.#specs.get(key) === fetch) this.#specs.set(key, spec);
      },
      () => {
        if (this.#specs.get(key) === fetch) this.#specs.delete(key);
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
    if (this.#stopping) throw this.#closedError(holder, ctx);
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
    spec: ModelSpec,
    request: InferRequest,
    ctx: RequestContext,
    single: boolean,
    holder: Error | undefined,
  ): BuiltRequest {
    if (single && spec.decoupled) {
      throw tritonError(
        'UNSUPPORTED',
        `model '${ctx.model}' is decoupled (it may send any number of responses): use model.stream() instead of infer()`,
        ctx,
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
      };
      this.#checkOpen(ctx, request.signal);
      // The first calls to a model share one config fetch.
      const prepared = this.#prepare(request, ctx, true);
      const built = prepared instanceof Promise ? await prepared : prepared;
      const outcome = await this.#settle(built, ctx, request.signal);
      if (typeof outcome === 'function') throw outcome();
      return this.#result(name, ctx.version, outcome, request.id, built.destinations);
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
      let settled = false;
      let response: NativeEvent | undefined;
      let error: NativeErrorInfo | undefined;
      let token = -1;
      const onAbort = () => {
        if (settled) return;
        settled = true;
        // Settle at once; whatever Triton still sends for this token is dropped.
        if (token >= 0) this.#cancel(token);
        settle(() => abortError(ctx, signal!.reason));
      };
      const finish = () => {
        settled = true;
        signal?.removeEventListener('abort', onAbort);
      };
      const pending: Pending = {
        event: (ev) => {
          if (settled) return;
          if (ev.error !== undefined) error ??= ev.error;
          else if (ev.outputs !== undefined && response === undefined) response = ev;
          if (!ev.final) return;
          finish();
          if (error !== undefined) {
            const info = error;
            return settle(() => fromErrorInfo(withPlacementHint(info, built), ctx));
          }
          settle(response === undefined ? ev : { ...response, timing: ev.timing ?? response.timing });
        },
        abandon: (err) => {
          if (settled) return;
          finish();
          settle(() => fromErrorInfo(err, ctx));
        },
      };
      try {
        token = this.#submit(built, pending);
      } catch (err) {
        finish();
        settle(() => err as TritonError);
        return;
      }
      if (!settled) signal?.addEventListener('abort', onAbort, { once: true });
    });
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
