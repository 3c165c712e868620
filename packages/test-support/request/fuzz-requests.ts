/**
 * The request surface as data, for test/request/fuzz.test.ts.
 *
 * fast-check generates *recipes*: plain values it can print and shrink. Each
 * run turns a recipe into a fresh request (`build`): a detached buffer or an
 * aborted signal cannot be reused across runs, and a counterexample must
 * replay. Building also works out what the call must do: the faults the
 * recipe holds (each with the words an error about it must contain) and,
 * for the identity, repeat and square backends, the exact result.
 *
 * A *hard* fault must make the call fail; a *soft* one may (the library may
 * accept it or refuse it, e.g. a batch of 0 or a NaN parameter), but if the
 * call succeeds its result must still be right.
 */
import fc from 'fast-check';
import { DATATYPES, type DataType } from 'triton-node';

// ---- the models of test/models the fuzz test loads ---------------------------------

export interface IoDef {
  name: string;
  datatype: DataType;
  /** Dims without the batch dimension; -1 is variable. */
  dims: number[];
  optional?: boolean;
}

export interface ModelDef {
  name: string;
  maxBatch: number;
  decoupled: boolean;
  /** Versions served (ready), lowest first. */
  versions: number[];
  inputs: IoDef[];
  outputs: IoDef[];
}

const io = (name: string, datatype: DataType, dims: number[], optional = false): IoDef => ({
  name,
  datatype,
  dims,
  optional,
});

const ALL_TYPES: readonly DataType[] = DATATYPES;

/** As their config.pbtxt files declare them. */
export const FUZZ_MODELS: Record<string, ModelDef> = {
  identity_fp32: {
    name: 'identity_fp32',
    maxBatch: 8,
    decoupled: false,
    versions: [1],
    inputs: [io('INPUT0', 'FP32', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1])],
  },
  identity_nobatch: {
    name: 'identity_nobatch',
    maxBatch: 0,
    decoupled: false,
    versions: [1],
    inputs: [io('INPUT0', 'FP32', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1])],
  },
  identity_all_types: {
    name: 'identity_all_types',
    maxBatch: 0,
    decoupled: false,
    versions: [1],
    inputs: ALL_TYPES.map((t, i) => io(`INPUT${i}`, t, [-1])),
    outputs: ALL_TYPES.map((t, i) => io(`OUTPUT${i}`, t, [-1])),
  },
  identity_bytes: {
    name: 'identity_bytes',
    maxBatch: 0,
    decoupled: false,
    versions: [1],
    inputs: [io('INPUT0', 'BYTES', [-1])],
    outputs: [io('OUTPUT0', 'BYTES', [-1])],
  },
  identity_multi: {
    name: 'identity_multi',
    maxBatch: 0,
    decoupled: false,
    versions: [1],
    inputs: [io('INPUT0', 'FP32', [-1]), io('INPUT1', 'INT32', [-1]), io('INPUT2', 'BYTES', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1]), io('OUTPUT1', 'INT32', [-1]), io('OUTPUT2', 'BYTES', [-1])],
  },
  identity_optional: {
    name: 'identity_optional',
    maxBatch: 0,
    decoupled: false,
    versions: [1],
    inputs: [io('INPUT0', 'FP32', [-1]), io('INPUT1', 'FP32', [-1], true)],
    outputs: [io('OUTPUT0', 'FP32', [-1]), io('OUTPUT1', 'FP32', [-1])],
  },
  identity_fixed: {
    name: 'identity_fixed',
    maxBatch: 4,
    decoupled: false,
    versions: [1],
    inputs: [io('INPUT0', 'INT32', [2, 3])],
    outputs: [io('OUTPUT0', 'INT32', [2, 3])],
  },
  two_versions: {
    name: 'two_versions',
    maxBatch: 8,
    decoupled: false,
    // Versions 1 and 2 in the repository; the default policy serves the latest only.
    versions: [2],
    inputs: [io('INPUT0', 'FP32', [-1])],
    outputs: [io('OUTPUT0', 'FP32', [-1])],
  },
  repeat_int32: {
    name: 'repeat_int32',
    maxBatch: 0,
    decoupled: true,
    versions: [1],
    inputs: [io('IN', 'INT32', [-1]), io('DELAY', 'UINT32', [-1]), io('WAIT', 'UINT32', [1])],
    outputs: [io('OUT', 'INT32', [1]), io('IDX', 'UINT32', [1])],
  },
  square_int32: {
    name: 'square_int32',
    maxBatch: 0,
    decoupled: true,
    versions: [1],
    inputs: [io('IN', 'INT32', [1])],
    outputs: [io('OUT', 'INT32', [1])],
  },
};

export const FUZZ_MODEL_NAMES = Object.keys(FUZZ_MODELS);
const IDENTITY_MODELS = FUZZ_MODEL_NAMES.filter((m) => !FUZZ_MODELS[m]!.decoupled);

// ---- faults and expectations ------------------------------------------------------

export interface Fault {
  /** Must the call fail (hard), or may it (soft)? */
  hard: boolean;
  /** What is wrong, for the failure report. */
  why: string;
  /** An error about this fault must contain one of these (case-insensitive). */
  names: string[];
}

/** Words naming a tensor, parameter or key in a message: quoted always, bare when long enough to be unambiguous. */
export function nameWords(name: string): string[] {
  const words = [`'${name}'`, `"${name}"`];
  if (name.length >= 4) words.push(name);
  return words;
}

/** Words naming an output, also as part of an option path ("request.outputs.OUT.device"). */
export function outputWords(name: string): string[] {
  return [...nameWords(name), `outputs.${name}`];
}

export interface ExpectedTensor {
  name: string;
  datatype: DataType;
  shape: number[];
  /** Raw bytes (fixed-size datatypes). */
  bytes?: Uint8Array;
  /** Element bytes (BYTES). */
  elements?: Uint8Array[];
  /** The caller's destination, and whether it fits exactly (then `data` must be it). */
  into?: { view: ArrayBufferView; exact: boolean; sameType: boolean };
}

export interface ExpectedResponse {
  outputs: Map<string, ExpectedTensor>;
  /**
   * Outputs that may be there or not. An optional input's output when the
   * input was left out: the backend decides (Triton's identity sends a
   * placeholder [0], the fake fails the request), its content is not
   * checked. On a decoupled model asked for a subset, the other outputs:
   * checked when present.
   */
  optional: Set<string>;
}

// ---- element data ---------------------------------------------------------------

const SIZE: Record<DataType, number> = {
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

type Ctor =
  | Uint8ArrayConstructor
  | Uint8ClampedArrayConstructor
  | Int8ArrayConstructor
  | Uint16ArrayConstructor
  | Int16ArrayConstructor
  | Uint32ArrayConstructor
  | Int32ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor;

export const CTORS: Record<string, Ctor> = {
  Uint8Array,
  Uint8ClampedArray,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};

/** The TypedArray a datatype travels in (lib/config/datatypes.ts's table, restated). */
export const CANONICAL: Record<Exclude<DataType, 'BYTES'>, string> = {
  BOOL: 'Uint8Array',
  UINT8: 'Uint8Array',
  UINT16: 'Uint16Array',
  UINT32: 'Uint32Array',
  UINT64: 'BigUint64Array',
  INT8: 'Int8Array',
  INT16: 'Int16Array',
  INT32: 'Int32Array',
  INT64: 'BigInt64Array',
  FP16: 'Uint16Array',
  FP32: 'Float32Array',
  FP64: 'Float64Array',
  BF16: 'Uint16Array',
};

/** Whether a TypedArray kind carries a datatype (Uint8ClampedArray carries UINT8 and BOOL). */
export function kindFits(kind: string, datatype: DataType): boolean {
  if (datatype === 'BYTES') return kind === 'Uint8Array';
  const canonical = CANONICAL[datatype];
  return kind === canonical || (canonical === 'Uint8Array' && kind === 'Uint8ClampedArray');
}

/** Deterministic bytes from a seed (xorshift32): the data of one input. */
export function fillBytes(seed: number, length: number, bool: boolean): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 0 || 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = bool ? x & 1 : x & 0xff;
  }
  return out;
}

