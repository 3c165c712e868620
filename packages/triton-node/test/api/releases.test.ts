/**
 * Triton releases: which one a server runs on (`server.triton`), what the
 * library makes the same on every release (a request naming an output twice
 * is refused before Triton sees it), what it says where a release lacks a
 * feature (`log.logger` needs the log callback of C API 1.35), and, on the
 * fake engine, each difference between r25.07 and r26.06 that
 * native/fake/PRECONDITIONS.md lists under "Releases", imitated per release.
 * docs/releases.md says what changes for users on upgrade.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FIXTURES,
  LIBRARY_PATH,
  fakeOnly,
  library,
  rejection,
  serverOptions,
  skipIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { PROVEN_RELEASES, Server } from '../../lib/index.js';
import { FAKE_RELEASES, type FakeRelease, fakeEngine } from '../../lib/testing.js';
import { type Case, type Outcome, runCases } from '../differential/generate.js';

const server = useServer(['identity_fp32', 'identity_bytes']);

afterAll(() => {
  if (library().isFake) fakeEngine.release('r26.06');
});

describe('server.triton: which Triton runs', () => {
  it('gives the server version, the C API version and the release the suite was proven on', () => {
    const t = server().triton;
    const info = library();
    expect(t.api).toBe(`${info.apiMajor}.${info.apiMinor}`);
    expect(t.fake).toBe(info.isFake);
    expect(t.server).toMatch(/^\d+\.\d+\.\d+/);
    // Every release the suite runs on is a proven one (README, "Compatibility").
    expect(Object.values(PROVEN_RELEASES)).toContain(t.release);
    expect(PROVEN_RELEASES[t.server.split('.').slice(0, 2).join('.')]).toBe(t.release);
    // Neither proven release has the log callback (C API 1.35).
    expect(t.logCallback).toBe(false);
  });

  it('the fake engine imitates r26.06 unless asked, and says so in its metadata', async (ctx) => {
    skipIf(ctx, fakeOnly('the fake engine imitates a release'));
    expect(fakeEngine.release()).toBe('r26.06');
    expect(server().triton).toMatchObject({ server: '2.70.0', api: '1.34', release: 'r26.06' });
    expect(await server().metadata()).toMatchObject({ name: 'triton', version: '2.70.0' });
  });

  it('fakeEngine.release refuses a release it does not know, naming the ones it does', () => {
    expect(() => fakeEngine.release('r24.01' as FakeRelease)).toThrow(
      "Expected 'r25.07' or 'r26.06' for release but received \"r24.01\"",
    );
    expect(FAKE_RELEASES).toEqual(['r25.07', 'r26.06']);
    // On a real Triton it changes nothing and says null.
    expect(fakeEngine.release()).toBe(library().isFake ? 'r26.06' : null);
  });
});

describe('one behaviour on every release', () => {
  it('a request naming an output twice is refused by the library before Triton, with INVALID_ARG', async () => {
    const releases: Array<FakeRelease | null> = library().isFake ? [...FAKE_RELEASES] : [null];
    for (const release of releases) {
      if (release !== null) fakeEngine.release(release);
      const err = await rejection(
        server().infer('identity_fp32', {
          inputs: { INPUT0: { data: new Float32Array([1, 2]), shape: [1, 2] } },
          outputs: ['OUTPUT0', 'OUTPUT0'],
        }),
      );
      expect(err.code).toBe('INVALID_ARG');
      expect(err.message).toBe(
        "request.outputs names output 'OUTPUT0' of model 'identity_fp32' twice: list each output once",
      );
      // Named once, it is answered.
      const r = await server().infer('identity_fp32', {
        inputs: { INPUT0: { data: new Float32Array([1, 2]), shape: [1, 2] } },
        outputs: ['OUTPUT0'],
      });
      expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2]);
    }
    if (library().isFake) fakeEngine.release('r26.06');
  });

  it('log.logger: UNSUPPORTED on a library without the log callback, naming the entry point', async () => {
    const logger = { info() {}, warn() {}, error() {} };
    const err = await rejection(Server.create(serverOptions({ log: { logger } })));
    expect(err.code).toBe('UNSUPPORTED');
    expect(err.message).toBe(
      `Server.create: log.logger needs TRITONSERVER_ServerOptionsSetLogCallback (Triton C API 1.35+, Triton 2.72+), which ${LIBRARY_PATH} (C API 1.34) does not have: leave log.logger out, and Triton logs to stderr or to log.file`,
    );
  });

  it('log.logger must have info, warn and error functions (TypeError)', async () => {
    const err = await rejection(
      Server.create(serverOptions({ log: { logger: { info() {} } as never } })),
      TypeError,
    );
    expect(err.message).toMatch(/log\.logger/);
    expect(err.message).toMatch(/an object with info, warn and error functions/);
  });
});

/** Runs raw cases (no TypeScript checks: they reach the library as they are) as `release`. */
async function asRelease(release: FakeRelease, cases: Case[]): Promise<Outcome[]> {
  fakeEngine.release(release);
  try {
    return await runCases(cases, { library: LIBRARY_PATH });
  } finally {
    fakeEngine.release('r26.06');
  }
}

