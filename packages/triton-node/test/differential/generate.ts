/**
 * Differential testing of the fake engine against a real Triton (issue 11).
 *
 * `generateCases(seed, count)` makes seeded inference requests for the test
 * models (test/models), valid and invalid: datatypes, shapes (batch 0, -1 and
 * other negative dimensions, wrong ranks and fixed dimensions), byte sizes,
 * missing, extra and unknown inputs and outputs, BYTES framing, parameters,
 * ids, correlation ids, priorities, timeouts, flags, versions.
 * `runCases()` submits them through the addon's raw `submit()` (no
 * TypeScript validation: they reach the library as they are) one at a time,
 * and records each outcome: the submission's error, or every response
 * (output names, datatypes, shapes, a hash of the bytes, parameters) and the
 * error a response carried.
 *
 * Recording the real library's outcomes (a fixture the fake must reproduce,
 * test/request/differential.test.ts):
 *
 *   TRITON_SERVER_LIB=/path/to/libtritonserver.so TRITON_BACKEND_DIR=/path/to/backends \
 *     npx tsx test/differential/generate.ts record test/fixtures/real-triton-<release>/outcomes.json
 *
 * (one folder per release: real-triton-r25.07, real-triton-r26.06).
 *
 * `npx tsx test/differential/generate.ts compare <fixture>` runs the cases on
 * the library under test (the fake when TRITON_SERVER_LIB is unset) and
 * prints every difference.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  NATIVE_DATATYPE_CODES,
  NATIVE_PARAMETER_CODES,
  type NativeEvent,
  type NativeServer,
  type NativeServerOptions,
  type NativeSubmitArg,
  SUBMIT_SLOTS,
} from '../../lib/abi/binding.js';
import { addon, loadLibrary } from '../../lib/addon/load.js';
import { provenRelease } from '../../lib/api/releases.js';
import { DATATYPES } from '../../lib/config/datatypes.js';

/** Bump when the generator changes what it makes: the fixture must then be recorded again. */
export const GENERATOR_VERSION = 1;
export const DEFAULT_SEED = 20261201;
export const DEFAULT_COUNT = 3000;

const MODELS_DIR = fileURLToPath(new URL('../../../test-support/models', import.meta.url));

type DataType = keyof typeof NATIVE_DATATYPE_CODES;
type ParamType = keyof typeof NATIVE_PARAMETER_CODES;

interface Io {
  name: string;
  datatype: DataType;
  dims: number[];
  optional?: boolean;
}

interface ModelInfo {
  name: string;
  maxBatch: number;
  decoupled?: boolean;
  inputs: Io[];
  outputs: Io[];
}

const io = (name: string, datatype: DataType, dims: number[], optional = false): Io => ({
  name,
  datatype,
  dims,
  optional,
});

const ALL_TYPES: readonly DataType[] = DATATYPES;

/** The test models the cases use (their configs are in test/models). */
export const MODELS: ModelInfo[] = [
  {
    name: 'identity_fp32',
    maxBatch: 8,
    inputs: [io('INPUT0', 'FP32', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1])],
  },
  {
    name: 'identity_nobatch',
    maxBatch: 0,
    inputs: [io('INPUT0', 'FP32', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1])],
  },
  {
    name: 'identity_fixed',
    maxBatch: 4,
    inputs: [io('INPUT0', 'INT32', [2, 3])],
    outputs: [io('OUTPUT0', 'INT32', [2, 3])],
  },
  {
    name: 'identity_bytes',
    maxBatch: 0,
    inputs: [io('INPUT0', 'BYTES', [-1])],
    outputs: [io('OUTPUT0', 'BYTES', [-1])],
  },
  {
    name: 'identity_multi',
    maxBatch: 0,
    inputs: [io('INPUT0', 'FP32', [-1]), io('INPUT1', 'INT32', [-1]), io('INPUT2', 'BYTES', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1]), io('OUTPUT1', 'INT32', [-1]), io('OUTPUT2', 'BYTES', [-1])],
  },
  {
    name: 'identity_optional',
    maxBatch: 0,
    inputs: [io('INPUT0', 'FP32', [-1]), io('INPUT1', 'FP32', [-1], true)],
    outputs: [io('OUTPUT0', 'FP32', [-1]), io('OUTPUT1', 'FP32', [-1])],
  },
  {
    name: 'identity_all_types',
    maxBatch: 0,
    inputs: ALL_TYPES.map((t, i) => io(`INPUT${i}`, t, [-1])),
    outputs: ALL_TYPES.map((t, i) => io(`OUTPUT${i}`, t, [-1])),
  },
  {
    name: 'two_versions',
    maxBatch: 8,
    inputs: [io('INPUT0', 'FP32', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1])],
  },
  {
    name: 'repeat_int32',
    maxBatch: 0,
    decoupled: true,
    inputs: [io('IN', 'INT32', [-1]), io('DELAY', 'UINT32', [-1]), io('WAIT', 'UINT32', [1])],
    outputs: [io('OUT', 'INT32', [1]), io('IDX', 'UINT32', [1])],
  },
  {
    name: 'square_int32',
    maxBatch: 0,
    decoupled: true,
    inputs: [io('IN', 'INT32', [1])],
    outputs: [io('OUT', 'INT32', [1])],
  },
];

