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
  constructor(private readonly src: string) {}

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
    throw new SyntaxError(`unexpected character '${c}' at offset ${this.pos}`);
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

function parseMessage(lex: Lexer, close: string | undefined, path: string[]): { [key: string]: Value } {
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
    let next = lex.peek();
    if (next?.kind === 'punct' && next.text === ':') {
      lex.next();
      next = lex.peek();
    }
    const values: Value[] = [];
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
        values.push(parseValue(lex, [...path, name]));
      }
      addField(out, name, values, true, path);
    } else {
      values.push(parseValue(lex, [...path, name]));
      addField(out, name, values, false, path);
    }
  }
}

function parseValue(lex: Lexer, path: string[]): Value {
  const tok = lex.next();
  if (tok === undefined) throw new SyntaxError(`missing value for ${path.join('.')}`);
  if (tok.kind === 'punct' && (tok.text === '{' || tok.text === '<')) {
    return parseMessage(lex, tok.text === '{' ? '}' : '>', path);
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

/** Parses config.pbtxt text into Triton's JSON model config form. Throws SyntaxError. */
export function parseModelConfigText(text: string): Record<string, unknown> {
  return parseMessage(new Lexer(text), undefined, []);
}