const fp32 = (shape: number[], bytes: number): Case['inputs'][number] => ({
  name: 'INPUT0',
  datatype: 'FP32',
  shape,
  data: new Uint8Array(bytes),
});

/**
 * Each row of PRECONDITIONS.md's "Releases" table, checked on the fake (the
 * test's name is the row's), or where it is checked instead (the test skips
 * saying so).
 */
const DIFFERENCES: Record<string, (() => Promise<void>) | string> = {
  'server version': async () => {
    for (const [release, version] of [
      ['r25.07', '2.59.1'],
      ['r26.06', '2.70.0'],
    ] as const) {
      fakeEngine.release(release);
      const metadata = await server().metadata();
      expect(metadata.version).toBe(version);
    }
    fakeEngine.release('r26.06');
  },
  'duplicate requested output': async () => {
    const c: Case = {
      kind: 'release',
      model: 'identity_fp32',
      version: -1,
      id: 'dup',
      inputs: [fp32([1, 2], 8)],
      outputs: ['OUTPUT0', 'OUTPUT0'],
    };
    const [older] = await asRelease('r25.07', [c]);
    expect(older).toMatchObject({ at: 'responses' });
    expect(older!.responses?.[0]?.outputs.map((o) => o[0])).toEqual(['OUTPUT0']);
    const [newer] = await asRelease('r26.06', [c]);
    expect(newer).toEqual({
      at: 'submit',
      code: 'INVALID_ARG',
      message: "[request id: dup] output 'OUTPUT0' already exists in request",
    });
  },
  'uncountable input shape': async () => {
    const cases: Case[] = [
      { kind: 'release', model: 'identity_fp32', version: -1, inputs: [fp32([6, -2], 0)] },
      {
        kind: 'release',
        model: 'identity_bytes',
        version: -1,
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [-3], data: new Uint8Array([1, 0, 0, 0, 65]) }],
      },
    ];
    const older = await asRelease('r25.07', cases);
    expect(older[0]!.message).toBe(
      "[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model 'identity_fp32'. Expected -48, got 0",
    );
    expect(older[1]!.message).toMatch(/string elements .* expecting -3$/);
    const newer = await asRelease('r26.06', cases);
    expect(newer.map((o) => o.message)).toEqual([
      "tensor 'INPUT0' contains an invalid dimension [6,-2]",
      "tensor 'INPUT0' contains an invalid dimension in shape [-3]",
    ]);
  },
  // Loads compared with each release's recording: test/backends/fake-onnxruntime.test.ts.
  'onnxruntime BF16': async () => {
    const loaded = (release: FakeRelease) =>
      (
        JSON.parse(
          readFileSync(join(FIXTURES, `real-triton-${release}`, 'onnxruntime', 'identity_bf16.json'), 'utf8'),
        ) as {
          loaded: boolean;
        }
      ).loaded;
    expect([loaded('r25.07'), loaded('r26.06')]).toEqual([false, true]);
  },
  'readiness after a Python stub died':
    'not imitated (the fake has no stubs): test/backends/python-backend.test.ts checks each real release',
  'request release before delete':
    'the same on both releases: the fake aborts on a delete while Triton holds the request (native/fake/test/precondition_tests.cc, and every test of the suite on the fake)',
};

describe("the fake engine imitates each release's differences (PRECONDITIONS.md, Releases)", () => {
  const doc = readFileSync(new URL('../../../fake-engine/PRECONDITIONS.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Releases'));
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| Difference') && !l.startsWith('|---'))
    .map((l) => l.split('|')[1]!.trim());

  it('every difference the document names has its check here, and no other', () => {
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.sort()).toEqual(Object.keys(DIFFERENCES).sort());
  });

  for (const [name, check] of Object.entries(DIFFERENCES)) {
    it(name, async (ctx) => {
      skipIf(ctx, typeof check === 'string' ? check : fakeOnly('the fake engine imitates a release'));
      if (typeof check !== 'string') await check();
    }, 120_000);
  }
});
