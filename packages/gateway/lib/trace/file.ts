/**
 * A trace file as tritonserver writes one (TraceManager::TraceFile): the
 * traces kept until shutdown go to the file itself, one JSON array opened at
 * the first write and closed at the end; those written every
 * `log_frequency` traces go to `<file>.0`, `<file>.1`, ... each an array of
 * its own. Writes are queued in order, off the request's path.
 */
import { appendFile, writeFile } from 'node:fs/promises';

export class TraceFile {
  readonly name: string;
  #index = 0;
  #opened = false;
  #queue: Promise<void> = Promise.resolve();
  /** The first write that failed (reported by close()). */
  #error: unknown;

  constructor(name: string) {
    this.name = name;
  }

  #then(write: () => Promise<void>): void {
    this.#queue = this.#queue.then(write).catch((err) => {
      this.#error ??= err;
    });
  }

  /** Writes `records` (comma-separated JSON objects) to the next indexed file, or to the file. */
  save(records: string, toIndexFile: boolean): void {
    if (toIndexFile) {
      const name = `${this.name}.${this.#index++}`;
      this.#then(() => writeFile(name, `[${records}]`));
      return;
    }
    const first = !this.#opened;
    this.#opened = true;
    this.#then(() => (first ? writeFile(this.name, `[${records}`) : appendFile(this.name, `,${records}`)));
  }

  /** Closes the file's array (when it was written) once every write is done; rejects with a failed write. */
  async close(): Promise<void> {
    if (this.#opened) this.#then(() => appendFile(this.name, ']'));
    this.#opened = false;
    await this.#queue;
    if (this.#error !== undefined) throw this.#error;
  }
}
