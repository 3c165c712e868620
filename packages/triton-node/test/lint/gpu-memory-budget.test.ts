// lint()'s gpu-memory-budget: which files are a model's weights, and every
// model's weights × its instances on each GPU, with the estimated runtime
// memory, against the GPU's memory with the guidance's headroom. Big weight
// files are sparse (truncate): their size is what counts, not their blocks.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onnxRuntimeNode, realModelFiles } from '@triton-node/test-support/backends/real-models.js';
import { skipIf } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { lintCommand } from '../../lib/cli/commands/lint.js';
import { lint } from '../../lib/index.js';
import { readLintModel } from '../../lib/lint/model.js';
import { onnxExternalDataFiles } from '../../lib/lint/weights.js';
import { cuda } from '../../lib/tensor/cuda.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const scratch = mkdtempSync(join(tmpdir(), 'triton-node-lint-budget-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const io =
  'input [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]\n';

/** A file of `content`, or a sparse file of that many bytes. */
function file(path: string, content: string | number | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === 'number' ? '' : content);
  if (typeof content === 'number') truncateSync(path, content);
}

let repos = 0;
/** A repository of models: each its config (after name) and its files by path under the model folder. */
function repository(
  models: Record<string, { config: string; files: Record<string, string | number | Buffer> }>,
) {
  const dir = join(scratch, `repo-${repos++}`);
  for (const [name, m] of Object.entries(models)) {
    file(join(dir, name, 'config.pbtxt'), `name: "${name}"\n${m.config}`);
    for (const [path, content] of Object.entries(m.files)) file(join(dir, name, path), content);
  }
  return dir;
}

const gpu = (backend: string, group: string) =>
  `backend: "${backend}"\nmax_batch_size: 8\n${io}instance_group [ ${group} ]\n`;
const budget = (r: ReturnType<typeof lint>) => r.findings.filter((f) => f.rule === 'gpu-memory-budget');

// Protobuf, enough to write an ONNX ModelProto whose tensors keep their bytes elsewhere.
const varint = (n: number): number[] => (n < 128 ? [n] : [(n % 128) | 128, ...varint(Math.floor(n / 128))]);
const field = (n: number, body: Buffer | string) =>
  Buffer.concat([Buffer.from([...varint(n * 8 + 2), ...varint(Buffer.byteLength(body))]), Buffer.from(body)]);
const entry = (key: string, value: string) => field(13, Buffer.concat([field(1, key), field(2, value)]));
/** A TensorProto named `name` whose data is in `location` (data_location EXTERNAL = 1). */
const externalTensor = (name: string, location: string) =>
  Buffer.concat([
    field(8, name),
    entry('location', location),
    entry('offset', '0'),
    Buffer.from([14 * 8, 1]),
  ]);
/** A TensorProto with its bytes inline (raw_data, field 9). */
const inlineTensor = (name: string, bytes: number) =>
  Buffer.concat([field(8, name), field(9, Buffer.alloc(bytes, 7))]);

