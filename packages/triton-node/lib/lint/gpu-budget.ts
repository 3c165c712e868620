/**
 * The `gpu-memory-budget` rule: every model of the repositories served
 * together, its weights times its instances on each GPU plus an estimate of
 * the memory it needs to run, against that GPU's memory with the headroom
 * the guidance keeps (docs/lint/gpu-memory-budget.md).
 * @internal
 */
import { addon } from '../addon/load.js';
import type { ModelInstanceGroup } from '../config/model-config.js';
import { type LintModel, type LintOptions, pythonLlmUtilization } from './model.js';
import { backendOf } from './weights.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const bytes = (n: number) => (n >= GiB ? `${(n / GiB).toFixed(1)} GiB` : `${(n / MiB).toFixed(1)} MiB`);
const num = (v: unknown) => (typeof v === 'string' ? Number(v) : typeof v === 'number' ? v : Number.NaN);

/** Above this share of a GPU's memory a finding is a warning (the guidance keeps 10-20% free)... */
export const WARN_SHARE = 0.9;
/** ...and a fix aims for this share. */
export const TARGET_SHARE = 0.8;
/**
 * Runtime memory on top of the weights, per instance, by backend: an
 * estimate from what one H100 measured (a 98 MiB ResNet-50 took ~118 MiB on
 * the pytorch backend; in a Python model ~640 MiB, the stub's own CUDA
 * context being most of it; a 4-layer BERT in Python ~540 MiB).
 */
export const RUNTIME_SHARE = 0.2;
export const PYTHON_STUB_BYTES = 500 * MiB;
/** vLLM's own default for gpu_memory_utilization. */
const VLLM_DEFAULT_UTILIZATION = 0.9;

/** What the rule is measured against: each GPU's memory, or why it cannot be. */
export type GpuMemory = { totals: number[]; from: string } | { reason: string };

/** The GPUs the configs name (the highest id + 1), at least 1. */
function namedGpuCount(models: readonly LintModel[]): number {
  let most = 1;
  for (const m of models)
    for (const g of m.config.instance_group ?? [])
      for (const id of g.gpus ?? []) most = Math.max(most, num(id) + 1);
  return most;
}

/**
 * Each GPU's memory: `gpuMemoryBytes` for every GPU where given, else what
 * CUDA says of this machine's GPUs (their total memory; cuda.describe()
 * creates no CUDA context). Null when the target has no GPU (`gpus: 0`).
 */
export function gpuMemory(options: LintOptions, models: readonly LintModel[]): GpuMemory | null {
  if (options.gpus === 0) return null;
  if (options.gpuMemoryBytes !== undefined) {
    const count = options.gpus ?? namedGpuCount(models);
    return { totals: Array.from({ length: count }, () => options.gpuMemoryBytes!), from: 'gpuMemoryBytes' };
  }
  let described: ReturnType<ReturnType<typeof addon>['cuda']['describe']>;
  try {
    described = addon().cuda.describe();
  } catch (err) {
    return { reason: `the addon does not load (${(err as Error).message.split('\n')[0]})` };
  }
  const devices = described.devices;
  if (!described.available || devices.length === 0) {
    return { reason: `no GPU is visible here (${described.reason.split('\n')[0] || 'no CUDA device'})` };
  }
  const totals = Array.from(
    { length: options.gpus ?? devices.length },
    (_, i) => (devices[i] ?? devices[0]!).totalMemory,
  );
  if (totals.some((t) => t === null)) return { reason: "CUDA did not say a GPU's memory" };
  return { totals: totals as number[], from: `this machine's GPUs (${devices[0]!.name ?? 'GPU'})` };
}

/** One model's instances on one GPU, and what they are estimated to take. */
interface Share {
  model: LintModel;
  /** The config field the instances come from (a group, or the model's name for Triton's default group). */
  path: string;
  instances: number;
  /** Bytes on this GPU. */
  bytes: number;
  /** How `bytes` was reckoned, for the message. */
  how: string;
  /** An LLM's gpu_memory_utilization, and where it is set (for the fix). */
  utilization?: number;
  utilizationIn?: string;
}

/** The versions a model's version policy serves (default: the newest). */
function servedVersions(m: LintModel): number[] {
  const policy = m.config.version_policy;
  if (policy?.all !== undefined) return m.versions;
  if (policy?.specific !== undefined) {
    const wanted = (policy.specific.versions ?? []).map(num);
    return m.versions.filter((v) => wanted.includes(v));
  }
  const latest = num(policy?.latest?.num_versions ?? 1);
  return m.versions.slice(-Math.max(1, latest));
}

/** A vLLM model's GPUs when the backend places it: GPU_DEVICE_IDS, else the first tensor_parallel_size. */
function vllmGpus(m: LintModel, gpuCount: number): number[] {
  const ids = m.config.parameters?.GPU_DEVICE_IDS?.string_value;
  if (ids !== undefined)
    return ids
      .split(',')
      .map(num)
      .filter((g) => Number.isInteger(g) && g < gpuCount);
  const tp = Math.max(1, num(m.engineArgs?.values.tensor_parallel_size ?? 1) || 1);
  return Array.from({ length: Math.min(tp, gpuCount) }, (_, i) => i);
}