const encoder = new TextEncoder();

export function elementBytes(e: string | Uint8Array): Uint8Array {
  return typeof e === 'string' ? encoder.encode(e) : e;
}

export function lengthPrefixed(elements: Uint8Array[]): Buffer {
  const total = elements.reduce((n, e) => n + 4 + e.byteLength, 0);
  const out = Buffer.alloc(total);
  let pos = 0;
  for (const e of elements) {
    out.writeUInt32LE(e.byteLength, pos);
    out.set(e, pos + 4);
    pos += 4 + e.byteLength;
  }
  return out;
}

/** A view of kind `kind` holding `bytes` (which must be a whole number of its elements), at `offset` elements into a larger buffer. */
function viewOf(
  kind: string,
  bytes: Uint8Array,
  backing: 'plain' | 'shared' | 'resizable',
  offsetElements: number,
): ArrayBufferView {
  const ctor = CTORS[kind]!;
  const size = ctor.BYTES_PER_ELEMENT;
  const offset = offsetElements * size;
  const length = offset + bytes.byteLength + (offsetElements > 0 ? size : 0);
  const buffer =
    backing === 'shared'
      ? new SharedArrayBuffer(length)
      : backing === 'resizable'
        ? new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer)(
            length,
            {
              maxByteLength: length * 2 + 8,
            },
          )
        : new ArrayBuffer(length);
  new Uint8Array(buffer, offset, bytes.byteLength).set(bytes);
  return new ctor(buffer, offset, bytes.byteLength / size);
}

export function detach(view: ArrayBufferView): void {
  structuredClone(view.buffer, { transfer: [view.buffer as ArrayBuffer] });
}

// ---- recipes ----------------------------------------------------------------------

/** How valid data of an input's datatype is written. */
export type Encoding =
  | 'typed' // the canonical TypedArray
  | 'offset' // the same, at an offset into a larger buffer
  | 'shared' // on a SharedArrayBuffer
  | 'resizable' // on a resizable ArrayBuffer
  | 'dataview' // a DataView, possibly misaligned
  | 'buffer' // a Node Buffer (UINT8, BOOL; BYTES: length-prefixed)
  | 'clamped' // Uint8ClampedArray (UINT8, BOOL)
  | 'bools' // boolean[] (BOOL)
  | 'strings' // string / Uint8Array elements (BYTES)
  | 'prefixed'; // a length-prefixed Uint8Array at an offset (BYTES)

export type InputFault =
  | { kind: 'wrongArray'; array: string }
  | { kind: 'wrongDatatype'; datatype: DataType }
  | { kind: 'badDatatype'; datatype: unknown }
  | { kind: 'notData'; value: 'number' | 'string' | 'null' | 'noData' | 'dataNumber' | 'plainArray' }
  | { kind: 'badElement' }
  | { kind: 'badPrefix' }
  | { kind: 'detached' };

/** How the request's shape differs from the valid one the recipe has. */
export type ShapeEdit =
  | 'exact'
  | 'extraDim'
  | 'dropDim'
  | 'plusOne'
  | 'negative'
  | 'fraction'
  | 'nan'
  | 'huge'
  | 'unsafe'
  | 'string'
  | 'notArray';

export interface InputRecipe {
  /** A shape the model accepts (its element count is the data's). */
  shape: number[];
  /** Seed of the data bytes (fixed-size datatypes). */
  fill: number;
  /** Element values for BYTES (cycled to the element count). */
  strings: Array<string | Uint8Array>;
  /** Explicit values (integers) instead of `fill`, for repeat and square. */
  values?: number[];
  encoding: Encoding;
  /** bare data, { data }, { data, shape }, or { data, shape, datatype }. */
  wrap: 'bare' | 'data' | 'dataShape' | 'full';
  shapeEdit: ShapeEdit;
  fault?: InputFault;
  /** Put on the prototype of `inputs` rather than on the object itself. */
  inherited: boolean;
  /** Left out of the request. */
  missing: boolean;
}

export type IntoRecipe =
  | {
      kind:
        | 'exact'
        | 'larger'
        | 'offset'
        | 'dataview'
        | 'shared'
        | 'resizable'
        | 'alias'
        | 'small'
        | 'detached';
    }
  | { kind: 'wrongKind'; array: string }
  | { kind: 'notView'; value: 'number' | 'arraybuffer' | 'array' | 'string' };

export interface OutputRecipe {
  name: string;
  form: 'true' | 'empty' | 'options';
  into?: IntoRecipe;
  memory?: unknown;
  device?: unknown;
  unknownKey?: string;
}

export type OutputsRecipe =
  | { kind: 'default' }
  | { kind: 'list'; names: unknown[] }
  | { kind: 'object'; entries: OutputRecipe[] }
  | { kind: 'bad'; value: unknown };

/** A value and what it is: fine, a soft fault or a hard one. */
export interface Choice<T = unknown> {
  value: T;
  fault?: 'hard' | 'soft';
}

export type SignalRecipe =
  | 'none'
  | 'fresh'
  | 'aborted'
  | 'abortSync'
  | 'abortMicrotask'
  | 'abortImmediate'
  | 'abortTimeout'
  | 'timeoutSignal'
  | 'notSignal';

export type Consume =
  | { kind: 'all' }
  | { kind: 'slow' }
  | { kind: 'break'; after: number }
  | { kind: 'returnAtOnce' };

export interface CallRecipe {
  model: string;
  /** What is passed as the model name (a bad one sometimes). */
  modelName: Choice<unknown>;
  via: 'infer' | 'modelInfer' | 'stream';
  /** Version on the request, or on the Model handle (`modelVersion`). */
  version: Choice<unknown>;
  versionOn: 'request' | 'handle';
  inputs: Record<string, InputRecipe>;
  extraInputs: Array<{ name: string; inherited: boolean }>;
  inputsBad?: unknown;
  outputs: OutputsRecipe;
  parameters: Choice<Array<[string, Choice<unknown>]> | unknown>;
  id: Choice<unknown>;
  correlationId: Choice<unknown>;
  priority: Choice<unknown>;
  timeoutMicroseconds: Choice<unknown>;
  timing: Choice<unknown>;
  outputMemory: Choice<unknown>;
  outputDevice: Choice<unknown>;
  signal: SignalRecipe;
  unknownKey?: string;
  requestBad?: unknown;
  /** Streams: how the consumer reads, and its highWaterMark. */
  consume: Consume;
  highWaterMark: Choice<unknown>;
  /** Dispose the result after checking it, then read its BYTES outputs again. */
  disposeAfter: boolean;
}

// ---- arbitraries ------------------------------------------------------------------

const ok = <T>(value: T): Choice<T> => ({ value });
const soft = <T>(value: T): Choice<T> => ({ value, fault: 'soft' });
const hard = <T>(value: T): Choice<T> => ({ value, fault: 'hard' });

/** Mostly `usual` (weight 16 against 1 for each of `others`). */
function mostly<T>(usual: fc.Arbitrary<T>, ...others: Array<fc.Arbitrary<T>>): fc.Arbitrary<T> {
  return rarely(16, usual, ...others);
}

/** `usual` with weight `weight` against 1 for each of `others`. */
function rarely<T>(
  weight: number,
  usual: fc.Arbitrary<T>,
  ...others: Array<fc.Arbitrary<T>>
): fc.Arbitrary<T> {
  if (others.length === 0) return usual;
  return fc.oneof({ arbitrary: usual, weight }, ...others.map((a) => ({ arbitrary: a, weight: 1 })));
}

const choices = <T>(...values: Array<Choice<T>>): fc.Arbitrary<Choice<T>> => fc.constantFrom(...values);

