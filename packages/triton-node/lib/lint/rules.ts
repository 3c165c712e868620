/**
 * The lint rules: Triton's configuration guidance, one rule each. Every rule
 * has a page, docs/lint/<id>.md, that says why and how to fix it.
 * @internal
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ModelInstanceGroup } from '../config/model-config.js';
import { externalFileProblem, findOnnxExternalData } from '../config/onnx-external-data.js';
import { maxSessionThreads, onnxThreadCountProblems } from '../config/onnxruntime.js';
import type { TextPosition } from '../config/pbtxt.js';
import { sequenceStateSizes, sequenceStateText } from '../config/sequence-states.js';
import {
  type LintModel,
  type LintOptions,
  type Severity,
  jsonKeyPosition,
  pythonLlmUtilization,
} from './model.js';

/** How a rule reports: at a config field path, or at a position in another file. */
export interface RuleContext {
  model: LintModel;
  options: LintOptions;
  report(
    at: { path: string } | { file: string; position: TextPosition },
    severity: Severity,
    message: string,
    fix?: string,
  ): void;
}

export interface LintRule {
  id: string;
  /** One line: what the rule checks. */
  description: string;
  check(ctx: RuleContext): void;
}

/** Backends that batch requests themselves (in-flight batching) and stream their answers. */
const LLM_BACKENDS = new Set(['vllm', 'tensorrtllm']);
/** Backends whose models always answer in several responses (decoupled). */
const DECOUPLED_BACKENDS = new Set(['vllm', 'repeat']);

const isLlm = (m: LintModel) => LLM_BACKENDS.has(m.config.backend ?? '');
const num = (v: unknown) => (typeof v === 'string' ? Number(v) : typeof v === 'number' ? v : Number.NaN);
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const bytes = (n: number) => (n >= GiB ? `${(n / GiB).toFixed(1)} GiB` : `${(n / MiB).toFixed(1)} MiB`);

/**
 * The config.pbtxt `parameters` the vllm backend itself reads (its model.py
 * and the Python backend under it); every other key there is an engine
 * argument written in the wrong file: the backend builds vLLM's engine from
 * `<version>/model.json` alone.
 */
const VLLM_BACKEND_PARAMETERS = new Set([
  'ENABLE_VLLM_HEALTH_CHECK',
  'REPORT_CUSTOM_METRICS',
  'GPU_DEVICE_IDS',
  'EXECUTION_ENV_PATH',
]);

/** A vLLM model's config.pbtxt parameters that belong in model.json: key, text value and index. */
function misplacedEngineArgs(m: LintModel): Array<{ key: string; value: string; index: number }> {
  if (m.config.backend !== 'vllm') return [];
  const params = (m.config.parameters ?? {}) as Record<string, { string_value?: unknown }>;
  return Object.entries(params).flatMap(([key, v], index) =>
    VLLM_BACKEND_PARAMETERS.has(key) ? [] : [{ key, value: String(v?.string_value ?? ''), index }],
  );
}

/** A parameter's text value as JSON for model.json: a number or boolean where it reads as one. */
function jsonValue(text: string): string {
  if (text === 'true' || text === 'false') return text;
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return text;
  return JSON.stringify(text);
}

/** Where a model's engine arguments go: the newest version folder's model.json. */
function engineArgsFile(m: LintModel): string {
  return m.engineArgs?.file ?? join(m.dir, String(m.versions.at(-1) ?? 1), 'model.json');
}

function groups(m: LintModel): Array<{ group: ModelInstanceGroup; index: number }> {
  return (m.config.instance_group ?? []).map((group, index) => ({ group, index }));
}

/** The most bytes a sequence's copy of one state may take before lint calls it an error: 1 GiB. */
export const SEQUENCE_STATE_LIMIT = GiB;

/**
 * The ONNX files of a version folder: the one Triton's onnxruntime backend
 * opens (default_model_filename, else model.onnx; a folder means its
 * model.onnx) and every other `*.onnx` file there (a Python model may open
 * them with ONNX Runtime too).
 */
function onnxFiles(m: LintModel, version: number): string[] {
  const dir = join(m.dir, String(version));
  const files = new Set<string>();
  const named = join(dir, m.config.default_model_filename || 'model.onnx');
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  if (isDir(named)) files.add(join(named, 'model.onnx'));
  else files.add(named);
  for (const e of readdirSync(dir)) if (e.endsWith('.onnx') && !isDir(join(dir, e))) files.add(join(dir, e));
  return [...files].filter((f) => existsSync(f));
}

