import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { FIXTURES, LIBRARY_PATH, MODELS, serverOptions, skipIf } from '@triton-node/test-support/helpers.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MIN_TRITON_API, TRITON_API } from '../../lib/abi/binding.js';
import { DEFAULT_LIBRARY_PATH } from '../../lib/addon/load.js';
import { Server, type ServerOptions, TritonError, libraryInfo } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function loadError(options: Partial<ServerOptions>): Promise<TritonError> {
  const err = await Server.create({ modelRepository: MODELS, ...options }).then(
    async (s) => {
      await s.stop();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TritonError);
  return err as TritonError;
}

const savedEnv = process.env.TRITON_SERVER_LIB;
afterEach(() => {
  // biome-ignore lint/performance/noDelete: assigning undefined to process.env stores the string 'undefined'
  if (savedEnv === undefined) delete process.env.TRITON_SERVER_LIB;
  else process.env.TRITON_SERVER_LIB = savedEnv;
});

// These run before any library is loaded in this process (one process per test file).
describe('loading the Triton library', () => {
  it('importing the package loads nothing and never fails for lack of Triton', () => {
    const env = { ...process.env };
    env.TRITON_SERVER_LIB = undefined; // spawn leaves undefined variables out
    const child = spawnSync(process.execPath, ['--import', 'tsx', `${FIXTURES}/import-only.ts`], {
      env,
      encoding: 'utf8',
      cwd: ROOT,
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(child.stdout.trim()).toBe('libraryInfo: null');
  });

  it('a missing library path fails with the attempts listed and how to fix it', async () => {
    const err = await loadError({ library: '/nonexistent/lib/libtritonserver.so' });
    expect(err.code).toBe('NOT_FOUND');
    expect(err.attempts).toEqual([
      expect.objectContaining({ path: '/nonexistent/lib/libtritonserver.so', outcome: 'missing' }),
    ]);
    expect(err.message).toContain('/nonexistent/lib/libtritonserver.so');
    expect(err.message).toContain('Possible solutions');
    expect(err.message).toContain('TRITON_SERVER_LIB');
  });

  it('says its advice once, with one minimum C API, however it is printed', async () => {
    const path = '/nonexistent/lib/libtritonserver.so';
    const err = await loadError({ library: path });
    expect(err.message.split('\n')).toEqual([
      "triton-node: could not load Triton's library (libtritonserver.so)",
      'Tried:',
      `- ${path}: no such file (No such file or directory)`,
      'Possible solutions:',
      '- Pass the path: Server.create({ library: "/path/to/libtritonserver.so", ... })',
      '- Or set TRITON_SERVER_LIB=/path/to/libtritonserver.so',
      '- Or install Triton so that /opt/tritonserver/lib/libtritonserver.so exists (NGC tritonserver images have it)',
      `- Triton C API ${MIN_TRITON_API} or a later ${TRITON_API.major}.x is needed (tested on Triton r25.07 and r26.06, C API ${TRITON_API.major}.${TRITON_API.minor}); a "version" outcome above means the library is older`,
      `- A "dlopen failed" outcome above: make the library's dependencies resolve (ldd /path/to/libtritonserver.so)`,
      '- Without Triton, use the fake engine for tests: import { fakeEngine } from "triton-node/testing"',
    ]);
    // What an uncaught error prints: the message and its cause, the native error.
    const shown = inspect(err);
    expect(shown.match(/Possible solutions/g)).toHaveLength(1);
    expect(shown.match(/TRITON_SERVER_LIB/g)).toHaveLength(1);
    const minima = [...shown.matchAll(/(\d+\.\d+)(?:\+| or a later| or later)|r\d+\.\d+(?:\+| or later)/g)];
    expect(minima.map((m) => m[1] ?? m[0])).toEqual([MIN_TRITON_API]);
  });

  it('a file that is not a shared library fails at dlopen', async () => {
    const path = `${MODELS}/identity_fp32/config.pbtxt`;
    const err = await loadError({ library: path });
    expect(err.attempts).toEqual([expect.objectContaining({ path, outcome: 'dlopen' })]);
    expect(err.message).toContain(path);
  });

  it('a shared library that is not Triton is refused (symbols)', async () => {
    const path = `${ROOT}build/Release/triton_node.node`;
    const err = await loadError({ library: path });
    expect(err.attempts).toEqual([expect.objectContaining({ path, outcome: 'symbols' })]);
  });

  it('without a library option: TRITON_SERVER_LIB, then the default path', async (ctx) => {
    skipIf(
      ctx,
      existsSync(DEFAULT_LIBRARY_PATH) && `a library exists at ${DEFAULT_LIBRARY_PATH}, which would load`,
    );
    process.env.TRITON_SERVER_LIB = '/nonexistent/env/libtritonserver.so';
    const err = await loadError({});
    expect(err.attempts?.map((a) => [a.path, a.outcome])).toEqual([
      ['/nonexistent/env/libtritonserver.so', 'missing'],
      [DEFAULT_LIBRARY_PATH, 'missing'],
    ]);
    expect(libraryInfo()).toBeNull();
  });

  it('then the right library loads, and libraryInfo() describes it', async () => {
    const server = await Server.create(serverOptions());
    try {
      const info = libraryInfo()!;
      expect(info).not.toBeNull();
      expect(info.apiMajor).toBe(1);
      expect(info.apiMinor).toBeGreaterThanOrEqual(34);
      expect(server.library.path).toBe(info.path);
      // isFake is true exactly when the library loaded is the fake engine's.
      expect(info.isFake).toBe(realpathSync(info.path) === realpathSync(fakeEngine.libraryPath));
      expect(server.library.isFake).toBe(info.isFake);
    } finally {
      await server.stop();
    }
    expect(LIBRARY_PATH).toBeTruthy();
  });
});

describe('options past what the C++ field holds are RangeErrors naming the option, range and given', () => {
  const base = () => serverOptions() as unknown as Record<string, unknown>;
  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'exitTimeoutSeconds',
      () => ({ ...base(), exitTimeoutSeconds: 2 ** 32 }),
      /from 0 to 4294967295 for exitTimeoutSeconds but received number 4294967296/,
    ],
    ['modelLoadRetryCount', () => ({ ...base(), modelLoadRetryCount: 2 ** 32 }), /modelLoadRetryCount/],
    [
      'log.verbose',
      () => ({ ...base(), log: { verbose: 2 ** 31 } }),
      /from 0 to 2147483647 for log\.verbose/,
    ],
    [
      'cudaMemoryPoolBytes device',
      () => ({ ...base(), cudaMemoryPoolBytes: { [2 ** 31]: 1 } }),
      /cudaMemoryPoolBytes/,
    ],
  ];
  for (const [what, make, pattern] of cases) {
    it(what, async () => {
      const err = await Server.create(make() as ServerOptions).then(
        async (s) => {
          await s.stop();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RangeError);
      expect((err as Error).message).toMatch(pattern);
    });
  }
});

describe('option mistakes are TypeErrors naming the option, expected and given', () => {
  const base = () => serverOptions() as unknown as Record<string, unknown>;
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['no options', () => undefined, /options/],
    ['modelRepository missing', () => ({}), /modelRepository/],
    ['modelRepository a number', () => ({ modelRepository: 5 }), /modelRepository.*number 5/],
    ['modelRepository empty array', () => ({ ...base(), modelRepository: [] }), /modelRepository/],
    ['unknown option', () => ({ ...base(), modelRepo: 'x' }), /modelRepo/],
    [
      'modelControlMode',
      () => ({ ...base(), modelControlMode: 'manual' }),
      /Expected .*'explicit' for modelControlMode but received string "manual"/,
    ],
    [
      'exitTimeoutSeconds',
      () => ({ ...base(), exitTimeoutSeconds: -1 }),
      /non-negative integer for exitTimeoutSeconds but received number -1/,
    ],
    ['strictModelConfig', () => ({ ...base(), strictModelConfig: 'yes' }), /boolean for strictModelConfig/],
    ['log.verbose', () => ({ ...base(), log: { verbose: 'loud' } }), /log\.verbose/],
    ['log.info', () => ({ ...base(), log: { info: 1 } }), /log\.info/],
    ['startupModels', () => ({ ...base(), startupModels: 'a' }), /startupModels/],
    ['backendConfig', () => ({ ...base(), backendConfig: { onnx: { x: {} } } }), /backendConfig\.onnx\.x/],
    ['metrics', () => ({ ...base(), metrics: 'on' }), /metrics/],
    ['metrics.enabled', () => ({ ...base(), metrics: { enabled: 'yes' } }), /boolean for metrics\.enabled/],
    ['metrics.streaming', () => ({ ...base(), metrics: { streaming: 1 } }), /boolean for metrics\.streaming/],
    ['metrics unknown key', () => ({ ...base(), metrics: { enable: false } }), /metrics\.enable\b/],
    ['metrics an array', () => ({ ...base(), metrics: [] }), /metrics/],
    ['library', () => ({ ...base(), library: 42 }), /library/],
    ['cudaMemoryPoolBytes', () => ({ ...base(), cudaMemoryPoolBytes: { gpu0: 1 } }), /cudaMemoryPoolBytes/],
    // Triton takes C strings: a NUL would cut them short, so no option string may hold one.
    ['startupModels NUL', () => ({ ...base(), startupModels: ['a\0b'] }), /NUL.*startupModels\[0\]/],
    ['serverId NUL', () => ({ ...base(), serverId: 'id\0' }), /NUL.*serverId/],
    ['log.file NUL', () => ({ ...base(), log: { file: 'f\0' } }), /NUL.*log\.file/],
    [
      'backendConfig key NUL',
      () => ({ ...base(), backendConfig: { 'a\0': { x: '1' } } }),
      /NUL.*backendConfig/,
    ],
    [
      'backendConfig value NUL',
      () => ({ ...base(), backendConfig: { a: { x: 'v\0' } } }),
      /NUL.*backendConfig\.a\.x/,
    ],
    [
      'minComputeCapability NaN',
      () => ({ ...base(), minComputeCapability: Number.NaN }),
      /minComputeCapability/,
    ],
  ];
  for (const [what, make, pattern] of cases) {
    it(what, async () => {
      const options = make();
      const err = await Server.create(options as ServerOptions).then(
        async (s) => {
          await s.stop();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(pattern);
    });
  }
});