const bytesElement: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { arbitrary: fc.string({ unit: 'binary', maxLength: 6 }), weight: 4 },
  { arbitrary: fc.uint8Array({ maxLength: 6 }), weight: 2 },
  { arbitrary: fc.constantFrom('', '\0', 'a\0b', 'ünïcødé 😀', '\ud800'), weight: 1 },
  { arbitrary: fc.integer({ min: 200, max: 700 }).map((k) => 'x'.repeat(k)), weight: 1 },
);

function encodingsFor(datatype: DataType): Encoding[] {
  if (datatype === 'BYTES') return ['strings', 'strings', 'buffer', 'prefixed'];
  const base: Encoding[] = ['typed', 'typed', 'typed', 'offset', 'shared', 'dataview'];
  if (datatype === 'UINT8' || datatype === 'BOOL') base.push('buffer', 'clamped');
  if (datatype === 'BOOL') base.push('bools', 'bools');
  return base;
}

function inputFaultArb(datatype: DataType): fc.Arbitrary<InputFault> {
  const wrongArrays = Object.keys(CTORS).filter((k) => !kindFits(k, datatype));
  if (datatype === 'BYTES') {
    // Every Uint8Array-like may be valid length-prefixed data: only other kinds are wrong.
    wrongArrays.splice(0, wrongArrays.length, ...wrongArrays.filter((k) => !k.startsWith('Uint8')));
  }
  return fc.oneof(
    fc.constantFrom(...wrongArrays).map((array): InputFault => ({ kind: 'wrongArray', array })),
    fc
      .constantFrom(...ALL_TYPES.filter((t) => t !== datatype))
      .map((t): InputFault => ({ kind: 'wrongDatatype', datatype: t })),
    fc
      .constantFrom<unknown>('FLOAT', 'fp32', 'TYPE_FP32', '', 42, null)
      .map((d): InputFault => ({ kind: 'badDatatype', datatype: d })),
    fc
      .constantFrom('number', 'string', 'null', 'noData', 'dataNumber', 'plainArray' as const)
      .map((value): InputFault => ({ kind: 'notData', value })),
    fc.constant<InputFault>({ kind: 'detached' }),
    ...(datatype === 'BYTES'
      ? [fc.constant<InputFault>({ kind: 'badElement' }), fc.constant<InputFault>({ kind: 'badPrefix' })]
      : []),
  );
}

/** Valid shapes of one input (with the batch dimension on batching models), plus (unless `valid`) a batch of 0 or one too large. */
function shapeArb(model: ModelDef, input: IoDef, valid: boolean): fc.Arbitrary<number[]> {
  const inner = fc.tuple(
    ...input.dims.map((d) => (d >= 0 ? fc.constant(d) : fc.integer({ min: 0, max: 6 }))),
  );
  if (model.maxBatch === 0) return inner;
  const batches = fc.integer({ min: 1, max: model.maxBatch });
  const batch = valid ? batches : mostly(batches, fc.constant(0), fc.constant(model.maxBatch + 1));
  return fc.tuple(batch, inner).map(([b, rest]) => [b, ...rest]);
}

/**
 * One input. `valid`: data the model takes, in any of its forms. Otherwise
 * each part of it is faulty with a probability that shrinks with the model's
 * number of inputs, so that most requests stay valid enough to check results.
 */
export function inputArb(model: ModelDef, input: IoDef, valid = false): fc.Arbitrary<InputRecipe> {
  const seldom = <T>(usual: fc.Arbitrary<T>, ...others: Array<fc.Arbitrary<T>>) =>
    rarely(40 * model.inputs.length, usual, ...others);
  const encodings = fc.constantFrom(...encodingsFor(input.datatype));
  // A resizable buffer can shrink under Triton: the library may refuse it (a soft fault).
  const resizable = input.datatype === 'BYTES' ? [] : [fc.constant<Encoding>('resizable')];
  return shapeArb(model, input, valid).chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      fill: fc.integer(),
      strings: fc.array(bytesElement, { minLength: 1, maxLength: 4 }),
      encoding: valid ? encodings : seldom(encodings, ...resizable),
      // A batch other than 1 needs its shape given (an inferred shape has a batch of 1).
      wrap:
        valid && model.maxBatch > 0 && shape[0] !== 1
          ? fc.constantFrom('dataShape', 'full' as const)
          : fc.constantFrom('bare', 'bare', 'data', 'dataShape', 'full' as const),
      shapeEdit: valid
        ? fc.constant<ShapeEdit>('exact')
        : seldom(
            fc.constant<ShapeEdit>('exact'),
            fc.constantFrom<ShapeEdit>(
              'extraDim',
              'dropDim',
              'plusOne',
              'negative',
              'fraction',
              'nan',
              'huge',
              'unsafe',
              'string',
              'notArray',
            ),
          ),
      fault: valid ? fc.constant(undefined) : seldom(fc.constant(undefined), inputFaultArb(input.datatype)),
      inherited: valid || input.optional ? fc.constant(false) : seldom(fc.constant(false), fc.constant(true)),
      missing: valid
        ? fc.constant(false)
        : input.optional
          ? fc.boolean()
          : seldom(fc.constant(false), fc.constant(true)),
    }),
  );
}

const intoArb: fc.Arbitrary<IntoRecipe> = mostly(
  fc.constantFrom<IntoRecipe>(
    { kind: 'exact' },
    { kind: 'exact' },
    { kind: 'larger' },
    { kind: 'offset' },
    { kind: 'dataview' },
    { kind: 'shared' },
    { kind: 'alias' },
  ),
  fc.constantFrom<IntoRecipe>({ kind: 'small' }, { kind: 'detached' }, { kind: 'resizable' }),
  fc.constantFrom(...Object.keys(CTORS)).map((array): IntoRecipe => ({ kind: 'wrongKind', array })),
  fc
    .constantFrom('number', 'arraybuffer', 'array', 'string' as const)
    .map((value): IntoRecipe => ({ kind: 'notView', value })),
);

function outputEntryArb(name: string, withInto: boolean): fc.Arbitrary<OutputRecipe> {
  return fc.record(
    {
      name: fc.constant(name),
      form: fc.constantFrom('true', 'empty', 'options', 'options' as const),
      // One destination for many responses would be overwritten by each: single responses only.
      into: withInto ? fc.oneof(fc.constant(undefined), intoArb) : fc.constant(undefined),
      memory: mostly(
        fc.constant<unknown>(undefined),
        fc.constantFrom<unknown>('cpu', 'pinned', 'gpu', { type: 'gpu', device: 0 }),
        fc.constantFrom<unknown>('disk', { type: 'cpu' }, 42, null),
      ),
      device: mostly(fc.constant<unknown>(undefined), fc.constantFrom<unknown>(0, -1, 1.5, '0')),
      unknownKey: mostly(fc.constant<string | undefined>(undefined), fc.constantFrom('intoo', 'memoryType')),
    },
    { requiredKeys: ['name', 'form'] },
  );
}

/** A non-empty subset of `names`, or now and then none at all. */
function someOf(names: string[]): fc.Arbitrary<string[]> {
  return rarely(12, fc.subarray(names, { minLength: 1 }), fc.constant([]));
}

function outputsArb(model: ModelDef): fc.Arbitrary<OutputsRecipe> {
  const names = model.outputs.map((o) => o.name);
  const unknown = fc.constantFrom('OUTPUT99', 'output0', '', 'OUT ');
  return fc.oneof(
    { arbitrary: fc.constant<OutputsRecipe>({ kind: 'default' }), weight: 12 },
    {
      arbitrary: fc
        .tuple(
          someOf(names),
          rarely(12, fc.constant(undefined), unknown),
          rarely(8, fc.constant(false), fc.constant(true)),
        )
        .map(([list, extra, dup]): OutputsRecipe => {
          const out: unknown[] = [...list];
          if (extra !== undefined) out.push(extra);
          if (dup && list.length > 0 && list.length < 3) out.push(list[0]);
          return { kind: 'list', names: out };
        }),
      weight: 6,
    },
    {
      arbitrary: fc
        .tuple(
          someOf(names).chain((list) => fc.tuple(...list.map((n) => outputEntryArb(n, !model.decoupled)))),
          rarely(12, fc.constant(undefined), unknown),
        )
        .map(
          ([entries, extra]): OutputsRecipe => ({
            kind: 'object',
            entries: extra === undefined ? entries : [...entries, { name: extra, form: 'true' }],
          }),
        ),
      weight: 3,
    },
    {
      arbitrary: fc
        .constantFrom<unknown>('OUTPUT0', 42, null, [42])
        .map((value): OutputsRecipe => ({ kind: 'bad', value })),
      weight: 1,
    },
  );
}

