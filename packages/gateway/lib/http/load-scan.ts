/**
 * The length of each `parameters["file:..."]` string of a model load body,
 * found while the body streams past, holding none of it: what a load body
 * larger than `maxBodyBytes` needs for tritonserver's answer ("'file:1/model.onnx'
 * exceeds the maximum allowed data size limit INT_MAX"), without the
 * gigabytes Triton holds to give it.
 *
 * A JSON scanner of exactly that much: the nesting of objects and arrays
 * (bounded), object keys (up to KEY_LIMIT bytes kept), and the decoded length of
 * a string value at `.parameters.<key>`. Inside a string it jumps from quote
 * to backslash with Buffer.indexOf, so a long base64 value costs a memchr, not
 * a loop in JavaScript. Malformed JSON stops the scan (`broken`); the caller
 * answers its 413 then.
 */

/** Triton's limit on a base64 value (common.cc DecodeBase64: `input_len > INT_MAX`). */
export const INT_MAX = 2 ** 31 - 1;
/** Keys longer than this are kept cut: no file path a load names is this long. */
const KEY_LIMIT = 1024;
/** Past this depth the scan gives up (`broken`): a load body is two levels deep. */
const DEPTH_LIMIT = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Expect = 'value' | 'key' | 'colon' | 'comma';

export class LoadBodyScan {
  /** The first `file:` parameter whose value is longer than INT_MAX, in body order. */
  oversized: string | undefined;
  /** The body is not JSON this scanner can follow: its answer stays the 413. */
  broken = false;

  /** 'o' object, 'a' array; with the key each open object is at. */
  readonly #stack: Array<{ kind: 'o' | 'a'; key: string }> = [];
  #expect: Expect = 'value';
  #inString: 'key' | 'value' | undefined;
  #escape = 0; // bytes left of an escape (1 after '\', 4 more after '\u')
  #key = '';
  #keyBytes: number[] = [];
  #length = 0; // decoded length of the string value being read
  #done = false;

  /** Feeds the next bytes of the body. */
  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length && !this.broken) {
      if (this.#inString !== undefined) i = this.#string(chunk, i);
      else i = this.#structure(chunk, i);
    }
  }

  /** The value being read is a parameter of the body's `parameters` object. */
  #atParameter(): boolean {
    const s = this.#stack;
    return s.length === 2 && s[0]!.kind === 'o' && s[0]!.key === 'parameters' && s[1]!.kind === 'o';
  }

  #string(chunk: Buffer, from: number): number {
    let i = from;
    while (this.#escape > 0 && i < chunk.length) {
      const b = chunk[i]!;
      if (this.#escape === 5 && b !== 0x75 /* u */) this.#escape = 1;
      this.#escape = this.#escape === 5 ? 4 : this.#escape - 1;
      if (this.#inString === 'key') this.#keepKey(b);
      i++;
    }
    if (i >= chunk.length) return i;
    const quote = chunk.indexOf(QUOTE, i);
    const slash = chunk.indexOf(BACKSLASH, i);
    const stop = quote === -1 ? slash : slash === -1 ? quote : Math.min(quote, slash);
    const end = stop === -1 ? chunk.length : stop;
    if (this.#inString === 'key') for (let k = i; k < end; k++) this.#keepKey(chunk[k]!);
    else this.#length += end - i;
    if (stop === -1) return chunk.length;
    if (stop === slash) {
      // One decoded character, whatever the escape ('\n' or '\u00e9').
      if (this.#inString === 'value') this.#length += 1;
      else this.#keepKey(BACKSLASH);
      this.#escape = 5;
      return stop + 1;
    }
    this.#endString();
    return stop + 1;
  }

  #keepKey(b: number): void {
    if (this.#keyBytes.length < KEY_LIMIT) this.#keyBytes.push(b);
  }

  #endString(): void {
    if (this.#inString === 'key') {
      this.#key = Buffer.from(this.#keyBytes).toString('utf8');
      this.#keyBytes = [];
      this.#expect = 'colon';
    } else {
      if (
        this.oversized === undefined &&
        this.#length > INT_MAX &&
        this.#atParameter() &&
        this.#stack[1]!.key.startsWith('file:')
      )
        this.oversized = this.#stack[1]!.key;
      this.#afterValue();
    }
    this.#inString = undefined;
  }

  #afterValue(): void {
    this.#expect = 'comma';
    if (this.#stack.length === 0) this.#done = true;
  }

  #structure(chunk: Buffer, from: number): number {
    const b = chunk[from]!;
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) return from + 1;
    if (this.#done) {
      this.broken = true;
      return from;
    }
    const top = this.#stack.at(-1);
    switch (this.#expect) {
      case 'key':
        if (b === QUOTE) {
          this.#inString = 'key';
          this.#keyBytes = [];
        } else if (b === 0x7d /* } */ && top?.kind === 'o') this.#close();
        else this.broken = true;
        return from + 1;
      case 'colon':
        if (b !== 0x3a) this.broken = true;
        if (top !== undefined) top.key = this.#key;
        this.#expect = 'value';
        return from + 1;
      case 'comma':
        if (b === 0x2c && top !== undefined) this.#expect = top.kind === 'o' ? 'key' : 'value';
        else if ((b === 0x7d && top?.kind === 'o') || (b === 0x5d && top?.kind === 'a')) this.#close();
        else this.broken = true;
        return from + 1;
      default:
        return this.#value(chunk, from);
    }
  }

  #value(chunk: Buffer, from: number): number {
    const b = chunk[from]!;
    if (b === QUOTE) {
      this.#inString = 'value';
      this.#length = 0;
      return from + 1;
    }
    if (b === 0x7b /* { */ || b === 0x5b /* [ */) {
      if (this.#stack.length >= DEPTH_LIMIT) {
        this.broken = true;
        return from;
      }
      this.#stack.push({ kind: b === 0x7b ? 'o' : 'a', key: '' });
      this.#expect = b === 0x7b ? 'key' : 'value';
      return from + 1;
    }
    if (b === 0x5d /* ] */ && this.#stack.at(-1)?.kind === 'a') {
      this.#close();
      return from + 1;
    }
    // A number, true, false or null: its bytes up to the next delimiter.
    let i = from;
    while (i < chunk.length && !' \n\r\t,]}'.includes(String.fromCharCode(chunk[i]!))) i++;
    // A literal cut by the chunk's end continues in the next: still this value.
    if (i < chunk.length) this.#afterValue();
    return i;
  }

  #close(): void {
    this.#stack.pop();
    this.#afterValue();
  }
}
