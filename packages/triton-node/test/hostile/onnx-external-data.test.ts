// A hostile ONNX model file (security review, issue 40, finding 2): a tensor
// whose external data `location` is `../../../secret.bin`, an absolute path,
// a link out of its version folder, or ONNX Runtime's memory-address tag.
// Triton's onnxruntime backend reads whatever it names, so the model answers
// with a file of the server. `lint` reports each; the fake engine's
// onnxruntime backend refuses to load them; `lint: 'error'`, `deploy()` and
// `loadModel({ files })` refuse them on every library before Triton reads a
// byte. A model whose external data lies beside it still loads. The model
// files are written here (test/backends/onnx-writer.ts).
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ONNX_TYPE, externalDataModel, onnxModel } from '@triton-node/test-support/backends/onnx-writer.js';
import { onnxRuntimeNode } from '@triton-node/test-support/backends/real-models.js';
import {
  BACKEND_DIR,
  fakeOnly,
  library,
  rejection,
  serverOptions,
  skipIf,
} from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelConfig, Server, lint } from '../../lib/index.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'triton-node-onnx-external-')));
const repo = join(root, 'repo');
const SECRET = Buffer.from(`secret of the server ${randomBytes(8).toString('hex')}`);
const INSIDE = Buffer.alloc(SECRET.length, 7);
writeFileSync(join(root, 'secret.bin'), SECRET);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = (name: string): ModelConfig => ({
  name,
  backend: 'onnxruntime',
  max_batch_size: 0,
  input: [{ name: 'IN', data_type: 'TYPE_UINT8', dims: [1] }],
  output: [{ name: 'OUT', data_type: 'TYPE_UINT8', dims: [SECRET.length] }],
  instance_group: [{ count: 1, kind: 'KIND_CPU' }],
});

/** A model folder whose 1/model.onnx reads tensor W from `location`. */
function model(name: string, location: string, model = externalDataModel(location, SECRET.length)): string {
  mkdirSync(join(repo, name, '1'), { recursive: true });
  const text = [
    `name: "${name}"`,
    'backend: "onnxruntime"',
    'max_batch_size: 0',
    'input [ { name: "IN" data_type: TYPE_UINT8 dims: [ 1 ] } ]',
    `output [ { name: "OUT" data_type: TYPE_UINT8 dims: [ ${SECRET.length} ] } ]`,
    'instance_group [ { count: 1 kind: KIND_CPU } ]',
    '',
  ].join('\n');
  writeFileSync(join(repo, name, 'config.pbtxt'), text);
  writeFileSync(join(repo, name, '1', 'model.onnx'), model);
  return join(repo, name, '1');
}