describe('the weights of a model version', () => {
  it('are the files its backend loads: the model file, *.safetensors and *.bin at any depth; not the rest', () => {
    const dir = repository({
      torch: {
        config: gpu('pytorch', '{ kind: KIND_GPU }'),
        files: {
          '1/model.pt': 3 * GiB,
          '1/README.md': 100 * MiB,
          '1/tokenizer.json': 50 * MiB,
          '1/shards/extra.safetensors': GiB,
          '1/pytorch_model.bin': 512 * MiB,
        },
      },
      plan: {
        config: `default_model_filename: "resnet.engine"\n${gpu('tensorrt', '{ kind: KIND_GPU }')}`,
        files: { '1/resnet.engine': 700 * MiB, '1/calibration.cache': 9 * MiB },
      },
      saved: {
        config: `platform: "tensorflow_savedmodel"\nmax_batch_size: 8\n${io}`,
        files: {
          '1/model.savedmodel/saved_model.pb': 2 * MiB,
          '1/model.savedmodel/variables/variables.data-00000-of-00001': 300 * MiB,
        },
      },
      glue: {
        config: gpu('python', '{ kind: KIND_GPU }'),
        files: { '1/model.py': 'import numpy', '1/assets/vocab.txt': 20 * MiB, '1/README.md': MiB },
      },
    });
    const bytes = (name: string) => readLintModel(join(dir, name), name, {}).weightBytes;
    expect(bytes('torch')).toBe(3 * GiB + GiB + 512 * MiB);
    expect(bytes('plan')).toBe(700 * MiB);
    expect(bytes('saved')).toBe(302 * MiB);
    // A Python model's version folder is what model.py loads: all of it.
    expect(bytes('glue')).toBe(21 * MiB + Buffer.byteLength('import numpy'));
  });

  it("an ONNX model's external data files count, a folder model.onnx whole; a link at its target's size, once", () => {
    const graph = field(
      7,
      Buffer.concat([
        field(5, externalTensor('w1', 'weights.data')),
        field(5, externalTensor('w2', 'weights.data')),
        field(5, inlineTensor('small', 4096)),
        // A subgraph (an If's branch) keeps its own initializer elsewhere too.
        field(1, field(5, field(6, field(5, externalTensor('w3', 'branch.data'))))),
        field(5, externalTensor('escape', '../outside.bin')),
      ]),
    );
    const model = Buffer.concat([Buffer.from([8, 9]), graph]);
    const dir = repository({
      external: {
        config: gpu('onnxruntime', '{ kind: KIND_GPU }'),
        files: {
          '1/model.onnx': model,
          '1/weights.data': 2 * GiB,
          '1/branch.data': 100 * MiB,
          '1/notes.txt': 10 * MiB,
        },
      },
      folder: {
        config: gpu('onnxruntime', '{ kind: KIND_GPU }'),
        files: { '1/model.onnx/model.onnx': 10, '1/model.onnx/weights.pb': 400 * MiB },
      },
      linked: { config: gpu('pytorch', '{ kind: KIND_GPU }'), files: {} },
    });
    file(join(dir, 'external', 'outside.bin'), 5 * GiB);
    expect(onnxExternalDataFiles(join(dir, 'external', '1', 'model.onnx'))!.sort()).toEqual([
      'branch.data',
      'weights.data',
    ]);
    expect(onnxExternalDataFiles(join(dir, 'external', '1', 'notes.txt'))).toBeNull();
    const bytes = (name: string) => readLintModel(join(dir, name), name, {}).weightBytes;
    expect(bytes('external')).toBe(model.length + 2 * GiB + 100 * MiB);
    expect(bytes('folder')).toBe(10 + 400 * MiB);
    // model.pt and weights.bin both link to one shared file: it counts once.
    file(join(scratch, 'shared', 'resnet.pt'), 98 * MiB);
    mkdirSync(join(dir, 'linked', '1'), { recursive: true });
    symlinkSync(join(scratch, 'shared', 'resnet.pt'), join(dir, 'linked', '1', 'model.pt'));
    symlinkSync(join(scratch, 'shared', 'resnet.pt'), join(dir, 'linked', '1', 'weights.bin'));
    expect(bytes('linked')).toBe(98 * MiB);
  });

  it("ONNX Runtime's own model with external initializers: the weights file it wrote counts", async (ctx) => {
    const files = realModelFiles();
    skipIf(ctx, typeof files === 'string' ? files : false);
    skipIf(ctx, onnxRuntimeNode() === undefined && 'onnxruntime-node is not installed');
    const ort = (await import('onnxruntime-node')).default;
    const version = join(scratch, 'ort', 'cls', '1');
    mkdirSync(version, { recursive: true });
    const saved = await ort.InferenceSession.create((files as { ocrCls: string }).ocrCls, {
      optimizedModelFilePath: join(version, 'model.onnx'),
      graphOptimizationLevel: 'basic',
      extra: {
        session: {
          optimized_model_external_initializers_file_name: 'model.weights',
          optimized_model_external_initializers_min_size_in_bytes: '1024',
        },
      },
    });
    await saved.release();
    expect(onnxExternalDataFiles(join(version, 'model.onnx'))).toEqual(['model.weights']);
    // ONNX Runtime loads it back from there: it is a real model with its data beside it.
    const again = await ort.InferenceSession.create(join(version, 'model.onnx'));
    await again.release();
    const { statSync } = await import('node:fs');
    const expected =
      statSync(join(version, 'model.onnx')).size + statSync(join(version, 'model.weights')).size;
    writeFileSync(
      join(scratch, 'ort', 'cls', 'config.pbtxt'),
      `name: "cls"\n${gpu('onnxruntime', '{ kind: KIND_GPU }')}`,
    );
    expect(readLintModel(join(scratch, 'ort', 'cls'), 'cls', {}).weightBytes).toBe(expected);
    expect(statSync(join(version, 'model.weights')).size).toBeGreaterThan(100_000);
  });
});

