/**
 * Reads a model's `config.pbtxt` (protobuf text format) into the JSON form that
 * Triton accepts as a load-time `"config"` override. Needed where the binding
 * must send a model's full config with one field changed (`loadModel(name, {
 * versions })`): Triton refuses partial overrides.
 *
 * Text format has no notion of "repeated" or "map" without the schema, so the
 * fields of Triton's ModelConfig that are repeated or maps are listed here.
 * @internal
 * @packageDocumentation
 */

/** Repeated fields of ModelConfig and its messages (field names are unique enough). */
const REPEATED = new Set([
  'input',
  'output',
  'dims',
  'shape',
  'dim',
  'instance_group',
  'gpus',
  'preferred_batch_size',
  'versions',
  'step',
  'control_input',
  'control',
  'state',
  'initial_state',
  'batch_input',
  'batch_output',
  'source_input',
  'target_name',
  'model_warmup',
  'secondary_devices',
  'profile',
  'int32_false_true',
  'fp32_false_true',
  'bool_false_true',
  'graph_spec',
  'gpu_execution_accelerator',
  'cpu_execution_accelerator',
  'op_library_filename',
  'allowed_batch_size',
]);

/** Map fields: written as repeated `{ key: ... value: ... }` entries. */
const MAPS = new Set([
  'parameters',
  'input_map',
  'output_map',
  'cc_model_filenames',
  'metric_tags',
  'priority_queue_policy',
  'inputs',
]);

type Value = string | number | boolean | Value[] | { [key: string]: Value };

interface Token {
  kind: 'ident' | 'number' | 'string' | 'punct';
  text: string;
  value?: string | number;
}

class Lexer {
  private pos = 0;
  /** Where the last token read starts (for error locations). */
  lastStart = 0;
  constructor(private readonly src: string) {}

  /** 1-based line and column of an offset. */
  location(offset: number): { line: number; column: number } {
    let line = 1;
    let start = 0;
    for (let i = 0; i < offset && i < this.src.length; i++) {
      if (this.src[i] === '\n') {
        line++;
        start = i + 1;
      }
    }
    return { line, column: offset - start + 1 };
  }

  private skip(): void {
    while (this.pos < this.src.length) {
      const c = this.src[this.pos]!;
      if (c === '#') {
        while (this.pos < this.src.length && this.src[this.pos] !== '\n') this.pos++;
      } else if (/\s/.test(c)) {
        this.pos++;
      } else {
        break;
      }
    }
  }

  peek(): Token | undefined {
    const save = this.pos;
    const tok = this.next();
    this.pos = save;
    return tok;
  }