/**
 * Where a model's instances go and what each takes, per GPU. Triton's
 * defaults: no instance_group is one instance on every GPU; a group without
 * a kind is KIND_GPU where there are GPUs; KIND_CPU and KIND_MODEL (but for
 * vLLM, which places itself) take no GPU memory of Triton's reckoning.
 */
function modelShares(m: LintModel, totals: number[]): Map<number, Share[]> {
  const out = new Map<number, Share[]>();
  const add = (gpu: number, share: Share) => out.set(gpu, [...(out.get(gpu) ?? []), share]);
  const backend = backendOf(m.config);
  if (m.config.platform === 'ensemble') return out;
  const versions = servedVersions(m);
  if (versions.length === 0) return out;
  const weights = versions.reduce((sum, v) => sum + (m.versionBytes.get(v) ?? 0), 0);
  const vs = versions.length > 1 ? ` (versions ${versions.join(', ')})` : '';
  const all = totals.map((_, i) => i);
  const groups: Array<{ group: ModelInstanceGroup; path: string }> =
    m.config.instance_group === undefined || m.config.instance_group.length === 0
      ? [{ group: {}, path: 'name' }]
      : m.config.instance_group.map((group, i) => ({ group, path: `instance_group[${i}]` }));
  for (const { group, path } of groups) {
    const count = num(group.count ?? 1);
    const listed = (group.gpus ?? []).map(num).filter((g) => g < totals.length);
    const kind = group.kind ?? 'KIND_AUTO';
    if (backend === 'vllm') {
      const args = m.engineArgs?.values.gpu_memory_utilization;
      const u = num(args ?? VLLM_DEFAULT_UTILIZATION);
      const gpus =
        kind === 'KIND_GPU' ? (group.gpus === undefined ? all : listed) : vllmGpus(m, totals.length);
      for (const g of gpus) {
        add(g, {
          model: m,
          path,
          instances: count,
          bytes: count * u * totals[g]!,
          how: `${count > 1 ? `${count} × ` : ''}gpu_memory_utilization ${u}${args === undefined ? " (vLLM's default)" : ''} of ${bytes(totals[g]!)}`,
          utilization: u,
          utilizationIn: 'model.json',
        });
      }
      continue;
    }
    const llm = pythonLlmUtilization(m);
    if (llm !== undefined) {
      // A Python LLM takes its share of each GPU an instance of it runs on, whatever its weights
      // (as vLLM does); KIND_CPU and KIND_MODEL instances still place it, on the first GPU.
      const u = llm.value;
      const gpus =
        kind === 'KIND_GPU' || kind === 'KIND_AUTO' ? (group.gpus === undefined ? all : listed) : [0];
      for (const g of gpus) {
        add(g, {
          model: m,
          path,
          instances: count,
          bytes: count * u * totals[g]!,
          how: `${count > 1 ? `${count} × ` : ''}gpu_memory_utilization ${u} of ${bytes(totals[g]!)}`,
          utilization: u,
          utilizationIn: 'its config.pbtxt parameters',
        });
      }
      continue;
    }
    if (kind === 'KIND_CPU' || kind === 'KIND_MODEL') continue;
    const python = backend === 'python';
    const each = python ? weights + versions.length * PYTHON_STUB_BYTES : weights * (1 + RUNTIME_SHARE);
    const how = python
      ? `${count} × (${bytes(weights)}${vs} + ${bytes(versions.length * PYTHON_STUB_BYTES)} for the stub's CUDA context)`
      : `${count} × ${bytes(weights)}${vs} + ${RUNTIME_SHARE * 100}%`;
    for (const g of group.gpus === undefined ? all : listed) {
      add(g, { model: m, path, instances: count, bytes: count * each, how });
    }
  }
  return out;
}

/** A finding of the rule, on one model's config field. */
export interface BudgetFinding {
  model: LintModel;
  path: string;
  severity: 'error' | 'warning' | 'info';
  message: string;
  fix: string;
}

/** Models with GPU instances whatever the machine: KIND_GPU groups, listed GPUs, vLLM, Python LLMs. */
function gpuModels(models: readonly LintModel[]): Array<{ model: LintModel; path: string }> {
  const out: Array<{ model: LintModel; path: string }> = [];
  for (const m of models) {
    if (backendOf(m.config) === 'vllm' || pythonLlmUtilization(m) !== undefined) {
      out.push({ model: m, path: m.config.instance_group === undefined ? 'name' : 'instance_group[0]' });
      continue;
    }
    const i = (m.config.instance_group ?? []).findIndex(
      (g) => g.kind === 'KIND_GPU' || (g.gpus ?? []).length > 0,
    );
    if (i >= 0) out.push({ model: m, path: `instance_group[${i}]` });
  }
  return out;
}

