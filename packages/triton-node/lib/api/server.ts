/**
 * An in-process Triton server: lifecycle, model control, inference.
 *
 * Every call that may block on Triton runs on a native thread and returns a
 * Promise; the JS thread never waits. Responses come back through one event
 * callback per server, which routes each event to its request by token.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  MODEL_CONTROL_MODES,
  type NativeEvent,
  type NativeServer,
  type NativeServerOptions,
} from '../abi/binding.js';
import { type LibraryInfo, addon, loadLibrary } from '../addon/load.js';
import {
  TritonError,
  captureStack,
  fromNativeError,
  stoppedError,
  tritonError,
  withCallHint,
  withHint,
} from '../base/errors.js';
import { is } from '../base/is.js';
import { checkRepositoryFile, readRepositoryFile } from '../config/files.js';
import { repositoryModelConfig, unreadableModelFile } from '../config/model-files.js';
import { onnxBytesProblem } from '../config/onnx-external-data.js';
import { fakeOnnxRuntimeSettings } from '../config/onnxruntime.js';
import { onnxThreadCountProblems } from '../config/onnxruntime.js';
import { parseModelConfigText } from '../config/pbtxt.js';
import { missingPythonModelFile } from '../config/python-model-file.js';
import { oversizedInitialStateOf, readModelConfigIn } from '../config/sequence-states.js';
import { type ModelStatistics, parseModelStatistics } from '../config/statistics.js';
import { type DeployOptions, type Deployment, Deployments, type RollbackOptions } from '../deploy/deploy.js';
import { lintFindingText, lintModel, warnLintFindings } from '../lint/index.js';
import {
  type Metric,
  type MetricSpec,
  type MetricsHandler,
  type MetricsRegistry,
  createCustomMetric,
  createMetricsHandler,
  createStreamMetrics,
} from '../metrics/metrics.js';
import { Inference } from '../request/inference.js';
import type { InferResult } from '../request/result.js';
import type { InferStream, StreamOptions } from '../request/stream.js';
import type { ModelSpec } from '../request/typed.js';
import type { InferRequest } from '../request/types.js';
import { checkRequestShape } from '../request/validate.js';
import { type HealthHandler, type HealthOptions, createHealthHandler } from './health.js';
import {
  MODEL_STATES,
  Model,
  type ModelConfig,
  type ModelIndexEntry,
  type ModelMetadata,
  type ModelVersionState,
} from './model.js';
import {
  LINT_MODES,
  type LintMode,
  type LoadModelOptions,
  type LogSettings,
  type LogSettingsUpdate,
  type ServerOptions,
  type UnloadModelOptions,
  defaultBackendDirectory,
  flag,
  logSettingsOf,
  modelName,
  modelVersion,
  parseLoadModelOptions,
  parseLogSettingsUpdate,
  parseServerOptions,
  parseUnloadModelOptions,
} from './options.js';
import { watchPythonStubs } from './python-stubs.js';
import { LOG_CALLBACK_ENTRY_POINT, type TritonVersion, tritonVersion } from './releases.js';
import { type StartupFailure, formatStartupFailure, startupFailures } from './startup-causes.js';

export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
  /**
   * Only on the fake engine with stand-in backends asked for
   * (`fakeEngine.standIns()` in `triton-node/testing`): backend name (or
   * `'*'`) to mode.
   */
  standIns?: Record<string, string>;
}

/**
 * What `server.share()` returns: a plain object for `postMessage` or
 * `workerData`, which `Server.attach()` takes in a worker thread of the same
 * process. It carries no tensors and no handles, only the server's id and
 * what the worker needs to behave like the owner (repositories, lint, pins).
 */
export interface SharedServer {
  readonly kind: 'triton-node/shared-server';
  readonly id: string;
  readonly library: string;
  readonly repositories: readonly string[];
  readonly lint: LintMode;
  readonly modelConfigName: string | null;
  /**
   * Pinned versions when shared (for reading: an attached server takes the
   * owner's pins from the addon at attach, and again each time the owner
   * says on a BroadcastChannel that they changed).
   */
  readonly pins: readonly (readonly [string, number])[];
}

const SHARED_KIND = 'triton-node/shared-server';

/** Checks a value for `Server.attach`: a TypeError naming the first field that is wrong. */
function parseSharedServer(value: unknown): SharedServer {
  const where = 'Server.attach(shared)';
  if (!is.object(value) || (value as { kind?: unknown }).kind !== SHARED_KIND) {
    throw new TypeError(
      `${where}: expects the value server.share() returned (an object with kind '${SHARED_KIND}')`,
    );
  }
  const v = value as Record<string, unknown>;
  if (typeof v.id !== 'string' || !/^[0-9a-f]{32}$/.test(v.id)) {
    throw new TypeError(`${where}: shared.id must be the 32 hex digits share() gave`);
  }
  if (typeof v.library !== 'string') throw new TypeError(`${where}: shared.library must be a string`);
  if (!Array.isArray(v.repositories) || !v.repositories.every((r) => typeof r === 'string')) {
    throw new TypeError(`${where}: shared.repositories must be an array of strings`);
  }
  if (!LINT_MODES.includes(v.lint as LintMode)) {
    throw new TypeError(`${where}: shared.lint must be one of ${LINT_MODES.join(', ')}`);
  }
  if (v.modelConfigName !== null && typeof v.modelConfigName !== 'string') {
    throw new TypeError(`${where}: shared.modelConfigName must be a string or null`);
  }
  const pins = v.pins;
  if (
    !Array.isArray(pins) ||
    !pins.every(
      (p) =>
        Array.isArray(p) &&
        p.length === 2 &&
        typeof p[0] === 'string' &&
        Number.isSafeInteger(p[1]) &&
        p[1] >= 0,
    )
  ) {
    throw new TypeError(`${where}: shared.pins must be [model, version] pairs`);
  }
  return value as unknown as SharedServer;
}