const ELEMENT_SIZE: Record<DataType, number> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BYTES: 0,
  BF16: 2,
};

export interface CaseInput {
  name: string;
  datatype: DataType;
  shape: number[];
  /** The bytes appended (as they are: they may not match the shape). */
  data: Uint8Array;
}

export interface Case {
  /** What the generator meant to exercise (for reading a difference). */
  kind: string;
  model: string;
  version: number;
  id?: string;
  correlationId?: number | bigint | string;
  priority?: number;
  timeoutMicroseconds?: number;
  flags?: number;
  inputs: CaseInput[];
  outputs?: string[];
  parameters?: Array<[string, ParamType, string | number | boolean]>;
}

/** A seeded PRNG (mulberry32): the same seed gives the same cases everywhere. */
class Random {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)]!;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }
}

function elements(shape: number[]): number {
  return shape.reduce((p, d) => p * Math.max(d, 0), 1);
}

/** BYTES data: a 4-byte little-endian length per element, then its bytes. */
function bytesData(r: Random, count: number): Uint8Array {
  const parts: number[] = [];
  for (let i = 0; i < count; i++) {
    const len = r.pick([0, 1, 3, 5, 8]);
    parts.push(len & 0xff, (len >> 8) & 0xff, 0, 0);
    for (let j = 0; j < len; j++) parts.push(r.int(0x20, 0x7e));
  }
  return Uint8Array.from(parts);
}

/**
 * Data of the right size for `shape` (BYTES: `count` well-formed elements).
 * For the decoupled models every 4-byte word is a small number: their inputs
 * are counts and milliseconds (random ones would stream or sleep forever).
 */
function dataFor(r: Random, datatype: DataType, shape: number[], model?: string): Uint8Array {
  const n = elements(shape);
  if (datatype === 'BYTES') return bytesData(r, n);
  const out = r.bytes(n * ELEMENT_SIZE[datatype]);
  if (model === 'repeat_int32' || model === 'square_int32') {
    out.fill(0);
    for (let i = 0; i < out.length; i += 4) out[i] = r.int(0, 3);
  }
  return out;
}

/** A valid shape for an input of `model`, with batch size `batch` on batching models. */
function validShape(r: Random, model: ModelInfo, input: Io, batch: number): number[] {
  const dims = input.dims.map((d) => (d === -1 ? r.int(0, 4) : d));
  return model.maxBatch > 0 ? [batch, ...dims] : dims;
}

const IDS = [undefined, undefined, '', 'r1', 'req-7'];
const STRING_IDS = ['abc', 'session-1', 'x'.repeat(128), 'y'.repeat(129)];

