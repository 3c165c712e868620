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
 *
 * ONNX models (backend onnxruntime) compute on the fake with onnxruntime-node's
 * ONNX Runtime when the application has it (or TRITON_NODE_ONNXRUNTIME_LIB).
 * A repository whose models need other backends (pytorch, tensorflow, ...)
 * loads on the fake with stand-ins, asked for by name:
 * `fakeEngine.standIns({ onnxruntime: 'zeros' })`.
 * @packageDocumentation
 */
import { existsSync } from 'node:fs';
import type { FakeLiveObjects } from './abi/binding.js';
import { addon, fakeEnginePath, libraryInfo, loadLibrary } from './addon/load.js';

export type { FakeLiveObjects };

/**
 * What a stand-in backend answers with: `'zeros'` (each output of its
 * configured datatype and shape, all zeros; a `-1` dimension is taken from
 * the input of the same name or position when it has as many dimensions,
 * else 1; BYTES elements are empty) or `'echo'` (the input of the same name,
 * else of the same position, copied when its datatype and shape fit the
 * output; zeros otherwise).
 */
export type StandInMode = 'zeros' | 'echo';

/**
 * The Triton releases whose differences the fake engine imitates (listed in
 * native/fake/PRECONDITIONS.md, "Releases"); the newest is its default.
 */
export const FAKE_RELEASES = ['r25.07', 'r26.06'] as const;
export type FakeRelease = (typeof FAKE_RELEASES)[number];

/**
 * Stand-ins by backend name, as the model config names the backend once
 * Triton's defaults are filled in (`platform: "onnxruntime_onnx"` means
 * backend `onnxruntime`, `pytorch_libtorch` `pytorch`,
 * `tensorflow_savedmodel` `tensorflow`, `tensorrt_plan` `tensorrt`), or
 * `'*'` for any backend the fake engine does not run itself.
 */
export type StandIns = Readonly<Record<string, StandInMode>>;

const OWN_BACKENDS = ['identity', 'repeat', 'square', 'fake_text_stream', 'fake_text_embedding'];

/** The spec the fake engine reads: "<backend>=<mode>[,...]". */
function standInSpec(standIns: StandIns | null): string {
  if (standIns === null) return '';
  if (typeof standIns !== 'object' || Array.isArray(standIns)) {
    throw new TypeError(
      `Expected an object (backend -> mode) or null for standIns but received ${typeof standIns}`,
    );
  }
  const items: string[] = [];
  for (const [backend, mode] of Object.entries(standIns)) {
    if (backend === '' || /[,=]/.test(backend)) {
      throw new TypeError(
        `Expected a backend name without ',' or '=' in standIns but received ${JSON.stringify(backend)}`,
      );
    }
    if (OWN_BACKENDS.includes(backend)) {
      throw new TypeError(`standIns.${backend}: the fake engine runs the ${backend} backend itself`);
    }
    if (typeof mode === 'function') {
      // A handler would have to run on the JS thread while the request waits
      // on one of the engine's threads: either that thread blocks on JS (a
      // deadlock when the JS thread waits on the engine), or every request
      // becomes a round trip through the event loop that the engine cannot
      // see. 'zeros' and 'echo' answer on the engine's thread.
      throw new TypeError(
        `standIns.${backend}: handlers are not supported (they would make a Triton thread wait on JavaScript); use 'zeros' or 'echo'`,
      );
    }
    if (mode !== 'zeros' && mode !== 'echo') {
      throw new TypeError(
        `Expected 'zeros' or 'echo' for standIns.${backend} but received ${JSON.stringify(mode)}`,
      );
    }
    items.push(`${backend}=${mode}`);
  }
  return items.join(',');
}

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
    try {
      return existsSync(fakeEngine.libraryPath);
    } catch {
      return false;
    }
  },

  /**
   * Objects the fake engine holds right now, by kind; null unless the loaded
   * library is the fake engine. Leak tests compare these before and after.
   * `requests` leaves out the released requests that triton-node keeps for
   * the next request of the same model and input shapes (they are reused,
   * and deleted when models are loaded or unloaded and when the server
   * stops); `keptRequests` counts those.
   */
  liveObjects(): (FakeLiveObjects & { keptRequests: number }) | null {
    const a = addon();
    const live = a.fakeLiveObjects();
    if (live === null) return null;
    const kept = a.addonStats().keptRequests;
    return { ...live, requests: live.requests - kept, keptRequests: kept };
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

  /**
   * The Triton release the fake engine imitates where releases differ
   * (r26.06 unless asked: the newest), after switching to `release` when
   * given. Process-wide, from the next call into the engine on; also set by
   * the environment variable TRITONFAKE_RELEASE. Loads the fake engine when
   * no Triton library is loaded yet; null (and nothing done) on a real Triton.
   */
  release(release?: FakeRelease): FakeRelease | null {
    if (release !== undefined && !(FAKE_RELEASES as readonly unknown[]).includes(release)) {
      throw new TypeError(
        `Expected ${FAKE_RELEASES.map((r) => `'${r}'`).join(' or ')} for release but received ${JSON.stringify(release)}`,
      );
    }
    const loaded = libraryInfo() ?? loadLibrary(fakeEngine.libraryPath);
    if (!loaded.isFake) return null;
    return addon().fakeRelease(release ?? null) as FakeRelease | null;
  },

  /**
   * Opt-in stand-ins for backends the fake engine does not have, so that a
   * service's own model repository loads in its CI: a model whose backend
   * has a stand-in loads and answers with outputs of its configured datatype
   * and shape (`'zeros'` or `'echo'`, see StandInMode). Stand-ins compute
   * nothing, and say so: a warning in the log when such a model loads,
   * `standIn` in its metadata, `standIns` in the server's metadata, and the
   * parameter `triton_node_stand_in` (`'<backend>:<mode>'`) in every
   * response. Models loaded afterwards use them, on every server of the
   * process; `null` (or `{}`) turns them off. Loads the fake engine when no
   * Triton library is loaded yet; returns false (and does nothing) when a
   * real Triton is loaded.
   */
  standIns(standIns: StandIns | null): boolean {
    const spec = standInSpec(standIns);
    const loaded = libraryInfo() ?? loadLibrary(fakeEngine.libraryPath);
    if (!loaded.isFake) return false;
    return addon().fakeSetStandIns(spec);
  },
} as const;

/** The addon's own counters, as leak and drain tests wait on them. */
export interface AddonStats {
  /** Output buffers handed to JS and not yet collected or released. */
  liveOutputBuffers: number;
  /** Bytes held in the addon's buffer pools for reuse. */
  pooledBytes: number;
  /** Requests submitted and not yet settled in JS. */
  pendingRequests: number;
  /** Requests inside Triton now (submitted, their final response not yet delivered). */
  inflightRequests: number;
  /** Released Triton requests kept for the next request of their model and input shapes. */
  keptRequests: number;
  /** Stopped servers kept undeleted while another server of the process runs. */
  parkedServers: number;
}

/**
 * The addon's counters right now: requests pending and in flight in Triton,
 * released requests kept for reuse, live output buffers, pooled bytes and
 * parked servers. Tests wait on them (a drain is done when `pendingRequests`
 * is 0) instead of waiting for time.
 */
export function addonStats(): AddonStats {
  return addon().addonStats();
}
