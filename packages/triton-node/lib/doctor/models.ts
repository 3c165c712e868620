/**
 * The doctor's model lines (`--repository DIR`): each model's config.pbtxt
 * parsed and checked against what the server would need: a backend it has,
 * a version folder, well-formed inputs and outputs, GPUs that exist for
 * KIND_GPU instances, and the models an ensemble's steps name.
 * @internal
 * @packageDocumentation
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DATATYPE_NAMES } from '../abi/binding.js';
import { readRepositoryFileSync } from '../config/files.js';
import { parseModelConfigText } from '../config/pbtxt.js';
import type { DoctorCheck, DoctorReport } from './report.js';

type ModelFacts = DoctorReport['models'][number];
type Config = Record<string, unknown>;

/** Triton's platforms and the backend each is served by. */
const PLATFORM_BACKENDS: Record<string, string> = {
  tensorrt_plan: 'tensorrt',
  onnxruntime_onnx: 'onnxruntime',
  pytorch_libtorch: 'pytorch',
  tensorflow_savedmodel: 'tensorflow',
  tensorflow_graphdef: 'tensorflow',
};

/** What the repository's models can rely on: the backends found, the GPUs visible. */
export interface ModelContext {
  backends: string[];
  gpuCount: number;
  /** False when the backends are unknown (no library, no backend directory). */
  backendsKnown: boolean;
}

const DATATYPES = new Set(DATATYPE_NAMES.map((d) => `TYPE_${d === 'BYTES' ? 'STRING' : d}`));

function list(value: unknown): Config[] {
  return Array.isArray(value) ? (value as Config[]) : [];
}

function tensorProblems(kind: 'input' | 'output', tensors: Config[]): string[] {
  const problems: string[] = [];
  tensors.forEach((t, i) => {
    const name = typeof t.name === 'string' ? t.name : undefined;
    const what = `${kind} ${name ?? `#${i}`}`;
    if (name === undefined) problems.push(`${kind} #${i} has no name`);
    if (!DATATYPES.has(String(t.data_type))) {
      problems.push(`${what}: data_type ${t.data_type === undefined ? 'missing' : `${t.data_type} unknown`}`);
    }
    if (!Array.isArray(t.dims)) problems.push(`${what}: dims missing`);
  });
  return problems;
}

function backendProblems(config: Config, ctx: ModelContext): { backend: string | null; problems: string[] } {
  const platform = typeof config.platform === 'string' ? config.platform : undefined;
  const named = typeof config.backend === 'string' ? config.backend : undefined;
  if (platform === 'ensemble') return { backend: 'ensemble', problems: [] };
  const backend = named ?? (platform === undefined ? undefined : PLATFORM_BACKENDS[platform]);
  if (backend === undefined) {
    const why =
      platform === undefined ? 'neither backend nor platform is set' : `platform ${platform} is unknown`;
    return { backend: null, problems: [why] };
  }
  if (ctx.backendsKnown && !ctx.backends.includes(backend)) {
    const have = ctx.backends.length > 0 ? ctx.backends.join(', ') : 'none';
    return { backend, problems: [`backend ${backend} is not installed (found: ${have})`] };
  }
  return { backend, problems: [] };
}

function instanceProblems(config: Config, gpuCount: number): string[] {
  const problems: string[] = [];
  for (const group of list(config.instance_group)) {
    if (group.kind !== 'KIND_GPU') continue;
    if (gpuCount === 0) {
      problems.push('instance_group asks for KIND_GPU and no GPU is visible');
      continue;
    }
    const gpus = Array.isArray(group.gpus) ? (group.gpus as number[]) : [];
    const absent = gpus.filter((g) => g >= gpuCount);
    if (absent.length > 0)
      problems.push(`instance_group names GPU ${absent.join(', ')}: ${gpuCount} visible`);
  }
  return problems;
}

function ensembleProblems(config: Config, models: Set<string>): string[] {
  const scheduling = config.ensemble_scheduling as Config | undefined;
  return list(scheduling?.step)
    .map((s) => String(s.model_name))
    .filter((name) => !models.has(name))
    .map((name) => `ensemble step model ${name} is not in the repository`);
}

