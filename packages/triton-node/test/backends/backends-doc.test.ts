/**
 * docs/backends.md: every config in it parses and is one of the backends of
 * Triton's support matrix; the fake engine loads each (on a stand-in for
 * backends it has not); on real Triton the ones whose backend is in
 * TRITON_BACKEND_DIR load and answer (onnxruntime with the real PaddleOCR
 * classifier, python with the page's model.py, identity).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realModelFiles } from '@triton-node/test-support/backends/real-models.js';
import { BACKEND_DIR, library, serverOptions, skipIf } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { PYTHON_BACKEND_SETTINGS } from '../../lib/config/backend-settings.js';
import { type ModelConfig, Server, parseModelConfig } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';
import { pythonModelConfig } from './python-models.js';

const DOC = readFileSync(fileURLToPath(new URL('../../../../docs/backends.md', import.meta.url)), 'utf8');

/** Triton's backend-platform support matrix, by the name a config gives. */
const MATRIX = [
  'tensorrt',
  'onnxruntime',
  'tensorflow',
  'pytorch',
  'openvino',
  'python',
  'dali',
  'fil',
  'tensorrtllm',
  'vllm',
];

interface DocModel {
  config: ModelConfig;
  text: string;
  /** Files the page gives for the model's version folder (`<name>/1/<file>`:). */
  files: Record<string, string>;
}

/** The page's pbtxt blocks, each with the `<name>/1/<file>` blocks that follow it. */
function docModels(): DocModel[] {
  const models: DocModel[] = [];
  const blocks = /(?:`([\w.-]+)\/1\/([\w.-]+)`:\s*\n\s*)?```(\w+)\n([\s\S]*?)```/g;
  for (const m of DOC.matchAll(blocks)) {
    const [, owner, file, lang, body] = m;
    if (lang === 'pbtxt') {
      models.push({ config: parseModelConfig(body!), text: body!, files: {} });
    } else if (owner !== undefined && file !== undefined) {
      const model = models.find((x) => x.config.name === owner);
      if (model === undefined)
        throw new Error(`docs/backends.md: ${owner}/1/${file} follows no config of ${owner}`);
      model.files[file] = body!;
    }
  }
  return models;
}