function validRequest(r: Random, model: ModelInfo, kind: string): Case {
  const batch = model.maxBatch > 0 ? r.int(1, model.maxBatch) : 0;
  const c: Case = { kind, model: model.name, version: -1, inputs: [] };
  for (const input of model.inputs) {
    if (input.optional && r.chance(0.5)) continue;
    let shape = validShape(r, model, input, batch);
    let data = dataFor(r, input.datatype, shape, model.name);
    if (model.name === 'repeat_int32') {
      if (input.name === 'WAIT') data = new Uint8Array(4);
      if (input.name === 'DELAY') {
        const inShape = c.inputs.find((x) => x.name === 'IN')!.shape;
        shape = [...inShape];
        data = new Uint8Array(elements(shape) * 4);
      }
    }
    if (model.name === 'square_int32') {
      // A negative count makes real square send responses forever.
      data = Uint8Array.from([r.int(0, 3), 0, 0, 0]);
    }
    c.inputs.push({ name: input.name, datatype: input.datatype, shape, data });
  }
  return c;
}

/** Extras every kind of case may carry: id, correlation id, priority, parameters... */
function decorate(r: Random, c: Case): void {
  const id = r.pick(IDS);
  if (id !== undefined) c.id = id;
  if (r.chance(0.15)) c.correlationId = r.pick([0, 7, 2n ** 64n - 1n, ...STRING_IDS]);
  if (r.chance(0.15)) c.priority = r.int(0, 5);
  if (r.chance(0.1)) c.timeoutMicroseconds = r.pick([0, 1, 1000, 10_000_000]);
  if (r.chance(0.1)) c.flags = r.int(0, 3);
  if (r.chance(0.2)) {
    c.parameters = [];
    const n = r.int(1, 3);
    for (let i = 0; i < n; i++) {
      const type = r.pick(['string', 'int', 'double', 'bool'] as const);
      const value =
        type === 'string'
          ? r.pick(['', 'a', 'x y'])
          : type === 'bool'
            ? r.chance(0.5)
            : r.int(-5, 5) + 0.5 * +(type === 'double');
      c.parameters.push([`p${i}`, type, value]);
    }
  }
  if (r.chance(0.25)) {
    const model = MODELS.find((m) => m.name === c.model);
    const names = model ? model.outputs.map((o) => o.name) : ['OUTPUT0'];
    const out: string[] = [];
    const n = r.int(1, Math.min(3, names.length));
    for (let i = 0; i < n; i++) out.push(r.pick(names));
    if (r.chance(0.1)) out.push(r.pick(['OUTPUT9', 'out', 'OUTPUT00']));
    c.outputs = out;
  }
}