const parameterValueArb: fc.Arbitrary<Choice<unknown>> = fc.oneof(
  {
    arbitrary: choices<unknown>(
      ok(0),
      ok(-7),
      ok(42),
      ok(2 ** 53 - 1),
      ok(1.5),
      ok(-0.25),
      ok(2 ** 60),
      ok(1e308),
      ok(true),
      ok(false),
      ok('text'),
      ok(''),
      ok('ünï 😀'),
      ok(5n),
      ok(-(2n ** 63n)),
      ok(2n ** 63n - 1n),
    ),
    weight: 24,
  },
  {
    arbitrary: choices<unknown>(soft(Number.NaN), soft(Number.POSITIVE_INFINITY), soft(undefined)),
    weight: 1,
  },
  {
    arbitrary: choices<unknown>(
      hard(2n ** 63n),
      hard(-(2n ** 63n) - 1n),
      hard({}),
      hard(null),
      hard([1]),
      hard('a\0b'),
    ),
    weight: 1,
  },
);

const parameterKeyArb = rarely(
  30,
  fc.constantFrom('p', 'threshold', 'with space', 'ünï'),
  fc.constantFrom('a\0b', '\0'),
  fc.constantFrom(''),
);

const parametersArb: fc.Arbitrary<Choice<Array<[string, Choice<unknown>]> | unknown>> = fc.oneof(
  { arbitrary: fc.constant(ok(undefined)), weight: 24 },
  {
    arbitrary: fc
      .array(fc.tuple(parameterKeyArb, parameterValueArb), { maxLength: 4 })
      .map((entries) => ok<Array<[string, Choice<unknown>]> | unknown>(entries)),
    weight: 16,
  },
  { arbitrary: choices<unknown>(hard(null), hard('p=1'), hard(42)), weight: 1 },
);

function versionArb(model: ModelDef): fc.Arbitrary<Choice<unknown>> {
  const high = model.versions[model.versions.length - 1]!;
  return rarely(
    40,
    choices<unknown>(ok(undefined), ok(undefined), ok(-1), ...model.versions.map((v) => ok<unknown>(v))),
    choices<unknown>(hard(0), hard(high + 1), hard(high === 1 ? 7 : 1)),
    choices<unknown>(hard(1.5), hard(-2), hard(Number.NaN), hard('1'), hard(2 ** 53), hard(null)),
  );
}

function modelNameArb(model: string): fc.Arbitrary<Choice<unknown>> {
  return rarely(
    40,
    fc.constant(ok<unknown>(model)),
    choices<unknown>(
      hard(`${model}\0x`),
      hard(`${model}\0`),
      hard('no_such_model'),
      hard('identity_delay'),
      hard(''),
      hard(42),
      hard(null),
    ),
  );
}

const signalArb: fc.Arbitrary<SignalRecipe> = fc.oneof(
  { arbitrary: fc.constant<SignalRecipe>('none'), weight: 10 },
  { arbitrary: fc.constant<SignalRecipe>('fresh'), weight: 3 },
  {
    arbitrary: fc.constantFrom<SignalRecipe>(
      'aborted',
      'abortSync',
      'abortMicrotask',
      'abortImmediate',
      'abortTimeout',
      'timeoutSignal',
      'notSignal',
    ),
    weight: 3,
  },
);

const consumeArb: fc.Arbitrary<Consume> = fc.oneof(
  { arbitrary: fc.constant<Consume>({ kind: 'all' }), weight: 6 },
  { arbitrary: fc.constant<Consume>({ kind: 'slow' }), weight: 2 },
  {
    arbitrary: fc.integer({ min: 0, max: 3 }).map((after): Consume => ({ kind: 'break', after })),
    weight: 2,
  },
  { arbitrary: fc.constant<Consume>({ kind: 'returnAtOnce' }), weight: 1 },
);

/** Inputs of repeat_int32 and square_int32, whose values say how many responses come. */
function decoupledInputsArb(model: ModelDef, valid: boolean): fc.Arbitrary<Record<string, InputRecipe>> {
  const plain = (shape: number[], values: number[]): fc.Arbitrary<InputRecipe> =>
    fc.record({
      shape: fc.constant(shape),
      fill: fc.constant(0),
      strings: fc.constant(['']),
      values: fc.constant(values),
      encoding: fc.constantFrom('typed', 'typed', 'offset', 'dataview' as const),
      wrap: fc.constantFrom('bare', 'dataShape' as const),
      shapeEdit: fc.constant<ShapeEdit>('exact'),
      fault: fc.constant(undefined),
      inherited: fc.constant(false),
      missing: valid ? fc.constant(false) : mostly(fc.constant(false), fc.constant(true)),
    });
  if (model.name === 'square_int32') {
    // No negative counts: the fake refuses them, Triton's square streams without end.
    return fc.integer({ min: 0, max: 8 }).chain((n) => fc.record({ IN: plain([1], [n]) }));
  }
  return fc
    .tuple(
      fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 6 }),
      valid ? fc.constant(0) : mostly(fc.constant(0), fc.constant(1), fc.constant(-1)),
      fc.integer({ min: 0, max: 1 }),
    )
    .chain(([values, skew, wait]) => {
      const delays = new Array(Math.max(0, values.length + skew)).fill(0);
      return fc.record({
        IN: plain([values.length], values),
        DELAY: plain([delays.length], delays),
        WAIT: plain([1], [wait]),
      });
    });
}

