/**
 * The files a model's backend opens at load, checked before Triton sees
 * the load: the model file (`default_model_filename`, else the backend's
 * own name for it) in each version folder the config's version policy
 * serves. A FIFO there makes the backend's open wait for a writer for good
 * (r25.07's onnxruntime backend: the load never returns, and the server's
 * stop waits for it); a link to /dev/zero is read until memory runs out.
 * Such a file is refused, naming it.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readRepositoryFileSync } from './files.js';
import { type ModelConfig, parseModelConfig } from './model-config.js';

/**
 * The version folders (numbers) of `dir` that a load with `config`'s
 * version policy serves: all of them, the ones `specific` names, or the
 * `latest` N (default 1).
 */
export function servedVersions(dir: string, config: ModelConfig): number[] {
  let versions: number[];
  try {
    versions = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^[0-9]+$/.test(e.name))
      .map((e) => Number(e.name))
      .sort((a, b) => a - b);
  } catch {
    return []; // no folder: Triton says so in its own words
  }
  const policy = config.version_policy;
  if (policy?.all !== undefined) return versions;
  if (policy?.specific !== undefined) {
    const wanted = (policy.specific.versions ?? []).map(Number);
    return versions.filter((v) => wanted.includes(v));
  }
  const n = Number(policy?.latest?.num_versions ?? 1);
  return versions.slice(-Math.max(1, n));
}

/** The model file each backend opens when the config names none (Triton's defaults). */
const DEFAULT_MODEL_FILES: Record<string, string> = {
  onnxruntime: 'model.onnx',
  onnxruntime_onnx: 'model.onnx',
  python: 'model.py',
  pytorch: 'model.pt',
  pytorch_libtorch: 'model.pt',
  tensorrt: 'model.plan',
  tensorrt_plan: 'model.plan',
  openvino: 'model.xml',
  tensorflow_graphdef: 'model.graphdef',
};

/** The file name the model's backend opens in each version folder, if known. */
export function modelFileName(config: ModelConfig): string | undefined {
  if (config.default_model_filename) return config.default_model_filename;
  return DEFAULT_MODEL_FILES[config.backend || ''] ?? DEFAULT_MODEL_FILES[config.platform || ''];
}

/** The config a load of `dir` reads (`configFile`, default dir/config.pbtxt), or undefined when Triton will refuse it itself. */
export function repositoryModelConfig(
  dir: string,
  configFile = join(dir, 'config.pbtxt'),
): ModelConfig | undefined {
  try {
    return parseModelConfig(readRepositoryFileSync(configFile));
  } catch {
    return undefined;
  }
}

function kindOf(path: string): string | undefined {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path); // links followed, as the backend's open does
  } catch {
    return undefined; // absent: the backend says so in its own words
  }
  if (stats.isFile() || stats.isDirectory()) return undefined;
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The first model file of `dir` that a load with `config` would open and
 * that is not a regular file (nor a folder), said as `cannot read <path>:
 * it is a FIFO, not a regular file`; undefined when there is none. A
 * folder named as an ONNX model holds the file as `<folder>/model.onnx`.
 */
export function unreadableModelFile(dir: string, config: ModelConfig): string | undefined {
  const file = modelFileName(config);
  if (file === undefined) return undefined;
  const onnx =
    DEFAULT_MODEL_FILES[config.backend || ''] === 'model.onnx' || config.platform === 'onnxruntime_onnx';
  for (const version of servedVersions(dir, config)) {
    const paths = [join(dir, String(version), file)];
    if (onnx) paths.push(join(paths[0]!, 'model.onnx'));
    for (const path of paths) {
      const kind = kindOf(path);
      if (kind !== undefined) return `cannot read ${path}: it is ${kind}, not a regular file`;
    }
  }
  return undefined;
}
