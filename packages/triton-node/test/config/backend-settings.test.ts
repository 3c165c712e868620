/**
 * `backendConfig.python`: Server.create checks the Python backend's settings
 * (the keys r25.07's python_be.cc reads, and how it reads them) before
 * Triton starts: an unknown key with the key it is closest to, a bad value
 * naming key, value and rule. The checks are TypeScript: they run the same
 * on every library. One test on real Triton loads a python model with
 * settings that pass.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKEND_DIR, library, serverOptions, skipIf } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { closestKey } from '../../lib/config/backend-settings.js';
import { Server, type ServerOptions } from '../../lib/index.js';
import { makePythonModelRepository } from '../backends/python-models.js';

type Settings = Record<string, string | number | boolean>;

async function createError(python: Settings): Promise<unknown> {
  return Server.create(serverOptions({ backendConfig: { python } })).then(
    async (s) => {
      await s.stop();
      return undefined;
    },
    (e: unknown) => e,
  );
}

describe('backendConfig.python: unknown keys', () => {
  const cases: Array<[string, string | undefined]> = [
    ['shm-default-bytesize', 'shm-default-byte-size'],
    ['shm_default_byte_size', 'shm-default-byte-size'],
    ['shm-message-queue-size', 'shm_message_queue_size'],
    ['stub-timeout', 'stub-timeout-seconds'],
    ['thread_pool_size', 'thread-pool-size'],
    ['execution-env', undefined],
  ];
  for (const [key, near] of cases) {
    it(`'${key}' is refused${near === undefined ? ' (nothing close)' : `, did you mean '${near}'`}`, async () => {
      const err = await createError({ [key]: '1' });
      expect(err).toBeInstanceOf(TypeError);
      const message = (err as Error).message;
      expect(message).toContain(`Unknown setting 'backendConfig.python.${key}' of the python backend`);
      if (near === undefined) expect(message).not.toContain('did you mean');
      else expect(message).toContain(`did you mean '${near}'?`);
      expect(message).toContain('known: shm-default-byte-size, shm-growth-byte-size');
    });
  }

  it('closestKey picks the nearest key, or none when all are far', () => {
    expect(closestKey('shm-grwth-byte-size', ['shm-growth-byte-size', 'shm-default-byte-size'])).toBe(
      'shm-growth-byte-size',
    );
    expect(closestKey('zzz', ['shm-growth-byte-size'])).toBeUndefined();
  });

  it("other backends' settings are not checked", async () => {
    const err = await Server.create(
      serverOptions({ backendConfig: { anything: { 'no-such-key': 'x' } } }),
    ).then(
      (s) => s.stop(),
      (e: unknown) => e,
    );
    expect(err).toBeUndefined();
  });
});

describe('backendConfig.python: values', () => {
  const bad: Array<[string, Settings[string], 'TypeError' | 'RangeError', RegExp]> = [
    ['shm-default-byte-size', 1048575, 'RangeError', /from 1048576 to 9223372036854775807 \(.*1 MiB/],
    ['shm-default-byte-size', '4MB', 'TypeError', /an integer from 1048576/],
    ['shm-default-byte-size', '9223372036854775808', 'RangeError', /to 9223372036854775807/],
    ['shm-default-byte-size', 2 ** 60, 'RangeError', /past 2\^53 as a string/],
    ['shm-growth-byte-size', 0, 'RangeError', /from 1 to/],
    ['shm-growth-byte-size', 1.5, 'TypeError', /an integer from 1/],
    ['thread-pool-size', '0', 'RangeError', /from 1 to/],
    ['thread-pool-size', true, 'TypeError', /an integer from 1/],
    ['shm_message_queue_size', 0, 'RangeError', /from 1 to 4294967295 \(.*0 blocks every message/],
    ['shm_message_queue_size', 2 ** 32, 'RangeError', /to 4294967295/],
    ['stub-timeout-seconds', -1, 'RangeError', /from 1 to/],
    ['stub-timeout-seconds', '', 'TypeError', /an integer from 1/],
    ['shm-region-prefix-name', '', 'TypeError', /a non-empty name of letters/],
    ['shm-region-prefix-name', 'a/b', 'TypeError', /\/dev\/shm/],
    ['shm-region-prefix-name', 'has space', 'TypeError', /command line/],
    ['shm-region-prefix-name', 7, 'TypeError', /a string/],
    ['backend-directory', '', 'TypeError', /a directory path/],
    ['default-max-batch-size', -1, 'RangeError', /from 0 to/],
  ];
  for (const [key, value, kind, rule] of bad) {
    it(`${key}: ${JSON.stringify(value)} is a ${kind} naming key, value and rule`, async () => {
      const err = await createError({ [key]: value });
      expect((err as Error | undefined)?.constructor.name).toBe(kind);
      const message = (err as Error).message;
      expect(message).toContain(`for backendConfig.python.${key} but received`);
      expect(message).toContain(typeof value === 'string' ? `"${value}"` : String(value));
      expect(message).toMatch(rule);
    });
  }

  it('values the backend accepts pass, as numbers or strings', async () => {
    const err = await createError({
      'shm-default-byte-size': 1048576,
      'shm-growth-byte-size': '2097152',
      'thread-pool-size': ' 4',
      shm_message_queue_size: 4294967295,
      'stub-timeout-seconds': '9223372036854775807',
      'shm-region-prefix-name': 'my_app.py-shm_',
      'default-max-batch-size': 0,
    });
    expect(err).toBeUndefined();
  });
});

describe('backendConfig.python on real Triton', () => {
  it('a python model loads and answers with settings that pass; the stub gets the sizes', async (ctx) => {
    skipIf(
      ctx,
      library().isFake
        ? 'real Triton only (the fake engine cannot run Python models)'
        : BACKEND_DIR === undefined || !existsSync(join(BACKEND_DIR, 'python', 'libtriton_python.so'))
          ? 'needs a python backend in TRITON_BACKEND_DIR'
          : false,
    );
    const dir = makePythonModelRepository(mkdtempSync(join(tmpdir(), 'triton-py-settings-')), {
      models: ['py_add'],
    });
    const prefix = `tn_settings_${process.pid}_`;
    const python = {
      'shm-default-byte-size': 3 * 1024 * 1024,
      'shm-growth-byte-size': '2097152',
      'thread-pool-size': 2,
      shm_message_queue_size: 64,
      'stub-timeout-seconds': 20,
      'shm-region-prefix-name': prefix,
    };
    const server = await Server.create(
      serverOptions({ modelRepository: dir, backendConfig: { python } } satisfies Partial<ServerOptions>),
    );
    try {
      await server.loadModel('py_add');
      const r = await server.infer('py_add', {
        inputs: {
          A: { data: new Float32Array([1.5]), shape: [1] },
          B: { data: new Float32Array([2]), shape: [1] },
        },
      });
      expect(Array.from(r.outputs.SUM!.data as Float32Array)).toEqual([3.5]);
      // The stub is started as: stub model.py <region> <default size> <growth size> ...
      const region = readdirSync('/dev/shm').find((f) => f.startsWith(prefix));
      expect(region).toBeDefined();
      const argv = readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .map((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
          } catch {
            return [];
          }
        })
        .find((a) => a[2] === region);
      expect(argv?.slice(3, 5)).toEqual([String(3 * 1024 * 1024), '2097152']);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
