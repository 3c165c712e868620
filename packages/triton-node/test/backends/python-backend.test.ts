/**
 * Triton's real Python backend through the public API, with the models of
 * test/backends/python-models.ts: numpy pre- and post-processing checked against the
 * JS of examples/ocr-steps.ts, an ensemble and BLS models around the real
 * PaddleOCR detector, 1,000 concurrent requests on the ensemble, a Python
 * exception as a TritonError, a stub process killed under a request, and
 * stop() with requests in flight leaving no stub and no shared memory.
 *
 * Real Triton only (TRITON_SERVER_LIB + TRITON_BACKEND_DIR with a python
 * backend): the fake engine cannot run Python.
 *
 * What r25.07 does, as asserted here: a Python exception in execute() is
 * INTERNAL "Failed to process the request(s) for model '<instance>', message:
 * <ExceptionType>: <text>"; a killed stub fails the request it had and every
 * later one routed to that instance with INTERNAL "Stub process '<instance>'
 * is not healthy." while the model stays READY in the index (the backend does
 * not restart it; r26.06 reports the model and the server not ready, r25.07
 * ready), and unloading it or stopping the server does not finish (stop() runs
 * into exitTimeoutSeconds; the dead stubs' /dev/shm regions stay).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRealModelRepository, realModelFiles } from '@triton-node/test-support/backends/real-models.js';
import {
  BACKEND_DIR,
  FIXTURES,
  MODELS,
  library,
  needsBackend,
  rejection,
  serverOptions,
  skipAllIf,
  until,
} from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boxesOf, preprocess } from '../../examples/ocr-steps.js';
import { type RgbImage, decodePng } from '../../examples/png.js';
import { Server, type ServerOptions, type Tensor, TritonError } from '../../lib/index.js';
import { maxAbsDiff } from './onnx-helpers.js';
import { PY_RAISE_MESSAGE, makePythonModelRepository, sleepingStubs } from './python-models.js';

const EXAMPLE_IMAGE = new URL('../../examples/images/text-lines.png', import.meta.url);
const DET_OUT = 'sigmoid_0.tmp_0';

function noPythonBackend(): string | false {
  if (library().isFake) return 'real Triton only (the fake engine cannot run Python models)';
  const noPython = needsBackend('python');
  if (noPython !== false) return noPython;
  const files = realModelFiles();
  return typeof files === 'string' ? files : false;
}
const skip = noPythonBackend();

/** A shm region prefix of this test process: what it finds in /dev/shm is its own. */
const SHM_PREFIX = `tn_pytest_${process.pid}_`;
const PYTHON_CONFIG: ServerOptions['backendConfig'] = {
  python: { 'shm-region-prefix-name': SHM_PREFIX, 'shm-default-byte-size': 2 * 1024 * 1024 },
};

interface Stub {
  pid: number;
  /** The model instance (the stub's argv[8], e.g. py_sleep_0_1). */
  instance: string;
  /** Its shared memory region (argv[2]), a file in /dev/shm. */
  region: string;
}

/** The live Python stubs this process started (their parent is this process; zombies are not counted). */
function stubs(): Stub[] {
  const out: Stub[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .slice(0, 2);
      if (Number(ppid) !== process.pid || state === 'Z') continue;
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!argv[0]!.endsWith('triton_python_backend_stub')) continue;
      out.push({ pid: Number(entry), instance: argv[8]!, region: argv[2]! });
    } catch {
      // the process ended while it was read
    }
  }
  return out;
}

function ownShm(): string[] {
  return readdirSync('/dev/shm').filter((f) => f.startsWith(SHM_PREFIX));
}

function repository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'triton-python-models-'));
  makeRealModelRepository(dir, { models: ['ocr_det'], intraOpThreads: 1, interOpThreads: 1 });
  cpSync(join(MODELS, 'identity_fp32'), join(dir, 'identity_fp32'), { recursive: true });
  return makePythonModelRepository(dir);
}

function startServer(dir: string): Promise<Server> {
  return Server.create(serverOptions({ modelRepository: dir, backendConfig: PYTHON_CONFIG }));
}

function image(file: string | URL): RgbImage {
  return decodePng(readFileSync(file));
}

function crop(from: RgbImage, x: number, y: number, width: number, height: number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  for (let row = 0; row < height; row++) {
    const start = ((y + row) * from.width + x) * 3;
    data.set(from.data.subarray(start, start + width * 3), row * width * 3);
  }
  return { width, height, data };
}