/** One call on `model` (any model of FUZZ_MODELS). `strict`: only valid requests. */
export function callArb(model: string, strict = false): fc.Arbitrary<CallRecipe> {
  const def = FUZZ_MODELS[model]!;
  const inputs = def.decoupled
    ? decoupledInputsArb(def, strict)
    : fc.record(
        Object.fromEntries(def.inputs.map((i) => [i.name, inputArb(def, i, strict)])) as Record<
          string,
          fc.Arbitrary<InputRecipe>
        >,
      );
  // Each request-level field is faulty in about 1 request of 40, so that most requests are valid.
  const maybe = <T>(valid: fc.Arbitrary<T>, bad: fc.Arbitrary<T>) =>
    strict ? valid : rarely(40, valid, bad);
  const none = fc.constant(ok<unknown>(undefined));
  return fc.record({
    model: fc.constant(model),
    modelName: strict ? fc.constant(ok<unknown>(model)) : modelNameArb(model),
    via: def.decoupled
      ? maybe(fc.constant('stream' as const), fc.constantFrom('infer', 'modelInfer' as const))
      : fc.constantFrom('infer', 'infer', 'modelInfer', 'modelInfer', 'stream' as const),
    version: strict ? fc.constant(ok<unknown>(undefined)) : versionArb(def),
    versionOn: fc.constantFrom('request', 'handle' as const),
    inputs,
    extraInputs: strict
      ? fc.constant([])
      : rarely(
          40,
          fc.constant([]),
          fc.array(
            fc.record({
              name: fc.constantFrom('INPUT99', 'bogus', '', 'input0', 'INPUT0 '),
              inherited: fc.boolean(),
            }),
            { minLength: 1, maxLength: 2 },
          ),
        ),
    inputsBad: strict
      ? fc.constant(undefined)
      : rarely(40, fc.constant(undefined), fc.constantFrom(null, [], 42)),
    outputs: strict ? fc.constant<OutputsRecipe>({ kind: 'default' }) : outputsArb(def),
    parameters: strict ? none : parametersArb,
    id: maybe(
      choices<unknown>(ok(undefined), ok(undefined), ok('req-1'), ok(''), ok('ünï 😀'), ok('x'.repeat(300))),
      choices<unknown>(soft('a\0b'), hard(42), hard(null)),
    ),
    correlationId: maybe(
      choices<unknown>(
        ok(undefined),
        ok(undefined),
        ok(0),
        ok(1),
        ok(2 ** 53 - 1),
        ok(0n),
        ok(2n ** 64n - 1n),
      ),
      // String ids are for sequence batchers: Triton's identity backend reads the id as a
      // number and fails the request ("correlation ID in request is not an unsigned int").
      choices<unknown>(
        soft('seq-1'),
        soft('ünï'),
        soft(''),
        hard(-1),
        hard(1.5),
        hard(Number.NaN),
        hard(-1n),
        hard(2n ** 64n),
        hard('a\0b'),
        hard({}),
        hard(true),
        hard(null),
      ),
    ),
    priority: maybe(
      choices<unknown>(ok(undefined), ok(undefined), ok(0), ok(1), ok(7), ok(2 ** 32 + 1), ok(2 ** 53 - 1)),
      choices<unknown>(hard(-1), hard(1.5), hard(Number.NaN), hard('1'), hard(Number.POSITIVE_INFINITY)),
    ),
    timeoutMicroseconds: maybe(
      choices<unknown>(ok(undefined), ok(undefined), ok(0), ok(10_000_000), ok(2 ** 40)),
      choices<unknown>(soft(1), soft(50), hard(-1), hard(0.5), hard(Number.NaN), hard('5'), hard(2 ** 53)),
    ),
    timing: maybe(
      choices<unknown>(ok(undefined), ok(true), ok(false)),
      choices<unknown>(hard(1), hard('yes')),
    ),
    outputMemory: maybe(
      choices<unknown>(ok(undefined), ok(undefined), ok('cpu')),
      choices<unknown>(soft('pinned'), soft('gpu'), soft({ type: 'gpu', device: 0 }), hard('ram'), hard(7)),
    ),
    outputDevice: maybe(choices<unknown>(ok(undefined), ok(0)), choices<unknown>(hard(-1), hard(0.5))),
    signal: strict ? fc.constantFrom<SignalRecipe>('none', 'fresh') : signalArb,
    unknownKey: strict
      ? fc.constant(undefined)
      : rarely(40, fc.constant(undefined), fc.constantFrom('timeout', 'input', 'output', 'model')),
    requestBad: strict
      ? fc.constant(undefined)
      : fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 60 },
          { arbitrary: fc.constantFrom<unknown>(null, 42, 'x'), weight: 1 },
        ),
    consume: consumeArb,
    highWaterMark: maybe(
      choices<unknown>(ok(undefined), ok(undefined), ok(1000)),
      choices<unknown>(soft(1), soft(2), hard(0), hard(-1), hard(1.5)),
    ),
    disposeAfter: fc.boolean(),
  });
}

/** A call on any model: identity models more often. */
export function anyCallArb(strict = false): fc.Arbitrary<CallRecipe> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...IDENTITY_MODELS).chain((m) => callArb(m, strict)), weight: 4 },
    {
      arbitrary: fc.constantFrom('repeat_int32', 'square_int32').chain((m) => callArb(m, strict)),
      weight: 1,
    },
  );
}

// ---- building a request from a recipe --------------------------------------------

export interface BuiltCall {
  recipe: CallRecipe;
  modelName: unknown;
  /** Version given to server.model() (via 'modelInfer' / 'stream' on a handle). */
  handleVersion: unknown;
  request: unknown;
  streamOptions: unknown;
  signal: AbortSignal | undefined;
  /** Aborts the request at the moment the recipe says (after the call was made). */
  abortLater: (() => void) | undefined;
  faults: Fault[];
  /** Expected responses (identity: one; repeat/square: one per response). Undefined: not knowable. */
  expected: ExpectedResponse[] | undefined;
  expectedModel: string;
  expectedVersion: number;
  expectedId: string | undefined;
  timing: boolean;
}

interface InputOutcome {
  value: unknown;
  /** What the identity backend will echo, when the input is valid or softly faulty. */
  echo?: { datatype: DataType; shape: number[]; bytes?: Uint8Array; elements?: Uint8Array[] };
  /** The TypedArray passed as data (for `into: alias`). */
  typed?: ArrayBufferView;
}

function editShape(shape: number[], edit: ShapeEdit): unknown {
  switch (edit) {
    case 'exact':
      return [...shape];
    case 'extraDim':
      return [...shape, 1];
    case 'dropDim':
      return shape.slice(1);
    case 'plusOne':
      return shape.length === 0 ? [1] : [...shape.slice(0, -1), shape[shape.length - 1]! + 1];
    case 'negative':
      return shape.map((d, i) => (i === shape.length - 1 ? -1 : d));
    case 'fraction':
      return [...shape.slice(0, -1), 1.5];
    case 'nan':
      return [...shape.slice(0, -1), Number.NaN];
    case 'huge':
      return [...shape.slice(0, -1), 2 ** 40];
    case 'unsafe':
      return [...shape.slice(0, -1), 2 ** 53];
    case 'string':
      return shape.map(String);
    case 'notArray':
      return shape.length;
  }
}

/**
 * The shape a request ends up with and whether the model accepts it:
 * explicit, or inferred from the element count as the API documents (a
 * batch of 1 on batching models, the one variable dim from the count).
 */
function resolveShape(
  model: ModelDef,
  input: IoDef,
  explicit: unknown,
  count: number,
): { shape?: number[]; fault?: 'hard'; why?: string } {
  const batching = model.maxBatch > 0;
  const dims = batching ? [-1, ...input.dims] : input.dims;
  let shape: number[];
  if (explicit !== undefined) {
    if (!Array.isArray(explicit) || !explicit.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      return { fault: 'hard', why: `shape ${String(explicit)} is not a list of sizes` };
    }
    shape = explicit as number[];
  } else {
    const inferred = batching ? [1, ...input.dims] : [...input.dims];
    const free = inferred.filter((d) => d < 0).length;
    const known = inferred.reduce((p, d) => (d < 0 ? p : p * d), 1);
    if (free === 0) shape = inferred;
    else if (known > 0 && count % known === 0) shape = inferred.map((d) => (d < 0 ? count / known : d));
    else if (known === 0) shape = inferred.map((d) => (d < 0 ? 0 : d));
    else return { fault: 'hard', why: `no shape fits ${count} elements` };
  }
  const product = shape.reduce((p, d) => p * d, 1);
  if (shape.length !== dims.length) return { fault: 'hard', why: `rank of [${shape}]` };
  if (dims.some((d, i) => d >= 0 && d !== shape[i])) return { fault: 'hard', why: `dims of [${shape}]` };
  if (product !== count) return { fault: 'hard', why: `[${shape}] holds ${product}, data ${count}` };
  if (batching && shape[0]! > model.maxBatch) return { fault: 'hard', why: `batch ${shape[0]}` };
  if (batching && shape[0] === 0) return { fault: 'hard', why: 'batch of 0' };
  return { shape };
}

/** Data bytes of a fixed-size input: explicit values or seeded bytes. */
function inputBytes(datatype: DataType, recipe: InputRecipe, count: number): Uint8Array {
  if (recipe.values !== undefined) {
    const kind = CANONICAL[datatype as Exclude<DataType, 'BYTES'>];
    const array = new (CTORS[kind] as Int32ArrayConstructor)(recipe.values);
    return new Uint8Array(array.buffer);
  }
  return fillBytes(recipe.fill, count * SIZE[datatype], datatype === 'BOOL');
}

