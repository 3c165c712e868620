/**
 * Where an ONNX model file says its tensors' data is: TensorProto's
 * `external_data` entry `location`, a path ONNX Runtime opens relative to
 * the model file's folder (or as given when absolute). Triton's onnxruntime
 * backend loads whatever it names, so a model can read any file the server
 * can: `/etc/hostname`, `../../secret.bin`, a link out of its folder. Read
 * with a protobuf wire reader of our own that walks only the messages that
 * can hold a tensor and skips tensor bytes by their length (a file is read a
 * window at a time, never whole). Used by `lint` (onnx-external-data) and by
 * `deploy()` / `loadModel({ files })`, which refuse such model files.
 */
import { constants, closeSync, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

/** One tensor's external data location, as written in the model file. */
export interface OnnxExternalData {
  tensor: string;
  location: string;
}

/** Nesting deeper than protobuf's default limit: ONNX Runtime refuses it too. */
const MAX_DEPTH = 100;
/** The longest tensor name kept (names are for messages). */
const NAME_LIMIT = 4096;
/** Longer than any path: reported as it is, not read. */
const LOCATION_LIMIT = 64 * 1024;
/** ONNX Runtime's tag for a location that is a memory address (its offset the pointer). */
const MEMORY_ADDRESS_TAG = '*/_ORT_MEM_ADDR_/*';

/** Bytes to walk: a buffer, or a file read a window at a time. */
interface Source {
  readonly size: number;
  byte(pos: number): number;
  slice(pos: number, length: number): Uint8Array;
}

function bufferSource(bytes: Uint8Array): Source {
  return {
    size: bytes.length,
    byte: (pos) => bytes[pos]!,
    slice: (pos, length) => bytes.subarray(pos, pos + length),
  };
}

const WINDOW = 64 * 1024;

function fileSource(fd: number, size: number): Source {
  const window = Buffer.allocUnsafe(WINDOW);
  let start = 0;
  let filled = 0;
  const load = (pos: number) => {
    start = pos;
    filled = readSync(fd, window, 0, Math.min(WINDOW, size - pos), pos);
  };
  return {
    size,
    byte(pos) {
      if (pos < start || pos >= start + filled) load(pos);
      if (pos >= start + filled) throw new Error('the file changed while it was read');
      return window[pos - start]!;
    },
    slice(pos, length) {
      const out = Buffer.allocUnsafe(length);
      const got = readSync(fd, out, 0, length, pos);
      if (got !== length) throw new Error('the file changed while it was read');
      return out;
    },
  };
}

/** The onnx.proto messages that lead to a TensorProto. */
type Kind = 'model' | 'training' | 'function' | 'graph' | 'node' | 'attribute' | 'sparse' | 'tensor';

/** For each message, its length-delimited fields that hold a message leading to a tensor. */
const CHILDREN: Record<Kind, Record<number, Kind>> = {
  model: { 7: 'graph', 20: 'training', 25: 'function' }, // graph, training_info, functions
  training: { 1: 'graph', 2: 'graph' }, // initialization, algorithm
  function: { 7: 'node', 11: 'attribute' }, // node, attribute_proto
  graph: { 1: 'node', 5: 'tensor', 15: 'sparse' }, // node, initializer, sparse_initializer
  node: { 5: 'attribute' }, // attribute
  attribute: { 5: 'tensor', 6: 'graph', 10: 'tensor', 11: 'graph', 22: 'sparse', 23: 'sparse' },
  sparse: { 1: 'tensor', 2: 'tensor' }, // values, indices
  tensor: {},
};

interface Field {
  number: number;
  wire: number;
  /** Length-delimited: where the payload starts, and its length. */
  at: number;
  length: number;
}

class MalformedModel extends Error {}

/** Reads the fields of one message, [pos, end) of the source. */
class Fields {
  constructor(
    private readonly src: Source,
    private pos: number,
    private readonly end: number,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  #varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) break;
      const b = this.src.byte(this.pos++);
      value += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) return value;
    }
    throw new MalformedModel('a malformed varint');
  }

  #take(n: number): void {
    if (n > this.end - this.pos) throw new MalformedModel('a field longer than its message');
    this.pos += n;
  }

  next(): Field {
    const key = this.#varint();
    const number = Math.floor(key / 8);
    const wire = key % 8;
    if (number === 0) throw new MalformedModel('a field number 0');
    const field: Field = { number, wire, at: 0, length: 0 };
    this.#skip(field, 0);
    return field;
  }

  #skip(f: Field, depth: number): void {
    switch (f.wire) {
      case 0:
        this.#varint();
        return;
      case 1:
        this.#take(8);
        return;
      case 5:
        this.#take(4);
        return;
      case 2: {
        const n = this.#varint();
        f.at = this.pos;
        f.length = n;
        this.#take(n);
        return;
      }
      case 3: // a group (deprecated, still parsed as an unknown field): up to its end
        if (depth >= MAX_DEPTH) throw new MalformedModel('groups nested too deep');
        for (;;) {
          const key = this.#varint();
          const inner: Field = { number: Math.floor(key / 8), wire: key % 8, at: 0, length: 0 };
          if (inner.wire === 4) {
            if (inner.number === f.number) return;
            throw new MalformedModel('a group end that matches no group');
          }
          this.#skip(inner, depth + 1);
        }
      default:
        throw new MalformedModel(`a malformed value of field ${f.number}`);
    }
  }
}