/** Checks one model folder; `models` holds every folder name of the repository. */
function checkModel(dir: string, name: string, models: Set<string>, ctx: ModelContext): ModelFacts {
  const versions = readdirSync(join(dir, name), { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^[0-9]+$/.test(e.name))
    .map((e) => Number(e.name))
    .sort((a, b) => a - b);
  const facts: ModelFacts = { name, backend: null, versions, problems: [] };
  const file = join(dir, name, 'config.pbtxt');
  if (!existsSync(file)) {
    facts.problems.push('no config.pbtxt (only backends that complete a config themselves load it)');
    return facts;
  }
  let config: Config;
  try {
    config = parseModelConfigText(readRepositoryFileSync(file));
  } catch (err) {
    facts.problems.push(`config.pbtxt does not parse: ${(err as Error).message}`);
    return facts;
  }
  if (typeof config.name === 'string' && config.name !== name) {
    facts.problems.push(`config name "${config.name}" differs from its folder "${name}"`);
  }
  const backend = backendProblems(config, ctx);
  facts.backend = backend.backend;
  facts.problems.push(...backend.problems);
  if (versions.length === 0 && backend.backend !== 'ensemble')
    facts.problems.push('no version folder (1/, 2/, ...)');
  facts.problems.push(...tensorProblems('input', list(config.input)));
  facts.problems.push(...tensorProblems('output', list(config.output)));
  facts.problems.push(...instanceProblems(config, ctx.gpuCount));
  facts.problems.push(...ensembleProblems(config, models));
  return facts;
}

/** What to do about a problem checkModel() found, by the words it uses. */
const FIXES: Array<[RegExp, string]> = [
  [/does not parse/, 'correct config.pbtxt (protobuf text format) where the message points'],
  [/no version folder/, 'put the model files in a numbered folder: <model>/1/'],
  [
    /is not installed/,
    'install that backend in the backend directory, or pass backendDirectory (--backend-dir)',
  ],
  [/KIND_GPU/, 'run where a GPU is visible (docker run --gpus all), or use kind: KIND_CPU'],
  [/names GPU/, 'list only visible GPUs in instance_group gpus (CUDA_VISIBLE_DEVICES renumbers them)'],
  [/differs from its folder/, 'make the name field and the folder name the same'],
  [
    /backend nor platform|platform .* is unknown/,
    'set backend: "<name>" (onnxruntime, pytorch, python, tensorrt...)',
  ],
  [/ensemble step/, "add the step's model to the repository, or correct its model_name"],
  [/no config\.pbtxt/, 'write config.pbtxt, or pass the config when loading: loadModel(name, { config })'],
];

function fixFor(problem: string): string {
  return (
    FIXES.find(([pattern]) => pattern.test(problem))?.[1] ??
    'give each input and output a name, a data_type (TYPE_FP32...) and dims'
  );
}

/** Every model folder of `repository`, checked. */
export function checkModels(repository: string, ctx: ModelContext) {
  if (!existsSync(repository)) {
    const line: DoctorCheck = {
      topic: 'model',
      subject: repository,
      status: 'fail',
      detail: 'no such directory',
      fix: 'pass the folder that holds one folder per model',
    };
    return { facts: [] as ModelFacts[], checks: [line] };
  }
  const names = readdirSync(repository, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  const models = new Set(names);
  const facts = names.map((name) => checkModel(repository, name, models, ctx));
  const checks = facts.map((m): DoctorCheck => {
    if (m.problems.length > 0) {
      const fixes = [...new Set(m.problems.map(fixFor))];
      return {
        topic: 'model',
        subject: m.name,
        status: 'fail',
        detail: m.problems.join('; '),
        fix: fixes.join('; '),
      };
    }
    const versions = m.versions.length > 0 ? `versions ${m.versions.join(', ')}` : 'no versions';
    return { topic: 'model', subject: m.name, status: 'ok', detail: `backend ${m.backend}, ${versions}` };
  });
  if (names.length === 0) {
    checks.push({ topic: 'model', subject: repository, status: 'warn', detail: 'no model folders in it' });
  }
  return { facts, checks };
}
