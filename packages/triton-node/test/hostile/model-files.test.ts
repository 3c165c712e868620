// A hostile tenant's model files and backend parameters: a model.onnx that
// is a FIFO or a link to /dev/zero (the backend's open would wait for a
// writer for good, or its read never end: before, loadModel never settled
// and stop() waited for it), and ONNX Runtime thread counts of 30000 (the
// fake's memory grew without end) or beyond a C int (r25.07 aborts the
// process). Each is refused with a typed error naming the file or the
// parameter, and the server stops. On the fake and on a real Triton.
import { execFileSync } from 'node:child_process';
import {
  constants,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onnxRuntimeNode } from '@triton-node/test-support/backends/real-models.js';
import { library, needsBackend, serverOptions, skipIf } from '@triton-node/test-support/helpers.js';
import { rawServer } from '@triton-node/test-support/hostile/raw-server.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxSessionThreads } from '../../lib/config/onnxruntime.js';
import { type ModelConfig, Server, TritonError, formatModelConfig, lint } from '../../lib/index.js';
import { ADD_BIAS } from '../backends/tiny-onnx.js';

const root = mkdtempSync(join(tmpdir(), 'triton-node-hostile-model-files-'));
const repo = join(root, 'repo');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** ADD_BIAS's config (y = x + bias, not batching), named `name`, with `parameters`. */
function config(name: string, parameters: Record<string, string> = {}): ModelConfig {
  return {
    name,
    backend: 'onnxruntime',
    max_batch_size: 0,
    input: [{ name: 'x', data_type: 'TYPE_FP32', dims: [-1, 4] }],
    output: [{ name: 'y', data_type: 'TYPE_FP32', dims: [-1, 4] }],
    instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, { string_value: v }])),
  };
}

/** A model folder: config.pbtxt and `files` (`<version>/<name>` → what to put there). */
function model(name: string, files: Record<string, (path: string) => void>, cfg = config(name)): string {
  mkdirSync(join(repo, name), { recursive: true });
  writeFileSync(join(repo, name, 'config.pbtxt'), formatModelConfig(cfg));
  for (const [file, make] of Object.entries(files)) {
    mkdirSync(join(repo, name, file, '..'), { recursive: true });
    make(join(repo, name, file));
  }
  return name;
}

const fifo = (path: string) => execFileSync('mkfifo', [path]);
const onnx = (path: string) => writeFileSync(path, ADD_BIAS);
const zero = (path: string) => symlinkSync('/dev/zero', path);

model('onnx_fifo', { '1/model.onnx': fifo });
model('onnx_zero', { '1/model.onnx': zero });
// A folder named as the model holds <folder>/model.onnx.
model('onnx_dir_fifo', { '1/model.onnx/model.onnx': fifo });
// Version 1 is a FIFO, but only the latest version (2) is served.
model('onnx_old_fifo', { '1/model.onnx': fifo, '2/model.onnx': onnx });
// One thread over the fake's limit (harmless if it were started), then the attack's 30000.
const overLimit = String(maxSessionThreads() + 1);
model(
  'onnx_threads_over',
  { '1/model.onnx': onnx },
  config('onnx_threads_over', { intra_op_thread_count: overLimit }),
);
model(
  'onnx_threads_30000',
  { '1/model.onnx': onnx },
  config('onnx_threads_30000', { intra_op_thread_count: '30000' }),
);
model(
  'onnx_inter_30000',
  { '1/model.onnx': onnx },
  config('onnx_inter_30000', { intra_op_thread_count: '1', inter_op_thread_count: '30000' }),
);
model(
  'onnx_threads_huge',
  { '1/model.onnx': onnx },
  config('onnx_threads_huge', { intra_op_thread_count: '99999999999' }),
);
// The config itself a FIFO (the fake's own check, behind lib's).
mkdirSync(join(repo, 'config_fifo', '1'), { recursive: true });
fifo(join(repo, 'config_fifo', 'config.pbtxt'));

const FIFO = /it is a FIFO, not a regular file/;
const notRegular: Array<[string, string, RegExp]> = [
  ['onnx_fifo', '1/model.onnx', FIFO],
  ['onnx_zero', '1/model.onnx', /it is a character device, not a regular file/],
  ['onnx_dir_fifo', '1/model.onnx/model.onnx', FIFO],
];

/** The error `work` rejects with (fails when it resolves). */
async function rejected(work: Promise<unknown>): Promise<TritonError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TritonError);
  return err as TritonError;
}

/** Why a case that loads an ONNX model cannot run here. */
function onnxReason(): string | false {
  if (library().isFake) return onnxRuntimeNode() === undefined ? 'onnxruntime-node is not installed' : false;
  return needsBackend('onnxruntime');
}

