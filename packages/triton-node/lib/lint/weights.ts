/**
 * A model version's weight bytes: the files a backend loads into memory, read
 * from the version folder without loading anything. The model file a backend
 * opens (model.pt, model.onnx with its external data, model.plan,
 * model.savedmodel/, the config's default_model_filename), `*.safetensors`
 * and `*.bin` at any depth, and for a Python model everything under the
 * version folder (model.py loads what it keeps there). Sizes are the files'
 * lengths with symlinks followed: a model file is often a link to a shared
 * volume.
 * @internal
 */
import { type Stats, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ModelConfig } from '../config/model-config.js';
import { externalLocationProblem, findOnnxExternalData } from '../config/onnx-external-data.js';

/** The file each framework backend opens when the config names none. */
const MODEL_FILES = ['model.pt', 'model.onnx', 'model.plan', 'model.savedmodel', 'model.graphdef'];
/** Weight files by extension, wherever they are in the version folder. */
const WEIGHT_FILE = /\.(safetensors|bin)$/;

/** The backend a config names, or the one its platform is served by ('' when neither). */
export function backendOf(config: ModelConfig): string {
  if (config.backend !== undefined) return config.backend;
  const platform = config.platform ?? '';
  if (platform.startsWith('tensorflow_')) return 'tensorflow';
  return (
    { pytorch_libtorch: 'pytorch', onnxruntime_onnx: 'onnxruntime', tensorrt_plan: 'tensorrt' }[platform] ??
    platform
  );
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/**
 * Counts what is under `path` once per real file (a link cycle, or two links
 * to one file, count once); `select` picks the files of a folder walk.
 */
class Tally {
  bytes = 0;
  private readonly seen = new Set<string>();

  add(path: string, select: (name: string) => boolean = () => true): void {
    const real = realOrNull(path);
    const stat = statOrNull(path);
    if (real === null || stat === null || this.seen.has(real)) return;
    this.seen.add(real);
    if (stat.isFile()) {
      this.bytes += stat.size;
      return;
    }
    if (!stat.isDirectory()) return;
    for (const entry of readdirSync(path)) {
      const child = join(path, entry);
      const s = statOrNull(child);
      if (s?.isDirectory()) this.add(child, select);
      else if (s?.isFile() && select(entry)) this.add(child);
    }
  }
}

/**
 * The external data files an ONNX model names that lie in its folder
 * (paths relative to it, as onnx.proto says), read from the protobuf
 * without loading it; null for a file that does not parse as one. A
 * location outside the folder is not the model's to count (the
 * onnx-external-data rule reports it).
 */
export function onnxExternalDataFiles(file: string): string[] | null {
  let found: ReturnType<typeof findOnnxExternalData>;
  try {
    found = findOnnxExternalData(file);
  } catch {
    return null;
  }
  const dir = dirname(file);
  const locations = new Set(found.map((f) => f.location));
  return [...locations].filter((l) => externalLocationProblem(l, dir, dir) === undefined);
}

/** The weight bytes of one version folder of a model with `config`. */
export function versionWeightBytes(versionDir: string, config: ModelConfig): number {
  const tally = new Tally();
  if (backendOf(config) === 'python') {
    tally.add(versionDir);
    return tally.bytes;
  }
  const named = config.default_model_filename;
  for (const name of named === undefined ? MODEL_FILES : [named, ...MODEL_FILES]) {
    const path = join(versionDir, name);
    const stat = statOrNull(path);
    if (stat === null) continue;
    tally.add(path);
    if (stat.isFile() && name.endsWith('.onnx')) {
      for (const location of onnxExternalDataFiles(path) ?? []) tally.add(join(versionDir, location));
    }
  }
  tally.add(versionDir, (name) => WEIGHT_FILE.test(name));
  return tally.bytes;
}
