/**
 * Shared test setup: which Triton library to run on (a real one through
 * TRITON_SERVER_LIB + TRITON_BACKEND_DIR, else the fake engine), the test
 * model repository, and one server per test file.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type LibraryInfo,
  type ModelStatistics,
  Server,
  type ServerOptions,
  TritonError,
  loadLibrary,
} from 'triton-node';
import { addonStats, fakeEngine } from 'triton-node/testing';
import { type TestContext, afterAll, beforeAll, beforeEach, expect } from 'vitest';

export const MODELS = fileURLToPath(new URL('./models', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));

/** The library under test: TRITON_SERVER_LIB when set, else the fake engine. */
export const LIBRARY_PATH = process.env.TRITON_SERVER_LIB || fakeEngine.libraryPath;
/** Backends of a real Triton (the fake has its own built in). */
export const BACKEND_DIR = process.env.TRITON_BACKEND_DIR || undefined;

let info: LibraryInfo | undefined;

/** Loads the library under test (once per process) and says what it is. */
export function library(): LibraryInfo {
  info ??= loadLibrary(LIBRARY_PATH);
  return info;
}

/** Reason to skip a fake-only test (`why`: what it needs of the fake), or false on the fake engine. */
export function fakeOnly(why = 'needs its live-object counters or switches'): string | false {
  return library().isFake ? false : `fake engine only (${why})`;
}

/** The backends a real Triton keeps in TRITON_BACKEND_DIR that some tests need (the fake has its own). */
export type TritonBackend = 'onnxruntime' | 'python';

/**
 * Reason to skip a test that needs `backend` on a real Triton whose backend
 * directory lacks it (Triton would fail the load with "unable to find backend
 * library"), or false: on the fake engine (it has its own), or when
 * TRITON_BACKEND_DIR holds `<backend>/libtriton_<backend>.so`.
 */
export function needsBackend(backend: TritonBackend): string | false {
  if (library().isFake) return false;
  const file = `${backend}/libtriton_${backend}.so`;
  if (BACKEND_DIR === undefined)
    return `needs the ${backend} backend: set TRITON_BACKEND_DIR to a directory with ${file}`;
  return existsSync(join(BACKEND_DIR, file))
    ? false
    : `needs the ${backend} backend, which TRITON_BACKEND_DIR (${BACKEND_DIR}) lacks: no ${file}`;
}

/**
 * Skips the running test when `reason` is a string, with the reason shown by
 * the reporter (`it.skipIf(cond)` shows none). Call it first in the test:
 * `it('...', (ctx) => { skipIf(ctx, fakeOnly()); ... })`.
 */
export function skipIf(ctx: TestContext, reason: string | false | undefined): void {
  if (typeof reason === 'string') ctx.skip(reason);
}

/** Skips every test of the enclosing describe() when `reason` is a string, each with the reason shown. */
export function skipAllIf(reason: string | false | undefined): void {
  if (typeof reason === 'string') beforeEach((ctx) => ctx.skip(reason));
}

/** Options for a server on the test repository. */
export function serverOptions(extra: Partial<ServerOptions> = {}): ServerOptions {
  return {
    modelRepository: MODELS,
    library: LIBRARY_PATH,
    ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
    exitTimeoutSeconds: 5,
    ...extra,
  };
}

/**
 * Starts a server with `models` loaded before the file's tests, and stops it
 * after. With a `skipReason` (the tests skip) no server is started.
 */
export function useServer(
  models: string[],
  extra: Partial<ServerOptions> = {},
  skipReason: string | false = false,
): () => Server {
  let server: Server | undefined;
  beforeAll(async () => {
    if (skipReason !== false) return;
    library();
    server = await Server.create(serverOptions(extra));
    await Promise.all(models.map((m) => server!.loadModel(m)));
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (server === undefined) throw new Error('server not started');
    return server;
  };
}

/**
 * How long a test waits for something that should happen soon: a bound on a
 * wait for a condition, never a measure of speed. Generous, because CI runs
 * the suite on a busy 2-core machine; a condition that holds returns at once.
 */
export const SETTLE_MS = 30_000;

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = SETTLE_MS,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Reads `read()` until `done(value)` holds or `timeoutMs` passes, and returns
 * the last value read: a statistic Triton updates after the response (or after
 * the release) is read once it arrived, and the exact assertions made on the
 * value then say what was seen when it never did.
 */
export async function readUntil<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = SETTLE_MS,
): Promise<T> {
  let value = await read();
  await eventually(async () => {
    value = await read();
    return done(value);
  }, timeoutMs);
  return value;
}