function imageInput(img: RgbImage) {
  return { IMAGE: { data: img.data, shape: [img.height, img.width, 3] } };
}

/** The JS pipeline: examples/ocr-steps.ts around ocr_det on Triton. */
async function jsBoxes(server: Server, img: RgbImage) {
  const x = preprocess(img);
  const r = await server.infer('ocr_det', {
    inputs: { x: { data: x.data, shape: [1, 3, x.height, x.width] } },
  });
  const map = r.outputs[DET_OUT]!;
  const [, , h, w] = map.shape as [number, number, number, number];
  return { map, boxes: boxesOf(map.data as Float32Array, w, h) };
}

/** BOXES/SCORES outputs against JS boxes: same count, same values (float32 rounding apart). */
function expectBoxes(outputs: Record<string, Tensor>, expected: ReturnType<typeof boxesOf>): void {
  const boxes = outputs.BOXES!;
  const scores = outputs.SCORES!;
  expect(boxes.datatype).toBe('FP32');
  expect(boxes.shape).toEqual([expected.length, 4]);
  expect(scores.shape).toEqual([expected.length]);
  const flat = expected.flatMap((b) => [b.x, b.y, b.width, b.height]);
  expect(maxAbsDiff(boxes.data as Float32Array, flat)).toBeLessThan(1e-3);
  expect(
    maxAbsDiff(
      scores.data as Float32Array,
      expected.map((b) => b.score),
    ),
  ).toBeLessThan(1e-5);
}

const sleepRequest = (ms: number) => ({ inputs: { MS: { data: new Int32Array([ms]), shape: [1] } } });

