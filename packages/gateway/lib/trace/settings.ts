/**
 * The trace extension's settings, as tritonserver r25.07 keeps them
 * (src/tracer.cc TraceManager): one global setting and one per model; a
 * model's setting keeps the fields it specified and follows the global
 * setting for the others; clearing every field of a model's setting drops
 * it. A setting samples requests (one in `rate`, `count` of them, -1 for no
 * limit), and in the `triton` mode writes the sampled traces to its file as
 * tritonserver's trace file has them (JSON).
 */
import type { InferRequest, InferTiming, TimingTrace } from 'triton-node';
import { TraceFile } from './file.js';

export type TraceMode = 'triton' | 'opentelemetry';

/** The gateway's `trace` option: the global setting it starts with (tritonserver's `--trace-config`). */
export interface TraceOptions {
  /** 'OFF' or any of 'TIMESTAMPS' and 'TENSORS' (default 'OFF'). TENSORS traces record timestamps only. */
  level?: 'OFF' | ('TIMESTAMPS' | 'TENSORS')[];
  /** One request traced in `rate` (default 1000). */
  rate?: number;
  /** How many more requests to trace; -1: no limit (default). */
  count?: number;
  /** `triton` mode: write every `logFrequency` traces to `<file>.<n>`; 0 (default): to `file` at close. */
  logFrequency?: number;
  /** `triton` mode: the trace file (default none: nothing is traced until one is set). */
  file?: string;
  /** 'triton' (default): a JSON file; 'opentelemetry': spans through the application's OpenTelemetry SDK. */
  mode?: TraceMode;
}

/** The `trace` option, or a TypeError naming what is wrong in it (tritonserver refuses these at start). */
export function checkTraceOptions(o: TraceOptions): TraceOptions {
  const fail = (name: string, expected: string, got: unknown) =>
    new TypeError(
      `Expected ${expected} for ${name === '' ? 'trace' : `trace.${name}`} but received ${JSON.stringify(got) ?? String(got)}`,
    );
  if (typeof o !== 'object' || o === null) throw fail('', 'an object', o);
  const { level, mode } = o;
  if (
    level !== undefined &&
    level !== 'OFF' &&
    !(Array.isArray(level) && level.every((l) => l === 'TIMESTAMPS' || l === 'TENSORS'))
  )
    throw fail('level', "'OFF' or an array of 'TIMESTAMPS' and 'TENSORS'", level);
  const whole = (name: 'rate' | 'count' | 'logFrequency', min: number) => {
    const v = o[name];
    if (v !== undefined && !(Number.isInteger(v) && v >= min && v <= 2 ** 31 - 1))
      throw fail(name, `an integer from ${min} to ${2 ** 31 - 1}`, v);
  };
  whole('rate', 0);
  whole('count', -1);
  whole('logFrequency', 0);
  if (o.file !== undefined && typeof o.file !== 'string') throw fail('file', 'a path', o.file);
  if (mode !== undefined && mode !== 'triton' && mode !== 'opentelemetry')
    throw fail('mode', "'triton' or 'opentelemetry'", mode);
  return o;
}

const LEVEL_TIMESTAMPS = 4;
const LEVEL_TENSORS = 8;

interface Fields {
  level: number;
  rate: number;
  count: number;
  logFrequency: number;
  file: string;
}

type Field = keyof Fields;
const FIELDS: Field[] = ['level', 'rate', 'count', 'logFrequency', 'file'];

/** A settings update: a value sets a field, null clears it (it follows the global setting again). */
export type TraceUpdate = Partial<Record<Exclude<Field, 'file'>, number | null>>;

/** The settings as the protocol answers them (all values strings, the level a list). */
export type TraceSettingsDocument = Record<string, string | string[]>;

/** Thrown for a setting tritonserver refuses: `code` its Triton error code. */
export class TraceSettingError extends Error {
  constructor(
    readonly code: 'INVALID_ARG' | 'UNSUPPORTED' | 'INTERNAL',
    message: string,
  ) {
    super(message);
  }
}

/** One setting: its values, which of them it specified itself, and its sampling state. */
class Setting {
  sampled = 0;
  collected = 0;
  inStream = 0;
  stream: string[] = [];
  /** Replaced by an update or closed: a trace that ends later is written at once. */
  retired = false;
  constructor(
    readonly values: Fields,
    readonly specified: ReadonlySet<Field>,
    readonly mode: TraceMode,
    readonly file: TraceFile | undefined,
  ) {}