const decoder = new TextDecoder();

function text(src: Source, f: Field, limit: number): string {
  return decoder.decode(src.slice(f.at, Math.min(f.length, limit)));
}

/** A StringStringEntryProto's value when its key is "location" (the last key and value given win). */
function entryLocation(src: Source, at: number, end: number): string | undefined {
  const fields = new Fields(src, at, end);
  let key: string | undefined;
  let value: string | undefined;
  while (!fields.done) {
    const f = fields.next();
    if (f.wire !== 2) continue;
    if (f.number === 1) key = f.length === 8 ? text(src, f, 8) : '';
    if (f.number === 2) {
      value =
        f.length > LOCATION_LIMIT
          ? `${text(src, f, 64)}… (${f.length} bytes, longer than any path)`
          : text(src, f, LOCATION_LIMIT);
    }
  }
  return key === 'location' ? (value ?? '') : undefined;
}

function walk(
  src: Source,
  kind: Kind,
  at: number,
  end: number,
  depth: number,
  out: OnnxExternalData[],
): void {
  if (depth > MAX_DEPTH) throw new MalformedModel('messages nested too deep');
  const fields = new Fields(src, at, end);
  if (kind === 'tensor') {
    let name = '';
    const locations: string[] = [];
    while (!fields.done) {
      const f = fields.next();
      if (f.wire !== 2) continue;
      if (f.number === 8) name = text(src, f, NAME_LIMIT);
      if (f.number === 13) {
        const location = entryLocation(src, f.at, f.at + f.length);
        if (location !== undefined) locations.push(location);
      }
    }
    for (const location of locations) out.push({ tensor: name, location });
    return;
  }
  while (!fields.done) {
    const f = fields.next();
    const child = f.wire === 2 ? CHILDREN[kind][f.number] : undefined;
    if (child !== undefined) walk(src, child, f.at, f.at + f.length, depth + 1, out);
  }
}

/**
 * Every external data location of a serialized ModelProto (a file path, or
 * its bytes): initializers, sparse initializers, tensor attributes, graphs
 * nested in attributes, training graphs and functions. Throws an Error
 * saying what is malformed when the bytes are no ModelProto.
 */
export function findOnnxExternalData(model: string | Uint8Array): OnnxExternalData[] {
  const out: OnnxExternalData[] = [];
  const run = (src: Source) => {
    try {
      walk(src, 'model', 0, src.size, 0, out);
    } catch (err) {
      if (err instanceof MalformedModel) throw new Error(`not an ONNX model: ${err.message}`);
      throw err;
    }
  };
  if (typeof model !== 'string') {
    run(bufferSource(model));
    return out;
  }
  // O_NONBLOCK: a FIFO opens at once, and is refused below.
  const fd = openSync(model, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error('not a regular file');
    run(fileSource(fd, stats.size));
  } finally {
    closeSync(fd);
  }
  return out;
}

/**
 * Why `location` is not a file inside the version folder (lexically: the
 * model file's folder `modelDir`, relative to the version folder `versionDir`;
 * both paths as ONNX Runtime would join them), or undefined.
 */
export function externalLocationProblem(
  location: string,
  modelDir: string,
  versionDir: string,
): string | undefined {
  if (location === MEMORY_ADDRESS_TAG) return "ONNX Runtime's tag for a memory address, not a file";
  if (location.startsWith('/') || location.startsWith('\\')) return 'an absolute path';
  if (location.split(/[/\\]/).includes('..')) return "a path with a '..' segment";
  const target = resolve(modelDir, location);
  const root = resolve(versionDir);
  if (!target.startsWith(root + sep)) return 'a path outside the version folder';
  return undefined;
}

/**
 * `externalLocationProblem`, then, for a file that exists, whether its real
 * path (links followed) stays inside the version folder's.
 */
export function externalFileProblem(
  location: string,
  modelFile: string,
  versionDir: string,
): string | undefined {
  const lexical = externalLocationProblem(location, dirname(modelFile), versionDir);
  if (lexical !== undefined) return lexical;
  let real: string;
  let root: string;
  try {
    real = realpathSync(join(dirname(modelFile), location));
    root = realpathSync(versionDir);
  } catch {
    return undefined; // not there: ONNX Runtime's load fails and says so
  }
  return real.startsWith(root + sep) ? undefined : `a link to ${real}`;
}

/**
 * For an ONNX file about to be written (its bytes, and its path inside its
 * version folder, '/'-joined): why Triton's onnxruntime backend would read
 * its external data from outside that folder, or why the bytes cannot be
 * checked; undefined when every location stays inside.
 */
export function onnxBytesProblem(bytes: Uint8Array, pathInVersion: string): string | undefined {
  let found: OnnxExternalData[];
  try {
    found = findOnnxExternalData(bytes);
  } catch (err) {
    return `it cannot be read as an ONNX model to check where its tensors' data is (${(err as Error).message})`;
  }
  const versionDir = '/version';
  const modelDir = dirname(join(versionDir, pathInVersion));
  for (const { tensor, location } of found) {
    const why = externalLocationProblem(location, modelDir, versionDir);
    if (why === undefined) continue;
    return `tensor '${tensor}' has its external data at '${location}', ${why}, outside its version folder: Triton's onnxruntime backend would read that file`;
  }
  return undefined;
}