/** The kinds of request, with a weight each. */
const KINDS: Array<[string, number, (r: Random) => Case]> = [
  ['valid', 30, (r) => validRequest(r, r.pick(MODELS), 'valid')],
  [
    'datatype',
    6,
    (r) => {
      const m = r.pick(MODELS);
      const c = validRequest(r, m, 'datatype');
      const x = r.pick(c.inputs);
      x.datatype = r.pick(ALL_TYPES.filter((t) => t !== x.datatype));
      if (r.chance(0.5)) x.data = dataFor(r, x.datatype, x.shape, m.name);
      return c;
    },
  ],
  [
    'rank',
    5,
    (r) => {
      const m = r.pick(MODELS);
      const c = validRequest(r, m, 'rank');
      const x = r.pick(c.inputs);
      x.shape = r.chance(0.5) ? [...x.shape, r.int(1, 2)] : x.shape.slice(1);
      x.data = dataFor(r, x.datatype, x.shape, m.name);
      return c;
    },
  ],
  [
    'dims',
    6,
    (r) => {
      const m = r.pick(MODELS);
      const c = validRequest(r, m, 'dims');
      const x = r.pick(c.inputs);
      if (x.shape.length === 0) x.shape = [r.int(-2, 3)];
      const i = r.int(0, x.shape.length - 1);
      x.shape[i] = r.pick([-1, -2, -3, 0, 1, 2, 3, 5, 9]);
      if (r.chance(0.5)) x.data = dataFor(r, x.datatype, x.shape, m.name);
      return c;
    },
  ],
  [
    'bytesize',
    6,
    (r) => {
      const m = r.pick(MODELS);
      const c = validRequest(r, m, 'bytesize');
      const x = r.pick(c.inputs);
      const n = x.data.length;
      const size = Math.max(0, n + r.pick([-8, -4, -1, 1, 4, 8]));
      x.data = size <= n ? x.data.slice(0, size) : Uint8Array.from([...x.data, ...new Uint8Array(size - n)]);
      return c;
    },
  ],
  [
    'batch',
    6,
    (r) => {
      const m = r.pick(MODELS.filter((x) => x.maxBatch > 0));
      const c = validRequest(r, m, 'batch');
      const x = c.inputs[0]!;
      const b = r.pick([0, 0, m.maxBatch + 1, m.maxBatch + 5, -1]);
      x.shape[0] = b;
      if (b === 0 && r.chance(0.5)) {
        for (let i = 1; i < x.shape.length; i++)
          if (m.inputs[0]!.dims[i - 1] === -1) x.shape[i] = r.int(0, 1);
      }
      x.data = r.chance(0.6) ? new Uint8Array(0) : dataFor(r, x.datatype, x.shape.slice(1));
      return c;
    },
  ],
  [
    'missing',
    5,
    (r) => {
      const m = r.pick(MODELS.filter((x) => x.inputs.length > 1));
      const c = validRequest(r, m, 'missing');
      const drop = r.int(1, Math.max(1, c.inputs.length - 1));
      for (let i = 0; i < drop && c.inputs.length > 0; i++) c.inputs.splice(r.int(0, c.inputs.length - 1), 1);
      return c;
    },
  ],
  [
    'extra',
    5,
    (r) => {
      const m = r.pick(MODELS);
      const c = validRequest(r, m, 'extra');
      const name = r.pick(['INPUT9', 'EXTRA', 'INPUT1', 'IN2', 'input0']);
      if (c.inputs.some((x) => x.name === name)) return c;
      const extra: CaseInput = { name, datatype: 'FP32', shape: [1], data: new Uint8Array(4) };
      if (r.chance(0.5) && c.inputs.length > 0) c.inputs[r.int(0, c.inputs.length - 1)] = extra;
      else c.inputs.splice(r.int(0, c.inputs.length), 0, extra);
      return c;
    },
  ],
  [
    'bytes-framing',
    5,
    (r) => {
      const m = r.pick(MODELS.filter((x) => x.inputs.some((i) => i.datatype === 'BYTES')));
      const c = validRequest(r, m, 'bytes-framing');
      const x = c.inputs.find((i) => i.datatype === 'BYTES')!;
      const n = x.data.length;
      const how = r.int(0, 4);
      if (how === 0) x.data = Uint8Array.from([...x.data, 1, 0]);
      else if (how === 1 && n > 0) x.data = x.data.slice(0, n - 1);
      else if (how === 2) x.data = Uint8Array.from([...x.data, 9, 0, 0, 0, 65]);
      else if (how === 3 && n >= 4) x.data = Uint8Array.from([200, 0, 0, 0, ...x.data.slice(4)]);
      else x.data = bytesData(r, elements(x.shape) + 1);
      return c;
    },
  ],
  [
    'version',
    3,
    (r) => {
      const m = r.pick(MODELS.filter((x) => x.name === 'two_versions' || x.name === 'identity_fp32'));
      const c = validRequest(r, m, 'version');
      c.version = r.pick([1, 2, 3]);
      return c;
    },
  ],
  [
    'unknown-model',
    1,
    (r) => {
      const c = validRequest(r, MODELS[0]!, 'unknown-model');
      c.model = r.pick(['no_such_model', 'bad_config', 'identity_delay']);
      return c;
    },
  ],
  [
    'decoupled',
    5,
    (r) => {
      const m = r.pick(MODELS.filter((x) => x.decoupled));
      const c = validRequest(r, m, 'decoupled');
      if (m.name === 'repeat_int32' && r.chance(0.4)) {
        const delay = c.inputs.find((x) => x.name === 'DELAY')!;
        delay.shape = [elements(delay.shape) + 1];
        delay.data = new Uint8Array(delay.shape[0]! * 4);
      }
      return c;
    },
  ],
];

