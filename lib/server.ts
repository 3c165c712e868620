/**
 * An in-process Triton server: lifecycle, model control, inference.
 *
 * Every call that may block on Triton runs on a native thread and returns a
 * Promise; the JS thread never waits. Responses come back through one event
 * callback per server, which routes each event to its request by token.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
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
import {
  type Metric,
  type MetricSpec,
  type MetricsHandler,
  type MetricsRegistry,
  type StreamMetrics,
  createCustomMetric,
  createMetricsHandler,
  createStreamMetrics,
} from './metrics.js';
import {
  Model,
  type ModelConfig,
  type ModelIndexEntry,
  type ModelMetadata,
  type ModelState,
  type ModelVersionState,
} from './model.js';
import { type LibraryInfo, addon, loadLibrary } from './native.js';
import {
  type LoadModelOptions,
  type ServerOptions,
  type UnloadModelOptions,
  defaultBackendDirectory,
  flag,
  modelName,
  modelVersion,
  parseLoadModelOptions,
  parseServerOptions,
  parseUnloadModelOptions,
} from './options.js';
import { parseModelConfigText } from './pbtxt.js';
import { type ModelStatistics, parseModelStatistics } from './statistics.js';
import { type InferResult, InferStream, Result, type StreamOptions } from './stream.js';
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

export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

/** Receives the events of one submitted request. */
interface Pending {
  event(ev: NativeEvent): void;
  /** The server stopped and no FINAL came. */
  abandon(err: TritonError): void;
  /** The server is stopping (streams end at once; single inferences run to completion). */
  stopping?(): void;
}

const INDEX_STATES: ReadonlySet<string> = new Set(['READY', 'LOADING', 'UNLOADING', 'UNAVAILABLE']);

export class Server implements AsyncDisposable {
  readonly #native: NativeServer;
  readonly #repositories: string[];
  readonly #library: LibraryInfo;
  readonly #pending = new Map<number, Pending>();
  /** Events that arrived while `submit()` was still running (synchronous callbacks). */
  #early: NativeEvent[] | null = null;
  /** submit()'s numbers, reused (the addon reads them before submit() returns). */
  #nums = new Float64Array(64);
  readonly #specs = new Map<string, ModelSpec | Promise<ModelSpec>>();
  #stopping: Promise<void> | undefined;
  #streamMetrics: StreamMetrics | undefined;
  /** Per model: the end of its last load or unload (see #serialized). */
  readonly #control = new Map<string, Promise<void>>();

  private constructor(native: NativeServer, repositories: string[], library: LibraryInfo) {
    this.#native = native;
    this.#repositories = repositories;
    this.#library = library;
  }

  /**
   * Loads Triton's library (once per process) and starts a server. Rejects
   * with a TritonError when the library or the server cannot be started, and
   * throws a TypeError for option mistakes.
   */
  static async create(options: ServerOptions): Promise<Server> {
    const holder = captureStack();
    const parsed = parseServerOptions(options);
    const native = parsed.native;
    const library = loadLibrary(parsed.library);
    if (native.backendDirectory === '') native.backendDirectory = defaultBackendDirectory(library);
    // The event callback exists before the server does; it routes to `server`
    // once that is set (no request can be submitted before).
    let server: Server | undefined;
    const onEvents = (events: NativeEvent[]) => server?._dispatch(events);
    let handle: NativeServer;
    try {
      handle = await addon().createServer(native, onEvents);
    } catch (err) {
      throw fromNativeError(err, {}, holder);
    }
    server = new Server(handle, native.modelRepositories, library);
    if (parsed.streamingMetrics) {
      server.#streamMetrics = createStreamMetrics(handle);
    }
    return server;
  }

  /** The Triton library this server runs on. */
  get library(): LibraryInfo {
    return this.#library;
  }

  /** True once stop() was called. */
  get stopped(): boolean {
    return this.#stopping !== undefined;
  }

  /** @internal Routes addon events to their requests (JS thread). */
  _dispatch(events: NativeEvent[]): void {
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
    if (mine.length > 0) this._dispatch(mine);
    return token;
  }

