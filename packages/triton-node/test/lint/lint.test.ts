// lint(): one violation per rule in a repository built here reports exactly
// those; the seed LLM config and the test models report nothing above info
// (but for the three test models made so on purpose); text, JSON and SARIF.
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { externalDataModel } from '@triton-node/test-support/backends/onnx-writer.js';
import {
  type RealModelFiles,
  makeRealModelRepository,
  realModelFiles,
} from '@triton-node/test-support/backends/real-models.js';
import { FIXTURES, MODELS, serverOptions, skipIf } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { lintCommand } from '../../lib/cli/commands/lint.js';
import { Server, formatLintSarif, formatLintText, lint, lintRules } from '../../lib/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const repo = mkdtempSync(join(tmpdir(), 'triton-node-lint-'));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const io =
  'input [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]\n';
const MiB = 1024 * 1024;

/** A model folder: its config text and the files of version 1. */
function model(
  name: string,
  config: string,
  files: Record<string, string | Buffer> = { 'weights.bin': 'w' },
): void {
  mkdirSync(join(repo, name, '1'), { recursive: true });
  writeFileSync(join(repo, name, 'config.pbtxt'), `name: "${name}"\n${config}`);
  for (const [f, content] of Object.entries(files)) writeFileSync(join(repo, name, '1', f), content);
}

const vllm = (extra: string) =>
  `backend: "vllm"\n${extra}\nmodel_transaction_policy { decoupled: true }\n${io}`;
model('llm_batching', vllm('max_batch_size: 8'), {
  'model.json': '{"gpu_memory_utilization": 0.85, "max_model_len": 4096}',
});
model('gpu_headroom', vllm('max_batch_size: 0'), {
  'model.json': '{\n  "max_model_len": 4096,\n  "gpu_memory_utilization": 0.95\n}',
});
model('kv_cache', vllm('max_batch_size: 0'), { 'model.json': '{"gpu_memory_utilization": 0.8}' });
model(
  'instance_memory',
  `backend: "identity"\nmax_batch_size: 8\n${io}instance_group [ { count: 4 kind: KIND_GPU } ]\n`,
  {
    'weights.bin': Buffer.alloc(2 * MiB),
  },
);
model(
  'queue_delay',
  `backend: "identity"\nmax_batch_size: 8\n${io}dynamic_batching { max_queue_delay_microseconds: 50000 }\n`,
);
model(
  'preferred_bs',
  `backend: "identity"\nmax_batch_size: 4\n${io}dynamic_batching { preferred_batch_size: [ 8 ] }\n`,
);
model('versions_link', `backend: "identity"\nmax_batch_size: 8\n${io}`);
symlinkSync('1', join(repo, 'versions_link', 'latest'));
model(
  'gpus_spread',
  `backend: "identity"\nmax_batch_size: 8\n${io}instance_group [ { kind: KIND_GPU gpus: [ 3 ] } ]\n`,
  {
    'weights.bin': Buffer.alloc(1.5 * MiB),
  },
);
model('light_gpu', `backend: "python"\nmax_batch_size: 8\n${io}instance_group [ { kind: KIND_GPU } ]\n`);
model('decoupled_missing', `backend: "repeat"\nmax_batch_size: 0\n${io}`);
model('vllm_no_json', vllm('max_batch_size: 0'), {});
model('onnx_external', `backend: "onnxruntime"\nmax_batch_size: 0\n${io}`, {
  'model.onnx': Buffer.from(externalDataModel('/etc/hostname', 16)),
});
model(
  'state_size',
  `backend: "onnxruntime"\nmax_batch_size: 0\n${io}sequence_batching { state [ { input_name: "S_IN" output_name: "S_OUT" data_type: TYPE_FP32 dims: [ 3, 134217728 ] } ] }\n`,
);
model(
  'onnx_threads',
  `backend: "onnxruntime"\nmax_batch_size: 0\n${io}parameters { key: "intra_op_thread_count" value: { string_value: "30000" } }\n`,
  { 'model.onnx': '' },
);
// Named in its config as another model: Triton's poll refuses it (serve and doctor say so too).
model('folder_name', `backend: "identity"\nmax_batch_size: 8\n${io}`);
writeFileSync(
  join(repo, 'folder_name', 'config.pbtxt'),
  `backend: "identity"\nname: "other_name"\nmax_batch_size: 8\n${io}`,
);

