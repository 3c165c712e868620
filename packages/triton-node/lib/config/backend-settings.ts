/**
 * Checks of the settings a backend reads from `backendConfig`, for the
 * backends whose settings are known: the Python backend's, as r25.07's
 * python_be.cc reads them in TRITONBACKEND_Initialize (plus the
 * `default-max-batch-size` Triton's core reads for every backend). A
 * mistake there is found before Triton starts: an unknown key is ignored by
 * the backend without a word, a value `std::stol` cannot read fails the
 * backend's initialization with a bare "stol", and one past the int64 range
 * throws an exception the backend does not catch (the process aborts).
 */
import { optionError, optionRangeError } from '../base/errors.js';

const INT64_MAX = 2n ** 63n - 1n;
const UINT32_MAX = 2n ** 32n - 1n;
const MIB = 1024 * 1024;

interface IntegerRule {
  kind: 'integer';
  min: bigint;
  max: bigint;
  /** Why the range is what it is, for the message. */
  why: string;
}
interface NameRule {
  kind: 'name';
  why: string;
}
interface PathRule {
  kind: 'path';
}
type Rule = IntegerRule | NameRule | PathRule;

const int64 = (min: number, why: string): IntegerRule => ({
  kind: 'integer',
  min: BigInt(min),
  max: INT64_MAX,
  why,
});

/** The Python backend's settings (python_be.cc, r25.07), each with the rule its value follows. */
export const PYTHON_BACKEND_SETTINGS: Readonly<Record<string, Rule>> = {
  'shm-default-byte-size': int64(MIB, "the python backend's minimum, 1 MiB (its message says 4 MiB)"),
  'shm-growth-byte-size': int64(1, 'the python backend refuses 0 and less'),
  'thread-pool-size': int64(1, 'the python backend refuses less than 1'),
  // Read into an int64 but used as a uint32 queue length: 0 makes every
  // message to a stub wait forever, and more than 2^32 - 1 wraps around.
  shm_message_queue_size: {
    kind: 'integer',
    min: 1n,
    max: UINT32_MAX,
    why: 'the length of a stub message queue, a uint32; 0 blocks every message',
  },
  'stub-timeout-seconds': int64(1, 'the python backend refuses 0 and less'),
  'shm-region-prefix-name': {
    kind: 'name',
    why: 'it starts a file name in /dev/shm and is a word of the command line the stub is started with',
  },
  'backend-directory': { kind: 'path' },
  // Triton's core reads it for every backend (its default is 4).
  'default-max-batch-size': int64(0, "Triton's core reads it as a batch size"),
};

/** Settings checked by backend name. */
const KNOWN: Readonly<Record<string, Readonly<Record<string, Rule>>>> = { python: PYTHON_BACKEND_SETTINGS };

/** Edit distance of two short strings (insert, delete, substitute). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}

/** The known key `key` was most likely meant to be, if one is close. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const plain = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    // The same key spelled with '_' for '-' (or the other way), or its start.
    const same = plain(k) === plain(key);
    const start = key.length >= 6 && plain(k).startsWith(plain(key));
    const d = same ? 0 : start ? 1 : distance(key.toLowerCase(), k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined;
}

function checkInteger(where: string, rule: IntegerRule, value: string | number | boolean): void {
  const expected = `an integer from ${rule.min} to ${rule.max} (${rule.why})`;
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    if (Number.isInteger(value)) throw optionRangeError(where, `${expected}, past 2^53 as a string`, value);
    throw optionError(where, expected, value);
  }
  const text = String(value).trim();
  if (typeof value === 'boolean' || !/^[+-]?\d+$/.test(text)) throw optionError(where, expected, value);
  const n = BigInt(text);
  if (n < rule.min || n > rule.max) throw optionRangeError(where, expected, value);
}

function checkSetting(where: string, rule: Rule, value: string | number | boolean): void {
  if (rule.kind === 'integer') {
    checkInteger(where, rule, value);
    return;
  }
  if (typeof value !== 'string') throw optionError(where, 'a string', value);
  if (rule.kind === 'path') {
    if (value === '') throw optionError(where, 'a directory path', value);
    return;
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(value)) {
    throw optionError(where, `a non-empty name of letters, digits, '_', '-' and '.' (${rule.why})`, value);
  }
}

/**
 * Checks `backendConfig[backend]` where the backend's settings are known:
 * an unknown key is a TypeError naming it (with the key it is closest to),
 * a bad value a TypeError or RangeError naming key, value and rule. Other
 * backends' settings pass as they are.
 */
export function checkBackendSettings(
  backend: string,
  settings: Record<string, string | number | boolean>,
): void {
  const rules = KNOWN[backend];
  if (rules === undefined) return;
  const known = Object.keys(rules);
  for (const [key, value] of Object.entries(settings)) {
    const where = `backendConfig.${backend}.${key}`;
    const rule = rules[key];
    if (rule === undefined) {
      const near = closestKey(key, known);
      const hint = near === undefined ? '' : `did you mean '${near}'? `;
      throw new TypeError(
        `Unknown setting '${where}' of the ${backend} backend (${hint}known: ${known.join(', ')})`,
      );
    }
    checkSetting(where, rule, value);
  }
}