/** Shares named one by one in a GPU's line; the rest are summed. */
const NAMED_SHARES = 6;

function gpuLine(gpu: number, total: number, shares: Share[]): string {
  const sum = shares.reduce((s, x) => s + x.bytes, 0);
  const sorted = shares.filter((s) => s.bytes > 0).sort((a, b) => b.bytes - a.bytes);
  const parts = sorted.slice(0, NAMED_SHARES).map((s) => `${s.model.name} ${s.how} = ${bytes(s.bytes)}`);
  const rest = sorted.slice(NAMED_SHARES);
  if (rest.length > 0)
    parts.push(`${rest.length} more model(s) ${bytes(rest.reduce((s, x) => s + x.bytes, 0))}`);
  return `GPU ${gpu}: an estimated ${bytes(sum)} of ${bytes(total)} (${Math.round((sum / total) * 100)}%): ${parts.join('; ')}`;
}

/** The fix: the biggest share's count that fits, a GPU with room, or a smaller model. */
function budgetFix(worst: number, totals: number[], perGpu: Map<number, Share[]>, anchor: Share): string {
  const sumOf = (g: number) => (perGpu.get(g) ?? []).reduce((s, x) => s + x.bytes, 0);
  const ways: string[] = [];
  const excess = sumOf(worst) - TARGET_SHARE * totals[worst]!;
  if (anchor.utilization !== undefined) {
    // vLLM takes its share of the GPU whatever its weights: lower the share.
    const u =
      Math.floor((anchor.utilization - excess / anchor.instances / totals[worst]!) * 100 + 1e-9) / 100;
    if (u > 0)
      ways.push(`set ${anchor.model.name}'s gpu_memory_utilization to ${u} in ${anchor.utilizationIn}`);
  } else {
    const keep = anchor.instances - Math.ceil(excess / (anchor.bytes / anchor.instances));
    if (keep >= 1) ways.push(`set ${anchor.model.name}'s count to ${keep}`);
  }
  const room = totals
    .map((t, g) => ({ g, free: TARGET_SHARE * t - sumOf(g) }))
    .filter(({ g, free }) => g !== worst && free >= anchor.bytes)
    .sort((a, b) => b.free - a.free)[0];
  if (room !== undefined)
    ways.push(`set gpus: [ ${room.g} ] on ${anchor.model.name}'s instances (GPU ${room.g} has room)`);
  ways.push(
    ways.length === 0
      ? 'set fewer instances, spread the models over the GPUs with gpus: [ ... ], or use a smaller model'
      : 'use a smaller model (FP16 or INT8 weights)',
  );
  return `${ways.join(', or ')}, so that each GPU's estimate stays within ${TARGET_SHARE * 100}% of its memory`;
}

/** The rule over every model of the repositories (they share the server's GPUs). */
export function checkGpuBudget(models: readonly LintModel[], options: LintOptions): BudgetFinding[] {
  const memory = gpuMemory(options, models);
  if (memory === null) return [];
  if ('reason' in memory) {
    const on = gpuModels(models);
    if (on.length === 0) return [];
    return [
      {
        ...on[0]!,
        severity: 'info',
        message: `GPU memory not checked: ${memory.reason} and no gpuMemoryBytes (--gpu-memory) was given; ${on.length} model(s) have GPU instances (${on.map((x) => x.model.name).join(', ')})`,
        fix: 'set gpuMemoryBytes (--gpu-memory GiB) to the memory of the GPUs the models will run on',
      },
    ];
  }
  const { totals } = memory;
  const perGpu = new Map<number, Share[]>();
  for (const m of models) {
    for (const [g, shares] of modelShares(m, totals)) perGpu.set(g, [...(perGpu.get(g) ?? []), ...shares]);
  }
  const ratio = (g: number) => (perGpu.get(g) ?? []).reduce((s, x) => s + x.bytes, 0) / totals[g]!;
  const over = totals.map((_, g) => g).filter((g) => ratio(g) > WARN_SHARE);
  if (over.length === 0) return [];
  const worst = over.reduce((a, b) => (ratio(b) > ratio(a) ? b : a));
  const anchor = [...perGpu.get(worst)!].sort((a, b) => b.bytes - a.bytes)[0]!;
  const lines = over.map((g) => gpuLine(g, totals[g]!, perGpu.get(g)!));
  return [
    {
      model: anchor.model,
      path: anchor.path,
      severity: over.some((g) => ratio(g) > 1) ? 'error' : 'warning',
      message: `${lines.join('. ')}. The guidance keeps 10-20% of a GPU's memory free (at most ${WARN_SHARE * 100}% used) for activations, CUDA contexts and fragmentation; GPU memory from ${memory.from}; runtime memory is an estimate (weights + ${RUNTIME_SHARE * 100}% on pytorch, onnxruntime and tensorrt, + ${bytes(PYTHON_STUB_BYTES)} per Python instance)`,
      fix: budgetFix(worst, totals, perGpu, anchor),
    },
  ];
}