const options = {
  gpus: 2,
  gpuMemoryBytes: 4 * MiB,
  serverOptions: { modelControlMode: 'poll' },
  serverOptionsFile: join(repo, 'server.json'),
};

describe('lint(): one violation per rule', () => {
  const report = lint(repo, options);

  it('reports exactly the violations, one per rule', () => {
    const got = report.findings.map((f) => [f.rule, f.model, f.severity]);
    expect(got.sort()).toEqual(
      [
        ['llm-no-triton-batching', 'llm_batching', 'error'],
        ['gpu-memory-headroom', 'gpu_headroom', 'warning'],
        ['kv-cache-bound', 'kv_cache', 'warning'],
        ['instance-count-memory', 'instance_memory', 'error'],
        ['queue-delay-range', 'queue_delay', 'warning'],
        ['preferred-batch-size', 'preferred_bs', 'error'],
        ['numeric-versions', 'versions_link', 'error'],
        ['gpus-spread', 'gpus_spread', 'error'],
        ['cpu-kind-for-light-models', 'light_gpu', 'info'],
        // The Python stub's CUDA context alone is far above the 4 MiB GPUs.
        ['gpu-memory-budget', 'light_gpu', 'error'],
        ['decoupled-needs-stream', 'decoupled_missing', 'error'],
        ['vllm-engine-args', 'vllm_no_json', 'error'],
        ['onnx-external-data', 'onnx_external', 'error'],
        ['sequence-state-size', 'state_size', 'error'],
        ['onnx-thread-count', 'onnx_threads', 'warning'],
        ['explicit-control', '', 'warning'],
        ['name-matches-folder', 'folder_name', 'error'],
      ].sort(),
    );
    // Every rule has a finding here, and a page.
    expect(new Set(report.findings.map((f) => f.rule))).toEqual(new Set(lintRules().map((r) => r.id)));
    for (const { id } of lintRules())
      expect(existsSync(join(ROOT, '..', '..', 'docs', 'lint', `${id}.md`)), id).toBe(true);
    expect(report).toMatchObject({ errorCount: 11, warningCount: 5, infoCount: 1 });
  });

  it('points at the line and column of the field, or of the key in model.json', () => {
    const at = (rule: string) => report.findings.find((f) => f.rule === rule)!;
    expect(at('llm-no-triton-batching')).toMatchObject({
      file: join(repo, 'llm_batching', 'config.pbtxt'),
      line: 3,
      column: 1,
    });
    expect(at('queue-delay-range')).toMatchObject({ line: 6, column: 20 });
    expect(at('gpus-spread')).toMatchObject({ line: 6, column: 35 });
    expect(at('onnx-thread-count')).toMatchObject({
      file: join(repo, 'onnx_threads', 'config.pbtxt'),
      line: 6,
      column: 52,
    });
    expect(at('gpu-memory-headroom')).toMatchObject({
      file: join(repo, 'gpu_headroom', '1', 'model.json'),
      line: 3,
      column: 3,
    });
    expect(at('instance-count-memory').message).toMatch(
      /4 instance\(s\) × 2\.0 MiB of weights = 8\.0 MiB per GPU, of 4\.0 MiB/,
    );
    expect(at('instance-count-memory').fix).toBe('set count to 1');
    expect(at('onnx-external-data')).toMatchObject({ file: join(repo, 'onnx_external', '1', 'model.onnx') });
    expect(at('onnx-external-data').message).toMatch(
      /^tensor 'W' has its external data at '\/etc\/hostname', an absolute path, outside version folder 1\//,
    );
    expect(at('name-matches-folder')).toMatchObject({
      file: join(repo, 'folder_name', 'config.pbtxt'),
      line: 2,
      column: 1,
      message:
        "config.pbtxt names the model 'other_name' but its folder is 'folder_name': Triton's poll refuses the model, which never loads (the two must be equal)",
    });
    expect(at('sequence-state-size')).toMatchObject({ line: 6, column: 92 });
    expect(at('sequence-state-size').message).toBe(
      "sequence_batching state 'S_IN': dims [3, 134217728] of TYPE_FP32 take 1610612736 bytes per sequence, above 1.0 GiB: Triton allocates it for every sequence it starts, and fails the sequence when it cannot",
    );
  });

  it('points a finding about a folder at that folder: the `latest` link, a version without model.json', () => {
    const at = (rule: string) => report.findings.find((f) => f.rule === rule)!;
    expect(at('numeric-versions')).toMatchObject({
      file: join(repo, 'versions_link', 'latest'),
      line: 1,
      column: 1,
    });
    expect(at('numeric-versions').message).toMatch(/'latest' is a link/);
    expect(at('vllm-engine-args')).toMatchObject({
      file: join(repo, 'vllm_no_json', '1'),
      severity: 'error',
    });
    expect(at('vllm-engine-args').fix).toMatch(/^create 1\/model\.json with the engine arguments/);
  });

  it('writes text, JSON and SARIF', () => {
    const text = formatLintText(report);
    expect(text).toContain(join(repo, 'queue_delay', 'config.pbtxt'));
    expect(text).toMatch(/ {2}6:20 {4}warning {2}a queue delay of 50 ms .* queue-delay-range/);
    expect(text).toMatch(/17 finding\(s\): 11 error\(s\), 5 warning\(s\), 1 info\n$/);
    const sarif = JSON.parse(formatLintSarif(report));
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0].tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(
      lintRules().map((r) => r.id),
    );
    expect(sarif.runs[0].results).toHaveLength(17);
    expect(sarif.runs[0].results[0]).toMatchObject({
      ruleId: expect.any(String),
      level: expect.stringMatching(/^(error|warning|note)$/),
      locations: [
        { physicalLocation: { region: { startLine: expect.any(Number), startColumn: expect.any(Number) } } },
      ],
    });
  });

  it('the command exits 1 on errors, 0 when clean, 2 for usage errors', () => {
    const write = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(lintCommand([repo, '--gpus', '2', '--gpu-memory', String(4 / 1024)])).toBe(1);
      expect(lintCommand([join(FIXTURES, 'lint', 'seed'), '--format', 'sarif'])).toBe(0);
      expect(lintCommand([join(FIXTURES, 'lint', 'seed'), '--max-warnings', '0'])).toBe(0);
      expect(lintCommand([join(repo), '--format', 'xml'])).toBe(2);
      expect(lintCommand([])).toBe(2);
      expect(lintCommand(['--gpus', 'many', repo])).toBe(2);
    } finally {
      process.stdout.write = write;
    }
  });
});