/** `count` seeded cases; the same seed and count give the same cases. */
export function generateCases(seed = DEFAULT_SEED, count = DEFAULT_COUNT): Case[] {
  const r = new Random(seed);
  const total = KINDS.reduce((s, k) => s + k[1], 0);
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    let pick = r.next() * total;
    let kind = KINDS[0]!;
    for (const k of KINDS) {
      pick -= k[1];
      if (pick < 0) {
        kind = k;
        break;
      }
    }
    const c = kind[2](r);
    decorate(r, c);
    cases.push(c);
  }
  return cases;
}

/** A digest of the cases, so a fixture recorded from other cases is noticed. */
export function casesDigest(cases: Case[]): string {
  const h = createHash('sha256');
  for (const c of cases) {
    h.update(
      JSON.stringify(c, (_k, v) =>
        typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
      ),
    );
  }
  return h.digest('hex').slice(0, 16);
}

/** One response: its parameters (as JSON), outputs [name, datatype, shape, hash of the bytes], and error. */
export interface ResponseOutcome {
  parameters: string;
  outputs: Array<[string, string, string, string]>;
  code?: string;
  message?: string;
}

/**
 * What came back: the submission failed (`at: 'submit'`, with the error the
 * addon threw), or the responses that arrived until the final one.
 */
export interface Outcome {
  at: 'submit' | 'responses';
  code?: string;
  message?: string;
  responses?: ResponseOutcome[];
}

function hashBytes(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex').slice(0, 12);
}

function responseOutcome(ev: NativeEvent): ResponseOutcome {
  const outputs: ResponseOutcome['outputs'] = (ev.outputs ?? []).map((o) => {
    let bytes: Uint8Array;
    if (o.data instanceof ArrayBuffer) {
      bytes = new Uint8Array(o.data, o.byteOffset, o.byteLength);
    } else if ('arrayBuffer' in o.data) {
      bytes = new Uint8Array(o.data.arrayBuffer(), o.byteOffset, o.byteLength);
    } else {
      bytes = new Uint8Array(0); // device memory: never asked for here
    }
    return [o.name, o.datatype, `[${o.shape.join(',')}]`, hashBytes(bytes)];
  });
  const r: ResponseOutcome = {
    parameters: ev.parameters === undefined ? '' : JSON.stringify(ev.parameters),
    outputs,
  };
  if (ev.error !== undefined) {
    r.code = ev.error.code;
    r.message = ev.error.message;
  }
  return r;
}

/** The addon's positional request (lib/abi/binding.ts SUBMIT_SLOTS), built without validation. */
function submitArgs(c: Case): { nums: Float64Array; args: NativeSubmitArg[] } {
  const nums: number[] = [c.version, -1, -1, -1, -1, -1, 0, 0, 0, 0];
  const args: NativeSubmitArg[] = [c.model, c.id, c.correlationId];
  if (c.priority !== undefined) nums[SUBMIT_SLOTS.priority] = c.priority;
  if (c.timeoutMicroseconds !== undefined) nums[SUBMIT_SLOTS.timeoutMicroseconds] = c.timeoutMicroseconds;
  if (c.flags !== undefined) nums[SUBMIT_SLOTS.flags] = c.flags;
  for (const x of c.inputs) {
    nums.push(NATIVE_DATATYPE_CODES[x.datatype], -1, x.shape.length, ...x.shape);
    args.push(x.name, x.data);
  }
  nums[SUBMIT_SLOTS.inputCount] = c.inputs.length;
  for (const name of c.outputs ?? []) {
    nums.push(-1, -1);
    args.push(name, undefined);
  }
  nums[SUBMIT_SLOTS.outputCount] = c.outputs?.length ?? 0;
  for (const [name, type, value] of c.parameters ?? []) {
    nums.push(NATIVE_PARAMETER_CODES[type]);
    args.push(name, value);
  }
  nums[SUBMIT_SLOTS.parameterCount] = c.parameters?.length ?? 0;
  return { nums: Float64Array.from(nums), args };
}

