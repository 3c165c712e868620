/**
 * Text from outside (a folder name, a config field) made safe to print on a
 * terminal: control characters cannot move the cursor, colour the output or
 * start a line of their own.
 * @internal
 * @packageDocumentation
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * `text` with each control character (C0, DEL, C1, and the Unicode line and
 * paragraph separators) written as a JavaScript escape: `\n`, `\t`, `\r`, else
 * `\xNN` or `\uNNNN`. Printable text, non-ASCII letters included, is unchanged.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}
