/**
 * The decoder of the addon's event encoding: a drain's events arrive as
 * numbers in a Float64Array, values and a slab of small outputs, and become
 * NativeEvents here (the layout: `NativeEventDecoder` in lib/abi/binding.ts).
 * It runs once per drain, on every response: it builds each object as a
 * literal, and every event with the same keys (absent ones undefined), so
 * that V8 gives them one shape.
 * @internal
 * @packageDocumentation
 */
import {
  DATATYPE_NAMES,
  EVENT_FLAGS,
  EVENT_PARAMETER_TYPES,
  MEMORY_TYPES,
  type NativeErrorInfo,
  type NativeEvent,
  type NativeEventDecoder,
  type NativeOutput,
} from '../abi/binding.js';

type ParameterValue = string | number | boolean | undefined;
type Parameters = Record<string, string | number | boolean>;

/** Datatype names by TRITONSERVER_DataType code (0: an unknown type). */
const DATATYPES_BY_CODE: readonly string[] = ['INVALID', ...DATATYPE_NAMES];

const {
  outputs: HAS_OUTPUTS,
  error: HAS_ERROR,
  parameters: HAS_PARAMETERS,
  model: HAS_MODEL,
  id: HAS_ID,
} = EVENT_FLAGS;
const {
  string: PARAM_STRING,
  int: PARAM_INT,
  bool: PARAM_BOOL,
  double: PARAM_DOUBLE,
} = EVENT_PARAMETER_TYPES;

/** A maker of one parameters object from `v`, compiled for one list of names. */
function compileMaker(names: readonly string[]): ((v: ParameterValue[]) => Parameters) | null {
  if (names.length > 32 || names.includes('__proto__')) return null;
  const fields = names.map((s, k) => `${JSON.stringify(s)}: v[${k}]`);
  try {
    return new Function('v', `return { ${fields.join(', ')} };`) as (v: ParameterValue[]) => Parameters;
  } catch {
    return null;
  }
}

/** A shape of `dims` dims from `n` at `i`: array literals for the usual ranks (cheaper than push). */
function shapeAt(n: Float64Array, i: number, dims: number): number[] {
  if (dims === 1) return [n[i]!];
  if (dims === 2) return [n[i]!, n[i + 1]!];
  if (dims === 3) return [n[i]!, n[i + 1]!, n[i + 2]!];
  const shape: number[] = [];
  for (let d = 0; d < dims; d++) shape.push(n[i + d]!);
  return shape;
}

/**
 * Response parameters are made by a function compiled for the last list of
 * names (a model answers with the same names every time): an object literal,
 * not a property added by a computed name per parameter. A list with
 * '__proto__', or a runtime where code cannot be generated, is set one by one.
 */
class ParameterObjects {
  /** The names and values of the event being decoded, from index 0. */
  readonly names: string[] = [];
  readonly values: ParameterValue[] = [];
  private lastNames: string[] = [];
  private make: ((v: ParameterValue[]) => Parameters) | null = null;

  /** The object of the first `count` names and values. */
  objectOf(count: number): Parameters {
    const { names, values } = this;
    let same = count === this.lastNames.length;
    for (let k = 0; same && k < count; k++) same = this.lastNames[k] === names[k];
    if (!same) {
      this.lastNames = names.slice(0, count);
      this.make = compileMaker(this.lastNames);
    }
    if (this.make !== null) return this.make(values);
    const p: Parameters = {};
    for (let k = 0; k < count; k++) {
      Object.defineProperty(p, names[k]!, {
        value: values[k],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return p;
  }
}

/**
 * A decoder for one server (its parameter makers are its own). The addon
 * calls this once per server, through the factory `setEventDecoder` was given.
 * One function: split into helpers for the outputs and the parameters, it
 * cost ~900 instructions more per event (callgrind), for the cursor each
 * helper must take and give back.
 */
export function createEventDecoder(): NativeEventDecoder {
  const makers = new ParameterObjects();
  const { names, values } = makers;
  return function decode(onEvents, n, end, strings, slab, base, list, ...rest) {
    const vals = list === undefined ? rest : list;
    const events: NativeEvent[] = [];
    let i = 0;
    let v = 0;
    while (i < end) {
      if (n[i++] === 0) {
        events.push(vals[v++] as NativeEvent);
        continue;
      }
      const token = n[i++]!;
      const final = n[i++] === 1;
      const flags = n[i++]!;
      let error: NativeErrorInfo | undefined;
      let outputs: NativeOutput[] | undefined;
      let parameters: Parameters | undefined;
      let model: string | undefined;
      let version: number | undefined;
      let id: string | undefined;
      if (flags & HAS_ERROR) error = vals[v++] as NativeErrorInfo;
      if (flags & HAS_OUTPUTS) {
        const count = n[i++]!;
        outputs = [];
        for (let k = 0; k < count; k++) {
          const ni = n[i++]!;
          const name = ni >= 0 ? strings[ni]! : (vals[v++] as string);
          const datatype = DATATYPES_BY_CODE[n[i++]!]!;
          const memoryType = MEMORY_TYPES[n[i++]!]!;
          const memoryTypeId = n[i++]!;
          const byteLength = n[i++]!;
          let data: NativeOutput['data'];
          let byteOffset: number;
          if (n[i++] === 1) {
            data = slab!;
            byteOffset = base + n[i++]!;
          } else {
            data = vals[v++] as NativeOutput['data'];
            byteOffset = n[i++]!;
          }
          const dims = n[i++]!;
          const shape = shapeAt(n, i, dims);
          i += dims;
          outputs.push({ name, datatype, shape, memoryType, memoryTypeId, byteLength, data, byteOffset });
        }
      }
      if (flags & HAS_PARAMETERS) {
        const count = n[i++]!;
        for (let k = 0; k < count; k++) {
          const pi = n[i++]!;
          names[k] = pi >= 0 ? strings[pi]! : (vals[v++] as string);
          const ptype = n[i++];
          let value: ParameterValue;
          if (ptype === PARAM_STRING) value = vals[v++] as string;
          else if (ptype === PARAM_BOOL) value = n[i++] === 1;
          else if (ptype === PARAM_INT || ptype === PARAM_DOUBLE) value = n[i++]!;
          values[k] = value;
        }
        parameters = makers.objectOf(count);
      }
      if (flags & HAS_MODEL) {
        const mi = n[i++]!;
        model = mi >= 0 ? strings[mi]! : (vals[v++] as string);
        version = n[i++]!;
      }
      if (flags & HAS_ID) id = vals[v++] as string;
      events.push({ token, final, error, outputs, parameters, model, version, id, timing: undefined });
    }
    if (onEvents === undefined) return events;
    onEvents(events);
    return undefined;
  };
}