// From repo/<name>/1/: three folders up is `root`, where the secret is.
const HOSTILE: Record<string, { location: string; why: RegExp }> = {
  ext_relative: { location: '../../../secret.bin', why: /a path with a '\.\.' segment/ },
  ext_absolute: { location: join(root, 'secret.bin'), why: /an absolute path/ },
  ext_link: { location: 'weights.bin', why: /a link to .*secret\.bin/ },
  ext_memory: { location: '*/_ORT_MEM_ADDR_/*', why: /ONNX Runtime's tag for a memory address/ },
};
for (const [name, { location }] of Object.entries(HOSTILE)) model(name, location);
symlinkSync(join(root, 'secret.bin'), join(repo, 'ext_link', '1', 'weights.bin'));
// The tensor in a Constant node's attribute rather than an initializer.
model(
  'ext_attribute',
  '',
  onnxModel({
    inputs: [{ name: 'IN', type: ONNX_TYPE.UINT8, dims: [1] }],
    outputs: [{ name: 'OUT', type: ONNX_TYPE.UINT8, dims: [SECRET.length] }],
    nodes: [
      {
        op: 'Constant',
        inputs: [],
        outputs: ['OUT'],
        tensor: { name: 'C', type: ONNX_TYPE.UINT8, dims: [SECRET.length], location: '../../../secret.bin' },
      },
    ],
  }),
);
writeFileSync(join(model('ext_inside', 'weights.bin'), 'weights.bin'), INSIDE);

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('lint: onnx-external-data', () => {
  const findings = lint(repo).findings.filter((f) => f.rule === 'onnx-external-data');

  it('reports every location that leaves the version folder, naming the tensor and the location', () => {
    for (const [name, { location, why }] of Object.entries(HOSTILE)) {
      const f = findings.filter((x) => x.model === name);
      expect(f, name).toHaveLength(1);
      expect(f[0]).toMatchObject({ severity: 'error', file: join(repo, name, '1', 'model.onnx') });
      expect(f[0]!.message).toMatch(
        new RegExp(`^tensor 'W' has its external data at '${literal(location)}', `),
      );
      expect(f[0]!.message).toMatch(why);
    }
  });

  it("finds a tensor in a node's attribute too; a location beside the model passes", () => {
    expect(findings.filter((f) => f.model === 'ext_attribute').map((f) => f.message)).toEqual([
      expect.stringMatching(/^tensor 'C' has its external data at '\.\.\/\.\.\/\.\.\/secret\.bin'/),
    ]);
    expect(findings.filter((f) => f.model === 'ext_inside')).toEqual([]);
  });
});

/** Why the loads cannot run: they need ONNX Runtime (onnxruntime-node on the fake, the backend on Triton). */
function onnxRuntimeMissing(): string | false {
  if (library().isFake) {
    return onnxRuntimeNode() === undefined ? 'onnxruntime-node (a devDependency) is not installed' : false;
  }
  return BACKEND_DIR !== undefined && existsSync(join(BACKEND_DIR, 'onnxruntime'))
    ? false
    : 'real Triton without an onnxruntime backend in TRITON_BACKEND_DIR';
}

describe('loading a hostile model', () => {
  let server: Server | undefined;
  beforeAll(async () => {
    server = await Server.create(serverOptions({ modelRepository: repo }));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("the fake engine's onnxruntime backend refuses each, naming the model, the tensor and the location", async (ctx) => {
    skipIf(
      ctx,
      fakeOnly("its onnxruntime backend refuses them; real Triton's reads the file (docs/backends.md)"),
    );
    skipIf(ctx, onnxRuntimeMissing());
    const s = server!;
    for (const [name, { location, why }] of Object.entries({
      ...HOSTILE,
      ext_attribute: { location: '../../../secret.bin', why: /a path with a '\.\.' segment/ },
    })) {
      const err = await rejection(s.loadModel(name));
      expect(err.code, name).toBe('INVALID_ARG');
      const tensor = name === 'ext_attribute' ? 'C' : 'W';
      expect(err.message).toMatch(
        new RegExp(
          `^load failed for model '${name}': .*model '${name}': tensor '${tensor}' of .* has its external data at '${literal(location)}'`,
        ),
      );
      expect(err.message).toMatch(why);
      expect(await s.model(name).isReady()).toBe(false);
    }
  });

  it('a model whose external data lies beside it loads and answers with it', async (ctx) => {
    skipIf(ctx, onnxRuntimeMissing());
    await server!.loadModel('ext_inside');
    const r = await server!.infer('ext_inside', { inputs: { IN: new Uint8Array([0]) } });
    expect(Buffer.from(r.outputs.OUT!.data as Uint8Array)).toEqual(INSIDE);
  });

  it("lint: 'error' refuses the load on any library, before Triton reads the file", async () => {
    const strict = await Server.create(serverOptions({ modelRepository: repo, lint: 'error' }));
    try {
      const err = await rejection(strict.loadModel('ext_relative'));
      expect(err.code).toBe('INVALID_ARG');
      expect(err.message).toMatch(
        /^model 'ext_relative' fails lint: onnx-external-data: tensor 'W' has its external data at '\.\.\/\.\.\/\.\.\/secret\.bin'/,
      );
      expect(await strict.model('ext_relative').isReady()).toBe(false);
    } finally {
      await strict.stop();
    }
  });

  it('deploy() refuses a new version whose model file reads outside it, and writes nothing', async () => {
    const err = await rejection(
      server!.deploy('ext_inside', {
        files: {
          'model.onnx': externalDataModel('../../../secret.bin', SECRET.length),
          'weights.bin': INSIDE,
        },
      }),
    );
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toBe(
      "deploy: model 'ext_inside': files['model.onnx']: tensor 'W' has its external data at '../../../secret.bin', a path with a '..' segment, outside its version folder: Triton's onnxruntime backend would read that file",
    );
    expect(readdirSync(join(repo, 'ext_inside')).sort()).toEqual(['1', 'config.pbtxt']);
  });

  it('loadModel({ files }) refuses such a model file', async () => {
    const absolute = join(root, 'secret.bin');
    const err = await rejection(
      server!.loadModel('in_memory', {
        config: config('in_memory'),
        files: { '1/model.onnx': externalDataModel(absolute, SECRET.length) },
      }),
    );
    expect(err.code).toBe('INVALID_ARG');
    expect(err.message).toBe(
      `load failed for model 'in_memory': files['1/model.onnx']: tensor 'W' has its external data at '${absolute}', an absolute path, outside its version folder: Triton's onnxruntime backend would read that file`,
    );
    expect(await server!.model('in_memory').isReady()).toBe(false);
  });
});