  #cancel(token: number): void {
    try {
      this.#native.cancel(token);
    } catch {
      // Best effort: the request may have been released already.
    }
  }

  #closedError(holder?: Error, context: { model?: string; version?: number } = {}): TritonError {
    return tritonError('UNAVAILABLE', 'the server was stopped', context, holder);
  }

  /** Runs a native call, turning its errors into TritonErrors with the caller's stack. */
  async #call<T>(
    holder: Error,
    context: { model?: string; version?: number },
    fn: () => Promise<T>,
  ): Promise<T> {
    if (this.#stopping !== undefined) throw this.#closedError(holder, context);
    try {
      return await fn();
    } catch (err) {
      throw fromNativeError(err, context, holder);
    }
  }

  /** Whether the server is live. */
  isLive(): Promise<boolean> {
    const holder = captureStack();
    return this.#call(holder, {}, () => this.#native.isLive());
  }

  /** Whether the server is ready (live, and its models ready). */
  isReady(): Promise<boolean> {
    const holder = captureStack();
    return this.#call(holder, {}, () => this.#native.isReady());
  }

  /** Server name, version and extensions. */
  async metadata(): Promise<ServerMetadata> {
    const holder = captureStack();
    const text = await this.#call(holder, {}, () => this.#native.metadata());
    const raw = JSON.parse(text) as { name?: string; version?: string; extensions?: string[] };
    return { name: raw.name ?? '', version: raw.version ?? '', extensions: raw.extensions ?? [] };
  }

  /**
   * Stops the server: in-flight requests finish or fail, open streams end
   * with an error, then the server is deleted. Idempotent; every later call
   * on this server rejects with a TritonError 'UNAVAILABLE'. Resolves once
   * Triton's stop returned (after `exitTimeoutSeconds` at most; requests
   * still in flight then are cancelled, and the server is deleted once
   * Triton released them); the expired exit timeout is emitted as a process
   * warning.
   */
  stop(): Promise<void> {
    if (this.#stopping === undefined) {
      const holder = captureStack();
      this.#stopping = (async () => {
        this.#streamMetrics?.dispose();
        for (const p of [...this.#pending.values()]) p.stopping?.();
        let failure: unknown;
        try {
          await this.#native.stop();
        } catch (err) {
          failure = err;
        }
        // Let events the addon queued during the stop arrive before giving up on the rest.
        await new Promise((r) => setImmediate(r));
        const left = [...this.#pending.values()];
        this.#pending.clear();
        for (const p of left)
          p.abandon(tritonError('UNAVAILABLE', 'the server stopped before the request completed'));
        this.#specs.clear();
        // The server is stopped either way (Triton reports an expired exit
        // timeout as an error): say so without failing the caller's shutdown.
        if (failure !== undefined) {
          const err = fromNativeError(failure, {}, holder);
          process.emitWarning(
            `triton-node: stopping the server reported ${err.code}: ${err.message}`,
            'TritonWarning',
          );
        }
      })();
    }
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  // ---- model control ------------------------------------------------------

  #forget(name: string): void {
    const prefix = `${name}\u0000`;
    for (const key of this.#specs.keys()) if (key.startsWith(prefix)) this.#specs.delete(key);
  }

  /** The model's own config.pbtxt (first repository that has the model), as JSON. */
  async #repositoryConfig(name: string, holder: Error): Promise<ModelConfig> {
    for (const repo of this.#repositories) {
      const file = join(repo, name, 'config.pbtxt');
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch {
        continue;
      }
      try {
        return parseModelConfigText(text);
      } catch (err) {
        throw tritonError(
          'INVALID_ARG',
          `model '${name}': cannot read ${file}: ${(err as Error).message}`,
          { model: name },
          holder,
        );
      }
    }
    throw tritonError(
      'NOT_FOUND',
      `model '${name}': no config.pbtxt in ${this.#repositories.join(', ')}; pass loadModel(name, { config, versions })`,
      { model: name },
      holder,
    );
  }

  /**
   * Loads (or reloads) a model. With `versions`, exactly those version
   * directories are served (the rest are unloaded on a reload): roll forward
   * with `{ versions: [2] }`, back with `{ versions: [1] }`.
   */
  async loadModel(name: string, options: LoadModelOptions = {}): Promise<void> {
    const holder = captureStack();
    modelName(name);
    const parsed = parseLoadModelOptions(options);
    let config = parsed.config;
    if (parsed.versions !== undefined) {
      if (this.#stopping !== undefined) throw this.#closedError(holder, { model: name });
      const base = config ?? (await this.#repositoryConfig(name, holder));
      config = { ...base, version_policy: { specific: { versions: parsed.versions } } };
    }
    const text = config === undefined ? undefined : JSON.stringify(config);
    await this.#serialized(name, async () => {
      this.#forget(name);
      try {
        await this.#call(holder, { model: name }, () => this.#native.loadModel(name, text, parsed.files));
      } finally {
        this.#forget(name);
      }
    });
  }

  /**
   * Runs a load or unload of `name` once the previous one has finished,
   * an unload included (Triton unloads in the background, once the model's
   * requests are done). Loads and unloads of one model overlapping while
   * requests run crash real Triton r25.07 (its model deleter thread against
   * a new model's creation); inferences are never held back. `settled`
   * resolves when the next one may start; the returned promise when the
   * caller's own call is done.
   */
  #serialized(name: string, work: () => Promise<void>, settled?: () => Promise<void>): Promise<void> {
    const previous = this.#control.get(name) ?? Promise.resolve();
    const run = previous.then(work);
    const tail = run.then(settled ?? (() => undefined)).then(
      () => undefined,
      () => undefined,
    );
    this.#control.set(name, tail);
    void tail.then(() => {
      if (this.#control.get(name) === tail) this.#control.delete(name);
    });
    return run;
  }

  /** Resolves once no version of `name` is loaded, loading or unloading. */
  async #unloaded(name: string, holder: Error): Promise<void> {
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      if (this.#stopping !== undefined) return;
      const index = await this.#index(false, holder);
      const busy = index.some(
        (e) => e.name === name && (e.state === 'READY' || e.state === 'LOADING' || e.state === 'UNLOADING'),
      );
      if (!busy) return;
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** Unloads a model (every version). Returns at once unless `wait` is set. */
  async unloadModel(name: string, options: UnloadModelOptions = {}): Promise<void> {
    const holder = captureStack();
    modelName(name);
    const { dependents, wait } = parseUnloadModelOptions(options);
    let done: Promise<void> | undefined;
    const unloaded = () => {
      done ??= this.#unloaded(name, holder);
      return done;
    };
    await this.#serialized(
      name,
      async () => {
        this.#forget(name);
        await this.#call(holder, { model: name }, () => this.#native.unloadModel(name, dependents));
      },
      unloaded,
    );
    if (wait) await unloaded();
  }

  async #index(readyOnly: boolean, holder: Error): Promise<ModelIndexEntry[]> {
    const text = await this.#call(holder, {}, () => this.#native.modelIndex(readyOnly));
    const raw = JSON.parse(text) as Array<{
      name: string;
      version?: string;
      state?: string;
      reason?: string;
    }>;
    return raw.map((e) => {
      const entry: ModelIndexEntry = { name: e.name };
      if (e.version !== undefined) entry.version = Number(e.version);
      if (e.state !== undefined && INDEX_STATES.has(e.state)) entry.state = e.state as ModelState;
      if (e.reason !== undefined && e.reason !== '') entry.reason = e.reason;
      return entry;
    });
  }

  /**
   * Every model of the repositories with its versions and states. Models
   * never loaded appear with a name only. `readyOnly` lists ready versions.
   */
  modelIndex(options: { readyOnly?: boolean } = {}): Promise<ModelIndexEntry[]> {
    const holder = captureStack();
    return this.#index(flag('readyOnly', options?.readyOnly, false), holder);
  }

  /** A handle on a model, pinned to `version` when given. */
  model(name: string, version?: number): Model {
    return new Model(this, modelName(name), modelVersion(version));
  }

  /** @internal */
  _modelIsReady(name: string, version: number): Promise<boolean> {
    const holder = captureStack();
    return this.#call(holder, { model: name, version }, () => this.#native.modelIsReady(name, version));
  }

  /** @internal */
  async _modelMetadata(name: string, version: number): Promise<ModelMetadata> {
    const holder = captureStack();
    const text = await this.#call(holder, { model: name, version }, () =>
      this.#native.modelMetadata(name, version),
    );
    const raw = JSON.parse(text) as {
      name: string;
      versions?: string[];
      platform?: string;
      inputs?: ModelMetadata['inputs'];
      outputs?: ModelMetadata['outputs'];
    };
    const tensors = (list: ModelMetadata['inputs'] | undefined) =>
      (list ?? []).map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape.map(Number) }));
    return {
      name: raw.name,
      versions: (raw.versions ?? []).map(Number),
      platform: raw.platform ?? '',
      inputs: tensors(raw.inputs),
      outputs: tensors(raw.outputs),
    };
  }

  /** @internal */
  async _modelConfig(name: string, version: number): Promise<ModelConfig> {
    const holder = captureStack();
    const text = await this.#call(holder, { model: name, version }, () =>
      this.#native.modelConfig(name, version),
    );
    return JSON.parse(text) as ModelConfig;
  }

  /** @internal */
  async _modelStatistics(name: string, version: number): Promise<ModelStatistics[]> {
    const holder = captureStack();
    const text = await this.#call(holder, { model: name, version }, () =>
      this.#native.modelStatistics(name, version),
    );
    return parseModelStatistics(text);
  }

  /** @internal */
  async _modelVersions(name: string): Promise<ModelVersionState[]> {
    const holder = captureStack();
    const index = await this.#index(false, holder);
    return index
      .filter((e) => e.name === name && e.version !== undefined && e.state !== undefined)
      .map((e) => {
        const v: ModelVersionState = { version: e.version!, state: e.state! };
        if (e.reason !== undefined) v.reason = e.reason;
        return v;
      })
      .sort((a, b) => a.version - b.version);
  }

  // ---- metrics -------------------------------------------------------------

  /** Prometheus text of Triton's metrics (and custom metrics). */
  metrics(): Promise<string> {
    const holder = captureStack();
    return this.#call(holder, {}, () => this.#native.metrics());
  }

  /**
   * A `(req, res)` handler for node:http or Express serving `metrics()`,
   * followed by a prom-client registry's metrics when one is given.
   */
  metricsHandler(registry?: MetricsRegistry): MetricsHandler {
    return createMetricsHandler(() => this.metrics(), registry);
  }

  /** A custom metric in Triton's registry; it shows in `metrics()`. */
  createMetric(spec: MetricSpec): Metric {
    if (this.#stopping !== undefined) throw this.#closedError();
    return createCustomMetric(this.#native, spec);
  }

  // ---- inference -------------------------------------------------------------

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

  /**
   * Runs one inference on `name` and resolves with its outputs. Validation
   * failures and Triton's errors reject with a TritonError; malformed
   * arguments with a TypeError. Decoupled models need `stream()`.
   */
  infer(name: string, request: InferRequest): Promise<InferResult> {
    let version: number;
    try {
      modelName(name);
      checkRequestShape(request);
      version = request.version ?? -1;
    } catch (err) {
      return Promise.reject(err);
    }
    return this._infer(name, version, request);
  }

  /**
   * @internal
   * No stack is captured on the way in (Error.captureStackTrace costs ~30k
   * instructions per call, as much as the rest of a small inference). Every
   * error leaves through the catch below, which gives it the stack of this
   * frame: before the first `await` that is the caller's synchronous stack;
   * after it (Triton's errors, aborts, a stopping server) V8 appends the
   * functions awaiting this call ("at async handler (app.ts:12)"), which is
   * why those errors are created here after the `await` and not in the event
   * callbacks.
   */
  async _infer(name: string, modelVersion: number, request: InferRequest): Promise<InferResult> {
    try {
      checkRequestShape(request);
      const version = request.version ?? modelVersion;
      const ctx = { model: name, version, requestId: request.id };
      if (this.#stopping !== undefined) throw this.#closedError(undefined, ctx);
      const signal = request.signal;
      if (signal?.aborted) throw abortError(ctx, signal.reason);
      const cached = this.#spec(name, version);
      // The first calls to a model share one config fetch; each gets its own
      // copy of a failure (its stack and request id are rewritten below).
      const spec =
        cached instanceof Promise
          ? await cached.catch((e: unknown) => {
              throw e instanceof TritonError ? copyError(e, ctx) : e;
            })
          : cached;
      if (spec.decoupled) {
        throw tritonError(
          'UNSUPPORTED',
          `model '${name}' is decoupled (it may send any number of responses): use model.stream() instead of infer()`,
          ctx,
        );
      }
      const built = buildRequest(spec, request, version);
      if (this.#stopping !== undefined) throw this.#closedError(undefined, ctx);
      if (signal?.aborted) throw abortError(ctx, signal.reason);
      // Settles with the final event, or with a function making the error.
      const outcome = await new Promise<NativeEvent | (() => TritonError)>((settle) => {
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
      if (typeof outcome === 'function') throw outcome();
      return this.#result(name, version, outcome, request.id, built.destinations);
    } catch (err) {
      throw err instanceof TritonError ? stackHere(err) : err;
    }
  }

  /**
   * Streams the responses of a decoupled model: an async iterable that ends
   * after Triton's FINAL. Leaving the loop early cancels the request.
   */
  stream(name: string, request: InferRequest, options: StreamOptions = {}): InferStream {
    modelName(name);
    checkRequestShape(request);
    return this._stream(name, request.version ?? -1, request, options);
  }

  /** @internal */
  _stream(name: string, modelVersion: number, request: InferRequest, options: StreamOptions): InferStream {
    const holder = captureStack();
    checkRequestShape(request);
    if (typeof options !== 'object' || options === null)
      throw optionError('stream options', 'an object', options);
    const hwm = options.highWaterMark;
    if (hwm !== undefined && !(Number.isSafeInteger(hwm) && hwm > 0)) {
      throw optionError('highWaterMark', 'a positive integer', hwm);
    }
    const version = request.version ?? modelVersion;
    const ctx = { model: name, version, requestId: request.id };
    const stream = new InferStream(`stream of model '${name}'`, options);
    void this.#startStream(stream, name, version, request, ctx, holder).catch((err: unknown) => {
      stream._fail(err instanceof TritonError ? err : (err as TritonError), false);
    });
    return stream;
  }

  async #startStream(
    stream: InferStream,
    name: string,
    version: number,
    request: InferRequest,
    ctx: { model: string; version: number; requestId?: string },
    holder: Error,
  ): Promise<void> {
    // Submit on the next microtask: a consumer that gives up at once
    // (`stream.return()` right away) then sends nothing to Triton.
    await undefined;
    if (stream.ended) return;
    if (this.#stopping !== undefined) throw this.#closedError(holder, ctx);
    const signal = request.signal;
    if (signal?.aborted) throw abortError(ctx, signal.reason, holder);
    const cached = this.#spec(name, version, holder);
    const spec = cached instanceof Promise ? await cached : cached;
    const built = buildRequest(spec, request, version, holder);
    if (this.#stopping !== undefined) throw this.#closedError(holder, ctx);
    if (signal?.aborted) throw abortError(ctx, signal.reason, holder);
    if (stream.ended) return; // the consumer gave up before submission
    let token = -1;
    // `done`: Triton sent FINAL (nothing left to cancel). The abort listener
    // stays until the consumer is done: an abort also drops unread responses.
    let done = false;
    const onAbort = () => {
      if (!done && token >= 0) this.#cancel(token);
      done = true;
      stream._fail(abortError(ctx, signal!.reason, holder), true);
    };
    const pending: Pending = {
      event: (ev) => {
        if (ev.final) done = true;
        if (stream.ended) return;
        if (ev.error !== undefined) {
          if (!ev.final) this.#cancel(token);
          stream._fail(fromErrorInfo(withPlacementHint(ev.error, built), ctx, holder), false);
          return;
        }
        if (ev.outputs !== undefined) {
          let result: InferResult;
          try {
            result = this.#result(name, version, ev, request.id, built.destinations);
          } catch (err) {
            if (!ev.final) this.#cancel(token);
            stream._fail(err as TritonError, false);
            return;
          }
          stream._push(result, performance.now());
        }
        if (ev.final) stream._end();
      },
      abandon: (err) => {
        done = true;
        stream._fail(fromErrorInfo(err, ctx, holder), false);
      },
      stopping: () => {
        if (done) return;
        this.#cancel(token);
        stream._fail(
          tritonError('UNAVAILABLE', `the server is stopping; stream of model '${name}' ended`, ctx, holder),
          false,
        );
      },
    };
    const metrics = this.#streamMetrics;
    signal?.addEventListener('abort', onAbort, { once: true });
    // Open before submitting: responses may arrive inside submit() itself.
    stream._open(
      {
        cancel: () => {
          if (!done && token >= 0) this.#cancel(token);
        },
        observe:
          metrics === undefined
            ? undefined
            : (kind, ms, result) =>
                // Labelled with the version that answered, not the one asked for (-1).
                kind === 'first'
                  ? metrics.recordTimeToFirstResponse(result.model, result.version, ms)
                  : metrics.recordTimeBetweenResponses(result.model, result.version, ms),
        closed: () => signal?.removeEventListener('abort', onAbort),
      },
      performance.now(),
    );
    try {
      token = this.#submit(built, pending, holder);
    } catch (err) {
      signal?.removeEventListener('abort', onAbort);
      throw err;
    }
  }
}
