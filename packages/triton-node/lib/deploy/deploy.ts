import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
/**
 * Safe rollouts of model versions: `server.deploy()`, `server.rollback()`,
 * `server.deployments()`.
 *
 * Triton sends an unversioned request to the highest READY version, so
 * loading version 2 next to version 1 moves all traffic at once. Here the
 * library pins the version its unversioned requests go to (`server.infer`,
 * `server.model(name)` without a version, streams): a new version is loaded
 * beside the pinned one, checked by a canary, and only then pinned. A failed
 * check leaves the old version pinned and unloads the new one. The history is
 * kept as JSON lines in the model's folder (`deployments.jsonl`), so a new
 * Server reads it back and `loadModel(name)` serves the deployed version.
 */
import { type TritonError, tritonError } from '../base/errors.js';
import { is } from '../base/is.js';
import { appendRepositoryFile, readRepositoryFile, readRepositoryFileSync } from '../config/files.js';
import type { ModelConfig } from '../config/model-config.js';
import { onnxBytesProblem } from '../config/onnx-external-data.js';
import type { Metric, MetricSpec } from '../metrics/metrics.js';
import type { InferResult } from '../request/result.js';
import type { InferRequest } from '../request/types.js';
import type { Tensor } from '../tensor/tensor.js';
import { PinsFollower, PinsPublisher } from './shared-pins.js';

/** How a new version is checked before it is pinned. */
export interface CanaryOptions {
  /** Requests sent to the new version (and, with `compare`, to the pinned one): any error fails the canary. */
  requests?: readonly InferRequest[];
  /**
   * A share (0–1) of live unversioned `infer()` traffic sent to the new
   * version for `durationMs`. A live request that fails there is retried on
   * the pinned version, so the caller does not see the failure; it counts
   * against the canary. Streams stay on the pinned version.
   */
  traffic?: number;
  /** How long live traffic is shared, ms (default 5000 when `traffic` is set, else 0). */
  durationMs?: number;
  /** The most errors per live canary request (default 0). */
  maxErrorRate?: number;
  /** The most p99 latency of the new version over the pinned one's, measured on live traffic in the same window. */
  maxLatencyRatio?: number;
  /** Live requests each side needs before the latency ratio is judged (default 20). */
  minRequests?: number;
  /** Compares the outputs of the pinned and the new version for each of `requests`; false fails the canary. */
  compare?: (
    oldOutputs: Record<string, Tensor>,
    newOutputs: Record<string, Tensor>,
    request: InferRequest,
  ) => boolean | Promise<boolean>;
}

/** One step of a deployment, for `onStep`. */
export interface DeploymentStep {
  model: string;
  step: 'writing' | 'loading' | 'canary' | 'switching' | 'rolling-back' | 'unloading' | 'done';
  /** The version the step is about. */
  version: number;
  detail?: string;
}

export interface DeployOptions {
  /** A version folder already in the repository. */
  version?: number;
  /** The files of a new version (paths inside the version folder); written as the next version number. */
  files?: Record<string, Uint8Array | string>;
  /** A model config for the load (Triton's JSON form or its text); it applies to every loaded version. */
  config?: ModelConfig | string;
  /** The checks before the switch; none: the new version is pinned once it loaded. */
  canary?: CanaryOptions;
  /** Previous versions kept loaded after a switch, for an instant rollback (default 1); older ones are unloaded (they stay on disk). */
  keep?: number;
  /** Why, for the history. */
  reason?: string;
  /** Called at each step. */
  onStep?: (step: DeploymentStep) => void;
}

export interface RollbackOptions {
  /** The version to go back to (default: the one pinned before the current one). */
  to?: number;
  /** Why, for the history. */
  reason?: string;
}

/** What a canary measured. */
export interface CanaryReport {
  /** Requests of `canary.requests` sent, and how many failed on the new version. */
  requests: number;
  requestErrors: number;
  /** Requests whose outputs `compare` refused. */
  mismatches: number;
  /** Live requests sent to the new version, and how many failed there (each retried on the pinned one). */
  liveRequests: number;
  liveErrors: number;
  /** liveErrors / liveRequests (0 without live traffic). */
  errorRate: number;
  /** p99 latency of live requests on the new and on the pinned version in the window, ms. */
  p99Ms?: number;
  baselineP99Ms?: number;
  latencyRatio?: number;
}

