/**
 * The file a Python model needs before its load: `model.py` (or the file
 * `default_model_filename` names) in each version folder the load takes.
 * r25.07's python backend starts the model's stub, which finds the file
 * missing and exits before it reports to the server; the backend waits for
 * that report without end, so the load never returns. triton-node refuses
 * such a load itself, in the stub's words, on every library.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readRepositoryFileSync } from './files.js';
import { type ModelConfig, parseModelConfig } from './model-config.js';

/** The version folders (numbers) of `dir` a load with `config`'s version policy takes. */
function chosenVersions(dir: string, config: ModelConfig): number[] {
  const versions = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^[0-9]+$/.test(e.name))
    .map((e) => Number(e.name))
    .sort((a, b) => a - b);
  const policy = config.version_policy;
  if (policy?.all !== undefined) return versions;
  if (policy?.specific !== undefined) {
    const wanted = (policy.specific.versions ?? []).map(Number);
    return versions.filter((v) => wanted.includes(v));
  }
  const n = Number(policy?.latest?.num_versions ?? 1);
  return versions.slice(-Math.max(1, n));
}

/**
 * The missing file of a Python model in repository folder `dir`, as the
 * stub words it (`Python model file not found in '<path>'`), or undefined
 * (not a Python model, its files there, or a config Triton itself will
 * refuse). `configFile`: the config to read (default `dir/config.pbtxt`).
 */
export function missingPythonModelFile(
  dir: string,
  configFile = join(dir, 'config.pbtxt'),
): string | undefined {
  let config: ModelConfig;
  try {
    config = parseModelConfig(readRepositoryFileSync(configFile));
  } catch {
    return undefined;
  }
  if (config.backend !== 'python') return undefined;
  const file = config.default_model_filename || 'model.py';
  for (const version of chosenVersions(dir, config)) {
    const path = join(dir, String(version), file);
    if (!existsSync(path)) return `Python model file not found in '${path}'`;
  }
  return undefined;
}