  next(): Token | undefined {
    this.skip();
    this.lastStart = this.pos;
    if (this.pos >= this.src.length) return undefined;
    const src = this.src;
    const c = src[this.pos]!;
    if ('{}[]:,;<>'.includes(c)) {
      this.pos++;
      return { kind: 'punct', text: c };
    }
    if (c === '"' || c === "'") {
      let out = '';
      this.pos++;
      while (this.pos < src.length && src[this.pos] !== c) {
        let ch = src[this.pos++]!;
        if (ch === '\\') {
          const esc = src[this.pos++]!;
          ch =
            ({ n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" } as Record<string, string>)[esc] ??
            esc;
        }
        out += ch;
      }
      if (this.pos >= src.length) throw new SyntaxError('unterminated string');
      this.pos++;
      return { kind: 'string', text: out, value: out };
    }
    const m = /^[-+]?(?:\d[\w.+-]*|\.\d[\w.+-]*)/.exec(src.slice(this.pos, this.pos + 64));
    if (m) {
      this.pos += m[0].length;
      const n = Number(m[0].replace(/[fF]$/, ''));
      if (Number.isNaN(n)) throw new SyntaxError(`bad number '${m[0]}'`);
      return { kind: 'number', text: m[0], value: n };
    }
    const id = /^[A-Za-z_][\w.]*/.exec(src.slice(this.pos, this.pos + 256));
    if (id) {
      this.pos += id[0].length;
      return { kind: 'ident', text: id[0] };
    }
    throw new SyntaxError(`unexpected character '${c}'`);
  }
}

function scalar(tok: Token): Value {
  if (tok.kind === 'string' || tok.kind === 'number') return tok.value!;
  if (tok.kind === 'ident') {
    if (tok.text === 'true' || tok.text === 'True') return true;
    if (tok.text === 'false' || tok.text === 'False') return false;
    return tok.text;
  }
  throw new SyntaxError(`unexpected '${tok.text}'`);
}

/** Where each field starts, by path ('input[0].dims'), when asked for. */
type Positions = Map<string, number>;

/** How many values `out[name]` already holds (the index of the next one). */
function countOf(out: { [key: string]: Value }, name: string): number {
  const v = out[name];
  if (Array.isArray(v)) return v.length;
  if (typeof v === 'object' && v !== null) return Object.keys(v).length;
  return v === undefined ? 0 : 1;
}

function parseMessage(
  lex: Lexer,
  close: string | undefined,
  path: string[],
  prefix = '',
  positions?: Positions,
): { [key: string]: Value } {
  const out: { [key: string]: Value } = {};
  for (;;) {
    const tok = lex.next();
    if (tok === undefined) {
      if (close !== undefined) throw new SyntaxError(`missing '${close}'`);
      return out;
    }
    if (tok.kind === 'punct' && tok.text === close) return out;
    if (tok.kind === 'punct' && (tok.text === ',' || tok.text === ';')) continue;
    if (tok.kind !== 'ident') throw new SyntaxError(`expected a field name, got '${tok.text}'`);
    const name = tok.text;
    const fieldPath = prefix === '' ? name : `${prefix}.${name}`;
    if (positions !== undefined && !positions.has(fieldPath)) positions.set(fieldPath, lex.lastStart);
    const repeated = REPEATED.has(name) || isMapField(name, path);
    let next = lex.peek();
    if (next?.kind === 'punct' && next.text === ':') {
      lex.next();
      next = lex.peek();
    }
    const values: Value[] = [];
    const first = countOf(out, name);
    const at = (i: number) => (repeated || i > 0 ? `${fieldPath}[${first + i}]` : fieldPath);
    if (next?.kind === 'punct' && next.text === '[') {
      lex.next();
      for (;;) {
        const t = lex.peek();
        if (t === undefined) throw new SyntaxError(`missing ']' after ${name}`);
        if (t.kind === 'punct' && t.text === ']') {
          lex.next();
          break;
        }
        if (t.kind === 'punct' && t.text === ',') {
          lex.next();
          continue;
        }
        values.push(parseValue(lex, [...path, name], `${fieldPath}[${first + values.length}]`, positions));
      }
      addField(out, name, values, true, path);
    } else {
      values.push(parseValue(lex, [...path, name], at(0), positions));
      addField(out, name, values, false, path);
    }
  }
}

function parseValue(lex: Lexer, path: string[], prefix = '', positions?: Positions): Value {
  const tok = lex.next();
  if (tok === undefined) throw new SyntaxError(`missing value for ${path.join('.')}`);
  if (positions !== undefined && !positions.has(prefix)) positions.set(prefix, lex.lastStart);
  if (tok.kind === 'punct' && (tok.text === '{' || tok.text === '<')) {
    return parseMessage(lex, tok.text === '{' ? '}' : '>', path, prefix, positions);
  }
  return scalar(tok);
}

function isMapField(name: string, path: string[]): boolean {
  if (MAPS.has(name)) return true;
  // graph_spec's `input` is a map<string, Shape>; everywhere else it is repeated.
  return name === 'input' && (path.at(-1) === 'graph_spec' || path.at(-1) === 'lower_bound');
}

function addField(
  out: { [key: string]: Value },
  name: string,
  values: Value[],
  bracketed: boolean,
  path: string[],
): void {
  if (isMapField(name, path)) {
    const map = (out[name] ?? {}) as { [key: string]: Value };
    for (const entry of values) {
      const e = entry as { key?: Value; value?: Value };
      if (typeof e !== 'object' || e === null || e.key === undefined) {
        throw new SyntaxError(`map field ${name} needs key/value entries`);
      }
      map[String(e.key)] = e.value ?? {};
    }
    out[name] = map;
    return;
  }
  if (bracketed || REPEATED.has(name)) {
    const list = (out[name] ?? []) as Value[];
    list.push(...values);
    out[name] = list;
    return;
  }
  out[name] = values[0]!;
}

/** Parses config.pbtxt text into Triton's JSON model config form. Throws a SyntaxError that says `line L, column C: …`. */
export function parseModelConfigText(text: string): Record<string, unknown> {
  return parseModelConfigTextWithPositions(text, false).config;
}

/** A 1-based line and column in a config's text. */
export interface TextPosition {
  line: number;
  column: number;
}

/**
 * Like parseModelConfigText, and where each field starts, by its path:
 * 'max_batch_size', 'input[0].dims', 'dynamic_batching.preferred_batch_size',
 * 'parameters' (a map field; its entries are 'parameters[0]'...).
 */
export function parseModelConfigTextWithPositions(
  text: string,
  withPositions = true,
): { config: Record<string, unknown>; positions: Map<string, TextPosition> } {
  const lex = new Lexer(text);
  const offsets: Positions | undefined = withPositions ? new Map() : undefined;
  let config: Record<string, unknown>;
  try {
    config = parseMessage(lex, undefined, [], '', offsets);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const { line, column } = lex.location(lex.lastStart);
    throw new SyntaxError(`line ${line}, column ${column}: ${err.message}`);
  }
  const positions = new Map<string, TextPosition>();
  for (const [path, offset] of offsets ?? []) positions.set(path, lex.location(offset));
  return { config, positions };
}

// ---- writing ---------------------------------------------------------------------

/** Fields whose values are enum names: written bare (`data_type: TYPE_FP32`), never quoted. */
const ENUM_FIELDS = new Set(['data_type', 'format', 'kind', 'timeout_action', 'priority']);

/** Fields of string type: written quoted even when they look like numbers. */
const STRING_FIELDS = new Set([
  'name',
  'platform',
  'backend',
  'runtime',
  'label_filename',
  'host_policy',
  'default_model_filename',
  'model_name',
  'model_namespace',
  'key',
  'value',
  'string_value',
  'input_name',
  'output_name',
  'target_name',
  'source_input',
  'profile',
  'op_library_filename',
  'input_data_file',
  'data_file',
  'parameters',
]);

function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r')}"`;
}

function scalarText(name: string, value: unknown): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${name}: ${value} has no text form`);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    if (ENUM_FIELDS.has(name) && /^[A-Z][A-Z0-9_]*$/.test(value)) return value;
    // Triton's JSON writes some 64-bit integers as strings ("dims": ["1"]).
    if (!STRING_FIELDS.has(name) && /^-?\d+$/.test(value)) return value;
    return quote(value);
  }
  throw new TypeError(`${name}: a ${value === null ? 'null' : typeof value} has no text form`);
}

function isMessage(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function writeField(name: string, value: unknown, path: string[], indent: string, out: string[]): void {
  if (value === undefined) return;
  const inner = `${indent}  `;
  if (isMapField(name, path) && isMessage(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) {
      out.push(`${indent}${name}: []`);
      return;
    }
    for (const [key, v] of entries) {
      out.push(`${indent}${name} {`);
      // priority_queue_policy is keyed by priority level (a uint64): bare.
      out.push(`${inner}key: ${name === 'priority_queue_policy' && /^\d+$/.test(key) ? key : quote(key)}`);
      if (isMessage(v)) {
        out.push(`${inner}value {`);
        writeMessage(v, [...path, name, 'value'], `${inner}  `, out);
        out.push(`${inner}}`);
      } else {
        out.push(`${inner}value: ${scalarText('value', v)}`);
      }
      out.push(`${indent}}`);
    }
    return;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push(`${indent}${name}: []`);
    } else if (value.every((v) => !isMessage(v))) {
      out.push(`${indent}${name}: [ ${value.map((v) => scalarText(name, v)).join(', ')} ]`);
    } else {
      out.push(`${indent}${name} [`);
      value.forEach((v, i) => {
        if (!isMessage(v)) throw new TypeError(`${[...path, name].join('.')}[${i}]: expected a message`);
        out.push(`${inner}{`);
        writeMessage(v, [...path, name], `${inner}  `, out);
        out.push(`${inner}}${i < value.length - 1 ? ',' : ''}`);
      });
      out.push(`${indent}]`);
    }
    return;
  }
  if (isMessage(value)) {
    out.push(`${indent}${name} {`);
    writeMessage(value, [...path, name], inner, out);
    out.push(`${indent}}`);
    return;
  }
  out.push(`${indent}${name}: ${scalarText(name, value)}`);
}

function writeMessage(message: Record<string, unknown>, path: string[], indent: string, out: string[]): void {
  for (const [name, value] of Object.entries(message)) {
    if (!/^[A-Za-z_]\w*$/.test(name)) throw new TypeError(`'${name}' is not a config field name`);
    writeField(name, value, path, indent, out);
  }
}

/**
 * Writes a model config (Triton's JSON form) as config.pbtxt text: enum
 * names bare, repeated fields in brackets, maps as key/value entries. What
 * `parseModelConfigText` reads back is the same config.
 */
export function formatModelConfigText(config: Record<string, unknown>): string {
  const out: string[] = [];
  writeMessage(config, [], '', out);
  return `${out.join('\n')}\n`;
}