/**
 * A model's statistics (its first version's) once every request was released
 * and Triton counted the executions of those requests: a backend counts each
 * request before it releases it, and some (onnxruntime, Python) count the
 * execution after, so a baseline read right after a response can miss the
 * last one's. The executions are in when their batch elements add up to at
 * least the inferences (a failed request adds to the former only). For
 * models that are neither decoupled nor sequence batched.
 */
export async function settledStatistics(model: {
  statistics(): Promise<ModelStatistics[]>;
}): Promise<ModelStatistics> {
  expect(await requestsSettled()).toBe(true);
  return readUntil(
    async () => (await model.statistics())[0]!,
    (s) => s.batchStats.reduce((n, b) => n + b.batchSize * b.computeInfer.count, 0) >= s.inferenceCount,
  );
}

/**
 * Waits until `check` holds; throws naming `what` and what `seen()` says
 * when it does not within `timeoutMs`.
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  seen: () => unknown = () => undefined,
  timeoutMs = SETTLE_MS,
): Promise<void> {
  if (await eventually(check, timeoutMs)) return;
  const last = await seen();
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? '' : `; saw ${JSON.stringify(last)}`}`,
  );
}

/**
 * What `send` (a request continuing a sequence) rejects with once the
 * sequence, idle for `idleMs`, was ended by Triton's sequence batcher. The
 * batcher ends idle sequences from a thread that looks now and then, late on a
 * busy machine: each try first leaves the sequence idle twice `idleMs`, and a
 * try that succeeds (the sequence was still open, and is idle again from
 * then) is followed by another, up to `timeoutMs`.
 */
export async function rejectionAfterIdle(
  send: () => Promise<unknown>,
  idleMs: number,
  timeoutMs = SETTLE_MS,
): Promise<unknown> {
  const end = Date.now() + timeoutMs;
  for (let tries = 1; ; tries++) {
    await new Promise((r) => setTimeout(r, 2 * idleMs));
    const outcome = await send().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (outcome !== undefined) return outcome;
    if (Date.now() > end) {
      throw new Error(`the sequence was still open after ${tries} tries, each ${2 * idleMs} ms idle`);
    }
  }
}

/** A GC function even without --expose-gc (V8 flag set at run time). */
export async function gcFunction(): Promise<() => void> {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) return g;
  const v8 = await import('node:v8');
  const vm = await import('node:vm');
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** Collects garbage repeatedly, letting finalizers (which may be deferred) run in between. */
export async function collectGarbage(rounds = 4): Promise<void> {
  const gc = await gcFunction();
  for (let i = 0; i < rounds; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Waits until nothing of this environment's requests is left in the addon:
 * every one released by Triton (pendingRequests, all environments) and
 * settled (inflightRequests: released, FINAL, trace). Works on any library.
 */
export async function requestsSettled(timeoutMs = SETTLE_MS): Promise<boolean> {
  return eventually(() => {
    const s = addonStats();
    return s.pendingRequests === 0 && s.inflightRequests === 0;
  }, timeoutMs);
}

/** A class that errors are instances of. */
type ErrorClass<E> = abstract new (...args: never[]) => E;

/**
 * What `p` rejects with, checked to be an instance of `kind` (TritonError
 * unless told): a promise that resolves, or rejects with anything else,
 * fails the test.
 */
export async function rejection<E = TritonError>(
  p: Promise<unknown>,
  kind: ErrorClass<E> = TritonError as unknown as ErrorClass<E>,
): Promise<E> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(kind);
  return err as E;
}

/** What a child `node` process printed, and how it ended. */
export interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` in `cwd` to its end, collecting both outputs. */
export async function runNode(args: string[], cwd: string): Promise<NodeRun> {
  const proc = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => {
    stdout += String(d);
  });
  proc.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  return { code, stdout, stderr };
}

/** How a child process ended, with what it printed (spawnSync's fields). */
export interface ProcessRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Why it could not start, or that it ran past `timeoutMs` (then it was sent SIGTERM). */
  error?: Error;
}

/**
 * Runs a child process to its end, as spawnSync does but without blocking
 * this thread: a test that blocks it for long on a busy machine fails
 * although its assertions pass, because vitest's worker cannot answer its
 * runner meanwhile ("Timeout calling onTaskUpdate", after 60 s).
 */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ProcessRun> {
  return new Promise((resolve) => {
    const proc = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let error: Error | undefined;
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            error = new Error(`${command} ran past ${options.timeoutMs} ms`);
            proc.kill('SIGTERM');
          }, options.timeoutMs);
    proc.on('error', (e) => {
      error = e;
    });
    proc.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, ...(error === undefined ? {} : { error }) });
    });
  });
}