export interface RunOptions {
  /** libtritonserver.so to run on (default: TRITON_SERVER_LIB, else the fake engine). */
  library?: string;
  /** Triton's backends (a real Triton; default TRITON_BACKEND_DIR). */
  backendDirectory?: string;
  /** Filled in: the server version from the metadata of the server the cases ran on. */
  seen?: { serverVersion?: string };
}

/** Submits cases one at a time and collects their events (some may arrive inside submit()). */
class Runner {
  readonly #server: NativeServer;
  readonly #handlers = new Map<number, (ev: NativeEvent) => void>();
  #early: NativeEvent[] = [];

  private constructor(server: NativeServer) {
    this.#server = server;
  }

  static async start(options: RunOptions): Promise<{ runner: Runner; server: NativeServer }> {
    const library =
      options.library ??
      process.env.TRITON_SERVER_LIB ??
      (await import('../../lib/testing.js')).fakeEngine.libraryPath;
    const info = loadLibrary(library);
    const nativeOptions: NativeServerOptions = {
      modelRepositories: [resolve(MODELS_DIR)],
      modelControlMode: 2,
      startupModels: [],
      strictModelConfig: true,
      exitTimeoutSeconds: 5,
      modelLoadRetryCount: 0,
      exitOnError: true,
      strictReadiness: true,
      backendDirectory: info.isFake ? '' : (options.backendDirectory ?? process.env.TRITON_BACKEND_DIR ?? ''),
      backendConfig: [],
      log: { verbose: 0, info: false, warn: false, error: false },
      metrics: false,
    };
    // Events route to the runner once it exists (none come before a submit).
    const box: { runner?: Runner } = {};
    const server = await addon().createServer(nativeOptions, (events) => box.runner?.dispatch(events));
    box.runner = new Runner(server);
    return { runner: box.runner, server };
  }

  dispatch(events: NativeEvent[]): void {
    for (const ev of events) {
      const handler = this.#handlers.get(ev.token);
      if (handler !== undefined) handler(ev);
      else this.#early.push(ev);
    }
  }

  run(c: Case): Promise<Outcome> {
    const { nums, args } = submitArgs(c);
    this.#early = [];
    let token: number;
    try {
      token = this.#server.submit(
        nums,
        ...(args as [string, string | undefined, number | bigint | string | undefined]),
      );
    } catch (err) {
      const e = err as { code?: string; message?: string; name?: string };
      return Promise.resolve({ at: 'submit', code: e.code ?? e.name ?? 'Error', message: e.message });
    }
    const responses: ResponseOutcome[] = [];
    return new Promise<Outcome>((settle) => {
      const handle = (ev: NativeEvent) => {
        if (ev.outputs !== undefined || ev.error !== undefined) responses.push(responseOutcome(ev));
        if (!ev.final) return;
        this.#handlers.delete(token);
        settle({ at: 'responses', responses });
      };
      this.#handlers.set(token, handle);
      const early = this.#early.filter((ev) => ev.token === token);
      this.#early = [];
      for (const ev of early) handle(ev);
    });
  }
}

/** Runs every case, one at a time, on a fresh server; returns their outcomes in order. */
export async function runCases(cases: Case[], options: RunOptions = {}): Promise<Outcome[]> {
  const { runner, server } = await Runner.start(options);
  try {
    if (options.seen !== undefined) {
      options.seen.serverVersion = (JSON.parse(await server.metadata()) as { version: string }).version;
    }
    for (const m of MODELS) await server.loadModel(m.name, undefined, []);
    const outcomes: Outcome[] = [];
    for (const c of cases) outcomes.push(await runner.run(c));
    return outcomes;
  } finally {
    await server.stop();
  }
}

/** The fixture: outcomes of the cases on a real Triton, each distinct message stored once. */
export interface Fixture {
  description: string;
  library: string;
  generatorVersion: number;
  seed: number;
  count: number;
  casesDigest: string;
  messages: string[];
  /**
   * Per case: [at, code, message index (-1: none), responses], each response
   * [parameters, outputs, code, message index].
   */
  outcomes: Array<
    [string, string, number, Array<[string, ResponseOutcome['outputs'], string, number]> | null]
  >;
}

