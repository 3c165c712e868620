/**
 * Loads the native addon and, through it, Triton's library.
 *
 * Importing the package never loads anything: the addon is loaded on first
 * use, and libtritonserver.so only when a server is created (or
 * `loadLibrary()` is called). A machine without Triton can install and import
 * the package; it gets a TritonError listing what was tried when it asks for
 * Triton.
 * @internal
 * @packageDocumentation
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';
import {
  type LibraryInfo,
  type LoadOutcome,
  MIN_TRITON_API,
  type NativeAddon,
  TRITON_API,
} from '../abi/binding.js';
import { type LoadAttempt, TritonError } from '../base/errors.js';
import { createEventDecoder } from './events.js';

/** Where Triton's container images install the library. */
export const DEFAULT_LIBRARY_PATH = '/opt/tritonserver/lib/libtritonserver.so';

let packageRootCache: string | undefined;

/**
 * The package root (the folder holding our package.json): lib/ under tsx or
 * vitest and dist/ once built both sit one level below it.
 */
export function packageRoot(): string {
  if (packageRootCache !== undefined) return packageRootCache;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'triton-node') {
          packageRootCache = dir;
          return dir;
        }
      } catch {
        // an unreadable package.json is not ours; keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new TritonError('triton-node: cannot find the package root (no package.json named triton-node)', {
    code: 'INTERNAL',
  });
}

let addonCache: NativeAddon | undefined;

/** The raw addon, loaded once per thread (it is context-aware). */
export function addon(): NativeAddon {
  if (addonCache !== undefined) return addonCache;
  const root = packageRoot();
  const require = createRequire(import.meta.url);
  try {
    const load = require('node-gyp-build') as (dir: string) => unknown;
    addonCache = load(root) as NativeAddon;
    // Each server's responses reach JS through a decoder made here (one per
    // server); the addon keeps the factory for this thread's environment.
    addonCache.setEventDecoder(createEventDecoder);
    if (isMainThread) {
      // The addon ends the process itself when exit() would otherwise crash
      // in Triton's static destructors (a stop that timed out with requests
      // still in a backend); it needs the code the process is exiting with.
      const native = addonCache;
      process.on('exit', (code) => {
        native.noteExitCode(typeof process.exitCode === 'number' ? process.exitCode : code);
      });
    }
  } catch (err) {
    throw new TritonError(
      `triton-node: the native addon could not be loaded from ${root}: ${(err as Error).message}\n` +
        'Possible solutions:\n' +
        '- Run `npm rebuild triton-node` in your project: prebuilt binaries cover linux-x64 and linux-arm64 (glibc); elsewhere it builds from source and needs g++, make and python3\n' +
        '- Run `npx triton-node doctor` to see what is installed and what is missing\n' +
        '- In the triton-node repository itself: npm run build:native',
      { code: 'UNAVAILABLE', cause: err },
    );
  }
  return addonCache;
}

/**
 * The addon binary node-gyp-build picks: build/Release (a build from source)
 * before prebuilds/<platform>-<arch>/. Throws when there is none.
 */
export function addonBinaryPath(): string {
  const require = createRequire(import.meta.url);
  const nodeGypBuild = require('node-gyp-build') as { resolve(dir: string): string };
  return nodeGypBuild.resolve(packageRoot());
}

/**
 * The fake engine's libtritonserver.so: the @triton-node/fake-engine package
 * (an optional dependency of triton-node), found by name as the application
 * resolves it. Throws a TritonError naming the package and the command that
 * installs it when it is not installed (`npm install --omit=optional`).
 */
export function fakeEnginePath(): string {
  const require = createRequire(import.meta.url);
  let engine: { findLibrary(): string };
  try {
    engine = require('@triton-node/fake-engine') as { findLibrary(): string };
  } catch (err) {
    throw new TritonError(
      'triton-node: the fake engine is not installed: it is the optional dependency @triton-node/fake-engine ' +
        '(left out by `npm install --omit=optional`). Install it with: npm install @triton-node/fake-engine',
      { code: 'UNAVAILABLE', cause: err },
    );
  }
  return engine.findLibrary();
}

export type { LibraryInfo };

/**
 * The candidates tried, in order: an explicit `library` is the only one tried
 * (an explicit choice never falls back silently); otherwise TRITON_SERVER_LIB,
 * then /opt/tritonserver/lib/libtritonserver.so.
 */
export function libraryCandidates(library?: string): string[] {
  if (library !== undefined) return [library];
  const out: string[] = [];
  const env = process.env.TRITON_SERVER_LIB;
  if (env) out.push(env);
  out.push(DEFAULT_LIBRARY_PATH);
  return out;
}

function describeAttempt(a: LoadAttempt): string {
  const what: Record<LoadOutcome, string> = {
    missing: 'no such file',
    dlopen: 'dlopen failed',
    symbols: 'not a Triton library (required entry points missing)',
    version: 'unsupported Triton API version',
    loaded: 'loaded',
  };
  return `- ${a.path}: ${what[a.outcome] ?? a.outcome}${a.detail ? ` (${a.detail})` : ''}`;
}

/**
 * The loader's error, with the advice said once: the native error (its
 * cause) states only what was tried.
 */
function loaderError(err: unknown, candidates: string[]): TritonError {
  const e = err as { code?: string; attempts?: LoadAttempt[] };
  const attempts: LoadAttempt[] =
    e.attempts ?? candidates.map((path) => ({ path, outcome: 'missing' as const, detail: '' }));
  const code = e.code === 'UNSUPPORTED' || e.code === 'ALREADY_EXISTS' ? e.code : 'NOT_FOUND';
  const lines = [
    "triton-node: could not load Triton's library (libtritonserver.so)",
    'Tried:',
    ...attempts.map(describeAttempt),
    'Possible solutions:',
    '- Pass the path: Server.create({ library: "/path/to/libtritonserver.so", ... })',
    '- Or set TRITON_SERVER_LIB=/path/to/libtritonserver.so',
    '- Or install Triton so that /opt/tritonserver/lib/libtritonserver.so exists (NGC tritonserver images have it)',
    `- Triton C API ${MIN_TRITON_API} or a later ${TRITON_API.major}.x is needed (tested on Triton r25.07 and r26.06, C API ${TRITON_API.major}.${TRITON_API.minor}); a "version" outcome above means the library is older`,
    '- A "dlopen failed" outcome above: make the library\'s dependencies resolve (ldd /path/to/libtritonserver.so)',
    '- Without Triton, use the fake engine for tests: import { fakeEngine } from "triton-node/testing"',
  ];
  return new TritonError(lines.join('\n'), { code, attempts, cause: err });
}

/**
 * Loads Triton's library (once per process). With no argument, the library
 * already loaded is returned if there is one.
 */
export function loadLibrary(library?: string): LibraryInfo {
  const native = addon();
  const loaded = native.libraryInfo();
  if (loaded !== null && library === undefined) return toInfo(loaded);
  const candidates = libraryCandidates(library);
  try {
    return toInfo(native.loadLibrary(candidates));
  } catch (err) {
    throw loaderError(err, candidates);
  }
}

/** The loaded library, or null before any server was created. */
export function libraryInfo(): LibraryInfo | null {
  let native: NativeAddon;
  try {
    native = addon();
  } catch {
    return null;
  }
  const info = native.libraryInfo();
  return info === null ? null : toInfo(info);
}

function toInfo(info: LibraryInfo): LibraryInfo {
  return {
    path: info.path,
    apiMajor: info.apiMajor,
    apiMinor: info.apiMinor,
    isFake: info.isFake,
    optional: { ...info.optional },
  };
}
