/**
 * The file a Python model needs before its load: `model.py` (or the file
 * `default_model_filename` names) in each version folder the load takes
 * (the config's version policy: the latest N, specific versions, or all).
 * r25.07's python backend starts the model's stub, which finds the file
 * missing and exits before it reports to the server; the backend waits for
 * that report without end, so the load never returns. triton-node refuses
 * such a load itself, in the stub's words, on every library.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelConfig } from './model-config.js';
import { servedVersions } from './model-files.js';

/**
 * The missing file of a Python model in repository folder `dir` loaded with
 * `config`, as the stub words it (`Python model file not found in
 * '<path>'`), or undefined (not a Python model, or its files there).
 */
export function missingPythonModelFile(dir: string, config: ModelConfig): string | undefined {
  if (config.backend !== 'python') return undefined;
  const file = config.default_model_filename || 'model.py';
  for (const version of servedVersions(dir, config)) {
    const path = join(dir, String(version), file);
    if (!existsSync(path)) return `Python model file not found in '${path}'`;
  }
  return undefined;
}