describe('python models on real Triton', () => {
  skipAllIf(skip);
  let dir: string | undefined;
  let server: Server | undefined;
  beforeAll(async () => {
    if (skip !== false) return;
    dir = repository();
    server = await startServer(dir);
    const models = ['ocr_det', 'ocr_pre', 'ocr_post', 'py_add', 'bls_add', 'py_raise', 'bls_error'];
    for (const m of [...models, 'identity_fp32', 'bls_identity']) {
      await server.loadModel(m);
    }
    await server.loadModel('ocr_pipeline');
    await server.loadModel('bls_ocr');
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const s = () => server!;

  it('ocr_pre (numpy) gives the JS pre-processing: resized, normalized BGR NCHW', async () => {
    for (const img of [
      image(EXAMPLE_IMAGE),
      image(join(FIXTURES, 'text-page.png')),
      image(join(FIXTURES, 'text-line.png')),
    ]) {
      const expected = preprocess(img);
      const r = await s().infer('ocr_pre', { inputs: imageInput(img) });
      const x = r.outputs.x!;
      expect(x.datatype).toBe('FP32');
      expect(x.shape).toEqual([1, 3, expected.height, expected.width]);
      expect(maxAbsDiff(x.data as Float32Array, expected.data)).toBeLessThan(1e-5);
    }
  });

  it('ocr_pre refuses an image that is not [H, W, 3] (Triton checks the shape)', async () => {
    const err = await rejection(
      s().infer('ocr_pre', { inputs: { IMAGE: { data: new Uint8Array(8), shape: [2, 2, 2] } } }),
    );
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toContain('IMAGE');
  });

  it('ocr_post (numpy) gives the JS boxes of the detector map', async () => {
    const { map, boxes } = await jsBoxes(s(), image(EXAMPLE_IMAGE));
    // The example's three lines of text (test/backends/ocr-detect-example.test.ts checks where they are).
    expect(boxes.length).toBe(3);
    const r = await s().infer('ocr_post', { inputs: { PROB: { data: map.data, shape: map.shape } } });
    expectBoxes(r.outputs, boxes);
  });

  it('ocr_post of an empty map gives no boxes ([0, 4])', async () => {
    const r = await s().infer('ocr_post', {
      inputs: { PROB: { data: new Float32Array(32 * 32), shape: [1, 1, 32, 32] } },
    });
    expect(r.outputs.BOXES!.shape).toEqual([0, 4]);
    expect(r.outputs.SCORES!.shape).toEqual([0]);
  });

  it('ocr_pipeline (ensemble ocr_pre → ocr_det → ocr_post) gives the JS boxes', async () => {
    const img = image(EXAMPLE_IMAGE);
    const { boxes } = await jsBoxes(s(), img);
    const r = await s()
      .model('ocr_pipeline')
      .infer({ inputs: imageInput(img) });
    expectBoxes(r.outputs, boxes);
  });

  it('bls_ocr (the same three steps as BLS calls from Python) gives the JS boxes', async () => {
    const img = image(EXAMPLE_IMAGE);
    const { boxes } = await jsBoxes(s(), img);
    const r = await s().infer('bls_ocr', { inputs: imageInput(img) });
    expectBoxes(r.outputs, boxes);
  });

  it('py_add adds; bls_add calls py_add twice from Python: A + 2B', async () => {
    const a = new Float32Array([1, -2.5, 100, 0.25]);
    const b = new Float32Array([3, 4, -50, 0.5]);
    const inputs = { A: { data: a, shape: [4] }, B: { data: b, shape: [4] } };
    const sum = await s().infer('py_add', { inputs });
    expect(Array.from(sum.outputs.SUM!.data as Float32Array)).toEqual(Array.from(a, (v, i) => v + b[i]!));
    const out = await s().infer('bls_add', { inputs });
    expect(Array.from(out.outputs.OUT!.data as Float32Array)).toEqual(Array.from(a, (v, i) => v + 2 * b[i]!));
  });

  it('1,000 concurrent requests on the ensemble, each with its own answer', async () => {
    const page = image(EXAMPLE_IMAGE);
    const variants = [
      image(join(FIXTURES, 'text-line.png')),
      image(join(FIXTURES, 'text-page.png')),
      crop(page, 0, 0, 256, 96),
      crop(page, 160, 64, 320, 128),
    ];
    const expected = await Promise.all(variants.map(async (img) => (await jsBoxes(s(), img)).boxes));
    // Distinct answers, so a response given to the wrong request shows.
    expect(new Set(expected.map((b) => JSON.stringify(b))).size).toBe(variants.length);
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        s().infer('ocr_pipeline', { id: `r${i}`, inputs: imageInput(variants[i % variants.length]!) }),
      ),
    );
    results.forEach((r, i) => {
      expect(r.id).toBe(`r${i}`);
      expectBoxes(r.outputs, expected[i % variants.length]!);
    });
  }, 300_000);

  it('a Python exception is a TritonError INTERNAL with the exception type and message', async () => {
    const err = await rejection(
      s().infer('py_raise', { inputs: { IN: { data: new Int32Array([1]), shape: [1] } } }),
    );
    expect(err.code).toBe('INTERNAL');
    expect(err.model).toBe('py_raise');
    expect(err.message).toContain(`ValueError: ${PY_RAISE_MESSAGE}`);
    expect(err.message).toContain("Failed to process the request(s) for model 'py_raise_0_0'");
  });

  it('a BLS call to a model that is not loaded fails inside Python; the caller gets its text', async () => {
    const err = await rejection(
      s().infer('bls_error', { inputs: { MODEL: { data: ['not_loaded'], shape: [1], datatype: 'BYTES' } } }),
    );
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toContain('bls_error: Model not_loaded - Error when running inference');
    expect(err.message).toContain("Model 'not_loaded' is not ready");
  });

  it('BLS cannot call an identity-backend model: python_backend refuses its double parameter (upstream)', async () => {
    // identity_fp32 answers directly; its response carries a double parameter
    // that r25.07's python_backend cannot turn into a Python value.
    const direct = await s().infer('identity_fp32', {
      inputs: { INPUT0: { data: Float32Array.of(1, 2), shape: [1, 2] } },
    });
    expect(Array.from(direct.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2]);
    const err = await rejection(
      s().infer('bls_identity', { inputs: { INPUT0: { data: Float32Array.of(1, 2), shape: [2] } } }),
    );
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toContain("Unsupported parameter type for parameter 'param3'");
  });
});