export const RULES: LintRule[] = [
  {
    id: 'name-matches-folder',
    description:
      "a config's name, when it has one, is its model folder's name: Triton's poll refuses the model otherwise",
    check({ model, report }) {
      const declared = model.config.name;
      // No name (or an empty one): Triton takes the folder's.
      if (typeof declared !== 'string' || declared === '' || declared === model.name) return;
      const file = model.configFile === undefined ? 'config.pbtxt' : basename(model.configFile);
      report(
        { path: 'name' },
        'error',
        `${file} names the model '${declared}' but its folder is '${model.name}': Triton's poll refuses the model, which never loads (the two must be equal)`,
        `set name to "${model.name}" (or rename the folder to '${declared}'), or remove the name field: Triton then takes the folder's`,
      );
    },
  },
  {
    id: 'llm-no-triton-batching',
    description:
      'LLM backends (vLLM, TensorRT-LLM) batch in flight themselves: Triton must not batch them again',
    check({ model, report }) {
      if (!isLlm(model)) return;
      const mbs = num(model.config.max_batch_size ?? 0);
      if (mbs > 0) {
        report(
          { path: 'max_batch_size' },
          'error',
          `backend '${model.config.backend}' batches requests itself; max_batch_size ${mbs} makes Triton batch them a second time`,
          'set max_batch_size to 0',
        );
      }
      if (model.config.dynamic_batching !== undefined) {
        report(
          { path: 'dynamic_batching' },
          'error',
          `backend '${model.config.backend}' batches requests itself; dynamic_batching queues them in Triton first`,
          'remove dynamic_batching',
        );
      }
    },
  },
  {
    id: 'gpu-memory-headroom',
    description:
      "an LLM's gpu_memory_utilization (vLLM's, or a Python LLM's parameter) leaves no headroom above 0.9 (and fails at 1.0)",
    check({ model, report }) {
      // A Python-backend LLM reads it from its config.pbtxt parameters: there it is in its place.
      const python = pythonLlmUtilization(model);
      if (python !== undefined && python.value > 0.9) {
        const u = python.value;
        report(
          { path: `parameters[${python.index}].value.string_value` },
          u >= 1 ? 'error' : 'warning',
          `gpu_memory_utilization ${u} leaves ${u >= 1 ? 'no' : 'too little'} GPU memory for CUDA graphs, the other models and fragmentation`,
          'set the gpu_memory_utilization parameter to 0.9 (0.85 with other models on the GPU)',
        );
      }
      if (model.config.backend !== 'vllm') return;
      // Misplaced, the value does nothing where it is (the backend ignores it): a warning at most.
      const finding = (u: number, misplaced: boolean) =>
        [
          u >= 1 && !misplaced ? ('error' as const) : ('warning' as const),
          `gpu_memory_utilization ${u}${misplaced ? ' (a config.pbtxt parameter, ignored there; in model.json it)' : ''} leaves ${u >= 1 ? 'no' : 'too little'} GPU memory for CUDA graphs, the other models and fragmentation`,
          'set gpu_memory_utilization to 0.9 in model.json (0.85 with other models on the GPU)',
        ] as const;
      const args = model.engineArgs;
      const u = num(args?.values.gpu_memory_utilization);
      if (args !== undefined && !Number.isNaN(u) && u > 0.9) {
        report(
          { file: args.file, position: jsonKeyPosition(args.text, 'gpu_memory_utilization') },
          ...finding(u, false),
        );
      }
      // Misplaced in config.pbtxt, the value is what its author meant: judged as if it were in model.json.
      for (const p of misplacedEngineArgs(model)) {
        const v = num(p.value);
        if (p.key !== 'gpu_memory_utilization' || Number.isNaN(v) || v <= 0.9) continue;
        report({ path: `parameters[${p.index}].value.string_value` }, ...finding(v, true));
      }
    },
  },
  {
    id: 'vllm-engine-args',
    description:
      "a vLLM model's engine arguments are in <version>/model.json (the backend reads no others), not config.pbtxt parameters",
    check({ model, report }) {
      if (model.config.backend !== 'vllm') return;
      const file = engineArgsFile(model);
      const version = model.versions.at(-1);
      // No version folder at all: numeric-versions says so, at the model folder.
      if (model.engineArgs === undefined && version !== undefined) {
        report(
          { file: join(model.dir, String(version)), position: { line: 1, column: 1 } },
          'error',
          `no model.json in version ${version}: the vllm backend refuses to load without its engine arguments`,
          `create ${version}/model.json with the engine arguments, at least "model" (the Hugging Face id or path)`,
        );
      }
      // A parameter is the model's business, never an error: the backend
      // ignores it and the model loads; only a missing model.json fails it.
      for (const p of misplacedEngineArgs(model)) {
        const inJson = model.engineArgs?.values[p.key];
        report(
          { path: `parameters[${p.index}].key` },
          'warning',
          `parameter '${p.key}' is a vLLM engine argument: the vllm backend reads those from ${version ?? '<version>'}/model.json only, so this one is ignored${inJson === undefined ? '' : ` (model.json sets ${p.key}: ${JSON.stringify(inJson)})`}`,
          inJson === undefined
            ? `move it into ${file.slice(model.dir.length + 1)}: "${p.key}": ${jsonValue(p.value)}, and remove the parameter`
            : `remove the parameter (model.json's ${p.key} is the one vLLM uses)`,
        );
      }
    },
  },
  {
    id: 'instance-count-memory',
    description:
      'each instance holds its own copy of the weights: instances × weights must fit in GPU (or host) memory',
    check({ model, options, report }) {
      for (const { group, index } of groups(model)) {
        const count = num(group.count ?? 1);
        const gpu = group.kind === 'KIND_GPU' || (group.kind === undefined && (group.gpus ?? []).length > 0);
        // KIND_CPU, or no kind on a machine said to have no GPU: host memory.
        const cpu = group.kind === 'KIND_CPU' || (!gpu && group.kind === undefined && options.gpus === 0);
        const memory = gpu ? options.gpuMemoryBytes : cpu ? options.hostMemoryBytes : undefined;
        const need = count * model.weightBytes;
        const tooMuch = memory !== undefined && model.weightBytes > 0 && need > memory * 0.9;
        const llm = isLlm(model) && count > 1;
        if (!tooMuch && !llm) continue;
        // One finding per group: the memory sum and the LLM's own reason, the count to set.
        const fits = tooMuch ? Math.max(1, Math.floor((memory * 0.8) / model.weightBytes)) : count;
        const target = llm ? 1 : fits;
        const reasons = [
          ...(tooMuch
            ? [
                `${count} instance(s) × ${bytes(model.weightBytes)} of weights = ${bytes(need)} ${gpu ? 'per GPU' : 'of host memory'}, of ${bytes(memory)}`,
              ]
            : []),
          ...(llm ? [`${count} instances of an LLM backend each load the whole model and its KV cache`] : []),
        ];
        report(
          { path: `instance_group[${index}].count` },
          tooMuch && need > memory ? 'error' : 'warning',
          reasons.join('; '),
          llm
            ? 'set count to 1 (the backend batches itself; spread over GPUs with its tensor_parallel_size)'
            : `set count to ${target}`,
        );
      }
    },
  },
  {
    id: 'queue-delay-range',
    description: 'max_queue_delay_microseconds within 100 µs–10 ms for online serving',
    check({ model, options, report }) {
      const raw = model.config.dynamic_batching?.max_queue_delay_microseconds;
      if (raw === undefined) return;
      const delay = num(raw);
      const online = (options.profile ?? 'online') === 'online';
      if (online && delay > 10_000) {
        report(
          { path: 'dynamic_batching.max_queue_delay_microseconds' },
          'warning',
          `a queue delay of ${delay / 1000} ms adds up to that much to every online request`,
          'set max_queue_delay_microseconds to 10000 or less (more only for offline work: --profile offline)',
        );
      } else if (delay > 0 && delay < 100) {
        report(
          { path: 'dynamic_batching.max_queue_delay_microseconds' },
          'info',
          `a queue delay of ${delay} µs rarely lets a batch form`,
          'set max_queue_delay_microseconds to 100 or more, or to 0 to batch only what is already queued',
        );
      }
    },
  },
  {
    id: 'preferred-batch-size',
    description: 'preferred_batch_size within max_batch_size, and given when max_batch_size is large',
    check({ model, report }) {
      const db = model.config.dynamic_batching;
      if (db === undefined) return;
      const mbs = num(model.config.max_batch_size ?? 0);
      const preferred = (db.preferred_batch_size ?? []).map(num);
      const over = preferred.filter((p) => p > mbs);
      if (over.length > 0) {
        report(
          { path: 'dynamic_batching.preferred_batch_size' },
          'error',
          `preferred_batch_size ${over.join(', ')} above max_batch_size ${mbs}: Triton refuses the config`,
          `remove preferred_batch_size ${over.join(', ')}, or set max_batch_size to ${Math.max(...over)}`,
        );
      }
      if (preferred.length === 0 && mbs >= 32) {
        report(
          { path: 'dynamic_batching' },
          'warning',
          `no preferred_batch_size with max_batch_size ${mbs}: Triton prefers ${mbs}, a size online traffic rarely fills`,
          'add preferred_batch_size with the sizes the model runs best at (measure them: triton-node tune)',
        );
      }
    },
  },
  {
    id: 'numeric-versions',
    description:
      'versions are numbered folders (no `latest` links), and a version policy names existing ones',
    check({ model, report }) {
      // An odd entry is reported at itself (the link or folder), a missing version at the model folder.
      for (const e of model.oddEntries) {
        report(
          { file: join(model.dir, e.name), position: { line: 1, column: 1 } },
          e.symlink ? 'error' : 'warning',
          e.symlink
            ? `'${e.name}' is a link: Triton serves numbered folders, and a link that moves changes what runs without a reload`
            : `'${e.name}' is not a numbered version folder: Triton ignores it`,
          e.symlink
            ? `remove the link '${e.name}', copy the version it points to into the next numbered folder and deploy it`
            : `rename '${e.name}' to a version number, or remove it`,
        );
      }
      if (model.versions.length === 0) {
        report(
          { file: model.dir, position: { line: 1, column: 1 } },
          'error',
          'no numbered version folder',
          'create a version folder 1/ with the model files',
        );
      }
      const specific = model.config.version_policy?.specific?.versions;
      if (specific !== undefined) {
        const missing = specific.map(num).filter((v) => !model.versions.includes(v));
        if (missing.length > 0) {
          report(
            { path: 'version_policy' },
            'error',
            `the version policy names version(s) ${missing.join(', ')}, which have no folder`,
            `set version_policy to existing versions only (${model.versions.join(', ') || 'none'})`,
          );
        }
      }
    },
  },
  {
    id: 'gpus-spread',
    description: 'GPU instance groups name GPUs that exist, and use the GPUs there are',
    check({ model, options, report }) {
      if (options.gpus === undefined) return;
      for (const { group, index } of groups(model)) {
        const ids = (group.gpus ?? []).map(num);
        const absent = ids.filter((g) => g >= options.gpus!);
        if (absent.length > 0) {
          report(
            { path: `instance_group[${index}].gpus` },
            'error',
            `GPU(s) ${absent.join(', ')} do not exist on a machine with ${options.gpus} GPU(s)`,
            `set gpus to ids from 0 to ${options.gpus - 1}`,
          );
        } else if (
          group.kind === 'KIND_GPU' &&
          options.gpus > 1 &&
          ids.length > 0 &&
          ids.length < options.gpus &&
          !isLlm(model)
        ) {
          report(
            { path: `instance_group[${index}].gpus` },
            'info',
            `instances only on GPU(s) ${ids.join(', ')} of ${options.gpus}`,
            'remove gpus to place instances on every GPU, unless other models own the rest',
          );
        }
      }
    },
  },
  {
    id: 'cpu-kind-for-light-models',
    description: 'light models (Python glue, tiny weights) need no GPU instance',
    check({ model, report }) {
      if (isLlm(model)) return;
      const light = model.config.backend === 'python' || (model.weightBytes > 0 && model.weightBytes < MiB);
      if (!light) return;
      for (const { group, index } of groups(model)) {
        if (group.kind !== 'KIND_GPU') continue;
        report(
          { path: `instance_group[${index}].kind` },
          'info',
          `a ${model.config.backend === 'python' ? 'Python' : `${bytes(model.weightBytes)}`} model on KIND_GPU holds a CUDA context and GPU memory it barely uses`,
          'set kind to KIND_CPU unless it computes on the GPU',
        );
      }
    },
  },
  {
    id: 'onnx-thread-count',
    description: "an onnxruntime model's thread counts are numbers Triton can take, and not thousands",
    check({ model, report }) {
      const limit = maxSessionThreads();
      for (const p of onnxThreadCountProblems(model.config, limit)) {
        const index = Object.keys(model.config.parameters ?? {}).indexOf(p.parameter);
        const at = { path: `parameters[${index}].value.string_value` };
        if (p.kind === 'not-a-number') {
          report(
            at,
            'error',
            `${p.parameter} '${p.value}' is not a number: the onnxruntime backend refuses the load`,
            `set ${p.parameter} to a thread count (0: ONNX Runtime's default)`,
          );
        } else if (p.kind === 'out-of-range') {
          report(
            at,
            'error',
            `${p.parameter} '${p.value}' is beyond a C int: r25.07's onnxruntime backend aborts the whole process at load (std::out_of_range)`,
            `set ${p.parameter} to a thread count (0: ONNX Runtime's default)`,
          );
        } else {
          report(
            at,
            'warning',
            `${p.parameter} ${p.value}: each instance's session starts that many threads at load, and memory grows with them (more than ${limit}, 4 per core of this machine)`,
            `set ${p.parameter} to at most the cores an instance may use (0: ONNX Runtime's default)`,
          );
        }
      }
    },
  },
  {
    id: 'decoupled-needs-stream',
    description:
      'models of backends that answer in several responses are declared decoupled (clients then stream them)',
    check({ model, report }) {
      const decoupled = model.config.model_transaction_policy?.decoupled === true;
      if (!decoupled && DECOUPLED_BACKENDS.has(model.config.backend ?? '')) {
        report(
          { path: 'backend' },
          'error',
          `backend '${model.config.backend}' sends several responses per request: without decoupled: true Triton refuses them`,
          'add model_transaction_policy { decoupled: true }',
        );
      }
    },
  },
  {
    id: 'kv-cache-bound',
    description: "vLLM's KV cache is bounded by max_model_len (or a token budget)",
    check({ model, report }) {
      if (model.config.backend !== 'vllm') return;
      const args = model.engineArgs;
      // No model.json: vllm-engine-args reports it (an error: the model does not load).
      if (args === undefined) return;
      if (args.values.max_model_len === undefined && args.values.max_num_batched_tokens === undefined) {
        report(
          { file: args.file, position: { line: 1, column: 1 } },
          'warning',
          "no max_model_len: vLLM sizes the KV cache for the model's full context, and fails to start or serves few sequences",
          'set max_model_len to the longest prompt + output you serve (e.g. 8192)',
        );
      }
    },
  },
  {
    id: 'onnx-external-data',
    description:
      "an ONNX model's external data stays in its version folder (no absolute path, no '..', no link out)",
    check({ model, report }) {
      for (const version of model.versions) {
        const versionDir = join(model.dir, String(version));
        for (const file of onnxFiles(model, version)) {
          const at = { file, position: { line: 1, column: 1 } };
          let found: ReturnType<typeof findOnnxExternalData>;
          try {
            found = findOnnxExternalData(file);
          } catch (err) {
            report(
              at,
              'error',
              `cannot read it as an ONNX model to check where its tensors' data is: ${(err as Error).message}`,
              'remove it, or correct it to the model file as exported',
            );
            continue;
          }
          for (const { tensor, location } of found) {
            const why = externalFileProblem(location, file, versionDir);
            if (why === undefined) continue;
            report(
              at,
              'error',
              `tensor '${tensor}' has its external data at '${location}', ${why}, outside version folder ${version}/: Triton's onnxruntime backend reads that file, so the model can read any file the server can`,
              'move the external data files into the version folder, beside the model file, and name them by relative paths',
            );
          }
        }
      }
    },
  },
  {
    id: 'sequence-state-size',
    description:
      "a sequence model's state (and initial state) fits one sequence: Triton allocates it for every sequence",
    check({ model, report }) {
      for (const s of sequenceStateSizes(model.config)) {
        if (s.bytes <= SEQUENCE_STATE_LIMIT) continue;
        const path =
          s.of === 'state'
            ? `sequence_batching.state[${s.index}].dims`
            : `sequence_batching.state[${s.index}].initial_state[${s.of.index}].dims`;
        report(
          { path },
          'error',
          `${sequenceStateText(s)}, above ${bytes(SEQUENCE_STATE_LIMIT)}: ${
            s.of === 'state'
              ? 'Triton allocates it for every sequence it starts, and fails the sequence when it cannot'
              : 'Triton allocates it when it loads the model, and r25.07 crashes the process when it cannot'
          }`,
          'set the dims to the state the model keeps for one sequence (-1 where it varies)',
        );
      }
    },
  },
];

/** The rule over all models together (lib/lint/gpu-budget.ts). */
export const GPU_MEMORY_BUDGET = {
  id: 'gpu-memory-budget',
  description:
    "every model's weights × its instances on a GPU, with estimated runtime memory, fit that GPU with 10-20% free",
} as const;

/** Rules about the server, not a model. */
export const SERVER_RULES = [
  {
    id: 'explicit-control',
    description:
      "models load under the service's control (modelControlMode 'explicit'), not by polling or all at startup",
  },
] as const;