describe('lint(): configs that follow the guidance', () => {
  it('the seed LLM config (vLLM, llama3-8b) lints clean', () => {
    const report = lint(join(FIXTURES, 'lint', 'seed'), { gpus: 1, gpuMemoryBytes: 80 * 1024 ** 3 });
    expect(report.findings).toEqual([]);
  });

  it('the test models report nothing above info, but the three made so on purpose', () => {
    const report = lint(MODELS, { gpus: 1 });
    const above = report.findings.filter((f) => f.severity !== 'info').map((f) => [f.model, f.rule]);
    expect(above.sort()).toEqual([
      ['bad_config', 'config-syntax'],
      ['no_version', 'numeric-versions'],
      // Waits up to 5 s to gather a batch, so that a test sees batching whatever the machine's pace.
      ['text_embed_gathered', 'queue-delay-range'],
    ]);
  });

  it('a repository that is not a folder is a TypeError naming it', () => {
    expect(() => lint(join(repo, 'nope'))).toThrow(/nope' is not a directory/);
    expect(readFileSync(join(repo, 'queue_delay', 'config.pbtxt'), 'utf8')).toContain('50000');
  });
});

describe('lint text of names with control characters', () => {
  it('escapes them: a folder name cannot colour the output or forge a finding line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-names-'));
    try {
      const name = 'x\x1b[31m\n  1:1     error    all clean  forged';
      mkdirSync(join(dir, name, '1'), { recursive: true });
      writeFileSync(join(dir, name, 'config.pbtxt'), 'name: "\x1b[2J" backend: {');
      const text = formatLintText(await lint(dir));
      // Before: the ESC went out as it is, and the name's newline printed a finding of its own.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      expect(text.split('\n').filter((l) => l.includes('forged') && !l.includes('\\n'))).toEqual([]);
      expect(text).toContain(join(dir, 'x\\x1b[31m\\n  1:1     error    all clean  forged'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Server.create({ lint })', () => {
  /** A repository with one good model and one whose preferred batch size is above its max_batch_size. */
  function serveRepo(): string {
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-serve-'));
    cpSync(join(MODELS, 'identity_fp32'), join(dir, 'identity_fp32'), { recursive: true });
    mkdirSync(join(dir, 'bad_batching', '1'), { recursive: true });
    writeFileSync(
      join(dir, 'bad_batching', 'config.pbtxt'),
      `name: "bad_batching"\nbackend: "identity"\nmax_batch_size: 4\n${io}dynamic_batching { preferred_batch_size: [ 8 ] }\n`,
    );
    return dir;
  }

  it("'error' refuses to load a model with an error finding, naming the rule; a clean model loads", async () => {
    const dir = serveRepo();
    const s = await Server.create(serverOptions({ modelRepository: dir, lint: 'error' }));
    try {
      const err = await s.loadModel('bad_batching').catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'TritonError', code: 'INVALID_ARG' });
      expect((err as Error).message).toMatch(
        /model 'bad_batching' fails lint: preferred-batch-size: .*config\.pbtxt:6:20/,
      );
      expect(await s.model('bad_batching').isReady()).toBe(false);
      await s.loadModel('identity_fp32');
      expect(await s.model('identity_fp32').isReady()).toBe(true);
    } finally {
      await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("'error' refuses a start whose startup models fail lint; 'warn' emits warnings; bad values are TypeErrors", async () => {
    const dir = serveRepo();
    try {
      await expect(
        Server.create(serverOptions({ modelRepository: dir, modelControlMode: 'none', lint: 'error' })),
      ).rejects.toThrow(/models fail lint: bad_batching: preferred-batch-size/);
      const warnings: string[] = [];
      const onWarning = (w: Error) => {
        if (w.name === 'TritonLintWarning') warnings.push(w.message);
      };
      process.on('warning', onWarning);
      const s = await Server.create(serverOptions({ modelRepository: dir, lint: 'warn' }));
      try {
        // Triton refuses the model itself; the warning came first and says why.
        await expect(s.loadModel('bad_batching')).rejects.toThrow();
        await new Promise((r) => setImmediate(r));
        expect(warnings.some((w) => /preferred-batch-size/.test(w))).toBe(true);
      } finally {
        process.off('warning', onWarning);
        await s.stop();
      }
      await expect(
        Server.create(serverOptions({ modelRepository: dir, lint: 'strict' as never })),
      ).rejects.toThrow(/'off', 'warn' or 'error' for lint/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('gpus-spread at the boundary', () => {
  it('GPU ids run 0 to count-1: an id equal to the GPU count is flagged, the last real one is not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-gpus-'));
    try {
      for (const [name, id] of [
        ['at_count', 2],
        ['last_gpu', 1],
      ] as const) {
        mkdirSync(join(dir, name, '1'), { recursive: true });
        writeFileSync(
          join(dir, name, 'config.pbtxt'),
          `name: "${name}"\nbackend: "identity"\nmax_batch_size: 8\n${io}instance_group [ { kind: KIND_GPU gpus: [ ${id} ] } ]\n`,
        );
      }
      const errors = lint(dir, { gpus: 2 }).findings.filter(
        (f) => f.rule === 'gpus-spread' && f.severity === 'error',
      );
      expect(errors.map((f) => [f.model, f.message])).toEqual([
        ['at_count', 'GPU(s) 2 do not exist on a machine with 2 GPU(s)'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('instance-count-memory on the real model files (symlinked model.onnx)', () => {
  const files = realModelFiles();
  const skip = typeof files === 'string' ? files : false;
  const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-real-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  if (skip === false) makeRealModelRepository(dir, { models: ['ocr_det'], instances: 4 });
  const detBytes = skip === false ? statSync((files as RealModelFiles).ocrDet).size : 0;
  const memoryFindings = (options: Parameters<typeof lint>[1]) =>
    lint(dir, options).findings.filter((f) => f.rule === 'instance-count-memory');

  it('counts the file a model.onnx links to, times the CPU instances, against hostMemoryBytes', (ctx) => {
    skipIf(ctx, skip);
    expect(lstatSync(join(dir, 'ocr_det', '1', 'model.onnx')).isSymbolicLink()).toBe(true);
    const host = 4 * detBytes - 1;
    const [finding, ...rest] = memoryFindings({ hostMemoryBytes: host });
    expect(rest).toEqual([]);
    const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    expect(finding).toMatchObject({ model: 'ocr_det', severity: 'error' });
    expect(finding!.message).toBe(
      `4 instance(s) × ${mib(detBytes)} of weights = ${mib(4 * detBytes)} of host memory, of ${mib(host)}`,
    );
    expect(finding!.fix).toBe(`set count to ${Math.floor((host * 0.8) / detBytes)}`);
    // Within 90% of the memory: a warning; with room: nothing; without a size: nothing.
    expect(memoryFindings({ hostMemoryBytes: 4 * detBytes + 1 })[0]?.severity).toBe('warning');
    expect(memoryFindings({ hostMemoryBytes: 8 * detBytes })).toEqual([]);
    expect(memoryFindings({})).toEqual([]);
    // A KIND_CPU group is not measured against GPU memory.
    expect(memoryFindings({ gpuMemoryBytes: detBytes })).toEqual([]);
  });

  it('triton-node lint --host-memory reports it and exits 1', (ctx) => {
    skipIf(ctx, skip);
    const gib = (4 * detBytes - 1) / 1024 ** 3;
    const write = process.stdout.write;
    let out = '';
    process.stdout.write = ((chunk: string) => {
      out += chunk;
      return true;
    }) as typeof process.stdout.write;
    let code: number;
    try {
      code = lintCommand([dir, '--host-memory', String(gib)]);
    } finally {
      process.stdout.write = write;
    }
    expect(code).toBe(1);
    expect(out).toMatch(
      /4 instance\(s\) × [\d.]+ MiB of weights = [\d.]+ MiB of host memory.*instance-count-memory/,
    );
  });
});

/** The typical LLM config of the guidance this project grew from (/work/shared/seed), as written there. */
const SEED_LLM_CONFIG = `name: "llama3-8b"
backend: "vllm"
max_batch_size: 0          # vLLM batches internally
input [
  {
    name: "text_input"
    data_type: TYPE_STRING
    dims: [-1]
  }
]
output [
  {
    name: "text_output"
    data_type: TYPE_STRING
    dims: [-1]
  }
]
instance_group [
  {
    count: 1
    kind: KIND_GPU
    gpus: [0]
  }
]
parameters: {
  key: "model"
  value: { string_value: "meta-llama/Meta-Llama-3-8B-Instruct" }
}
parameters: {
  key: "gpu_memory_utilization"
  value: { string_value: "0.9" }
}
parameters: {
  key: "max_model_len"
  value: { string_value: "8192" }
}
`;

describe("vLLM's layout: engine arguments in <version>/model.json", () => {
  const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-vllm-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** A vLLM model as a newcomer writes it: the engine arguments as config.pbtxt parameters. */
  function vllmModel(name: string, parameters: Record<string, string>, modelJson?: string): void {
    mkdirSync(join(dir, name, '1'), { recursive: true });
    const params = Object.entries(parameters)
      .map(([k, v]) => `parameters { key: "${k}" value: { string_value: "${v}" } }\n`)
      .join('');
    writeFileSync(
      join(dir, name, 'config.pbtxt'),
      `name: "${name}"\nbackend: "vllm"\nmax_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n${io}instance_group [ { count: 1 kind: KIND_MODEL } ]\n${params}`,
    );
    if (modelJson !== undefined) writeFileSync(join(dir, name, '1', 'model.json'), modelJson);
  }
  vllmModel('guidance', {
    model: 'meta-llama/Meta-Llama-3-8B-Instruct',
    gpu_memory_utilization: '1.0',
    max_model_len: '8192',
    REPORT_CUSTOM_METRICS: 'true',
  });
  vllmModel(
    'both',
    { gpu_memory_utilization: '0.95' },
    '{"model": "m", "gpu_memory_utilization": 0.5, "max_model_len": 4096}',
  );
  const report = lint(dir, { gpus: 1 });
  const of = (m: string) => report.findings.filter((f) => f.model === m);
  const config = (m: string) => join(dir, m, 'config.pbtxt');

  it('the three parameters of the guidance are warnings that say to move each into model.json; the missing model.json is an error', () => {
    const args = of('guidance').filter((f) => f.rule === 'vllm-engine-args');
    expect(args.map((f) => [f.severity, f.file, f.line, f.fix])).toEqual([
      ['error', join(dir, 'guidance', '1'), 1, expect.stringMatching(/^create 1\/model\.json/)],
      [
        'warning',
        config('guidance'),
        8,
        'move it into 1/model.json: "model": "meta-llama/Meta-Llama-3-8B-Instruct", and remove the parameter',
      ],
      [
        'warning',
        config('guidance'),
        9,
        'move it into 1/model.json: "gpu_memory_utilization": 1.0, and remove the parameter',
      ],
      [
        'warning',
        config('guidance'),
        10,
        'move it into 1/model.json: "max_model_len": 8192, and remove the parameter',
      ],
    ]);
    // The backend's own parameters stay where they are.
    expect(args.some((f) => f.message.includes('REPORT_CUSTOM_METRICS'))).toBe(false);
  });

  it('gpu-memory-headroom reads the misplaced "1.0" as well as model.json: a warning, as the backend ignores it there', () => {
    const headroom = report.findings.filter((f) => f.rule === 'gpu-memory-headroom');
    expect(headroom.map((f) => [f.model, f.severity, f.file, f.line])).toEqual([
      ['both', 'warning', config('both'), 8],
      ['guidance', 'warning', config('guidance'), 9],
    ]);
    expect(headroom[1]!.message).toMatch(
      /gpu_memory_utilization 1 \(a config.pbtxt parameter, ignored there.*leaves no GPU memory/,
    );
    expect(headroom[1]!.fix).toBe(
      'set gpu_memory_utilization to 0.9 in model.json (0.85 with other models on the GPU)',
    );
  });

  it("the seed's own LLM config, as the guidance writes it: its parameters are never errors", () => {
    const seed = mkdtempSync(join(tmpdir(), 'triton-node-lint-seed-'));
    try {
      mkdirSync(join(seed, 'llama3-8b'));
      writeFileSync(join(seed, 'llama3-8b', 'config.pbtxt'), SEED_LLM_CONFIG);
      const found = lint(seed, { gpus: 1, gpuMemoryBytes: 80 * 1024 ** 3 }).findings;
      const onParameters = found.filter((f) => f.line >= 25);
      expect(onParameters.map((f) => [f.rule, f.severity, f.line])).toEqual([
        ['vllm-engine-args', 'warning', 26],
        ['vllm-engine-args', 'warning', 30],
        ['vllm-engine-args', 'warning', 34],
      ]);
      // What does fail the load stays an error: no version folder (so no model.json).
      expect(found.filter((f) => f.severity === 'error').map((f) => f.rule)).not.toContain(
        'vllm-engine-args',
      );
    } finally {
      rmSync(seed, { recursive: true, force: true });
    }
  });

  it('a parameter that model.json also sets is a warning: remove it', () => {
    const f = of('both').find((x) => x.rule === 'vllm-engine-args')!;
    expect(f).toMatchObject({ severity: 'warning', line: 8 });
    expect(f.message).toContain('model.json sets gpu_memory_utilization: 0.5');
    expect(f.fix).toBe("remove the parameter (model.json's gpu_memory_utilization is the one vLLM uses)");
    // model.json's own 0.5 is fine: no finding in model.json.
    expect(of('both').some((x) => x.file.endsWith('model.json'))).toBe(false);
  });
});

describe('an LLM served by the Python backend: gpu_memory_utilization as a config.pbtxt parameter', () => {
  const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-pyllm-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  function pythonLlm(name: string, backend: string, u: string): void {
    mkdirSync(join(dir, name, '1'), { recursive: true });
    writeFileSync(join(dir, name, '1', 'model.py'), '# the engine\n');
    writeFileSync(
      join(dir, name, 'config.pbtxt'),
      `name: "${name}"\nbackend: "${backend}"\nmax_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n${io}instance_group [ { count: 1 kind: KIND_GPU } ]\nparameters { key: "max_model_len" value: { string_value: "4096" } }\nparameters { key: "gpu_memory_utilization" value: { string_value: "${u}" } }\n`,
    );
  }
  pythonLlm('py_full', 'python', '1.0');
  pythonLlm('py_high', 'python', '0.95');
  pythonLlm('py_fine', 'python', '0.85');
  // Another backend's parameter of that name is not an LLM's share: left alone.
  pythonLlm('not_python', 'identity', '0.99');
  const report = lint(dir, { gpus: 0 });
  const headroom = report.findings.filter((f) => f.rule === 'gpu-memory-headroom');

  it('gpu-memory-headroom warns above 0.9 and errs at 1.0, at the parameter, without calling it misplaced', () => {
    expect(headroom.map((f) => [f.model, f.severity, f.file, f.line])).toEqual([
      ['py_full', 'error', join(dir, 'py_full', 'config.pbtxt'), 9],
      ['py_high', 'warning', join(dir, 'py_high', 'config.pbtxt'), 9],
    ]);
    expect(headroom[0]!.message).toBe(
      'gpu_memory_utilization 1 leaves no GPU memory for CUDA graphs, the other models and fragmentation',
    );
    expect(headroom[1]!.message).toMatch(/^gpu_memory_utilization 0\.95 leaves too little GPU memory/);
    expect(headroom[1]!.fix).toBe(
      'set the gpu_memory_utilization parameter to 0.9 (0.85 with other models on the GPU)',
    );
    // Its parameters are where a Python LLM reads them: neither vllm-engine-args nor "misplaced".
    for (const f of report.findings) {
      expect(f.message).not.toMatch(/ignored there|model\.json/);
      expect(f.rule).not.toBe('vllm-engine-args');
    }
  });
});

describe('every finding', () => {
  const dir = mkdtempSync(join(tmpdir(), 'triton-node-lint-llm-count-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'llm_two', '1'), { recursive: true });
  writeFileSync(
    join(dir, 'llm_two', 'config.pbtxt'),
    `name: "llm_two"\nbackend: "vllm"\nmax_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n${io}instance_group [ { count: 2 kind: KIND_GPU } ]\n`,
  );
  writeFileSync(join(dir, 'llm_two', '1', 'model.json'), '{"model": "m", "max_model_len": 4096}');
  writeFileSync(join(dir, 'llm_two', '1', 'weights.bin'), Buffer.alloc(3 * MiB));
  const reports = () => [
    lint(repo, options),
    lint(dir, { gpus: 1, gpuMemoryBytes: 4 * MiB }),
    lint(MODELS, { gpus: 1 }),
    lint(join(FIXTURES, 'lint', 'seed'), { gpus: 1 }),
  ];

  it('an LLM with too many instances for its memory: one finding at count, the more severe, set count to 1', () => {
    const found = lint(dir, { gpus: 1, gpuMemoryBytes: 4 * MiB }).findings.filter(
      (f) => f.rule === 'instance-count-memory',
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ severity: 'error', fix: expect.stringMatching(/^set count to 1 /) });
    expect(found[0]!.message).toMatch(/2 instance\(s\) × 3\.0 MiB .*; 2 instances of an LLM backend/);
  });

  it('has a position of its own: no two findings at one file, line and column', () => {
    for (const r of reports()) {
      const at = r.findings.map((f) => `${f.file}:${f.line}:${f.column}`);
      expect(at.filter((p, i) => at.indexOf(p) !== i)).toEqual([]);
    }
  });

  it('is about a file or folder that exists, inside its model folder (the server options file aside)', () => {
    for (const r of reports()) {
      for (const f of r.findings) {
        if (f.rule === 'explicit-control') continue;
        expect(existsSync(f.file), `${f.rule}: ${f.file}`).toBe(true);
        expect(f.file.includes(`/${f.model}`), `${f.rule}: ${f.file}`).toBe(true);
      }
    }
  });

  it('says what to do, as an instruction', () => {
    const verbs = /^(set|remove|add|create|move|rename|install|correct) /;
    for (const r of reports()) {
      for (const f of r.findings) if (f.fix !== undefined) expect(f.fix, f.rule).toMatch(verbs);
    }
  });
});
