/**
 * Small typed checks of unknown values, one job each (after sharp's
 * `lib/is.js`). They only answer; the callers say what was expected.
 * @internal
 * @packageDocumentation
 */

/** A plain object: not null, not an array. */
function object(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function string(value: unknown): value is string {
  return typeof value === 'string';
}

/** A string Triton can take as a C string: not empty, no NUL character. */
function cString(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !value.includes('\0');
}

function bool(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

/** A finite number. */
function number(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** A safe integer. */
function integer(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

function inRange(value: number, min: number, max: number): boolean {
  return value >= min && value <= max;
}

function array(value: unknown): value is unknown[] {
  return Array.isArray(value);
}

/** One of the names of an `as const` list. */
function oneOf<T extends string>(list: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (list as readonly string[]).includes(value);
}

export const is = { object, string, cString, bool, number, integer, inRange, array, oneOf } as const;
