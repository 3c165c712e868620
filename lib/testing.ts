/**
 * Test support for services built on triton-node: the fake engine, a
 * libtritonserver.so of triton-node's own that runs the identity, repeat and
 * square test backends without Triton or a GPU, so a service's CI can run
 * real inferences.
 *
 * ```ts
 * import { fakeEngine } from 'triton-node/testing';
 * const server = await Server.create({ library: fakeEngine.libraryPath, modelRepository: './test/models' });
 * ```
 * @packageDocumentation
 */
import { existsSync } from 'node:fs';
import type { FakeLiveObjects } from './binding.js';
import { addon, fakeEnginePath } from './native.js';

export type { FakeLiveObjects };

export const fakeEngine = {
  /**
   * Path of the fake engine's libtritonserver.so in this package: beside the
   * prebuilt addon (prebuilds/<platform>-<arch>/), or build/fake/ when the
   * addon was built from source.
   */
  get libraryPath(): string {
    return fakeEnginePath();
  },

  /** True when the fake engine was built (and the addon loads). */
  available(): boolean {
    try {
      addon();
    } catch {
      return false;
    }
    return existsSync(fakeEngine.libraryPath);
  },

  /**
   * Objects the fake engine holds right now, by kind; null unless the loaded
   * library is the fake engine. Leak tests compare these before and after.
   */
  liveObjects(): FakeLiveObjects | null {
    return addon().fakeLiveObjects();
  },

  /**
   * Makes the fake engine run inferences synchronously inside submission, as
   * Triton does on a response-cache hit. Returns false on a real Triton.
   */
  setSyncCallbacks(enabled: boolean): boolean {
    if (typeof enabled !== 'boolean')
      throw new TypeError(`Expected a boolean for enabled but received ${typeof enabled}`);
    return addon().fakeSetSyncCallbacks(enabled);
  },
} as const;