/**
 * Why `log.logger` cannot be had. Triton's log callback arrived after the
 * releases this version was proven on (r25.07, r26.06: C API 1.34, no such
 * entry point); a library that has it is named as such, since its
 * signature is in no header this version was written against.
 */
function logCallbackMissing(library: LibraryInfo, holder: Error): TritonError {
  const has = library.optional[LOG_CALLBACK_ENTRY_POINT] === true;
  const found = `${library.path} (C API ${library.apiMajor}.${library.apiMinor})`;
  const why = has
    ? `${found} has ${LOG_CALLBACK_ENTRY_POINT}, but this version of triton-node does not call it yet`
    : `log.logger needs ${LOG_CALLBACK_ENTRY_POINT} (Triton C API 1.35+, Triton 2.72+), which ${found} does not have`;
  return tritonError(
    'UNSUPPORTED',
    `Server.create: ${why}: leave log.logger out, and Triton logs to stderr or to log.file`,
    {},
    holder,
  );
}

export class Server implements AsyncDisposable {
  readonly #native: NativeServer;
  readonly #repositories: string[];
  readonly #library: LibraryInfo;
  readonly #inference: Inference;
  #stopping: Promise<void> | undefined;
  /** Per model: the end of its last load or unload (see #serialized). */
  readonly #control = new Map<string, Promise<void>>();
  /** Per model: unloadModel calls so far (see _unloadCount). */
  readonly #unloads = new Map<string, number>();
  /** Pinned versions, live canaries and the deployment history. */
  readonly #deployments: Deployments;
  /** The `lint` option, and the config name lint reads. */
  #lint: LintMode = 'off';
  #modelConfigName: string | undefined;
  #startupFailures: readonly StartupFailure[] = [];
  /** Made by Server.attach (another thread owns the Triton server). */
  #attached = false;
  /** pythonStubExitSeconds: 0 in an attached server (the owner's stop stops Triton). */
  #stubExitSeconds = 0;
  /** Read from the server's metadata once it started. */
  #triton: TritonVersion | undefined;

