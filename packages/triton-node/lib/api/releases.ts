/**
 * Which Triton a server runs on: the server version its metadata gives, the
 * C API version of its library, and the release name of the versions this
 * package's conformance suite was proven on (README, "Compatibility").
 * @packageDocumentation
 */
import type { LibraryInfo } from '../addon/load.js';

/** Releases the suite passed on, by Triton's major.minor server version. */
export const PROVEN_RELEASES: Readonly<Record<string, string>> = {
  '2.59': 'r25.07',
  '2.70': 'r26.06',
};

/** The C API entry point `log.logger` needs (C API 1.35, Triton 2.72). */
export const LOG_CALLBACK_ENTRY_POINT = 'TRITONSERVER_ServerOptionsSetLogCallback';

/** What `server.triton` says. */
export interface TritonVersion {
  /**
   * Triton's version as its server metadata gives it ('2.70.0'); the fake
   * engine gives that of the release it imitates.
   */
  server: string;
  /** The C API version of the library ('1.34'). */
  api: string;
  /** The release of `server` ('r26.06') when the suite was proven on it, else null. */
  release: string | null;
  /** Whether the library has TRITONSERVER_ServerOptionsSetLogCallback (`log.logger` needs it). */
  logCallback: boolean;
  /** True on triton-node's fake engine. */
  fake: boolean;
}

/** The release name of a server version, when it is one the suite was proven on. */
export function provenRelease(serverVersion: string): string | null {
  const [major, minor] = serverVersion.split('.');
  return PROVEN_RELEASES[`${major}.${minor}`] ?? null;
}

export function tritonVersion(serverVersion: string, library: LibraryInfo): TritonVersion {
  return {
    server: serverVersion,
    api: `${library.apiMajor}.${library.apiMinor}`,
    release: provenRelease(serverVersion),
    logCallback: library.optional[LOG_CALLBACK_ENTRY_POINT] === true,
    fake: library.isFake,
  };
}
