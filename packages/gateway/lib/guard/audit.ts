/**
 * The audit log: one JSON line per request, to a file rotated by size or to
 * a writable stream. Lines are buffered and written together (at most every
 * `flushIntervalMs`); `flush()` writes what is buffered synchronously, so
 * a drain or close loses nothing.
 */
import { closeSync, fstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { GuardAuditOptions } from './config.js';

/** One audit line. Never tensor contents, generated text, tokens or keys. */
export interface AuditRecord {
  time: string;
  requestId: string;
  tenant: string | null;
  protocol: 'http' | 'grpc';
  route: string;
  model?: string;
  version?: string;
  status: number;
  bytesIn?: number;
  bytesOut?: number;
  queueUs?: number;
  computeUs?: number;
  tokens?: number;
  latencyMs: number;
  remote?: string;
  keyId?: string;
  error?: string;
}

/** Where lines go. */
export interface AuditSink {
  write(record: AuditRecord): void;
  flush(): void;
  close(): void;
}

function positiveWhole(v: unknown, what: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new TypeError(`Expected a non-negative whole number for ${what} but received ${String(v)}`);
  return v;
}

/** The sink the options ask for (undefined: no audit). Throws a TypeError on a bad option. */
export function createAuditSink(options: GuardAuditOptions | undefined): AuditSink | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`Expected an object for guard.audit but received ${typeof options}`);
  const interval = positiveWhole(options.flushIntervalMs, 'guard.audit.flushIntervalMs', 100);
  if ((options.file === undefined) === (options.stream === undefined))
    throw new TypeError('guard.audit: give exactly one of file and stream');
  if (options.stream !== undefined) {
    if (typeof (options.stream as Writable).write !== 'function')
      throw new TypeError('guard.audit.stream: expected a writable stream');
    return new BufferedSink(
      (text) => options.stream!.write(text),
      interval,
      () => undefined,
    );
  }
  if (typeof options.file !== 'string' || options.file === '')
    throw new TypeError('guard.audit.file: expected a path');
  const file = new RotatingFile(
    options.file,
    positiveWhole(options.maxBytes, 'guard.audit.maxBytes', 64 * 1024 * 1024) || 64 * 1024 * 1024,
    positiveWhole(options.keep, 'guard.audit.keep', 5),
  );
  return new BufferedSink(
    (text) => file.append(text),
    interval,
    () => file.close(),
  );
}

/** Lines gathered in memory and handed to `out` in one piece. */
class BufferedSink implements AuditSink {
  #lines: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #out: (text: string) => void;
  readonly #interval: number;
  readonly #end: () => void;
  #closed = false;
  /** Writes that failed (their lines are lost). */
  failures = 0;
  lastError: string | undefined;

  constructor(out: (text: string) => void, interval: number, end: () => void) {
    this.#out = out;
    this.#interval = interval;
    this.#end = end;
  }

  write(record: AuditRecord): void {
    this.#lines.push(`${JSON.stringify(record)}\n`);
    if (this.#closed || this.#interval === 0) {
      this.flush();
      return;
    }
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), this.#interval);
      this.#timer.unref();
    }
  }

  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#lines.length === 0) return;
    const text = this.#lines.join('');
    this.#lines = [];
    try {
      this.#out(text);
    } catch (err) {
      // A full disk must not fail requests; the lines are lost and counted.
      this.failures++;
      this.lastError = (err as Error).message;
    }
  }

  close(): void {
    this.flush();
    if (this.#closed) return;
    this.#closed = true;
    this.#end();
  }
}

/** An append-only file that moves to `<path>.1` (and older ones up) once it would pass `maxBytes`. */
class RotatingFile {
  readonly #path: string;
  readonly #maxBytes: number;
  readonly #keep: number;
  #fd: number | undefined;
  #size = 0;

  constructor(path: string, maxBytes: number, keep: number) {
    this.#path = path;
    this.#maxBytes = maxBytes;
    this.#keep = keep;
    this.#open();
  }

  #open(): void {
    try {
      this.#fd = openSync(this.#path, 'a', 0o600);
    } catch (err) {
      throw new TypeError(
        `guard.audit.file: cannot open '${this.#path}': ${(err as NodeJS.ErrnoException).code}`,
      );
    }
    this.#size = fstatSync(this.#fd).size;
  }

  append(text: string): void {
    const bytes = Buffer.from(text);
    if (this.#size > 0 && this.#size + bytes.length > this.#maxBytes) this.#rotate();
    if (this.#fd === undefined) this.#open();
    let written = 0;
    while (written < bytes.length) written += writeSync(this.#fd!, bytes, written);
    this.#size += bytes.length;
  }

  #rotate(): void {
    this.close();
    if (this.#keep === 0) rmSync(this.#path, { force: true });
    else {
      rmSync(`${this.#path}.${this.#keep}`, { force: true });
      for (let i = this.#keep - 1; i >= 1; i--) {
        try {
          renameSync(`${this.#path}.${i}`, `${this.#path}.${i + 1}`);
        } catch {
          // Not that many rotated files yet.
        }
      }
      renameSync(this.#path, `${this.#path}.1`);
    }
    this.#open();
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}