export function toFixture(
  cases: Case[],
  outcomes: Outcome[],
  meta: { seed: number; count: number; library: string },
): Fixture {
  const messages: string[] = [];
  const index = new Map<string, number>();
  const msg = (m: string | undefined): number => {
    if (m === undefined) return -1;
    let i = index.get(m);
    if (i === undefined) {
      i = messages.length;
      messages.push(m);
      index.set(m, i);
    }
    return i;
  };
  return {
    description:
      'Outcomes of the test/differential/generate.ts cases on the real Triton named in `library`, recorded ' +
      'through the addon; test/request/differential.test.ts replays the cases on the library under test. Observations.',
    library: meta.library,
    generatorVersion: GENERATOR_VERSION,
    seed: meta.seed,
    count: meta.count,
    casesDigest: casesDigest(cases),
    messages,
    outcomes: outcomes.map((o) => [
      o.at,
      o.code ?? '',
      msg(o.message),
      o.responses === undefined
        ? null
        : o.responses.map((r) => [r.parameters, r.outputs, r.code ?? '', msg(r.message)]),
    ]),
  };
}

export function fromFixture(f: Fixture): Outcome[] {
  return f.outcomes.map(([at, code, m, responses]) => {
    const o: Outcome = { at: at as Outcome['at'] };
    if (code !== '') o.code = code;
    if (m >= 0) o.message = f.messages[m];
    if (responses !== null) {
      o.responses = responses.map(([parameters, outputs, rc, rm]) => {
        const r: ResponseOutcome = { parameters, outputs };
        if (rc !== '') r.code = rc;
        if (rm >= 0) r.message = f.messages[rm];
        return r;
      });
    }
    return o;
  });
}

/** A readable description of how two outcomes differ, or null when they are the same. */
export function difference(expected: Outcome, actual: Outcome): string | null {
  const a = JSON.stringify(expected);
  const b = JSON.stringify(actual);
  return a === b ? null : `expected ${a}\n      got ${b}`;
}

/** Text of a case for a difference report (data as its byte length). */
export function describeCase(c: Case): string {
  return JSON.stringify(c, (_k, v) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `<${v.length} bytes>` : v,
  );
}

async function main(argv: string[]): Promise<void> {
  const [command, file] = argv;
  if ((command !== 'record' && command !== 'compare') || file === undefined) {
    console.error('usage: generate.ts record|compare <fixture.json> [seed] [count]');
    process.exitCode = 2;
    return;
  }
  if (command === 'record') {
    const seed = argv[2] === undefined ? DEFAULT_SEED : Number(argv[2]);
    const count = argv[3] === undefined ? DEFAULT_COUNT : Number(argv[3]);
    const cases = generateCases(seed, count);
    const seen: { serverVersion?: string } = {};
    const outcomes = await runCases(cases, { seen });
    const library = process.env.TRITON_SERVER_LIB ?? 'fake engine';
    const fixture = toFixture(cases, outcomes, {
      seed,
      count,
      library: describeLibrary(library, seen.serverVersion ?? ''),
    });
    writeFileSync(file, `${JSON.stringify(fixture)}\n`);
    console.log(`recorded ${outcomes.length} outcomes (${fixture.messages.length} messages) to ${file}`);
    return;
  }
  const fixture = JSON.parse(readFileSync(file, 'utf8')) as Fixture;
  const cases = generateCases(fixture.seed, fixture.count);
  const expected = fromFixture(fixture);
  const actual = await runCases(cases);
  let differences = 0;
  for (let i = 0; i < cases.length; i++) {
    const d = difference(expected[i]!, actual[i]!);
    if (d === null) continue;
    differences++;
    console.log(`#${i} ${describeCase(cases[i]!)}\n      ${d}`);
  }
  console.log(`${differences} difference(s) in ${cases.length} cases`);
  process.exitCode = differences === 0 ? 0 : 1;
}

function describeLibrary(path: string, serverVersion: string): string {
  const release = provenRelease(serverVersion) ?? 'of an unproven release';
  return path === 'fake engine'
    ? path
    : `real Triton ${release} (${serverVersion}, CPU build), ${path.split('/').slice(-3).join('/')}`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