function buildInput(
  model: ModelDef,
  input: IoDef,
  recipe: InputRecipe,
  fault: (f: Fault) => void,
): InputOutcome {
  const dt = input.datatype;
  const where = nameWords(input.name);
  const count = recipe.shape.reduce((p, d) => p * d, 1);
  const explicitShape =
    recipe.wrap === 'dataShape' || recipe.wrap === 'full'
      ? editShape(recipe.shape, recipe.shapeEdit)
      : undefined;
  let datatypeField: unknown = recipe.wrap === 'full' ? dt : undefined;
  let data: unknown;
  let typed: ArrayBufferView | undefined;
  let bytes: Uint8Array | undefined;
  let elements: Uint8Array[] | undefined;
  let broken = false;
  const f = recipe.fault;

  if (dt === 'BYTES') {
    elements = Array.from({ length: count }, (_, i) =>
      elementBytes(recipe.strings[i % recipe.strings.length]!),
    );
    const raw = Array.from({ length: count }, (_, i) => recipe.strings[i % recipe.strings.length]!);
    switch (recipe.encoding) {
      case 'buffer':
        data = lengthPrefixed(elements);
        break;
      case 'prefixed': {
        const packed = lengthPrefixed(elements);
        const backing = new Uint8Array(packed.byteLength + 3);
        backing.set(packed, 3);
        data = backing.subarray(3);
        break;
      }
      default:
        data = raw;
    }
  } else {
    bytes = inputBytes(dt, recipe, count);
    const kind = CANONICAL[dt];
    switch (recipe.encoding) {
      case 'offset':
        data = viewOf(kind, bytes, 'plain', 1 + (recipe.fill & 3));
        break;
      case 'shared':
        data = viewOf(kind, bytes, 'shared', 0);
        break;
      case 'resizable':
        data = viewOf(kind, bytes, 'resizable', 0);
        fault({
          hard: false,
          why: `${input.name} on a resizable ArrayBuffer`,
          names: [...where, 'resizable'],
        });
        break;
      case 'dataview': {
        const shift = recipe.fill & 7;
        const backing = new Uint8Array(bytes.byteLength + shift);
        backing.set(bytes, shift);
        data = new DataView(backing.buffer, shift, bytes.byteLength);
        break;
      }
      case 'buffer':
        data = Buffer.from(bytes);
        break;
      case 'clamped':
        data = new Uint8ClampedArray(bytes);
        break;
      case 'bools':
        data = Array.from(bytes, (b) => b === 1);
        break;
      default:
        data = viewOf(kind, bytes, 'plain', 0);
    }
    if (ArrayBuffer.isView(data) && !(data instanceof DataView)) typed = data;
  }

  if (f !== undefined) {
    broken = true;
    switch (f.kind) {
      case 'wrongArray': {
        const ctor = CTORS[f.array]!;
        data = new ctor(Math.max(count, 1));
        break;
      }
      case 'wrongDatatype':
        datatypeField = f.datatype;
        break;
      case 'badDatatype':
        datatypeField = f.datatype;
        break;
      case 'notData':
        data = {
          number: 3,
          string: 'abc',
          null: null,
          noData: undefined,
          dataNumber: 3,
          plainArray: [1, 2, 3],
        }[f.value];
        break;
      case 'badElement':
        data = ['ok', 7];
        break;
      case 'badPrefix':
        data = new Uint8Array([9, 0, 0, 0, 1, 2]);
        break;
      case 'detached': {
        const view =
          dt === 'BYTES'
            ? new Uint8Array(lengthPrefixed(elements!))
            : viewOf(CANONICAL[dt], bytes!, 'plain', 0);
        detach(view);
        data = view;
        break;
      }
    }
    typed = undefined;
  }

  let value: unknown;
  if (f?.kind === 'notData') {
    value = f.value === 'noData' ? { shape: recipe.shape } : f.value === 'dataNumber' ? { data: 3 } : data;
  } else if (recipe.wrap === 'bare' && datatypeField === undefined) {
    value = data;
  } else {
    const t: Record<string, unknown> = { data };
    if (explicitShape !== undefined) t.shape = explicitShape;
    if (datatypeField !== undefined) t.datatype = datatypeField;
    value = t;
  }
  if (broken) {
    fault({ hard: true, why: `${input.name}: ${JSON.stringify(f, bigintSafe)}`, names: where });
    return { value };
  }

  const resolved = resolveShape(model, input, explicitShape, count);
  if (resolved.fault === 'hard') {
    fault({ hard: true, why: `${input.name}: ${resolved.why}`, names: where });
    return { value };
  }
  return { value, typed, echo: { datatype: dt, shape: resolved.shape!, bytes, elements } };
}

export function bigintSafe(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (v instanceof Uint8Array) return `Uint8Array[${Array.from(v).join(',')}]`;
  return v;
}

function buildInto(
  recipe: IntoRecipe,
  out: IoDef,
  echo: InputOutcome['echo'],
  typed: ArrayBufferView | undefined,
  fault: (f: Fault) => void,
): { value: unknown; into?: ExpectedTensor['into'] } {
  const dt = out.datatype;
  const where = [...outputWords(out.name), 'into'];
  const bytes =
    dt === 'BYTES' ? lengthPrefixed(echo?.elements ?? []).byteLength : (echo?.bytes?.byteLength ?? 4);
  const kind = dt === 'BYTES' ? 'Uint8Array' : CANONICAL[dt];
  const size = CTORS[kind]!.BYTES_PER_ELEMENT;
  const exact = () => new CTORS[kind]!(bytes / size);
  switch (recipe.kind) {
    case 'exact': {
      const v = exact();
      return { value: v, into: { view: v, exact: true, sameType: true } };
    }
    case 'larger': {
      const v = new CTORS[kind]!(bytes / size + 3);
      return { value: v, into: { view: v, exact: false, sameType: true } };
    }
    case 'offset': {
      const v = viewOf(kind, new Uint8Array(bytes), 'plain', 2);
      return { value: v, into: { view: v, exact: true, sameType: true } };
    }
    case 'shared': {
      const v = viewOf(kind, new Uint8Array(bytes), 'shared', 0);
      return { value: v, into: { view: v, exact: true, sameType: true } };
    }
    case 'dataview': {
      const v = new DataView(new ArrayBuffer(bytes + 5), 5, bytes);
      return { value: v, into: { view: v, exact: true, sameType: false } };
    }
    case 'alias': {
      if (typed !== undefined && typed.byteLength === bytes && kindFits(typed.constructor.name, dt)) {
        const sameType = typed.constructor.name === kind;
        if ((typed.buffer as ArrayBuffer & { resizable?: boolean }).resizable === true) {
          fault({
            hard: false,
            why: `${out.name}.into on a resizable ArrayBuffer`,
            names: [...where, 'resizable'],
          });
        }
        return { value: typed, into: { view: typed, exact: true, sameType } };
      }
      const v = exact();
      return { value: v, into: { view: v, exact: true, sameType: true } };
    }
    case 'resizable': {
      const v = viewOf(kind, new Uint8Array(bytes), 'resizable', 0);
      fault({
        hard: false,
        why: `${out.name}.into on a resizable ArrayBuffer`,
        names: [...where, 'resizable'],
      });
      return { value: v, into: { view: v, exact: true, sameType: true } };
    }
    case 'small': {
      if (bytes === 0) {
        const v = exact();
        return { value: v, into: { view: v, exact: true, sameType: true } };
      }
      fault({ hard: true, why: `${out.name}.into holds ${bytes - size} of ${bytes} bytes`, names: where });
      return { value: new CTORS[kind]!(bytes / size - 1) };
    }
    case 'detached': {
      const v = exact();
      detach(v);
      fault({ hard: true, why: `${out.name}.into is detached`, names: where });
      return { value: v };
    }
    case 'wrongKind': {
      const ctor = CTORS[recipe.array]!;
      const v = new ctor(Math.ceil(bytes / ctor.BYTES_PER_ELEMENT) + 1);
      if (kindFits(recipe.array, dt)) {
        return {
          value: v,
          into: { view: v, exact: v.byteLength === bytes, sameType: recipe.array === kind },
        };
      }
      // A BYTES output is bytes: whether other views may hold it is the library's call.
      fault({
        hard: dt !== 'BYTES',
        why: `${out.name} (${dt}) into a ${recipe.array}`,
        names: where,
      });
      return { value: v, into: { view: v, exact: false, sameType: false } };
    }
    case 'notView': {
      fault({ hard: true, why: `${out.name}.into is a ${recipe.value}`, names: where });
      return {
        value: { number: 8, arraybuffer: new ArrayBuffer(bytes), array: [0, 0], string: 'buf' }[recipe.value],
      };
    }
  }
}