const MODELS = docModels();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A repository of the page's models: each config, its files, and the real model file for ocr_cls. */
function repository(models: DocModel[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backends-doc-'));
  dirs.push(dir);
  for (const m of models) {
    const version = path.join(dir, m.config.name!, '1');
    mkdirSync(version, { recursive: true });
    writeFileSync(path.join(dir, m.config.name!, 'config.pbtxt'), m.text);
    for (const [file, body] of Object.entries(m.files)) writeFileSync(path.join(version, file), body);
    if (m.config.backend === 'onnxruntime') {
      const files = realModelFiles();
      if (typeof files === 'string') throw new Error(files);
      symlinkSync(files.ocrCls, path.join(version, 'model.onnx'));
    }
  }
  return dir;
}

describe('docs/backends.md', () => {
  it('has a config for every backend of the support matrix, and each parses', () => {
    expect(MODELS.length).toBeGreaterThanOrEqual(MATRIX.length);
    const backends = MODELS.map((m) => m.config.backend);
    for (const b of MATRIX) expect(backends, `a config with backend: "${b}"`).toContain(b);
    const names = MODELS.map((m) => m.config.name);
    expect(new Set(names).size).toBe(names.length);
    for (const m of MODELS) {
      expect(m.config.input?.length, `${m.config.name}: inputs`).toBeGreaterThan(0);
      expect(m.config.output?.length, `${m.config.name}: outputs`).toBeGreaterThan(0);
      expect(m.config.instance_group?.length, `${m.config.name}: instance_group`).toBeGreaterThan(0);
    }
    // The Python model ships its model.py on the page.
    expect(MODELS.find((m) => m.config.backend === 'python')?.files['model.py']).toMatch(
      /class TritonPythonModel/,
    );
  });

  it('the fake engine loads every config (stand-ins for the backends it has not)', async (ctx) => {
    skipIf(ctx, library().isFake ? false : 'the fake engine checks every config; real Triton below');
    const needsFiles = realModelFiles();
    skipIf(ctx, typeof needsFiles === 'string' ? needsFiles : false);
    const standIns: Record<string, 'zeros'> = {};
    for (const m of MODELS) if (m.config.backend !== 'identity') standIns[m.config.backend!] = 'zeros';
    expect(fakeEngine.standIns(standIns)).toBe(true);
    const server = await Server.create(
      serverOptions({ modelRepository: repository(MODELS), modelControlMode: 'explicit' }),
    );
    try {
      for (const m of MODELS) {
        await server.loadModel(m.config.name!);
        const meta = await server.model(m.config.name!).metadata();
        expect(meta.inputs.map((i) => i.name)).toEqual(m.config.input!.map((i) => i.name));
      }
      const identity = await server
        .model('identity_doc')
        .infer({ inputs: { INPUT0: Float32Array.of(1, 2) } });
      expect(Array.from(identity.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2]);
    } finally {
      await server.stop();
      fakeEngine.standIns(null);
    }
  });

  it('real Triton loads the configs whose backend is in TRITON_BACKEND_DIR, and they answer', async (ctx) => {
    skipIf(ctx, library().isFake ? 'needs real Triton (TRITON_SERVER_LIB, TRITON_BACKEND_DIR)' : false);
    skipIf(ctx, BACKEND_DIR === undefined ? 'TRITON_BACKEND_DIR is not set' : false);
    const files = realModelFiles();
    skipIf(ctx, typeof files === 'string' ? files : false);
    const here = MODELS.filter((m) => existsSync(path.join(BACKEND_DIR!, m.config.backend!)));
    const backends = here.map((m) => m.config.backend);
    // The ones this repository's CPU build has; more when a fuller Triton is given.
    for (const b of ['onnxruntime', 'python', 'identity']) {
      skipIf(ctx, backends.includes(b) ? false : `backend ${b} is not in ${BACKEND_DIR}`);
    }
    const server = await Server.create(
      serverOptions({ modelRepository: repository(here), modelControlMode: 'explicit' }),
    );
    try {
      for (const m of here) await server.loadModel(m.config.name!);
      const cls = await server.model('ocr_cls').infer({
        inputs: { x: { data: new Float32Array(3 * 48 * 192).fill(0.5), shape: [1, 3, 48, 192] } },
      });
      const p = Array.from(cls.outputs['softmax_0.tmp_0']!.data as Float32Array);
      expect(p).toHaveLength(2);
      expect(p[0]! + p[1]!).toBeCloseTo(1, 4);
      const doubled = await server.model('double_py').infer({ inputs: { INPUT0: Float32Array.of(1, 2.5) } });
      expect(Array.from(doubled.outputs.OUTPUT0!.data as Float32Array)).toEqual([2, 5]);
      const identity = await server.model('identity_doc').infer({ inputs: { INPUT0: Float32Array.of(3) } });
      expect(Array.from(identity.outputs.OUTPUT0!.data as Float32Array)).toEqual([3]);
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('docs/backends.md: the Python section', () => {
  const section = DOC.slice(DOC.indexOf('## Python\n'), DOC.indexOf('## DALI'));

  it('names every backendConfig.python key Server.create knows, and its example uses only those', () => {
    for (const key of Object.keys(PYTHON_BACKEND_SETTINGS)) expect(section).toContain(key);
    const example = section.match(/python: \{\n([\s\S]*?)\n {4}\},/)?.[1];
    expect(example, 'the backendConfig example').toBeDefined();
    const keys = [...example!.matchAll(/^\s+'?([\w-]+)'?:/gm)].map((m) => m[1]!);
    expect(keys.length).toBeGreaterThanOrEqual(5);
    for (const key of keys) expect(Object.keys(PYTHON_BACKEND_SETTINGS)).toContain(key);
  });

  it("the ensemble example is test/backends/python-models.ts's ocr_pipeline", () => {
    const block = section.match(/`ocr_pipeline\/config\.pbtxt`:\s*```protobuf\n([\s\S]*?)```/)?.[1];
    expect(block, 'the ocr_pipeline block').toBeDefined();
    expect(parseModelConfig(block!)).toEqual(parseModelConfig(pythonModelConfig('ocr_pipeline')));
  });

  it('states what test/backends/python-backend.test.ts asserts about errors', () => {
    expect(section).toContain("code `'INTERNAL'`");
    expect(section).toContain("Failed to process the request(s) for model '<instance>', message:");
    expect(section).toContain("Stub process '<instance>' is not healthy.");
    expect(section).toContain("Unsupported parameter type for\nparameter 'param3'.");
  });
});