/** 'succeeded': pinned; 'rolled-back': the canary failed and the new version was unloaded; 'failed': the new version did not load (nothing changed). */
export type DeploymentStatus = 'succeeded' | 'rolled-back' | 'failed';

/** One deploy or rollback, as returned and as kept in the history. */
export interface Deployment {
  kind: 'deploy' | 'rollback';
  model: string;
  /** The version pinned before (null: none was loaded). */
  from: number | null;
  /** The version deployed, or rolled back to. */
  to: number;
  status: DeploymentStatus;
  /** Why it rolled back or failed, or the caller's reason. */
  reason?: string;
  /** The version pinned afterwards (null: none). */
  pinned: number | null;
  /** The versions loaded afterwards. */
  loaded: number[];
  canary?: CanaryReport;
  startedAt: string;
  finishedAt: string;
}

/** @internal What deployments need from their server. */
export interface DeployHost {
  /** Absolute model repository paths. */
  readonly repositories: readonly string[];
  loadModel(name: string, options: { versions: number[]; config?: ModelConfig | string }): Promise<void>;
  unloadModel(name: string): Promise<void>;
  /** READY versions of the model. */
  readyVersions(name: string): Promise<number[]>;
  /** An inference at an explicit version (never routed). */
  inferAt(name: string, version: number, request: InferRequest): Promise<InferResult>;
  createMetric(spec: MetricSpec): Metric;
  readonly stopped: boolean;
}

const HISTORY = 'deployments.jsonl';

/** A canary sharing live traffic. */
interface LiveCanary {
  version: number;
  traffic: number;
  /** Unversioned requests routed while it ran. */
  seen: number;
  inflight: number;
  drained: (() => void) | undefined;
  latencies: number[];
  baseline: number[];
  requests: number;
  errors: number;
}

