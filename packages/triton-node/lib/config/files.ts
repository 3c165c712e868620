/**
 * Reading the small files of a model repository (config.pbtxt, the
 * deployment history, a backend's engine arguments) from folders that other
 * people write. Such a file may be a FIFO (an open or a read would wait for
 * a writer for good), a link to /dev/zero (a read never ends) or simply
 * huge: each is refused with an error that names the file, before anything
 * is read.
 *
 * The file is opened with O_NONBLOCK (a FIFO opens at once; regular files
 * ignore the flag), then fstat'ed: only a regular file is read, and only up
 * to a limit. libuv opens every file with O_CLOEXEC.
 */
import { constants, type Stats, closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { type TritonError, tritonError } from '../base/errors.js';

/** The most bytes of a config.pbtxt (or a history, an engine-args file) read: 16 MiB. */
export const REPOSITORY_FILE_LIMIT = 16 * 1024 * 1024;

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** How a repository file is read. */
export interface RepositoryFileOptions {
  /** The most bytes read (default REPOSITORY_FILE_LIMIT). */
  limit?: number;
  /** Refuse a symbolic link instead of following it (a file this library also writes). */
  noFollow?: boolean;
}

function flagsOf(options: RepositoryFileOptions): number {
  return OPEN_FLAGS | (options.noFollow ? constants.O_NOFOLLOW : 0);
}

/** ELOOP from an O_NOFOLLOW open is a link: say so. */
function openError(path: string, err: unknown): unknown {
  return (err as NodeJS.ErrnoException).code === 'ELOOP'
    ? refused(path, 'it is a symbolic link, not a regular file (not followed)')
    : err;
}
const CHUNK = 64 * 1024;

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function refused(path: string, why: string): TritonError {
  return tritonError('INVALID_ARG', `cannot read ${path}: ${why}`);
}

function tooLarge(path: string, limit: number): TritonError {
  return refused(path, `it is larger than the ${limit / (1024 * 1024)} MiB limit for repository files`);
}

/** Throws unless `stats` is a regular file of at most `limit` bytes. */
function checkStats(path: string, stats: Stats, limit: number): void {
  if (!stats.isFile()) throw refused(path, `it is ${kindOf(stats)}, not a regular file`);
  if (stats.size > limit) throw tooLarge(path, limit);
}

/**
 * The text of a regular file of at most `limit` bytes. A missing file
 * rejects with Node's ENOENT error; a file that is not regular, or larger,
 * with a TritonError (INVALID_ARG) naming it.
 */
export async function readRepositoryFile(path: string, options: RepositoryFileOptions = {}): Promise<string> {
  const limit = options.limit ?? REPOSITORY_FILE_LIMIT;
  const handle = await open(path, flagsOf(options)).catch((err: unknown) => {
    throw openError(path, err);
  });
  try {
    checkStats(path, await handle.stat(), limit);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK);
      const { bytesRead } = await handle.read(chunk, 0, CHUNK, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      // The file may grow after the fstat: the limit holds for what is read.
      if (total > limit) throw tooLarge(path, limit);
      chunks.push(chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** readRepositoryFile, synchronously (for the synchronous lint() and the history read at load). */
export function readRepositoryFileSync(path: string, options: RepositoryFileOptions = {}): string {
  const limit = options.limit ?? REPOSITORY_FILE_LIMIT;
  let fd: number;
  try {
    fd = openSync(path, flagsOf(options));
  } catch (err) {
    throw openError(path, err);
  }
  try {
    checkStats(path, fstatSync(fd), limit);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK);
      const n = readSync(fd, chunk, 0, CHUNK, null);
      if (n === 0) break;
      total += n;
      if (total > limit) throw tooLarge(path, limit);
      chunks.push(chunk.subarray(0, n));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Why an open for writing failed, when the file is not a regular one. */
function writeOpenError(path: string, err: unknown): unknown {
  const why: Record<string, string> = {
    ELOOP: 'it is a symbolic link, not a regular file (not followed)',
    ENXIO: 'it is a FIFO, not a regular file',
    EISDIR: 'it is a directory, not a regular file',
  };
  const reason = why[(err as NodeJS.ErrnoException).code ?? ''];
  return reason === undefined ? err : tritonError('INVALID_ARG', `cannot write ${path}: ${reason}`);
}

/**
 * Appends `text` to the regular file `path` (created when missing), never
 * through a link or into a FIFO or device planted there, even one planted
 * after the file was last read: opened with O_NOFOLLOW and O_NONBLOCK (a
 * FIFO without a reader fails at once), then fstat'ed before the write.
 * Such a file rejects with a TritonError (INVALID_ARG) naming it.
 */
export async function appendRepositoryFile(path: string, text: string): Promise<void> {
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    0o644,
  ).catch((err: unknown) => {
    throw writeOpenError(path, err);
  });
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw tritonError('INVALID_ARG', `cannot write ${path}: it is ${kindOf(stats)}, not a regular file`);
    }
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

/**
 * Refuses `path` when it exists but is not a regular file of at most
 * `limit` bytes (a stat only, synchronous: a FIFO is not opened, and a
 * load still starts in the turn of its call). Before Triton reads a
 * config itself: its reader would wait on a FIFO, or read /dev/zero until
 * the process runs out of memory.
 */
export function checkRepositoryFile(path: string, limit = REPOSITORY_FILE_LIMIT): void {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    return; // absent (or unreadable): Triton says so in its own words
  }
  checkStats(path, stats, limit);
}