describe('a model file that is a FIFO or a device (both libraries)', () => {
  let server: Server;
  beforeAll(async () => {
    server = await Server.create(serverOptions({ modelRepository: repo }));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('loadModel rejects with INVALID_ARG naming the file, with or without versions or a config override', async () => {
    for (const [name, file, why] of notRegular) {
      for (const options of [{}, { versions: [1] }, { config: config(name) }]) {
        const err = await rejected(server.loadModel(name, options));
        expect(err.code, name).toBe('INVALID_ARG');
        expect(err.model).toBe(name);
        expect(err.message).toContain(`cannot read ${join(repo, name, file)}`);
        expect(err.message).toMatch(why);
      }
    }
  });

  it('only the versions the policy serves are checked: an old FIFO does not stop the latest version', async (ctx) => {
    skipIf(ctx, onnxReason());
    await server.loadModel('onnx_old_fifo');
    const r = await server.infer('onnx_old_fifo', {
      inputs: { x: { shape: [1, 4], data: Float32Array.of(0, 0, 0, 0) } },
    });
    expect(Array.from(r.outputs.y!.data as Float32Array)).toEqual([10, 20, 30, 40]);
    const err = await rejected(server.loadModel('onnx_old_fifo', { versions: [1, 2] }));
    expect(err.message).toContain(`cannot read ${join(repo, 'onnx_old_fifo', '1', 'model.onnx')}`);
  });

  it('a server that would load one at startup is refused before Triton starts, naming it', async () => {
    const err = await rejected(
      Server.create(serverOptions({ modelRepository: repo, startupModels: ['onnx_fifo'] })),
    );
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toBe(
      `startup models cannot load: onnx_fifo: cannot read ${join(repo, 'onnx_fifo', '1', 'model.onnx')}: it is a FIFO, not a regular file`,
    );
  });

  it('the server stops after the refused loads (stop() settles)', async () => {
    const again = await Server.create(serverOptions({ modelRepository: repo }));
    await rejected(again.loadModel('onnx_fifo'));
    await again.stop();
    expect(again.stopped).toBe(true);
  });
});

describe("the engine's own check, through the addon (no check of lib/ before it)", () => {
  it('the fake refuses a model file or a config that is a FIFO, naming it; the load settles and the server stops', async (ctx) => {
    skipIf(
      ctx,
      library().isFake
        ? onnxReason()
        : "real Triton r25.07's load opens the FIFO itself and waits for a writer, and the server's stop waits for that load (docs/security.md): lib/ refuses it before Triton",
    );
    const server = await rawServer(repo);
    // A safety valve, not a verdict: should the engine open a FIFO after
    // all, a writer that comes and goes lets its open return (end of file),
    // so that the load settles with some other error and the test fails
    // rather than hangs. While nothing reads a FIFO this open fails (ENXIO).
    const fifos = [join(repo, 'onnx_fifo', '1', 'model.onnx'), join(repo, 'config_fifo', 'config.pbtxt')];
    const valve = setInterval(() => {
      for (const f of fifos) {
        try {
          closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          // no reader: the engine did not open it
        }
      }
    }, 500);
    try {
      const onnxErr = await server.loadModel('onnx_fifo', undefined, []).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(onnxErr?.message).toContain(
        `Invalid argument: cannot read model file ${join(repo, 'onnx_fifo', '1', 'model.onnx')}: it is a FIFO, not a regular file`,
      );
      const configErr = await server.loadModel('config_fifo', undefined, []).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(configErr?.message).toBe(
        `load failed for model 'config_fifo': cannot read ${join(repo, 'config_fifo', 'config.pbtxt')}: it is a FIFO, not a regular file`,
      );
    } finally {
      clearInterval(valve);
      await server.stop();
    }
  });
});

describe('ONNX Runtime thread counts of thousands, or beyond a C int', () => {
  it('the fake refuses more than 4 threads per core (at least 64), naming the parameter', async (ctx) => {
    skipIf(
      ctx,
      library().isFake
        ? onnxReason()
        : 'real Triton r25.07 takes any count and starts that many threads per instance: lint warns instead',
    );
    const server = await Server.create(serverOptions({ modelRepository: repo }));
    try {
      for (const [name, parameter, value] of [
        ['onnx_threads_over', 'intra_op_thread_count', overLimit],
        ['onnx_threads_30000', 'intra_op_thread_count', '30000'],
        ['onnx_inter_30000', 'inter_op_thread_count', '30000'],
      ]) {
        const err = await rejected(server.loadModel(name!));
        expect(err.code).toBe('INVALID_ARG');
        expect(err.message).toContain(
          `unable to load model '${name}', parameter '${parameter}' is ${value}: the fake engine allows at most ${maxSessionThreads()} threads per session`,
        );
      }
    } finally {
      await server.stop();
    }
  });

  it('a count beyond a C int is refused before Triton sees it (r25.07 aborts the process on it)', async () => {
    const server = await Server.create(serverOptions({ modelRepository: repo }));
    try {
      const err = await rejected(server.loadModel('onnx_threads_huge'));
      expect(err.code).toBe('INVALID_ARG');
      expect(err.message).toContain(
        "parameter 'intra_op_thread_count' is '99999999999', beyond a C int: r25.07's onnxruntime backend aborts the whole process",
      );
    } finally {
      await server.stop();
    }
  });

  it('lint reports them for real Triton: a warning above the limit, an error beyond a C int', () => {
    const findings = lint(repo).findings.filter((f) => f.rule === 'onnx-thread-count');
    const of = (model: string) => findings.filter((f) => f.model === model);
    expect(of('onnx_threads_30000')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        file: join(repo, 'onnx_threads_30000', 'config.pbtxt'),
        message: expect.stringMatching(
          /^intra_op_thread_count 30000: each instance's session starts that many threads/,
        ),
      }),
    ]);
    expect(of('onnx_inter_30000')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringMatching(/^inter_op_thread_count 30000/),
      }),
    ]);
    expect(of('onnx_threads_huge')).toEqual([
      expect.objectContaining({
        severity: 'error',
        message: expect.stringMatching(/aborts the whole process/),
      }),
    ]);
    expect(of('onnx_threads_over')).toHaveLength(1);
    expect(of('onnx_fifo')).toEqual([]);
  });
});