describe('gpu-memory-budget: the models of every repository, per GPU', () => {
  const first = repository({
    big_pt: {
      config: gpu('pytorch', '{ count: 2 kind: KIND_GPU gpus: [ 0 ] }'),
      files: { '1/model.pt': 10 * GiB },
    },
    enc_onnx: { config: gpu('onnxruntime', '{ kind: KIND_GPU }'), files: { '1/model.onnx': 5 * GiB } },
    py_glue: {
      config: gpu('python', '{ count: 2 kind: KIND_GPU gpus: [ 1 ] }'),
      files: { '1/model.py': 'x', '1/weights/w.bin': GiB },
    },
    cpu_model: { config: gpu('pytorch', '{ count: 4 kind: KIND_CPU }'), files: { '1/model.pt': 30 * GiB } },
  });
  const options = { gpus: 2, gpuMemoryBytes: 40 * GiB };
  const second = (count: number) =>
    repository({
      extra_pt: {
        config: gpu('pytorch', `{ count: ${count} kind: KIND_GPU gpus: [ 0 ] }`),
        files: { '1/model.pt': 6 * GiB },
      },
    });

  it('within 90% of each GPU: nothing (GPU 0 75%, GPU 1 22%; KIND_CPU instances take no GPU memory)', () => {
    expect(budget(lint(first, options))).toEqual([]);
  });

  it("over 90% with a second repository's model: a warning naming each model, its weights × instances, the total and the rule", () => {
    const [finding, ...rest] = budget(lint([first, second(1)], options));
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({
      model: 'big_pt',
      severity: 'warning',
      file: join(first, 'big_pt', 'config.pbtxt'),
      line: 6,
      column: 18,
    });
    expect(finding!.message).toBe(
      'GPU 0: an estimated 37.2 GiB of 40.0 GiB (93%): big_pt 2 × 10.0 GiB + 20% = 24.0 GiB; extra_pt 1 × 6.0 GiB + 20% = 7.2 GiB; enc_onnx 1 × 5.0 GiB + 20% = 6.0 GiB. ' +
        "The guidance keeps 10-20% of a GPU's memory free (at most 90% used) for activations, CUDA contexts and fragmentation; GPU memory from gpuMemoryBytes; " +
        'runtime memory is an estimate (weights + 20% on pytorch, onnxruntime and tensorrt, + 500.0 MiB per Python instance)',
    );
    expect(finding!.fix).toBe(
      "set big_pt's count to 1, or use a smaller model (FP16 or INT8 weights), so that each GPU's estimate stays within 80% of its memory",
    );
  });

  it("over the memory: an error; a Python instance counts its stub's CUDA context", () => {
    const [finding] = budget(lint([first, second(2)], options));
    expect(finding).toMatchObject({ model: 'big_pt', severity: 'error' });
    expect(finding!.message).toMatch(/^GPU 0: an estimated 44\.4 GiB of 40\.0 GiB \(111%\): /);
    // GPU 1 stays within 90%, so it is not named; with 9.5 GiB GPUs it is, Python stubs and all.
    const small = budget(lint(first, { gpus: 2, gpuMemoryBytes: 9.5 * GiB }))[0]!;
    expect(small.message).toContain(
      "GPU 1: an estimated 9.0 GiB of 9.5 GiB (94%): enc_onnx 1 × 5.0 GiB + 20% = 6.0 GiB; py_glue 2 × (1.0 GiB + 500.0 MiB for the stub's CUDA context) = 3.0 GiB",
    );
  });

  it('exactly 90% is within the guidance; a byte more is a warning', () => {
    const at = (weights: number) =>
      budget(
        lint(
          repository({
            py: {
              config: gpu('python', '{ kind: KIND_GPU }'),
              files: { '1/model.py': '', '1/w.bin': weights },
            },
          }),
          { gpus: 1, gpuMemoryBytes: 1000 * MiB },
        ),
      );
    // 400 MiB of weights + 500 MiB for the stub = 900 MiB of 1000 MiB.
    expect(at(400 * MiB)).toEqual([]);
    expect(at(400 * MiB + 1).map((f) => f.severity)).toEqual(['warning']);
    expect(at(500 * MiB + 1).map((f) => f.severity)).toEqual(['error']);
  });

  it('every version the policy serves holds its own instances', () => {
    const versions = (policy: string) =>
      repository({
        v: {
          config: `${policy}${gpu('pytorch', '{ kind: KIND_GPU }')}`,
          files: { '1/model.pt': GiB, '2/model.pt': GiB },
        },
      });
    const options1 = { gpus: 1, gpuMemoryBytes: 2 * GiB };
    expect(budget(lint(versions(''), options1))).toEqual([]);
    const all = budget(lint(versions('version_policy { all { } }\n'), options1));
    expect(all[0]!.message).toMatch(
      /^GPU 0: an estimated 2\.4 GiB of 2\.0 GiB \(120%\): v 1 × 2\.0 GiB \(versions 1, 2\) \+ 20% = 2\.4 GiB\./,
    );
  });

  it("a model without instance_group has one instance on every GPU (Triton's default), found at its name", () => {
    const dir = repository({
      plain: { config: `backend: "pytorch"\nmax_batch_size: 8\n${io}`, files: { '1/model.pt': 9 * GiB } },
    });
    const found = budget(lint(dir, { gpus: 2, gpuMemoryBytes: 10 * GiB }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ line: 1, column: 1, severity: 'error' });
    expect(found[0]!.message).toMatch(/^GPU 0: .*\. GPU 1: an estimated 10\.8 GiB of 10\.0 GiB/);
  });

  it('says where to move a model: a GPU with room', () => {
    const dir = repository({
      a: { config: gpu('pytorch', '{ kind: KIND_GPU gpus: [ 0 ] }'), files: { '1/model.pt': 4 * GiB } },
      b: { config: gpu('pytorch', '{ kind: KIND_GPU gpus: [ 0 ] }'), files: { '1/model.pt': 4 * GiB } },
    });
    const [finding] = budget(lint(dir, { gpus: 2, gpuMemoryBytes: 10 * GiB }));
    expect(finding!.fix).toBe(
      "set gpus: [ 1 ] on a's instances (GPU 1 has room), or use a smaller model (FP16 or INT8 weights), so that each GPU's estimate stays within 80% of its memory",
    );
  });

  it('vLLM takes its gpu_memory_utilization of the GPU: a model beside it tips it over; the fix lowers the share', () => {
    const dir = repository({
      llm: {
        config: `backend: "vllm"\nmax_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n${io}instance_group [ { count: 1 kind: KIND_MODEL } ]\n`,
        files: { '1/model.json': '{"model": "m", "gpu_memory_utilization": 0.9, "max_model_len": 8192}' },
      },
      embed: { config: gpu('pytorch', '{ kind: KIND_GPU }'), files: { '1/model.pt': 2 * GiB } },
    });
    const [finding] = budget(lint(dir, { gpus: 1, gpuMemoryBytes: 80 * GiB }));
    expect(finding).toMatchObject({ model: 'llm', severity: 'warning' });
    expect(finding!.message).toMatch(
      /^GPU 0: an estimated 74\.4 GiB of 80\.0 GiB \(93%\): llm gpu_memory_utilization 0\.9 of 80\.0 GiB = 72\.0 GiB; embed 1 × 2\.0 GiB \+ 20% = 2\.4 GiB\./,
    );
    expect(finding!.fix).toMatch(
      /^set llm's gpu_memory_utilization to 0\.77 in model\.json, or use a smaller model/,
    );
  });

  it("a Python LLM's gpu_memory_utilization parameter counts as u × its GPU's memory, whatever its weights", () => {
    const llm = (u: string, group: string) => ({
      config: `backend: "python"\nmax_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n${io}instance_group [ ${group} ]\nparameters { key: "gpu_memory_utilization" value: { string_value: "${u}" } }\nparameters { key: "max_model_len" value: { string_value: "8192" } }\n`,
      files: { '1/model.py': '# the engine\n' },
    });
    const embed = {
      config: gpu('pytorch', '{ kind: KIND_GPU gpus: [ 0 ] }'),
      files: { '1/model.pt': 2 * GiB },
    };
    const dir = repository({ llm: llm('0.9', '{ count: 1 kind: KIND_GPU gpus: [ 0 ] }'), embed });
    const [finding] = budget(lint(dir, { gpus: 2, gpuMemoryBytes: 80 * GiB }));
    expect(finding).toMatchObject({ model: 'llm', severity: 'warning' });
    expect(finding!.message).toMatch(
      /^GPU 0: an estimated 74\.4 GiB of 80\.0 GiB \(93%\): llm gpu_memory_utilization 0\.9 of 80\.0 GiB = 72\.0 GiB; embed 1 × 2\.0 GiB \+ 20% = 2\.4 GiB\./,
    );
    // Not the vLLM wording: its parameters are where it reads them.
    expect(finding!.fix).toMatch(
      /^set llm's gpu_memory_utilization to 0\.77 in its config\.pbtxt parameters, or use a smaller model/,
    );
    // At 0.5 on its own GPU it fits; two instances of 0.6 do not.
    expect(
      budget(
        lint(repository({ llm: llm('0.5', '{ kind: KIND_GPU gpus: [ 1 ] }'), embed }), {
          gpus: 2,
          gpuMemoryBytes: 80 * GiB,
        }),
      ),
    ).toEqual([]);
    const [two] = budget(
      lint(repository({ llm: llm('0.6', '{ count: 2 kind: KIND_GPU gpus: [ 1 ] }'), embed }), {
        gpus: 2,
        gpuMemoryBytes: 80 * GiB,
      }),
    );
    expect(two).toMatchObject({ model: 'llm', severity: 'error' });
    expect(two!.message).toMatch(
      /^GPU 1: an estimated 96\.0 GiB of 80\.0 GiB \(120%\): llm 2 × gpu_memory_utilization 0\.6 of 80\.0 GiB = 96\.0 GiB\./,
    );
  });
});