  private constructor(
    native: NativeServer,
    inference: Inference,
    repositories: string[],
    library: LibraryInfo,
  ) {
    this.#native = native;
    this.#inference = inference;
    this.#repositories = repositories;
    this.#library = library;
    const stopped = () => this.#stopping !== undefined;
    this.#deployments = new Deployments({
      repositories,
      loadModel: (name, options) => this.loadModel(name, options),
      unloadModel: (name) => this.unloadModel(name, { wait: true }),
      readyVersions: async (name) =>
        (await this.#index(false, captureStack()))
          .filter((e) => e.name === name && e.state === 'READY' && e.version !== undefined)
          .map((e) => e.version!)
          .sort((a, b) => a - b),
      inferAt: (name, version, request) => this.#inference.infer(name, version, request),
      createMetric: (spec) => this.createMetric(spec),
      get stopped() {
        return stopped();
      },
    });
  }

  /**
   * Loads Triton's library (once per process) and starts a server. Rejects
   * with a TritonError when the library or the server cannot be started, and
   * with a TypeError for option mistakes (it never throws synchronously).
   */
  static async create(options: ServerOptions): Promise<Server> {
    const holder = captureStack();
    const parsed = parseServerOptions(options);
    const native = parsed.native;
    const library = loadLibrary(parsed.library);
    if (parsed.logger !== undefined) throw logCallbackMissing(library, holder);
    if (native.backendDirectory === '') native.backendDirectory = defaultBackendDirectory(library);
    // The fake engine's onnxruntime backend computes with onnxruntime-node's
    // ONNX Runtime when the application has it.
    if (library.isFake) native.backendConfig.push(...fakeOnnxRuntimeSettings(native.backendConfig));
    // The event callback exists before the server does; it routes to
    // `route.to` once that is set (no request can be submitted before).
    const route: { to?: Inference } = {};
    const onEvents = (events: NativeEvent[]) => route.to?.dispatch(events);
    checkStartupConfigs(native, holder);
    if (parsed.lint !== 'off') lintStartupModels(native, parsed.lint, holder);
    const { handle, failures } = await startServer(native, onEvents, holder);
    const inference = new Inference(
      handle,
      parsed.streamingMetrics ? createStreamMetrics(handle) : undefined,
    );
    route.to = inference;
    const server = new Server(handle, inference, native.modelRepositories, library);
    server.#lint = parsed.lint;
    server.#stubExitSeconds = parsed.pythonStubExitSeconds;
    server.#modelConfigName = native.modelConfigName;
    server.#startupFailures = failures;
    server.#triton = await server.#readVersion(library);
    return server;
  }

  /**
   * A value to post to a worker thread (`postMessage`, `workerData`) whose
   * `Server.attach(value)` gives a server over this same Triton: the same
   * models, pools and metrics, with completions delivered on the worker's
   * own thread and no copy of tensors between threads. The value can be
   * attached any number of times, by any threads of this process, while
   * this server runs. Throws a TritonError (UNAVAILABLE) once it stops.
   */
  share(): SharedServer {
    const holder = captureStack();
    let id: string;
    try {
      id = this.#native.share();
    } catch (err) {
      throw fromNativeError(err, {}, holder);
    }
    const channel = `triton-node/shared-server/${id}`;
    if (!this.#attached) this.#deployments.publishPins(channel, (pins) => this.#native.setPins(pins));
    return {
      kind: SHARED_KIND,
      id,
      library: this.#library.path,
      repositories: [...this.#repositories],
      lint: this.#lint,
      modelConfigName: this.#modelConfigName ?? null,
      pins: this.#deployments.pinList(),
    };
  }

  /**
   * In a worker thread: a Server over the Triton server another thread
   * shared (`server.share()`). It infers, streams, reads metadata and
   * statistics, loads and unloads models, and allocates pinned and CUDA
   * buffers in this thread. It does not deploy or roll back (the owner
   * keeps the deployment history and canaries; its pins reach this thread),
   * and `stop()` detaches it (its requests settle first) without stopping
   * the owner's server. When the owner stops, this server's calls reject
   * with UNAVAILABLE naming the owner and its requests in flight settle.
   * Rejects with a TypeError for a value that is not share()'s, NOT_FOUND
   * when no server of this process has its id or the value was shared over
   * another Triton library (naming both), and UNAVAILABLE when the owner is
   * stopping (from its stop() call on) or stopped. The owner's pins are
   * read from the addon, now and each time the owner says they changed;
   * nothing posted on their channel by another thread changes them.
   */
  static async attach(shared: SharedServer): Promise<Server> {
    const holder = captureStack();
    const value = parseSharedServer(shared);
    const library = loadLibrary();
    if (library.path !== value.library) {
      throw tritonError(
        'NOT_FOUND',
        `Server.attach: the shared server runs on ${value.library}, but this process loaded ${library.path} (a shared server is attached in the process that shared it)`,
        {},
        holder,
      );
    }
    const route: { to?: Inference } = {};
    let handle: NativeServer;
    try {
      handle = addon().attachServer(value.id, (events) => route.to?.dispatch(events));
    } catch (err) {
      throw fromNativeError(err, {}, holder);
    }
    const inference = new Inference(handle, undefined);
    route.to = inference;
    const server = new Server(handle, inference, [...value.repositories], library);
    server.#attached = true;
    server.#lint = value.lint;
    server.#modelConfigName = value.modelConfigName ?? undefined;
    // The owner's pins as the addon holds them, not the value's (a copy of
    // the moment it was shared), nor any message's.
    server.#deployments.followPins(`triton-node/shared-server/${value.id}`, () => handle.pins());
    server.#triton = await server.#readVersion(library);
    return server;
  }

  /** True for a server made by `Server.attach` (another thread owns Triton). */
  get attached(): boolean {
    return this.#attached;
  }

  /** @internal Messages on the owner's pins channel this attached server ignored (not the owner's hints). */
  get _ignoredPinMessages(): number {
    return this.#deployments.ignoredPinMessages;
  }

  /**
   * The startup models that did not load, each with its cause (Triton's
   * reason, or what the model's files show where Triton's index gives none:
   * a config that does not parse, no version folder...). Empty unless
   * `exitOnError: false` let the server start without them.
   */
  get startupFailures(): readonly StartupFailure[] {
    return this.#startupFailures;
  }

  /** The model repositories, as absolute paths. */
  get repositories(): readonly string[] {
    return this.#repositories;
  }

  /** The Triton library this server runs on. */
  /**
   * Which Triton this server runs on: its server version ('2.70.0'), the C
   * API version of its library ('1.34'), the release name when the suite
   * was proven on it ('r26.06'), and whether the library can send its log to
   * `log.logger`. Read once, when the server started.
   */
  get triton(): TritonVersion {
    return this.#triton!;
  }

  /** The server version from Triton's metadata (a server that cannot say gives ''). */
  async #readVersion(library: LibraryInfo): Promise<TritonVersion> {
    let version = '';
    try {
      version = (JSON.parse(await this.#native.metadata()) as { version?: string }).version ?? '';
    } catch {
      // A server that cannot give its metadata still runs; its version is unknown.
    }
    return tritonVersion(version, library);
  }

  get library(): LibraryInfo {
    return this.#library;
  }

  /** True once stop() was called. */
  get stopped(): boolean {
    return this.#stopping !== undefined;
  }

  /** Runs a native call, turning its errors into TritonErrors with the caller's stack. */
  async #call<T>(
    holder: Error,
    context: { model?: string; version?: number },
    fn: () => Promise<T>,
  ): Promise<T> {
    if (this.#stopping !== undefined) throw stoppedError(holder, context);
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
    const raw = JSON.parse(text) as {
      name?: string;
      version?: string;
      extensions?: string[];
      triton_node_stand_ins?: Record<string, string>;
    };
    const metadata: ServerMetadata = {
      name: raw.name ?? '',
      version: raw.version ?? '',
      extensions: raw.extensions ?? [],
    };
    if (raw.triton_node_stand_ins !== undefined) metadata.standIns = raw.triton_node_stand_ins;
    return metadata;
  }

  /**
   * Stops the server: in-flight requests finish or fail, open streams end
   * with an error, then the server is deleted. Idempotent; every later call
   * on this server rejects with a TritonError 'UNAVAILABLE'. Resolves once
   * Triton's stop returned (after `exitTimeoutSeconds` at most; requests
   * still in flight then are cancelled). When the exit timeout expired, the
   * server is left undeleted until the process exits (Triton may still be
   * destroying its models on threads of its own, which a delete would pull
   * the server from under), and a process warning says so.
   */
  stop(): Promise<void> {
    if (this.#stopping === undefined) {
      const holder = captureStack();
      this.#inference.beginStop(
        this.#attached
          ? "the server is detached: stop() on an attached server ended this thread's use of it (the owner's server keeps running)"
          : undefined,
      );
      this.#deployments.close();
      this.#stopping = (async () => {
        let failure: unknown;
        const endWatch = watchPythonStubs(this.#repositories, this.#stubExitSeconds);
        try {
          await this.#native.stop();
        } catch (err) {
          failure = err;
        }
        const killed = await endWatch();
        if (killed.length > 0) {
          process.emitWarning(
            `triton-node: stop(): Python backend stub(s) ${killed.map((k) => `of '${k.instance}' (pid ${k.pid}: ${k.state})`).join(', ')} ` +
              `still ran ${this.#stubExitSeconds} s into the stop and were killed so that it could finish (their teardown, and a finalize() ` +
              'they had not finished, did not complete; pythonStubExitSeconds; see "A Python stub does not exit at stop()" in docs/troubleshooting.md)',
            'TritonWarning',
          );
        }
        // Let events the addon queued during the stop arrive before giving up on the rest.
        await new Promise((r) => setImmediate(r));
        this.#inference.abandonAll();
        // The server is stopped either way (Triton reports an expired exit
        // timeout as an error): say so without failing the caller's shutdown.
        if (failure !== undefined) {
          const err = fromNativeError(failure, {}, holder);
          process.emitWarning(
            `triton-node: stopping the server reported ${err.code}: ${err.message} ` +
              '(the server is left undeleted until the process exits; see "stop() timed out" in docs/troubleshooting.md)',
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

  /** The model's own config.pbtxt (first repository that has the model), as JSON. */
  async #repositoryConfig(name: string, holder: Error): Promise<ModelConfig> {
    for (const repo of this.#repositories) {
      const file = join(repo, name, 'config.pbtxt');
      let text: string;
      try {
        text = await readRepositoryFile(file);
      } catch (err) {
        if (err instanceof TritonError) {
          throw tritonError('INVALID_ARG', `model '${name}': ${err.message}`, { model: name }, holder);
        }
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
    throw withCallHint(
      tritonError(
        'NOT_FOUND',
        `model '${name}': no config.pbtxt in ${this.#repositories.join(', ')}`,
        { model: name },
        holder,
      ),
      { kind: 'config', model: name },
    );
  }

  /** Refuses a config file Triton would read that is not a regular file, or too large (see lib/config/files.ts). */
  #checkConfigFiles(name: string, holder: Error): void {
    for (const repo of this.#repositories) {
      const files = [join(repo, name, 'config.pbtxt')];
      if (this.#modelConfigName !== undefined)
        files.push(join(repo, name, 'configs', `${this.#modelConfigName}.pbtxt`));
      for (const file of files) {
        try {
          checkRepositoryFile(file);
        } catch (err) {
          throw tritonError(
            'INVALID_ARG',
            `model '${name}': ${(err as Error).message}`,
            { model: name },
            holder,
          );
        }
      }
    }
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
    let pin: number | undefined;
    if (parsed.versions === undefined && config === undefined && parsed.files.length === 0) {
      // A model with a deployment history serves its deployed version.
      const restored = this.#deployments.restore(name);
      if (restored !== undefined) {
        parsed.versions = restored.versions;
        pin = restored.pinned;
      }
    }
    if (parsed.versions !== undefined) {
      if (this.#stopping !== undefined) throw stoppedError(holder, { model: name });
      const base = config ?? (await this.#repositoryConfig(name, holder));
      config = { ...base, version_policy: { specific: { versions: parsed.versions } } };
    }
    if (parsed.files.length === 0) {
      if (config === undefined) this.#checkConfigFiles(name, holder);
      this.#checkModelFiles(name, holder, config);
    }
    this.#checkSequenceStates(name, config, holder);
    checkOnnxFiles(name, parsed.files, holder);
    if (this.#lint !== 'off' && parsed.files.length === 0) this.#lintBeforeLoad(name, holder);
    const text = config === undefined ? undefined : JSON.stringify(config);
    await this.#serialized(name, async () => {
      this.#inference.forget(name);
      try {
        await this.#call(holder, { model: name }, () => this.#native.loadModel(name, text, parsed.files));
      } catch (err) {
        // Triton says "failed to poll from model repository" for a name no
        // repository has: name the models that are there.
        if (err instanceof TritonError && parsed.files.length === 0 && config === undefined) {
          throw await this.#absentModelHint(err, name, holder);
        }
        throw err;
      } finally {
        this.#inference.forget(name);
      }
    });
    if (pin !== undefined) this.#deployments.pin(name, pin);
  }

  // ---- deployments ----------------------------------------------------------

  /**
   * Rolls out a version of `name` without moving traffic before it is
   * checked: writes `files` as a new numbered version folder (or takes the
   * existing `version`), loads it beside the pinned one, runs the `canary`,
   * then pins it (unversioned requests of this library go to it) and keeps
   * `keep` previous versions loaded. A canary that fails unloads it and keeps
   * the old pin. Resolves with the outcome (also kept in the model's
   * `deployments.jsonl`); rejects only for mistakes in the call.
   */
  deploy(name: string, options: DeployOptions): Promise<Deployment> {
    try {
      modelName(name);
      if (this.#stopping !== undefined) throw stoppedError(captureStack(), { model: name });
      this.#ownerOnly('deploy', name);
      return this.#deployments.deploy(name, options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Pins the previous (or the given) version again: a pointer flip when it is loaded, a load first when not. */
  rollback(name: string, options: RollbackOptions = {}): Promise<Deployment> {
    try {
      modelName(name);
      if (this.#stopping !== undefined) throw stoppedError(captureStack(), { model: name });
      this.#ownerOnly('rollback', name);
      return this.#deployments.rollback(name, options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #ownerOnly(what: string, name: string): void {
    if (!this.#attached) return;
    throw tritonError(
      'UNSUPPORTED',
      `${what}('${name}') on an attached server: deploy and roll back on the thread that created the server (its pins reach attached servers)`,
      { model: name },
      captureStack(),
    );
  }

  /** The deploys and rollbacks of `name`, oldest first, from its `deployments.jsonl`. */
  deployments(name: string): Promise<Deployment[]> {
    try {
      modelName(name);
      return this.#deployments.history(name);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The version unversioned requests of `name` go to, when one is pinned (else Triton's highest ready). */
  pinnedVersion(name: string): number | undefined {
    return this.#deployments.pinned(name);
  }

  /**
   * The files the model's backend opens, for the config the load uses
   * (`config`, else the repository's) and the versions its policy serves:
   * see modelFilesProblem.
   */
  #checkModelFiles(name: string, holder: Error, config: ModelConfig | undefined): void {
    const dir = this.#repositories.map((r) => join(r, name)).find((d) => existsSync(d));
    if (dir === undefined) return;
    const custom =
      this.#modelConfigName === undefined
        ? undefined
        : join(dir, 'configs', `${this.#modelConfigName}.pbtxt`);
    const used =
      config ?? repositoryModelConfig(dir, custom !== undefined && existsSync(custom) ? custom : undefined);
    const problem = used === undefined ? undefined : modelFilesProblem(dir, used);
    if (problem === undefined) return;
    throw tritonError(
      'INVALID_ARG',
      `load failed for model '${name}': ${problem.text}`,
      { model: name },
      holder,
    );
  }

  /**
   * An initial state larger than the machine's memory, in the config of the
   * load (or else the repository's) or of a model it composes: r25.07
   * crashes the process on it (lib/config/sequence-states.ts).
   */
  #checkSequenceStates(name: string, config: ModelConfig | undefined, holder: Error): void {
    const problem = oversizedInitialStateOf(name, config, (model) => {
      const dir = this.#repositories.map((r) => join(r, model)).find((d) => existsSync(d));
      return dir === undefined ? undefined : readModelConfigIn(dir, this.#customConfigFile(dir));
    });
    if (problem === undefined) return;
    throw tritonError(
      'INVALID_ARG',
      `load failed for model '${name}': ${problem}: triton-node refuses the load`,
      { model: name },
      holder,
    );
  }

  /** `configs/<modelConfigName>.pbtxt` of a model folder, when the server names one and the folder has it. */
  #customConfigFile(dir: string): string | undefined {
    if (this.#modelConfigName === undefined) return undefined;
    const custom = join(dir, 'configs', `${this.#modelConfigName}.pbtxt`);
    return existsSync(custom) ? custom : undefined;
  }

  /**
   * The `lint` option: the model's folder linted before its load; errors and
   * warnings emitted as process warnings, and with 'error' an error finding
   * refuses the load.
   */
  #lintBeforeLoad(name: string, holder: Error): void {
    const dir = this.#repositories.map((r) => join(r, name)).find((d) => existsSync(d));
    if (dir === undefined) return;
    const errors = warnLintFindings(
      lintModel(dir, name, {
        ...(this.#modelConfigName === undefined ? {} : { modelConfigName: this.#modelConfigName }),
      }),
    );
    if (this.#lint === 'error' && errors.length > 0) {
      throw tritonError(
        'INVALID_ARG',
        `model '${name}' fails lint: ${errors.map(lintFindingText).join('; ')}`,
        { model: name },
        holder,
      );
    }
  }

  /** `err`, with the repositories' models named when none of them is `name`. */
  async #absentModelHint(err: TritonError, name: string, holder: Error): Promise<TritonError> {
    let index: ModelIndexEntry[];
    try {
      index = await this.#index(false, holder);
    } catch {
      return err;
    }
    if (index.some((e) => e.name === name)) return err;
    const present = [...new Set(index.map((e) => e.name))].sort();
    const list = present.length === 0 ? 'none' : present.map((n) => `'${n}'`).join(', ');
    return withHint(err, `no model '${name}' in the model repositories; the models there: ${list}`);
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
      const busy = index.some((e) => e.name === name && holdsVersion(e));
      if (!busy) return;
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** Unloads a model (every version). Returns at once unless `wait` is set. */
  async unloadModel(name: string, options: UnloadModelOptions = {}): Promise<void> {
    const holder = captureStack();
    modelName(name);
    this.#unloads.set(name, (this.#unloads.get(name) ?? 0) + 1);
    const { dependents, wait } = parseUnloadModelOptions(options);
    let done: Promise<void> | undefined;
    const unloaded = () => {
      done ??= this.#unloaded(name, holder);
      return done;
    };
    await this.#serialized(
      name,
      async () => {
        this.#inference.forget(name);
        // Triton returns success for a model that is not loaded: say so.
        // A model loaded from memory (config and files) is not in real
        // Triton's repository index: ask for its readiness too.
        const index = await this.#index(false, holder);
        const loaded =
          index.some((e) => e.name === name && holdsVersion(e)) ||
          (await this.#call(holder, { model: name }, () => this.#native.modelIsReady(name, -1)));
        if (!loaded) {
          const known = index.some((e) => e.name === name);
          throw tritonError(
            'NOT_FOUND',
            `model '${name}' is not loaded, so there is nothing to unload${known ? '' : ' (no model of that name is in the model repositories)'}`,
            { model: name },
            holder,
          );
        }
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
      if (is.oneOf(MODEL_STATES, e.state)) entry.state = e.state;
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

  /**
   * A handle on a model, pinned to `version` when given. `model<Spec>(name)`
   * types its requests and results by a `ModelSpec` (its input and output
   * names and datatypes; `triton-node types` writes them from the configs).
   * The spec is the caller's word: nothing checks it against the model.
   */
  model<S extends ModelSpec = ModelSpec>(name: string, version?: number): Model<S> {
    return new Model<S>(this, modelName(name), modelVersion(version));
  }

  /** @internal How many times unloadModel(name) was called: tune() stops when it changes. */
  _unloadCount(name: string): number {
    return this.#unloads.get(name) ?? 0;
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
      triton_node_stand_in?: string;
    };
    const tensors = (list: ModelMetadata['inputs'] | undefined) =>
      (list ?? []).map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape.map(Number) }));
    const metadata: ModelMetadata = {
      name: raw.name,
      versions: (raw.versions ?? []).map(Number),
      platform: raw.platform ?? '',
      inputs: tensors(raw.inputs),
      outputs: tensors(raw.outputs),
    };
    if (raw.triton_node_stand_in !== undefined) metadata.standIn = raw.triton_node_stand_in;
    return metadata;
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

  // ---- Triton's log ----------------------------------------------------------

  /**
   * Triton's logger as it is now. It is one per process: the last server
   * created set it, and `updateLogSettings()` changes it for every server.
   */
  logSettings(): LogSettings {
    return logSettingsOf(addon().logSettings());
  }

  /**
   * Changes Triton's logger now, as tritonserver's logging extension does
   * (`POST /v2/logging`), and returns the settings it then has. The file is
   * set at start only (`log.file`). TypeError or RangeError for a bad field;
   * a TritonError when Triton refuses it.
   */
  updateLogSettings(update: LogSettingsUpdate): LogSettings {
    const parsed = parseLogSettingsUpdate(update);
    try {
      return logSettingsOf(addon().updateLogSettings(parsed));
    } catch (err) {
      throw fromNativeError(err);
    }
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

  /**
   * A `(req, res)` handler for Kubernetes probes (`node:http` or Express): a
   * path ending in `/live` answers whether the server is live; any other path
   * whether it is ready and so is every model in `options.models` (and in the
   * request's `?model=`). 200 or 503 with a JSON report; a stopped server is
   * 503. See docs/api.md.
   */
  healthHandler(options: HealthOptions = {}): HealthHandler {
    return createHealthHandler(
      {
        isLive: () => this.isLive(),
        isReady: () => this.isReady(),
        modelIsReady: (name) => this.model(name).isReady(),
      },
      options,
    );
  }

  /** A custom metric in Triton's registry; it shows in `metrics()`. */
  createMetric(spec: MetricSpec): Metric {
    if (this.#stopping !== undefined) throw stoppedError();
    return createCustomMetric(this.#native, spec);
  }

  // ---- inference -------------------------------------------------------------

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

  /** @internal Runs one inference (Model.infer and infer() land here). */
  _infer(name: string, modelVersion: number, request: InferRequest): Promise<InferResult> {
    if (modelVersion !== -1 || this.#deployments.idle)
      return this.#inference.infer(name, modelVersion, request);
    return this.#deployments.infer(name, (v) => this.#inference.infer(name, v, request));
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

  /** @internal Starts a stream (Model.stream and stream() land here). */
  _stream(name: string, modelVersion: number, request: InferRequest, options: StreamOptions): InferStream {
    const version = modelVersion === -1 ? this.#deployments.streamVersion(name) : modelVersion;
    return this.#inference.stream(name, version, request, options);
  }
}

/**
 * Starts Triton. Its own exit-on-error check stops a server whose startup
 * models failed and says only "failed to load all models" (the reasons go to
 * its log); so Triton always gets exit-on-error off, and the check is made
 * here from the model index, where the reasons are. A server that failed
 * before its model repository existed is never handed out: Triton returns
 * one that is not live, and model calls on it dereference a null pointer.
 */
async function startServer(
  native: NativeServerOptions,
  onEvents: (events: NativeEvent[]) => void,
  holder: Error,
): Promise<{ handle: NativeServer; failures: StartupFailure[] }> {
  const create = async (options: NativeServerOptions): Promise<NativeServer> => {
    try {
      return await addon().createServer(options, onEvents);
    } catch (err) {
      throw repositoryHint(fromNativeError(err, {}, holder), options.modelRepositories);
    }
  };
  const handle = await create({ ...native, exitOnError: false });
  if (!(await handle.isLive().catch(() => false))) {
    await handle.stop().catch(() => {});
    // Once more with Triton's own check, for its error: it fails the same
    // way, before any model is loaded.
    const again = await create({ ...native, exitOnError: true });
    if (await again.isLive().catch(() => false)) return checkStartupModels(again, native, holder);
    await again.stop().catch(() => {});
    throw tritonError('INTERNAL', 'the server failed to initialize (see its log)', {}, holder);
  }
  return checkStartupModels(handle, native, holder);
}

/**
 * Each startup model that is not READY, with its cause; with `exitOnError`
 * (the default) any such model fails the start, naming each cause.
 */
async function checkStartupModels(
  handle: NativeServer,
  native: NativeServerOptions,
  holder: Error,
): Promise<{ handle: NativeServer; failures: StartupFailure[] }> {
  const mode = MODEL_CONTROL_MODES[native.modelControlMode];
  const all = mode !== 'explicit' || native.startupModels.includes('*');
  if (!all && native.startupModels.length === 0) return { handle, failures: [] };
  let failures: StartupFailure[];
  try {
    const index = JSON.parse(await handle.modelIndex(false)) as Array<{
      name: string;
      version?: string;
      state?: string;
      reason?: string;
    }>;
    failures = startupFailures(index, startupModelFolders(native), all ? undefined : native.startupModels, {
      modelConfigName: native.modelConfigName,
      strictModelConfig: native.strictModelConfig,
    });
  } catch (err) {
    await handle.stop().catch(() => {});
    throw fromNativeError(err, {}, holder);
  }
  if (failures.length === 0 || !native.exitOnError) return { handle, failures };
  await handle.stop().catch(() => {});
  const err = tritonError('INTERNAL', 'failed to load all models', {}, holder);
  return Promise.reject(withHint(err, failures.map(formatStartupFailure).join('; ')));
}

/** The model folders Triton loads at startup (every one unless explicit control names them). */
function startupModelFolders(native: NativeServerOptions): Array<{ repo: string; name: string }> {
  const all =
    MODEL_CONTROL_MODES[native.modelControlMode] !== 'explicit' || native.startupModels.includes('*');
  const out: Array<{ repo: string; name: string }> = [];
  for (const repo of native.modelRepositories) {
    let names: string[];
    try {
      names = readdirSync(repo, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
        .map((e) => e.name);
    } catch {
      continue; // Triton names a repository it cannot read.
    }
    for (const name of names) if (all || native.startupModels.includes(name)) out.push({ repo, name });
  }
  return out;
}

/**
 * Refuses a start where a config Triton reads at startup is not a regular
 * file or too large: Triton would wait on a FIFO for good, or read
 * /dev/zero until the process dies (see lib/config/files.ts).
 */
function checkStartupConfigs(native: NativeServerOptions, holder: Error): void {
  const refused: string[] = [];
  for (const { repo, name } of startupModelFolders(native)) {
    const files = [join(repo, name, 'config.pbtxt')];
    if (native.modelConfigName !== undefined)
      files.push(join(repo, name, 'configs', `${native.modelConfigName}.pbtxt`));
    for (const file of files) {
      try {
        checkRepositoryFile(file);
      } catch (err) {
        refused.push(`${name}: ${(err as Error).message}`);
      }
    }
  }
  if (refused.length > 0) {
    throw tritonError('INVALID_ARG', `startup models cannot be read: ${refused.join('; ')}`, {}, holder);
  }
  checkStartupModelFiles(native, holder);
  checkStartupSequenceStates(native, holder);
}

/**
 * Refuses in-memory model files (`loadModel({ files })`) holding an ONNX
 * model whose external data lies outside its version folder
 * (lib/config/onnx-external-data.ts).
 */
function checkOnnxFiles(name: string, files: ReadonlyArray<[string, Uint8Array]>, holder: Error): void {
  for (const [path, bytes] of files) {
    if (!path.endsWith('.onnx')) continue;
    const segments = path.split('/');
    const problem = onnxBytesProblem(bytes, segments.length > 1 ? segments.slice(1).join('/') : path);
    if (problem === undefined) continue;
    throw tritonError(
      'INVALID_ARG',
      `load failed for model '${name}': files['${path}']: ${problem}`,
      { model: name },
      holder,
    );
  }
}

/** Refuses a start where a startup model (or one it composes) has an initial state larger than the machine's memory (lib/config/sequence-states.ts). */
function checkStartupSequenceStates(native: NativeServerOptions, holder: Error): void {
  const readConfig = (model: string) => {
    const dir = native.modelRepositories.map((r) => join(r, model)).find((d) => existsSync(d));
    if (dir === undefined) return undefined;
    const custom =
      native.modelConfigName === undefined
        ? undefined
        : join(dir, 'configs', `${native.modelConfigName}.pbtxt`);
    return readModelConfigIn(dir, custom !== undefined && existsSync(custom) ? custom : undefined);
  };
  const refused: string[] = [];
  for (const { name } of startupModelFolders(native)) {
    const problem = oversizedInitialStateOf(name, undefined, readConfig);
    if (problem !== undefined) refused.push(problem);
  }
  if (refused.length > 0) {
    throw tritonError(
      'INVALID_ARG',
      `startup models cannot load (triton-node refuses them): ${refused.join('; ')}`,
      {},
      holder,
    );
  }
}

/**
 * What keeps the model in `dir` from loading with `config`, found before
 * Triton sees the load: a model file its backend would open that is a FIFO
 * or a device (the open or the read would never end:
 * lib/config/model-files.ts), an onnxruntime thread count beyond a C int
 * (r25.07 aborts the process: lib/config/onnxruntime.ts), or a Python
 * model's missing model.py (r25.07 would wait for the model's stub without
 * end: lib/config/python-model-file.ts).
 */
function modelFilesProblem(dir: string, config: ModelConfig): { text: string; python: boolean } | undefined {
  const unreadable = unreadableModelFile(dir, config);
  if (unreadable !== undefined) return { text: unreadable, python: false };
  const abort = onnxThreadCountProblems(config).find((p) => p.kind === 'out-of-range');
  if (abort !== undefined) {
    return {
      text: `parameter '${abort.parameter}' is '${abort.value}', beyond a C int: r25.07's onnxruntime backend aborts the whole process on it (std::out_of_range): triton-node refuses the load`,
      python: false,
    };
  }
  const missing = missingPythonModelFile(dir, config);
  if (missing === undefined) return undefined;
  return {
    text: `${missing} (the python backend would wait for the model's stub without end: triton-node refuses the load)`,
    python: true,
  };
}

/** Refuses a start where a startup model's files cannot load (modelFilesProblem). */
function checkStartupModelFiles(native: NativeServerOptions, holder: Error): void {
  const missing: string[] = [];
  const unreadable: string[] = [];
  for (const { repo, name } of startupModelFolders(native)) {
    const dir = join(repo, name);
    const custom =
      native.modelConfigName === undefined
        ? undefined
        : join(dir, 'configs', `${native.modelConfigName}.pbtxt`);
    const config = repositoryModelConfig(
      dir,
      custom !== undefined && existsSync(custom) ? custom : undefined,
    );
    const problem = config === undefined ? undefined : modelFilesProblem(dir, config);
    if (problem?.python) missing.push(`${name}: ${missingPythonModelFile(dir, config!)}`);
    else if (problem !== undefined) unreadable.push(`${name}: ${problem.text}`);
  }
  if (unreadable.length > 0) {
    throw tritonError('INVALID_ARG', `startup models cannot load: ${unreadable.join('; ')}`, {}, holder);
  }
  if (missing.length > 0) {
    throw tritonError(
      'INVALID_ARG',
      `startup models cannot load (the python backend would wait for their stubs without end): ${missing.join('; ')}`,
      {},
      holder,
    );
  }
}

/** The `lint` option at startup: the models Triton will load are linted first. */
function lintStartupModels(native: NativeServerOptions, mode: LintMode, holder: Error): void {
  const errors: string[] = [];
  const options = native.modelConfigName === undefined ? {} : { modelConfigName: native.modelConfigName };
  for (const { repo, name } of startupModelFolders(native)) {
    for (const f of warnLintFindings(lintModel(join(repo, name), name, options))) {
      errors.push(`${name}: ${lintFindingText(f)}`);
    }
  }
  if (mode === 'error' && errors.length > 0) {
    throw tritonError('INVALID_ARG', `models fail lint: ${errors.join('; ')}`, {}, holder);
  }
}

/** A failed start, with the `modelRepository` paths that do not exist named (Triton names a file it could not stat). */
function repositoryHint(err: TritonError, repositories: readonly string[]): TritonError {
  const missing = repositories.filter((r) => !existsSync(r));
  if (missing.length === 0) return err;
  const list = missing.map((r) => `'${r}'`).join(', ');
  return withHint(err, `modelRepository: ${list} ${missing.length > 1 ? 'do' : 'does'} not exist`);
}

/** A version that is loaded, loading or unloading (what an unload acts on or waits for). */
function holdsVersion(e: ModelIndexEntry): boolean {
  return e.state === 'READY' || e.state === 'LOADING' || e.state === 'UNLOADING';
}
