/**
 * Why a model of the repository did not load at startup, as far as its
 * files tell. Triton's model index names a failed version's reason, but a
 * model whose folder fails Triton's poll (a config that does not parse, a
 * config naming another model, invalid dims, a missing config.pbtxt) is
 * listed with no state or reason at all, and one with no version folder is
 * not listed: Triton only logs those causes. The checks here are the ones
 * that poll makes, in its order, so that each failed model gets its cause.
 * @internal
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readRepositoryFileSync } from '../config/files.js';
import { parseModelConfigText } from '../config/pbtxt.js';

/** A startup model that is not READY, and why. */
export interface StartupFailure {
  /** The model's name (its folder). */
  model: string;
  /** The version that failed, when Triton tried one. */
  version?: number;
  /** Triton's reason, or what the model's files show when Triton gives none. */
  reason: string;
}

interface TensorLike {
  name?: unknown;
  dims?: unknown;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A config's problem that Triton's poll refuses, or undefined. */
function configProblem(config: Record<string, unknown>, name: string, file: string): string | undefined {
  const declared = config.name;
  if (typeof declared === 'string' && declared !== '' && declared !== name) {
    return `${file} names the model '${declared}' but its folder is '${name}' (the two must be equal)`;
  }
  for (const [key, label] of [
    ['input', 'input'],
    ['output', 'output'],
  ] as const) {
    const tensors = config[key];
    if (!Array.isArray(tensors)) continue;
    for (const t of tensors as TensorLike[]) {
      if (!Array.isArray(t.dims)) continue;
      const bad = t.dims.find((d) => {
        const n = Number(d);
        return !Number.isInteger(n) || (n < 1 && n !== -1);
      });
      if (bad !== undefined) {
        const tensor = typeof t.name === 'string' ? `'${t.name}'` : '(unnamed)';
        return `${file}: ${label} ${tensor} dims [${t.dims.join(', ')}]: each dimension must be an integer >= 1, or -1 for a variable size`;
      }
    }
  }
  return undefined;
}

/** The numbered version folders of a model folder. */
function versionFolders(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => /^\d+$/.test(n) && isDirectory(join(dir, n))).map(Number);
}

/** The model files from which a backend completes a missing config (strictModelConfig false). */
const COMPLETABLE = [
  'model.onnx',
  'model.plan',
  'model.pt',
  'model.py',
  'model.savedmodel',
  'model.graphdef',
];

function hasCompletableFile(versionDir: string): boolean {
  return COMPLETABLE.some((f) => existsSync(join(versionDir, f)));
}

/** The versions a config's version_policy names that have no folder (for `specific`), else []. */
function missingSpecificVersions(config: Record<string, unknown>, folders: number[]): number[] | undefined {
  const policy = config.version_policy as { specific?: { versions?: unknown[] } } | undefined;
  const wanted = policy?.specific?.versions;
  if (!Array.isArray(wanted)) return undefined;
  const numbers = wanted.map(Number);
  return numbers.some((v) => folders.includes(v)) ? undefined : numbers;
}

/**
 * What the files of the model folder `dir` show that stops it from loading,
 * or undefined when they show nothing wrong.
 */
export function modelFolderProblem(
  dir: string,
  name: string,
  options: { modelConfigName?: string | undefined; strictModelConfig: boolean },
): string | undefined {
  let file = 'config.pbtxt';
  if (options.modelConfigName !== undefined) {
    const custom = join('configs', `${options.modelConfigName}.pbtxt`);
    if (existsSync(join(dir, custom))) file = custom;
  }
  let config: Record<string, unknown> | undefined;
  if (!existsSync(join(dir, file))) {
    if (options.strictModelConfig) {
      return `no ${file} in ${dir} (Triton needs one while strictModelConfig is true)`;
    }
    if (!versionFolders(dir).some((v) => hasCompletableFile(join(dir, String(v))))) {
      return `no ${file} in ${dir}, and no model file in its version folders that a backend completes a config from (${COMPLETABLE.join(', ')})`;
    }
  } else {
    let text: string;
    try {
      text = readRepositoryFileSync(join(dir, file));
    } catch (err) {
      return `${file} cannot be read: ${(err as Error).message}`;
    }
    try {
      config = parseModelConfigText(text);
    } catch (err) {
      return `${file} does not parse: ${(err as Error).message}`;
    }
    const problem = configProblem(config, name, file);
    if (problem !== undefined) return problem;
  }
  const folders = versionFolders(dir);
  if (folders.length === 0) {
    return `no version folder in ${dir}: the model's files go in a numbered folder such as ${join(dir, '1')}`;
  }
  const missing = config === undefined ? undefined : missingSpecificVersions(config, folders);
  if (missing !== undefined) {
    return `version_policy asks for version ${missing.join(', ')}, which ${missing.length === 1 ? 'has' : 'have'} no folder (there are ${folders.join(', ')})`;
  }
  return undefined;
}

interface IndexEntry {
  name: string;
  version?: string | number;
  state?: string;
  reason?: string;
}

/**
 * Each startup model that is not READY, with its cause: `folders` are the
 * model folders Triton polled at startup (by name), `index` is its model
 * index, `wanted` the models asked for by name (explicit mode) or undefined
 * for all of them.
 */
export function startupFailures(
  index: readonly IndexEntry[],
  folders: ReadonlyArray<{ repo: string; name: string }>,
  wanted: readonly string[] | undefined,
  options: { modelConfigName?: string | undefined; strictModelConfig: boolean },
): StartupFailure[] {
  const names = wanted ?? [...new Set([...folders.map((f) => f.name), ...index.map((e) => e.name)])].sort();
  const out: StartupFailure[] = [];
  for (const model of names) {
    const folder = folders.find((f) => f.name === model);
    const entries = index.filter((e) => e.name === model);
    if (folder === undefined && entries.length === 0) {
      out.push({ model, reason: 'not in the model repositories' });
      continue;
    }
    const versions = entries.filter((e) => e.state !== undefined);
    const failed = versions.filter((e) => e.state !== 'READY' && e.reason !== 'unloaded');
    if (versions.some((e) => e.state === 'READY') && failed.length === 0) continue;
    // With no version READY, a definite problem in the files is the cause, whatever state Triton left.
    const problem =
      folder === undefined || failed.length < versions.length
        ? undefined
        : modelFolderProblem(join(folder.repo, model), model, options);
    if (problem !== undefined) {
      out.push({ model, reason: problem });
      continue;
    }
    if (failed.length === 0) {
      out.push({ model, reason: 'Triton did not load it and gave no reason (its log says why)' });
      continue;
    }
    for (const e of failed) {
      const version = e.version === undefined || e.version === '' ? undefined : Number(e.version);
      const reason = `${e.state}${e.reason ? `: ${e.reason}` : ''}`;
      out.push(
        version === undefined || !Number.isFinite(version) ? { model, reason } : { model, version, reason },
      );
    }
  }
  return out;
}

/** "model 'x' version 1: reason" */
export function formatStartupFailure(f: StartupFailure): string {
  return `model '${f.model}'${f.version === undefined ? '' : ` version ${f.version}`}: ${f.reason}`;
}
