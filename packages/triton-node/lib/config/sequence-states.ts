/**
 * The size of a sequence model's implicit state (`sequence_batching.state`):
 * Triton allocates each state in host memory for every sequence it starts,
 * and each initial state once, when it loads the model. A config can ask
 * for more than any machine has (`dims: [1099511627776]`); real r25.07 then
 * crashes the process while it loads the model (a `zero_data` initial
 * state: its allocation fails and the memset that follows writes through a
 * null pointer) or fails each sequence's first request (a state without
 * one). triton-node refuses the first kind of load itself, on every library,
 * and `lint` flags any state far above what a state needs.
 */
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { elementSize, fromConfigType } from './datatypes.js';
import { readRepositoryFileSync } from './files.js';
import { type Int64, type ModelConfig, parseModelConfig } from './model-config.js';

/** One state, or one of its initial states, and what a sequence's copy of it takes. */
export interface SequenceStateSize {
  /** The state's input_name. */
  state: string;
  /** Index of the state in `sequence_batching.state`. */
  index: number;
  /** 'state', or the initial state's name. */
  of: 'state' | { initialState: string; index: number };
  dims: Int64[];
  dataType: string;
  /** Bytes (a state's per sequence; a variable dimension counts 1; Infinity past a double's range). */
  bytes: number;
}

/**
 * Bytes of one element for the size check: the datatype's size; a BYTES
 * element at least its 4-byte length.
 */
function bytesPerElement(dataType: unknown): number {
  const datatype = typeof dataType === 'string' ? fromConfigType(dataType) : undefined;
  if (datatype === undefined) return 1;
  return datatype === 'BYTES' ? 4 : elementSize(datatype);
}

/** Bytes of `dims` elements (a -1 counts one); NaN dims count as Infinity. */
function bytesOf(dims: readonly Int64[], dataType: unknown): number {
  let bytes = bytesPerElement(dataType);
  for (const d of dims) {
    const n = Number(d);
    if (Number.isNaN(n)) return Number.POSITIVE_INFINITY;
    bytes *= n < 0 ? 1 : n;
  }
  return bytes;
}

/** Every state and initial state of `config` with its bytes per sequence. */
export function sequenceStateSizes(config: ModelConfig): SequenceStateSize[] {
  const out: SequenceStateSize[] = [];
  const states = config.sequence_batching?.state;
  if (!Array.isArray(states)) return out;
  states.forEach((s, index) => {
    const state = String(s?.input_name ?? '');
    const dims = Array.isArray(s?.dims) ? s.dims : [];
    const dataType = String(s?.data_type ?? 'TYPE_INVALID');
    out.push({ state, index, of: 'state', dims, dataType, bytes: bytesOf(dims, dataType) });
    const inits = Array.isArray(s?.initial_state) ? s.initial_state : [];
    inits.forEach((init, i) => {
      const initDims = Array.isArray(init?.dims) ? init.dims : [];
      const initType = String(init?.data_type ?? dataType);
      out.push({
        state,
        index,
        of: { initialState: String(init?.name ?? ''), index: i },
        dims: initDims,
        dataType: initType,
        bytes: bytesOf(initDims, initType),
      });
    });
  });
  return out;
}

/** "state 'S'" or "initial_state 'I' of state 'S'", with its dims, type and size. */
export function sequenceStateText(s: SequenceStateSize): string {
  const what =
    s.of === 'state' ? `state '${s.state}'` : `initial_state '${s.of.initialState}' of state '${s.state}'`;
  const size =
    Number.isFinite(s.bytes) && s.bytes <= Number.MAX_SAFE_INTEGER
      ? `${s.bytes} bytes`
      : 'more bytes than 64 bits count';
  return `sequence_batching ${what}: dims [${s.dims.join(', ')}] of ${s.dataType} take ${size}${s.of === 'state' ? ' per sequence' : ''}`;
}

/**
 * Why a load of `config` must not reach Triton: an initial state larger than
 * the machine's memory (`limit`, default the total memory), which r25.07
 * allocates and zero-fills while it loads the model, crashing the process
 * when the allocation fails. (A state without one fails each sequence's
 * first request there instead; the fake engine refuses both.) Undefined
 * when every initial state fits.
 */
export function oversizedInitialState(config: ModelConfig, limit = totalmem()): string | undefined {
  const over = sequenceStateSizes(config).find((s) => s.of !== 'state' && !(s.bytes <= limit));
  if (over === undefined) return undefined;
  return `${sequenceStateText(over)}, more than this machine's ${limit} bytes of memory (Triton allocates it when it loads the model, and r25.07 crashes the process when that fails)`;
}

/**
 * `oversizedInitialState` of the model `name` (its `config`, else what
 * `readConfig` reads from the repository) and of every model an ensemble
 * among them composes (Triton loads those with it), as "model 'x': ...".
 * `readConfig` returns undefined for a model it cannot read (Triton says
 * why itself).
 */
export function oversizedInitialStateOf(
  name: string,
  config: ModelConfig | undefined,
  readConfig: (model: string) => ModelConfig | undefined,
  limit = totalmem(),
): string | undefined {
  const seen = new Set<string>();
  const visit = (model: string, given: ModelConfig | undefined): string | undefined => {
    if (seen.has(model)) return undefined;
    seen.add(model);
    const c = given ?? readConfig(model);
    if (c === undefined) return undefined;
    const problem = oversizedInitialState(c, limit);
    if (problem !== undefined) return `model '${model}': ${problem}`;
    const steps = c.ensemble_scheduling?.step;
    for (const step of Array.isArray(steps) ? steps : []) {
      const composed = typeof step?.model_name === 'string' ? visit(step.model_name, undefined) : undefined;
      if (composed !== undefined) return composed;
    }
    return undefined;
  };
  return visit(name, config);
}

/** A model folder's config (`configFile`, default `dir/config.pbtxt`), or undefined when it does not read. */
export function readModelConfigIn(
  dir: string,
  configFile = join(dir, 'config.pbtxt'),
): ModelConfig | undefined {
  try {
    return parseModelConfig(readRepositoryFileSync(configFile));
  } catch {
    return undefined;
  }
}