  /** Why it traces nothing (undefined: it is valid). */
  get invalid(): string | undefined {
    if (this.values.level === 0) return 'tracing is disabled';
    if (this.values.rate === 0) return 'sample rate must be non-zero';
    if (this.mode === 'triton' && this.values.file === '') return 'trace file name is not given';
    return undefined;
  }

  /** Whether the next request is traced (tritonserver's TraceSetting::SampleTrace). */
  sample(force: boolean): boolean {
    let hit = false;
    if (this.values.rate !== 0) {
      if (this.invalid !== undefined && !force) return false;
      hit = ++this.sampled % this.values.rate === 0;
      if (hit && this.values.count > 0) this.values.count--;
      else if (hit && this.values.count === 0) hit = false;
    }
    return hit || force;
  }

  /** Keeps a traced request's records; writes them out as tritonserver does (WriteTrace). */
  write(records: string): void {
    this.stream.push(records);
    this.inStream++;
    this.collected++;
    const f = this.values.logFrequency;
    if (this.retired) this.retire();
    else if (
      (this.values.count === 0 && this.collected === this.sampled) ||
      (f !== 0 && this.inStream >= f)
    ) {
      this.#flush(true);
    }
  }

  /** Writes what it kept (a setting replaced or closed: tritonserver's ~TraceSetting). */
  retire(): void {
    this.retired = true;
    if (this.inStream !== 0) this.#flush(this.values.logFrequency !== 0);
  }

  #flush(toIndexFile: boolean): void {
    const text = this.stream.join(',');
    this.stream = [];
    this.inStream = 0;
    this.file?.save(text, toIndexFile);
  }
}

/** The records tritonserver's trace file has for one trace (TraceManager::TraceActivity). */
const ACTIVITY_NAMES: [keyof TimingTrace['timestampsNs'], string][] = [
  ['requestStartNs', 'REQUEST_START'],
  ['queueStartNs', 'QUEUE_START'],
  ['computeStartNs', 'COMPUTE_START'],
  ['computeInputEndNs', 'COMPUTE_INPUT_END'],
  ['computeOutputStartNs', 'COMPUTE_OUTPUT_START'],
  ['computeEndNs', 'COMPUTE_END'],
  ['requestEndNs', 'REQUEST_END'],
];

export function traceRecords(t: TimingTrace, requestId: string | undefined): string {
  const head: Record<string, unknown> = { id: t.id, model_name: t.model, model_version: t.version };
  if (requestId !== undefined && requestId !== '') head.request_id = requestId;
  if (t.parentId !== 0) head.parent_id = t.parentId;
  const out = [JSON.stringify(head)];
  for (const [key, name] of ACTIVITY_NAMES) {
    const ns = t.timestampsBigNs[key];
    if (ns !== 0n) out.push(`{"id":${t.id},"timestamps":[{"name":"${name}","ns":${ns}}]}`);
  }
  return out.join(',');
}

/** A sampled request: what to ask of the library, and what to do with its timing. */
export interface TracedRequest {
  /** Sets `timing` (and `trace` in the opentelemetry mode) on the request. */
  prepare(request: InferRequest): void;
  /** Records the request's traces (the triton mode's file). */
  done(timing: InferTiming | undefined, requestId: string | undefined): void;
}

export class TraceSettings {
  readonly #mode: TraceMode;
  readonly #default: Setting;
  #global: Setting;
  readonly #models = new Map<string, Setting>();
  /** Models whose setting follows the global one for some field. */
  readonly #following = new Set<string>();
  readonly #files = new Map<string, TraceFile>();

  constructor(options: TraceOptions = {}) {
    this.#mode = options.mode ?? 'triton';
    const levels = options.level === undefined || options.level === 'OFF' ? [] : options.level;
    const values: Fields = {
      level: levels.reduce((l, s) => l | (s === 'TIMESTAMPS' ? LEVEL_TIMESTAMPS : LEVEL_TENSORS), 0),
      rate: options.rate ?? 1000,
      count: options.count ?? -1,
      logFrequency: options.logFrequency ?? 0,
      file: options.file ?? '',
    };
    this.#default = new Setting({ ...values }, new Set(), this.#mode, this.#fileOf(values.file));
    this.#global = new Setting({ ...values }, new Set(), this.#mode, this.#fileOf(values.file));
  }