describe('server.stop() with python requests in flight', () => {
  skipAllIf(skip);

  it('answers or fails every request, and leaves no stub process and no /dev/shm region', async () => {
    const dir = repository();
    try {
      const server = await startServer(dir);
      await server.loadModel('py_sleep');
      await server.loadModel('py_add');
      const mine = stubs();
      expect(mine.length).toBe(3);
      // The regions are named with this test's prefix (backendConfig python shm-region-prefix-name).
      for (const st of mine) expect(st.region.startsWith(SHM_PREFIX)).toBe(true);
      expect(ownShm().sort()).toEqual(mine.map((st) => st.region).sort());
      const inflight = Promise.allSettled(
        Array.from({ length: 6 }, () => server.infer('py_sleep', sleepRequest(300))),
      );
      await new Promise((r) => setTimeout(r, 100));
      const started = performance.now();
      await server.stop();
      const stopMs = performance.now() - started;
      const results = await inflight;
      const ok = results.filter((r) => r.status === 'fulfilled').length;
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(TritonError);
      }
      console.log(
        `stop() with 6 py_sleep(300 ms) requests in flight, 3 python stubs: ${stopMs.toFixed(0)} ms; ${ok} answered, ${results.length - ok} failed`,
      );
      expect(stubs()).toEqual([]);
      expect(ownShm()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('stop() of an idle server with python models (timing printed for docs/backends.md)', async () => {
    const dir = repository();
    try {
      const server = await startServer(dir);
      await server.loadModel('py_add');
      await server.infer('py_add', {
        inputs: {
          A: { data: new Float32Array([1]), shape: [1] },
          B: { data: new Float32Array([2]), shape: [1] },
        },
      });
      expect(stubs().length).toBe(1);
      const started = performance.now();
      await server.stop();
      console.log(
        `stop() of an idle server with 1 python stub: ${(performance.now() - started).toFixed(0)} ms`,
      );
      expect(stubs()).toEqual([]);
      expect(ownShm()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

// Last in the file: the server it kills stubs of cannot be stopped cleanly (see its afterAll).
describe('a stub process that dies', () => {
  skipAllIf(skip);
  let dir: string | undefined;
  let server: Server | undefined;
  beforeAll(async () => {
    if (skip !== false) return;
    dir = repository();
    server = await startServer(dir);
    await server.loadModel('py_sleep');
    await server.loadModel('py_add');
  }, 120_000);
  afterAll(async () => {
    // r25.07 does not finish unloading an instance whose stub died: this stop
    // runs into exitTimeoutSeconds (a TritonWarning) and the dead stubs'
    // regions stay in /dev/shm, even after the process ends. They are this
    // test's (its prefix) and no process uses them any more.
    await server?.stop();
    for (const region of ownShm()) rmSync(join('/dev/shm', region), { force: true });
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('fails its request and every later one (INTERNAL "not healthy"); readiness as the release says', async () => {
    const sleepers = stubs().filter((st) => st.instance.startsWith('py_sleep_'));
    expect(sleepers.length).toBe(2); // instance_group count 2
    // Both instances busy, then both stubs killed under their requests.
    const inflight = [1, 2].map(() => server!.infer('py_sleep', sleepRequest(5000)));
    const settled = Promise.allSettled(inflight);
    await until(
      'both requests to be in their stubs',
      () => sleepers.every((st) => sleepingStubs(dir!).includes(st.pid)),
      () => sleepingStubs(dir!),
    );
    for (const st of sleepers) process.kill(st.pid, 'SIGKILL');
    for (const result of await settled) {
      expect(result.status).toBe('rejected');
      const err = (result as PromiseRejectedResult).reason as TritonError;
      expect(err).toBeInstanceOf(TritonError);
      expect(err.code).toBe('INTERNAL');
      expect(err.message).toMatch(/^Stub process 'py_sleep_0_[01]' is not healthy\.$/);
    }
    // r25.07 does not restart the stub: later requests fail the same way, and the model stays READY.
    for (let i = 0; i < 3; i++) {
      const err = await rejection(server!.infer('py_sleep', sleepRequest(1)));
      expect(err.code).toBe('INTERNAL');
      expect(err.message).toMatch(/Stub process 'py_sleep_0_[01]' is not healthy/);
    }
    // The index says READY on both releases. From r26.06 on the backend
    // reports its instances' readiness (TRITONBACKEND_ModelInstanceReady):
    // a model whose stubs all died is not ready, and neither is the server
    // (strictReadiness). r25.07 says ready for both (docs/releases.md).
    const entry = (await server!.modelIndex()).find((m) => m.name === 'py_sleep');
    expect(entry?.state).toBe('READY');
    expect(server!.triton.release, 'a release whose readiness after a stub died is known').toMatch(
      /^r(25\.07|26\.06)$/,
    );
    const ready = server!.triton.release === 'r25.07';
    expect(await server!.model('py_sleep').isReady()).toBe(ready);
    expect(await server!.isReady()).toBe(ready);
    // A healthy model next to it still answers.
    const sum = await server!.infer('py_add', {
      inputs: {
        A: { data: new Float32Array([2]), shape: [1] },
        B: { data: new Float32Array([3]), shape: [1] },
      },
    });
    expect(Array.from(sum.outputs.SUM!.data as Float32Array)).toEqual([5]);
  }, 120_000);
});