function p99(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

function optionError(option: string, expected: string, value: unknown): TypeError {
  return new TypeError(
    `${option}: expected ${expected}, got ${typeof value === 'string' ? `'${value}'` : String(value)}`,
  );
}

function checkDeployOptions(options: unknown): DeployOptions {
  if (!is.object(options)) throw optionError('deploy options', 'an object with version or files', options);
  const known = ['version', 'files', 'config', 'canary', 'keep', 'reason', 'onStep'];
  for (const key of Object.keys(options)) {
    if (!known.includes(key))
      throw new TypeError(`Unknown option '${key}' for deploy (known: ${known.join(', ')})`);
  }
  const o = options as DeployOptions;
  if ((o.version === undefined) === (o.files === undefined)) {
    throw new TypeError(
      'deploy: give either version (a version folder in the repository) or files (a new version)',
    );
  }
  if (o.version !== undefined && (!is.integer(o.version) || o.version < 1)) {
    throw optionError('deploy version', 'a version number >= 1', o.version);
  }
  if (o.files !== undefined) {
    if (!is.object(o.files) || Object.keys(o.files).length === 0) {
      throw optionError('deploy files', 'an object of { path: bytes } with at least one file', o.files);
    }
    const paths = Object.keys(o.files);
    for (const [path, content] of Object.entries(o.files)) {
      checkFilePath(path, paths);
      if (!is.string(content) && !(content instanceof Uint8Array)) {
        throw optionError(`deploy files['${path}']`, 'a Uint8Array or string', content);
      }
    }
  }
  if (o.keep !== undefined && (!is.integer(o.keep) || o.keep < 0)) {
    throw optionError('deploy keep', 'a non-negative integer', o.keep);
  }
  if (o.reason !== undefined && !is.string(o.reason))
    throw optionError('deploy reason', 'a string', o.reason);
  if (o.onStep !== undefined && typeof o.onStep !== 'function')
    throw optionError('deploy onStep', 'a function', o.onStep);
  if (o.canary !== undefined) checkCanary(o.canary);
  return o;
}

/** A segment of a path in the repository: a name, never '.', '..', a separator or NUL. */
function badSegment(segment: string): boolean {
  return segment === '' || segment === '.' || segment === '..' || /[/\\\0]/.test(segment);
}

/**
 * Refuses a model name that is not one folder name: deployments write in
 * `<repository>/<name>`, so '../x' or 'a/b' would write elsewhere.
 */
export function checkDeployModelName(name: string, what: string): void {
  if (badSegment(name)) {
    throw new TypeError(
      `${what}: expected a model name that is one folder name (not '.' or '..', without '/', '\\' or NUL), got '${name.replace(/\0/g, '\\0')}'`,
    );
  }
}

/** A file of a new version: a relative path of names inside the version folder, not below another file. */
function checkFilePath(path: string, paths: readonly string[]): void {
  const segments = path.split('/');
  if (segments.some(badSegment)) {
    throw new TypeError(
      `deploy files['${path.replace(/\0/g, '\\0')}']: expected a path inside the version folder (names joined by '/', without '..', '.', empty names, a leading '/', '\\' or NUL)`,
    );
  }
  for (let i = 1; i < segments.length; i++) {
    const parent = segments.slice(0, i).join('/');
    if (paths.includes(parent)) {
      throw new TypeError(
        `deploy files['${path}']: '${parent}' is also given as a file, so it cannot be a folder`,
      );
    }
  }
}

/**
 * Refuses an ONNX file of a new version whose external data lies outside
 * the version folder: Triton's onnxruntime backend would read that file
 * (lib/config/onnx-external-data.ts).
 */
function checkOnnxFiles(name: string, files: Record<string, Uint8Array | string>): void {
  for (const [path, content] of Object.entries(files)) {
    if (!path.endsWith('.onnx')) continue;
    const problem = onnxBytesProblem(is.string(content) ? Buffer.from(content) : content, path);
    if (problem === undefined) continue;
    throw tritonError('INVALID_ARG', `deploy: model '${name}': files['${path}']: ${problem}`, {
      model: name,
    });
  }
}

function checkCanary(c: unknown): void {
  if (!is.object(c)) throw optionError('deploy canary', 'an object', c);
  const known = [
    'requests',
    'traffic',
    'durationMs',
    'maxErrorRate',
    'maxLatencyRatio',
    'minRequests',
    'compare',
  ];
  for (const key of Object.keys(c)) {
    if (!known.includes(key))
      throw new TypeError(`Unknown option 'canary.${key}' for deploy (known: ${known.join(', ')})`);
  }
  const o = c as CanaryOptions;
  if (o.requests !== undefined && !is.array(o.requests))
    throw optionError('canary.requests', 'an array of requests', o.requests);
  const share = (name: string, v: unknown) => {
    if (v !== undefined && (!is.number(v) || v < 0 || v > 1))
      throw optionError(`canary.${name}`, 'a number from 0 to 1', v);
  };
  share('traffic', o.traffic);
  share('maxErrorRate', o.maxErrorRate);
  if (o.durationMs !== undefined && (!is.integer(o.durationMs) || o.durationMs < 0)) {
    throw optionError('canary.durationMs', 'a non-negative integer', o.durationMs);
  }
  if (o.maxLatencyRatio !== undefined && (!is.number(o.maxLatencyRatio) || o.maxLatencyRatio <= 0)) {
    throw optionError('canary.maxLatencyRatio', 'a positive number', o.maxLatencyRatio);
  }
  if (o.minRequests !== undefined && (!is.integer(o.minRequests) || o.minRequests < 1)) {
    throw optionError('canary.minRequests', 'a positive integer', o.minRequests);
  }
  if (o.compare !== undefined && typeof o.compare !== 'function')
    throw optionError('canary.compare', 'a function', o.compare);
}

const STATUSES: readonly string[] = ['succeeded', 'rolled-back', 'failed'];
const isVersion = (v: unknown) => is.integer(v) && v >= 1;

/** A history line as this library writes it (what restore and rollback read of it, checked). */
function isDeployment(v: unknown): v is Deployment {
  if (!is.object(v)) return false;
  const d = v as Partial<Deployment>;
  return (
    (d.kind === 'deploy' || d.kind === 'rollback') &&
    is.string(d.model) &&
    isVersion(d.to) &&
    STATUSES.includes(d.status as string) &&
    (d.pinned === null || isVersion(d.pinned)) &&
    (d.from === null || isVersion(d.from)) &&
    is.array(d.loaded) &&
    d.loaded.every(isVersion)
  );
}

function unreadableHistory(name: string, file: string, err: unknown): TritonError {
  return tritonError(
    'INVALID_ARG',
    `deployments of '${name}': ${(err as Error).message}; move it away to start a new history (the versions on disk stay)`,
    { model: name },
  );
}

/** A deployment that happened but could not be appended to the history. */
function unrecordedDeployment(entry: Deployment, err: unknown): TritonError {
  return tritonError(
    'INVALID_ARG',
    `deployments of '${entry.model}': ${(err as Error).message}; the ${entry.kind} to version ${entry.to} ended '${entry.status}' (pinned: ${entry.pinned}) but is not in the history: move the file away to start a new history`,
    { model: entry.model },
  );
}

/** @internal A server's pins, live canaries and deployment history. */
export class Deployments {
  readonly #host: DeployHost;
  readonly #pins = new Map<string, number>();
  readonly #canaries = new Map<string, LiveCanary>();
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #gauges = new Map<string, Metric>();
  readonly #counters = new Map<string, Metric>();
  readonly #warned = new Set<string>();
  /** A shared server's owner: each pin change is stored for attached servers, which are told. */
  #publisher: PinsPublisher | undefined;
  /** An attached server: the owner's pins, read at attach and at each of its hints. */
  #follower: PinsFollower | undefined;

  constructor(host: DeployHost) {
    this.#host = host;
  }

  /** The pins as [name, version] pairs: what a shared server's value carries. */
  pinList(): [string, number][] {
    return [...this.#pins];
  }

  /**
   * Owner of a shared server: the pins go to `write` (the addon, where
   * attached servers read them) now and at every change, each followed by a
   * hint on `channel`.
   */
  publishPins(channel: string, write: (pins: string) => number): void {
    if (this.#publisher !== undefined) return;
    this.#publisher = new PinsPublisher(channel, write);
    this.#publisher.publish(this.pinList());
  }

  /**
   * Attached server: the owner's pins (`read`), now and each time the owner
   * says on `channel` that they changed; they reach this thread a message
   * after the owner's. Canaries stay on the owner's thread.
   */
  followPins(channel: string, read: () => [number, string]): void {
    this.#follower = new PinsFollower(channel, read, (pins) => {
      this.#pins.clear();
      for (const [model, version] of pins) this.#pins.set(model, version);
    });
  }

  /** Messages on the owner's pins channel that an attached server ignored (not the owner's). */
  get ignoredPinMessages(): number {
    return this.#follower?.ignored ?? 0;
  }

  /** True while no model has a pin or a canary: requests go to Triton's choice. */
  get idle(): boolean {
    return this.#pins.size === 0 && this.#canaries.size === 0;
  }

  pinned(name: string): number | undefined {
    return this.#pins.get(name);
  }

  /** The version an unversioned stream of `name` goes to (-1: Triton's highest ready). */
  streamVersion(name: string): number {
    return this.#pins.get(name) ?? -1;
  }

  /** Routes an unversioned inference: the pinned version, or a live canary's share. Decided now, at the call. */
  infer(name: string, run: (version: number) => Promise<InferResult>): Promise<InferResult> {
    const pin = this.#pins.get(name) ?? -1;
    const canary = this.#canaries.get(name);
    if (canary === undefined) return run(pin);
    const start = performance.now();
    // An even split, decided by count: the n-th request goes to the canary
    // when it takes the canary's share past the next whole request.
    const seen = canary.seen++;
    const toCanary = Math.floor((seen + 1) * canary.traffic) > Math.floor(seen * canary.traffic);
    if (!toCanary) {
      return run(pin).then((r) => {
        canary.baseline.push(performance.now() - start);
        return r;
      });
    }
    canary.requests++;
    canary.inflight++;
    const settle = () => {
      canary.inflight--;
      if (canary.inflight === 0) canary.drained?.();
    };
    return run(canary.version).then(
      (r) => {
        canary.latencies.push(performance.now() - start);
        settle();
        return r;
      },
      () => {
        canary.errors++;
        settle();
        return run(pin);
      },
    );
  }

  /** Forgets live canaries (the server stops). */
  close(): void {
    for (const c of this.#canaries.values()) c.drained?.();
    this.#canaries.clear();
    this.#publisher?.close();
    this.#follower?.close();
  }

  /** The folder of `name` in the first repository that has it. */
  #modelDir(name: string): string {
    for (const repo of this.#host.repositories) {
      const dir = join(repo, name);
      if (existsSync(join(dir))) return dir;
    }
    throw tritonError(
      'NOT_FOUND',
      `deployments need the model's folder in a repository; no '${name}' in ${this.#host.repositories.join(', ')}`,
      { model: name },
    );
  }

  /**
   * The history of `name`, oldest first ([] when none). A history file that
   * cannot be read (not a regular file, too large) rejects naming it.
   */
  async history(name: string): Promise<Deployment[]> {
    checkDeployModelName(name, 'deployments');
    const file = join(this.#modelDir(name), HISTORY);
    let text: string;
    try {
      text = await readRepositoryFile(file, { noFollow: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw unreadableHistory(name, file, err);
    }
    return this.#parseHistory(file, text);
  }

  /** The entries of a history file; a line that is not one is skipped with a warning naming file:line. */
  #parseHistory(file: string, text: string): Deployment[] {
    const out: Deployment[] = [];
    for (const [i, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        entry = undefined; // a line cut short by a crash while appending, or an edit
      }
      if (isDeployment(entry)) out.push(entry);
      else this.#warnOnce(`${file}:${i + 1}`, 'skipped a line that is not a deployment entry');
    }
    return out;
  }

  /** One warning per place and server (a history is read at every deploy). */
  #warnOnce(where: string, what: string): void {
    if (this.#warned.has(where)) return;
    this.#warned.add(where);
    process.emitWarning(
      `triton-node: ${where}: ${what} (fix or delete it; see "History and restarts" in docs/deploy.md)`,
      'TritonWarning',
    );
  }

  async #record(name: string, entry: Deployment): Promise<void> {
    // Appended without following a link, nor into a FIFO, planted in the
    // model's folder since the history was read (the deploy read it first).
    try {
      await appendRepositoryFile(join(this.#modelDir(name), HISTORY), `${JSON.stringify(entry)}\n`);
    } catch (err) {
      throw unrecordedDeployment(entry, err);
    }
    if (this.#host.stopped) return;
    try {
      const key = `${name}\0${entry.kind}\0${entry.status}`;
      let counter = this.#counters.get(key);
      if (counter === undefined) {
        counter = this.#host.createMetric({
          kind: 'counter',
          name: 'triton_node_deployments_total',
          description: 'Deployments and rollbacks by model, kind and outcome',
          labels: { model: name, kind: entry.kind, outcome: entry.status },
        });
        this.#counters.set(key, counter);
      }
      counter.increment();
    } catch {
      // Metrics are best effort: a library without custom metrics still deploys.
    }
  }

  #setPin(name: string, version: number | null): void {
    if (version === null) this.#pins.delete(name);
    else this.#pins.set(name, version);
    this.#publisher?.publish(this.pinList());
    if (this.#host.stopped) return;
    try {
      let gauge = this.#gauges.get(name);
      if (gauge === undefined) {
        gauge = this.#host.createMetric({
          kind: 'gauge',
          name: 'triton_node_deployment',
          description: 'The model version unversioned requests go to (0: none pinned)',
          labels: { model: name },
        });
        this.#gauges.set(name, gauge);
      }
      gauge.set(version ?? 0);
    } catch {
      // best effort, as above
    }
  }

  /** Runs `work` after the previous deploy or rollback of `name`. */
  #serialized<T>(name: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(name) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.#locks.set(name, tail);
    void tail.then(() => {
      if (this.#locks.get(name) === tail) this.#locks.delete(name);
    });
    return run;
  }

  /** The version folders of a model directory. */
  async #versionFolders(dir: string): Promise<number[]> {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && /^[0-9]+$/.test(e.name))
      .map((e) => Number(e.name))
      .sort((a, b) => a - b);
  }

  /** Writes `files` as version folder `version`: into a hidden staging folder, then one rename. */
  async #writeVersion(
    dir: string,
    version: number,
    files: Record<string, Uint8Array | string>,
  ): Promise<void> {
    const staging = join(dir, `.triton-node-staging-${version}-${randomBytes(6).toString('hex')}`);
    try {
      for (const [path, content] of Object.entries(files)) {
        const file = join(staging, path);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, content);
      }
      // rename() onto an existing non-empty folder fails: a version is never overwritten.
      await rename(staging, join(dir, String(version)));
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
  }

  deploy(name: string, options: DeployOptions): Promise<Deployment> {
    checkDeployModelName(name, 'deploy');
    const o = checkDeployOptions(options);
    if (o.files !== undefined) checkOnnxFiles(name, o.files);
    return this.#serialized(name, () => this.#deploy(name, o));
  }

  async #deploy(name: string, o: DeployOptions): Promise<Deployment> {
    const startedAt = new Date().toISOString();
    const dir = this.#modelDir(name);
    const step = (s: DeploymentStep['step'], version: number, detail?: string) => {
      try {
        o.onStep?.({ model: name, step: s, version, ...(detail === undefined ? {} : { detail }) });
      } catch {
        // A throwing listener does not stop a rollout half-way.
      }
    };
    await this.history(name); // a history that cannot be read stops the deploy before anything changes
    const ready = await this.#host.readyVersions(name);
    const from = this.#pins.get(name) ?? (ready.length > 0 ? Math.max(...ready) : null);
    // Hold unversioned traffic on the serving version from here on.
    if (from !== null) this.#setPin(name, from);
    let to: number;
    if (o.version !== undefined) {
      to = o.version;
      if (!(await this.#versionFolders(dir)).includes(to)) {
        throw tritonError('NOT_FOUND', `deploy: model '${name}' has no version folder ${to} in ${dir}`, {
          model: name,
        });
      }
      if (to === from)
        throw new TypeError(`deploy: version ${to} of '${name}' is already the pinned version`);
    } else {
      const folders = await this.#versionFolders(dir);
      to = Math.max(0, ...folders, ...ready) + 1;
      step('writing', to, join(dir, String(to)));
      await this.#writeVersion(dir, to, o.files!);
    }
    const finish = async (
      status: DeploymentStatus,
      pinned: number | null,
      reason: string | undefined,
      canary?: CanaryReport,
    ): Promise<Deployment> => {
      const entry: Deployment = {
        kind: 'deploy',
        model: name,
        from,
        to,
        status,
        ...(reason === undefined ? {} : { reason }),
        pinned,
        loaded: await this.#host.readyVersions(name).catch(() => []),
        ...(canary === undefined ? {} : { canary }),
        startedAt,
        finishedAt: new Date().toISOString(),
      };
      await this.#record(name, entry);
      step('done', to, status);
      return entry;
    };

    step('loading', to);
    const versions = [...new Set([...ready, to])].sort((a, b) => a - b);
    try {
      await this.#host.loadModel(name, { versions, ...(o.config === undefined ? {} : { config: o.config }) });
    } catch (err) {
      // Triton keeps the versions it served when a reload fails. A folder
      // this deploy wrote goes: it never served, and nothing is left behind.
      if (o.files !== undefined) await rm(join(dir, String(to)), { recursive: true, force: true });
      return finish('failed', from, `version ${to} did not load: ${(err as Error).message}`);
    }

    const verdict = await this.#canary(name, from, to, o.canary, step);
    if (verdict.failure !== undefined) {
      step('rolling-back', to, verdict.failure);
      await this.#unloadVersion(name, to, ready);
      return finish('rolled-back', from, verdict.failure, verdict.report);
    }

    step('switching', to);
    await this.#switchTo(name, from, to, versions, o.keep ?? 1, step);
    return finish('succeeded', to, o.reason, verdict.report);
  }

  /** Pins `to`, then unloads the loaded versions beyond the `keep` most recently pinned before it. */
  async #switchTo(
    name: string,
    from: number | null,
    to: number,
    loaded: number[],
    keep: number,
    step: (s: DeploymentStep['step'], version: number, detail?: string) => void,
  ): Promise<void> {
    this.#setPin(name, to);
    const recent = await this.#recentPins(name, from);
    const kept = new Set([to, ...recent.filter((v) => loaded.includes(v) && v !== to).slice(0, keep)]);
    const unload = loaded.filter((v) => !kept.has(v));
    if (unload.length === 0) return;
    step('unloading', to, unload.join(', '));
    try {
      await this.#host.loadModel(name, { versions: [...kept].sort((a, b) => a - b) });
    } catch {
      // The switch stands; the older versions merely stay loaded.
    }
  }

  /** Versions pinned before, most recent first (`from`, then the history's pins and the versions they replaced). */
  async #recentPins(name: string, from: number | null): Promise<number[]> {
    const out: number[] = from === null ? [] : [from];
    const history = await this.history(name).catch(() => []);
    // Each entry's pin, then the one it replaced (the first deploy's `from`
    // was pinned by a plain load, which the history does not hold).
    for (let i = history.length - 1; i >= 0; i--) {
      for (const p of [history[i]!.pinned, history[i]!.from]) if (p !== null && !out.includes(p)) out.push(p);
    }
    return out;
  }

  /** Unloads `version` (after the canary failed), keeping `others` loaded. */
  async #unloadVersion(name: string, version: number, others: number[]): Promise<void> {
    const rest = others.filter((v) => v !== version);
    try {
      if (rest.length > 0) await this.#host.loadModel(name, { versions: rest });
      else await this.#host.unloadModel(name);
    } catch {
      // Not pinned, it serves no unversioned request; it stays loaded.
    }
  }

  /** Runs the canary; `failure` says why it failed. */
  async #canary(
    name: string,
    from: number | null,
    to: number,
    options: CanaryOptions | undefined,
    step: (s: DeploymentStep['step'], version: number, detail?: string) => void,
  ): Promise<{ failure?: string; report?: CanaryReport }> {
    if (options === undefined) return {};
    step('canary', to);
    const report: CanaryReport = {
      requests: 0,
      requestErrors: 0,
      mismatches: 0,
      liveRequests: 0,
      liveErrors: 0,
      errorRate: 0,
    };
    let failure: string | undefined;
    for (const request of options.requests ?? []) {
      report.requests++;
      let fresh: InferResult;
      try {
        fresh = await this.#host.inferAt(name, to, request);
      } catch (err) {
        report.requestErrors++;
        failure ??= `canary request ${report.requests} failed on version ${to}: ${(err as Error).message}`;
        continue;
      }
      if (options.compare !== undefined && from !== null) {
        let old: InferResult | undefined;
        try {
          old = await this.#host.inferAt(name, from, request);
          const same = await options.compare(old.outputs, fresh.outputs, request);
          if (!same) {
            report.mismatches++;
            failure ??= `canary request ${report.requests}: compare() refused the outputs of version ${to} against version ${from}`;
          }
        } catch (err) {
          report.mismatches++;
          failure ??= `canary request ${report.requests}: comparing with version ${from} failed: ${(err as Error).message}`;
        } finally {
          old?.dispose();
        }
      }
      fresh.dispose();
    }
    const traffic = options.traffic ?? 0;
    if (failure === undefined && traffic > 0) {
      const live: LiveCanary = {
        version: to,
        traffic,
        seen: 0,
        inflight: 0,
        drained: undefined,
        latencies: [],
        baseline: [],
        requests: 0,
        errors: 0,
      };
      this.#canaries.set(name, live);
      await new Promise((r) => setTimeout(r, options.durationMs ?? 5000));
      // Stop routing, then let the canary's requests finish before judging (and before any unload).
      this.#canaries.delete(name);
      if (live.inflight > 0) {
        await new Promise<void>((resolve) => {
          live.drained = resolve;
        });
      }
      report.liveRequests = live.requests;
      report.liveErrors = live.errors;
      report.errorRate = live.requests === 0 ? 0 : live.errors / live.requests;
      const mine = p99(live.latencies);
      const theirs = p99(live.baseline);
      if (mine !== undefined) report.p99Ms = mine;
      if (theirs !== undefined) report.baselineP99Ms = theirs;
      if (mine !== undefined && theirs !== undefined && theirs > 0) report.latencyRatio = mine / theirs;
      const maxErrorRate = options.maxErrorRate ?? 0;
      if (report.errorRate > maxErrorRate) {
        failure = `error rate ${report.errorRate.toFixed(3)} on live traffic over maxErrorRate ${maxErrorRate}`;
      } else if (options.maxLatencyRatio !== undefined) {
        const min = options.minRequests ?? 20;
        if (live.latencies.length < min || live.baseline.length < min) {
          failure = `too few live requests to judge latency (${live.latencies.length} on version ${to}, ${live.baseline.length} on the pinned version; minRequests ${min})`;
        } else if ((report.latencyRatio ?? 0) > options.maxLatencyRatio) {
          failure = `p99 latency ratio ${report.latencyRatio!.toFixed(2)} over maxLatencyRatio ${options.maxLatencyRatio}`;
        }
      }
    }
    return failure === undefined ? { report } : { failure, report };
  }

  rollback(name: string, options: RollbackOptions): Promise<Deployment> {
    checkDeployModelName(name, 'rollback');
    if (!is.object(options)) throw optionError('rollback options', 'an object', options);
    for (const key of Object.keys(options)) {
      if (key !== 'to' && key !== 'reason')
        throw new TypeError(`Unknown option '${key}' for rollback (known: to, reason)`);
    }
    if (options.to !== undefined && (!is.integer(options.to) || options.to < 1)) {
      throw optionError('rollback to', 'a version number >= 1', options.to);
    }
    if (options.reason !== undefined && !is.string(options.reason)) {
      throw optionError('rollback reason', 'a string', options.reason);
    }
    return this.#serialized(name, () => this.#rollback(name, options));
  }

  async #rollback(name: string, options: RollbackOptions): Promise<Deployment> {
    const startedAt = new Date().toISOString();
    const dir = this.#modelDir(name);
    await this.history(name); // as in deploy: an unreadable history stops it first
    const ready = await this.#host.readyVersions(name);
    const from = this.#pins.get(name) ?? (ready.length > 0 ? Math.max(...ready) : null);
    let to = options.to;
    if (to === undefined) {
      const earlier = (await this.#recentPins(name, null)).filter((v) => v !== from);
      to = earlier[0];
      if (to === undefined) {
        throw tritonError(
          'NOT_FOUND',
          `rollback: model '${name}' has no earlier pinned version to go back to`,
          {
            model: name,
          },
        );
      }
    }
    if (!ready.includes(to)) {
      if (!(await this.#versionFolders(dir)).includes(to)) {
        throw tritonError('NOT_FOUND', `rollback: model '${name}' has no version folder ${to} in ${dir}`, {
          model: name,
        });
      }
      await this.#host.loadModel(name, { versions: [...new Set([...ready, to])].sort((a, b) => a - b) });
    }
    this.#setPin(name, to);
    const entry: Deployment = {
      kind: 'rollback',
      model: name,
      from,
      to,
      status: 'succeeded',
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      pinned: to,
      loaded: await this.#host.readyVersions(name).catch(() => []),
      startedAt,
      finishedAt: new Date().toISOString(),
    };
    await this.#record(name, entry);
    return entry;
  }

  /**
   * Before `loadModel(name)` without versions: the versions the history says
   * were loaded and the pin, when the model has a history and those folders
   * exist. Undefined: load as Triton would.
   */
  restore(name: string): { versions: number[]; pinned: number } | undefined {
    // Synchronous (a small file, read only where it exists): a load starts
    // in the same turn as the call, as without a history.
    // A name that is not one folder name has no history of ours (deploy refuses it).
    if (badSegment(name)) return undefined;
    let file: string;
    try {
      file = join(this.#modelDir(name), HISTORY);
    } catch {
      return undefined;
    }
    if (!existsSync(file)) return undefined;
    let text: string;
    try {
      text = readRepositoryFileSync(file, { noFollow: true });
    } catch (err) {
      // The model still loads, as Triton would load it; deploy() says the same as an error.
      this.#warnOnce(file, `the deployment history was not read: ${(err as Error).message}`);
      return undefined;
    }
    const last = this.#parseHistory(file, text).at(-1);
    if (last === undefined || last.pinned === null) return undefined;
    const dir = this.#modelDir(name);
    const folders = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^[0-9]+$/.test(e.name))
      .map((e) => Number(e.name));
    if (!folders.includes(last.pinned)) return undefined;
    const versions = [...new Set([last.pinned, ...last.loaded.filter((v) => folders.includes(v))])].sort(
      (a, b) => a - b,
    );
    return { versions, pinned: last.pinned };
  }

  /** Pins `version` (a restore at load). */
  pin(name: string, version: number): void {
    this.#setPin(name, version);
  }
}