  get mode(): TraceMode {
    return this.#mode;
  }

  #fileOf(name: string): TraceFile | undefined {
    if (name === '' || this.#mode !== 'triton') return undefined;
    let f = this.#files.get(name);
    if (f === undefined) {
      f = new TraceFile(name);
      this.#files.set(name, f);
    }
    return f;
  }

  /** The setting a model's requests use. */
  #settingOf(model: string): Setting {
    return this.#models.get(model) ?? this.#global;
  }

  /** Updates the global setting (`model` ''), or a model's (TraceManager::UpdateTraceSetting). */
  update(model: string, update: TraceUpdate): void {
    this.#updateOne(model, update);
    if (model === '') for (const name of [...this.#following]) this.#updateOne(name, {});
  }

  #updateOne(model: string, update: TraceUpdate): void {
    const current = model === '' ? this.#global : this.#models.get(model);
    const fallback = model === '' ? this.#default : this.#global;
    const values: Fields = { ...fallback.values };
    const specified = new Set<Field>();
    for (const field of FIELDS) {
      const given = field === 'file' ? undefined : update[field];
      if (given === null) continue;
      if (given !== undefined) {
        values[field] = given as never;
        specified.add(field);
      } else if (current?.specified.has(field)) {
        values[field] = current.values[field] as never;
        specified.add(field);
      }
    }
    if (model !== '') {
      if (specified.size === FIELDS.length) this.#following.delete(model);
      else if (specified.size === 0) {
        this.#following.delete(model);
        current?.retire();
        this.#models.delete(model);
        return;
      } else this.#following.add(model);
    }
    const next = new Setting(values, specified, this.#mode, this.#fileOf(values.file));
    const reason = next.invalid;
    if (reason !== undefined && values.level !== 0) {
      throw new TraceSettingError('INVALID_ARG', `Attempting to set invalid trace setting :${reason}`);
    }
    current?.retire();
    if (model === '') this.#global = next;
    else this.#models.set(model, next);
  }

  /** The settings of `model` ('' for the global ones) as the protocol answers them. */
  document(model: string): TraceSettingsDocument {
    const { values } = this.#settingOf(model);
    const level: string[] = [];
    if (values.level === 0) level.push('OFF');
    else {
      if (values.level & LEVEL_TIMESTAMPS) level.push('TIMESTAMPS');
      if (values.level & LEVEL_TENSORS) level.push('TENSORS');
    }
    const doc: TraceSettingsDocument = {
      trace_level: level,
      trace_rate: String(values.rate),
      trace_count: String(values.count),
    };
    if (this.#mode === 'triton') {
      doc.log_frequency = String(values.logFrequency);
      doc.trace_file = values.file;
    }
    doc.trace_mode = this.#mode;
    return doc;
  }

  /**
   * Whether a request to `model` is traced, and how (undefined: not traced).
   * A valid `traceparent` forces it in the opentelemetry mode when tracing
   * is on, as tritonserver's GetTraceStartOptions does.
   */
  sample(model: string, traceparent: string | undefined): TracedRequest | undefined {
    const setting = this.#settingOf(model);
    const force = traceparent !== undefined && setting.values.level !== 0 && this.#mode === 'opentelemetry';
    if (!setting.sample(force)) return undefined;
    if (this.#mode === 'opentelemetry') {
      return {
        prepare: (r) => {
          r.timing = true;
          r.trace = force ? traceparent! : true;
        },
        done: () => {},
      };
    }
    return {
      prepare: (r) => {
        r.timing = true;
      },
      done: (timing, requestId) => {
        if (timing === undefined || !(setting.values.level & LEVEL_TIMESTAMPS)) return;
        setting.write(timing.traces.map((t) => traceRecords(t, requestId)).join(','));
      },
    };
  }

  /** Writes what every setting kept and ends the files (tritonserver at exit). */
  async close(): Promise<void> {
    this.#global.retire();
    for (const s of this.#models.values()) s.retire();
    await Promise.all([...this.#files.values()].map((f) => f.close()));
  }
}