describe('gpu-memory-budget without a GPU memory to measure against', () => {
  const dir = repository({
    on_gpu: { config: gpu('pytorch', '{ kind: KIND_GPU }'), files: { '1/model.pt': GiB } },
    on_cpu: { config: gpu('pytorch', '{ kind: KIND_CPU }'), files: { '1/model.pt': GiB } },
  });

  it('no GPU here and no gpuMemoryBytes: one info finding that says why, naming the GPU models', (ctx) => {
    skipIf(
      ctx,
      cuda.isAvailable() && 'CUDA sees a GPU here: lint measures against it (test/gpu/lint-memory.test.ts)',
    );
    const found = budget(lint(dir, {}));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ model: 'on_gpu', severity: 'info' });
    expect(found[0]!.message).toMatch(
      /^GPU memory not checked: no GPU is visible here \(.+\) and no gpuMemoryBytes \(--gpu-memory\) was given; 1 model\(s\) have GPU instances \(on_gpu\)$/,
    );
    expect(found[0]!.fix).toBe(
      'set gpuMemoryBytes (--gpu-memory GiB) to the memory of the GPUs the models will run on',
    );
  });

  it('a machine without GPUs (gpus: 0), or the rule disabled: nothing', () => {
    expect(budget(lint(dir, { gpus: 0 }))).toEqual([]);
    expect(budget(lint(dir, { gpuMemoryBytes: 0.5 * GiB, disable: ['gpu-memory-budget'] }))).toEqual([]);
    expect(budget(lint(dir, { gpuMemoryBytes: 0.5 * GiB }))).toHaveLength(1);
  });

  it('triton-node lint --gpu-memory measures against it and exits 1', () => {
    const write = process.stdout.write;
    let out = '';
    process.stdout.write = ((chunk: string) => {
      out += chunk;
      return true;
    }) as typeof process.stdout.write;
    let code: number;
    try {
      code = lintCommand([dir, '--gpu-memory', '1', '--gpus', '1']);
    } finally {
      process.stdout.write = write;
    }
    expect(code).toBe(1);
    expect(out).toMatch(
      /error +GPU 0: an estimated 1\.2 GiB of 1\.0 GiB \(120%\): on_gpu 1 × 1\.0 GiB \+ 20% = 1\.2 GiB\..*gpu-memory-budget/,
    );
  });
});