function memoryFault(what: string, memory: unknown, fault: (f: Fault) => void, extra: string[] = []): void {
  if (memory === undefined || memory === 'cpu') return;
  const gpuLike =
    memory === 'pinned' ||
    memory === 'gpu' ||
    (typeof memory === 'object' && memory !== null && (memory as { type?: unknown }).type === 'gpu');
  fault({
    hard: !gpuLike,
    why: `${what} ${JSON.stringify(memory)}`,
    names: gpuLike ? [what, ...extra, 'pinned', 'gpu', 'cuda'] : [what, ...extra],
  });
}

/** Builds the request of a recipe (fresh objects every time) and works out what must happen. */
export function buildCall(recipe: CallRecipe): BuiltCall {
  const def = FUZZ_MODELS[recipe.model]!;
  const faults: Fault[] = [];
  const fault = (f: Fault) => faults.push(f);
  const pick = (p: Choice<unknown>, why: string, names: string[]) => {
    if (p.fault !== undefined) {
      fault({ hard: p.fault === 'hard', why: `${why} ${describeValue(p.value)}`, names });
    }
    return p.value;
  };

  // The model and its version.
  const modelName = recipe.modelName.value;
  if (recipe.modelName.fault !== undefined) {
    // An error about it says "model name", or names the model as given
    // ("unknown model: 'x'"); naming the model without what follows a NUL is the bug.
    const names = ['model name'];
    if (typeof modelName === 'string' && modelName !== '') names.push(...nameWords(modelName));
    fault({ hard: true, why: `model name ${describeValue(modelName)}`, names });
  }
  const version = pick(recipe.version, 'version', ['version']);
  const onHandle = recipe.via !== 'infer' && recipe.versionOn === 'handle';
  const versionOk = recipe.version.fault === undefined;
  const expectedVersion =
    versionOk && typeof version === 'number' && version > 0
      ? version
      : def.versions[def.versions.length - 1]!;
  if (def.decoupled && recipe.via !== 'stream') {
    fault({ hard: true, why: 'infer() on a decoupled model', names: ['stream()', 'decoupled'] });
  }

  // Inputs.
  const inputs: Record<string, unknown> = {};
  const proto: Record<string, unknown> = {};
  const echoes = new Map<string, InputOutcome>();
  for (const input of def.inputs) {
    const r = recipe.inputs[input.name]!;
    if (r.missing) {
      if (!input.optional) {
        fault({ hard: true, why: `${input.name} missing`, names: nameWords(input.name) });
      }
      continue;
    }
    const built = buildInput(def, input, r, fault);
    if (r.inherited) {
      proto[input.name] = built.value;
      // Either the library takes it, or refuses it as missing: both name it.
      fault({ hard: false, why: `${input.name} inherited`, names: nameWords(input.name) });
    } else {
      inputs[input.name] = built.value;
    }
    echoes.set(input.name, built);
  }
  for (const extra of recipe.extraInputs) {
    const value = new Float32Array([1]);
    if (extra.inherited) proto[extra.name] = value;
    else inputs[extra.name] = value;
    fault({ hard: !extra.inherited, why: `unknown input '${extra.name}'`, names: nameWords(extra.name) });
  }
  let inputsValue: unknown =
    Object.keys(proto).length > 0 ? Object.assign(Object.create(proto), inputs) : inputs;
  if (recipe.inputsBad !== undefined) {
    inputsValue = recipe.inputsBad;
    fault({ hard: true, why: `inputs ${describeValue(recipe.inputsBad)}`, names: ['request.inputs'] });
  }

  // Outputs: which ones come back, and into what.
  const request: Record<string, unknown> = { inputs: inputsValue };
  const wanted = new Map<string, ExpectedTensor['into'] | undefined>();
  let allOutputs = false;
  const o = recipe.outputs;
  const known = new Set(def.outputs.map((x) => x.name));
  const echoOf = (outName: string) => {
    const idx = def.outputs.findIndex((x) => x.name === outName);
    const input = def.inputs[idx];
    return input === undefined ? undefined : echoes.get(input.name);
  };
  if (o.kind === 'default') {
    allOutputs = true;
  } else if (o.kind === 'bad') {
    request.outputs = o.value;
    fault({ hard: true, why: `outputs ${describeValue(o.value)}`, names: ['request.outputs', 'outputs'] });
  } else if (o.kind === 'list') {
    request.outputs = [...o.names];
    if (o.names.length === 0) {
      fault({ hard: false, why: 'outputs: []', names: ['request.outputs', 'outputs'] });
    }
    const seen = new Set<unknown>();
    for (const n of o.names) {
      if (typeof n !== 'string' || !known.has(n)) {
        fault({ hard: true, why: `unknown output ${describeValue(n)}`, names: nameWords(String(n)) });
      } else if (seen.has(n)) {
        fault({ hard: true, why: `output ${n} twice`, names: nameWords(n) });
      }
      seen.add(n);
      if (typeof n === 'string') wanted.set(n, undefined);
    }
  } else {
    const outputs: Record<string, unknown> = {};
    if (o.entries.length === 0)
      fault({ hard: false, why: 'outputs: {}', names: ['request.outputs', 'outputs'] });
    for (const e of o.entries) {
      const out = def.outputs.find((x) => x.name === e.name);
      if (out === undefined) {
        fault({ hard: true, why: `unknown output '${e.name}'`, names: nameWords(e.name) });
        outputs[e.name] = true;
        continue;
      }
      if (e.form === 'true') {
        outputs[e.name] = true;
        wanted.set(e.name, undefined);
        continue;
      }
      const opts: Record<string, unknown> = {};
      let into: ExpectedTensor['into'] | undefined;
      if (e.form === 'options') {
        if (e.into !== undefined) {
          const echo = echoOf(e.name);
          const built = buildInto(e.into, out, echo?.echo, echo?.typed, fault);
          opts.into = built.value;
          into = built.into;
        }
        if (e.memory !== undefined) {
          opts.memory = e.memory;
          memoryFault(`request.outputs.${e.name}.memory`, e.memory, fault, outputWords(e.name));
        }
        if (e.device !== undefined) {
          opts.device = e.device;
          if (!(typeof e.device === 'number' && Number.isSafeInteger(e.device) && e.device >= 0)) {
            fault({ hard: true, why: `device ${describeValue(e.device)}`, names: outputWords(e.name) });
          }
        }
        if (e.unknownKey !== undefined) {
          opts[e.unknownKey] = true;
          fault({ hard: true, why: `unknown key ${e.unknownKey}`, names: [e.unknownKey] });
        }
      }
      outputs[e.name] = opts;
      wanted.set(e.name, into);
    }
    request.outputs = outputs;
  }

  // Everything else on the request.
  const params = recipe.parameters;
  if (params.fault !== undefined) {
    request.parameters = pick(params, 'parameters', ['parameters']);
  } else if (Array.isArray(params.value)) {
    const obj: Record<string, unknown> = {};
    const last = new Map<string, Choice<unknown>>();
    for (const [k, v] of params.value as Array<[string, Choice<unknown>]>) {
      obj[k] = v.value;
      last.set(k, v);
    }
    for (const [k, v] of last) {
      pick(v, `parameters.${k} =`, ['parameter', ...nameWords(k)]);
      if (k.includes('\0')) {
        fault({
          hard: true,
          why: `parameter name ${JSON.stringify(k)}`,
          names: ['parameter', ...nameWords(k)],
        });
      }
      if (k === '') fault({ hard: false, why: 'parameter name ""', names: ['parameter'] });
    }
    request.parameters = obj;
  }
  const id = pick(recipe.id, 'id', ['request.id', 'request id']);
  const put = (key: string, p: Choice<unknown>, names: string[]) => {
    const v = pick(p, key, names);
    if (v !== undefined || p.fault !== undefined) request[key] = v;
    return v;
  };
  if (recipe.id.value !== undefined || recipe.id.fault !== undefined) request.id = id;
  put('correlationId', recipe.correlationId, ['correlationId', 'correlation id']);
  put('priority', recipe.priority, ['priority']);
  const timeout = recipe.timeoutMicroseconds;
  if (timeout.fault === 'soft') {
    request.timeoutMicroseconds = timeout.value;
    fault({ hard: false, why: `timeout ${timeout.value} us`, names: ['timeout', 'timed out', 'expired'] });
  } else {
    put('timeoutMicroseconds', timeout, ['timeoutMicroseconds']);
  }
  const timing = put('timing', recipe.timing, ['request.timing', 'timing']) === true;
  if (recipe.outputMemory.fault !== undefined) {
    request.outputMemory = recipe.outputMemory.value;
    memoryFault('outputMemory', recipe.outputMemory.value, fault);
  } else if (recipe.outputMemory.value !== undefined) {
    request.outputMemory = recipe.outputMemory.value;
  }
  put('outputDevice', recipe.outputDevice, ['outputDevice']);
  if (!onHandle && (version !== undefined || recipe.version.fault !== undefined)) request.version = version;
  if (recipe.unknownKey !== undefined) {
    request[recipe.unknownKey] = 1;
    fault({
      hard: true,
      why: `unknown request key ${recipe.unknownKey}`,
      names: nameWords(recipe.unknownKey),
    });
  }

  // The signal.
  let signal: AbortSignal | undefined;
  let abortLater: (() => void) | undefined;
  const abortNames = ['abort'];
  switch (recipe.signal) {
    case 'none':
      break;
    case 'fresh':
      signal = new AbortController().signal;
      break;
    case 'aborted':
      signal = AbortSignal.abort(new Error('fuzz: aborted before the call'));
      fault({ hard: true, why: 'signal already aborted', names: abortNames });
      break;
    case 'timeoutSignal':
      signal = AbortSignal.timeout(1);
      fault({ hard: false, why: 'AbortSignal.timeout(1)', names: abortNames });
      break;
    case 'notSignal':
      request.signal = { aborted: true, addEventListener() {}, removeEventListener() {} };
      fault({ hard: true, why: 'signal is not an AbortSignal', names: ['request.signal', 'AbortSignal'] });
      break;
    default: {
      const controller = new AbortController();
      signal = controller.signal;
      const abort = () => controller.abort(new Error('fuzz: aborted mid-flight'));
      abortLater = {
        abortSync: () => abort(),
        abortMicrotask: () => queueMicrotask(abort),
        abortImmediate: () => setImmediate(abort),
        abortTimeout: () => setTimeout(abort, 1),
      }[recipe.signal];
      fault({ hard: false, why: `signal ${recipe.signal}`, names: abortNames });
    }
  }
  if (signal !== undefined) request.signal = signal;

  // Streams: highWaterMark.
  let streamOptions: unknown = {};
  if (recipe.via === 'stream') {
    const hwm = recipe.highWaterMark;
    if (hwm.value !== undefined) streamOptions = { highWaterMark: hwm.value };
    if (hwm.fault !== undefined) {
      fault({
        hard: hwm.fault === 'hard',
        why: `highWaterMark ${String(hwm.value)}`,
        names: ['highWaterMark'],
      });
    }
  }

  let finalRequest: unknown = request;
  if (recipe.requestBad !== undefined) {
    finalRequest = recipe.requestBad;
    fault({ hard: true, why: `request ${describeValue(recipe.requestBad)}`, names: ['request'] });
  }

  // What comes back.
  let expected: ExpectedResponse[] | undefined;
  if (!def.decoupled) {
    const outputs = new Map<string, ExpectedTensor>();
    const optional = new Set<string>();
    const names = allOutputs ? def.outputs.map((x) => x.name) : [...wanted.keys()];
    for (const name of names) {
      const out = def.outputs.find((x) => x.name === name);
      const echo = echoOf(name)?.echo;
      if (out === undefined) continue;
      if (echo === undefined) {
        // Its input is missing or broken: fine only for an optional input left out.
        const idx = def.outputs.indexOf(out);
        const input = def.inputs[idx]!;
        if (input.optional && recipe.inputs[input.name]!.missing) {
          optional.add(name);
          fault({
            hard: false,
            why: `${name} asked for without optional ${input.name}`,
            names: [...nameWords(input.name), ...nameWords(name)],
          });
        }
        continue;
      }
      outputs.set(name, {
        name,
        datatype: out.datatype,
        shape: echo.shape,
        ...echoData(echo),
        into: wanted.get(name),
      });
    }
    expected = [{ outputs, optional }];
  } else {
    expected = decoupledExpectation(def, recipe, fault);
  }

  return {
    recipe,
    modelName,
    handleVersion: onHandle ? version : undefined,
    request: finalRequest,
    streamOptions,
    signal,
    abortLater,
    faults,
    expected,
    expectedModel: def.name,
    expectedVersion,
    expectedId: typeof id === 'string' ? id : undefined,
    timing,
  };
}

function echoData(echo: NonNullable<InputOutcome['echo']>): Pick<ExpectedTensor, 'bytes' | 'elements'> {
  return echo.elements !== undefined ? { elements: echo.elements } : { bytes: echo.bytes! };
}

/** repeat: one response per IN element (OUT = IN[i], IDX = i); square: IN responses of OUT = IN. */
function decoupledExpectation(
  def: ModelDef,
  recipe: CallRecipe,
  fault: (f: Fault) => void,
): ExpectedResponse[] {
  const missing = def.inputs.some((i) => recipe.inputs[i.name]!.missing);
  if (missing) return [];
  const o = recipe.outputs;
  const filtered = o.kind === 'list' || o.kind === 'object';
  const wantedNames =
    o.kind === 'list'
      ? o.names.filter((n): n is string => typeof n === 'string')
      : o.kind === 'object'
        ? o.entries.map((e) => e.name)
        : def.outputs.map((x) => x.name);
  const int32 = (n: number) => new Uint8Array(new Int32Array([n]).buffer);
  const uint32 = (n: number) => new Uint8Array(new Uint32Array([n]).buffer);
  const tensor = (name: string, datatype: DataType, bytes: Uint8Array): [string, ExpectedTensor] => [
    name,
    { name, datatype, shape: [1], bytes },
  ];
  // Asked for a subset, a response has those outputs and may have the others (the
  // backend decides); asked for none, it has none.
  const response = (entries: Array<[string, ExpectedTensor]>): ExpectedResponse => {
    const none = filtered && wantedNames.length === 0;
    const outputs = new Map(none ? [] : entries);
    const optional = new Set(filtered ? [...outputs.keys()].filter((n) => !wantedNames.includes(n)) : []);
    return { outputs, optional };
  };
  if (def.name === 'square_int32') {
    const n = recipe.inputs.IN!.values![0]!;
    return Array.from({ length: n }, () => response([tensor('OUT', 'INT32', int32(n))]));
  }
  const values = recipe.inputs.IN!.values!;
  const delays = recipe.inputs.DELAY!.values!;
  if (values.length !== delays.length) {
    fault({ hard: true, why: 'IN and DELAY lengths differ', names: ['DELAY'] });
    return [];
  }
  return values.map((v, i) =>
    response([tensor('OUT', 'INT32', int32(v)), tensor('IDX', 'UINT32', uint32(i))]),
  );
}

export function describeValue(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return String(v);
  try {
    return JSON.stringify(v, bigintSafe) ?? String(v);
  } catch {
    return String(v);
  }
}
