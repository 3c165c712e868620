/**
 * `triton-node types --repository R [--repository R2] [--out F]
 * [--model-config-name N] [--import-from M]`: writes the model specs of
 * lib/codegen/codegen.ts to F (or stdout). Returns the exit code: 0 written (models
 * without a spec are listed on stderr), 2 for a usage error.
 * @internal
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { modelTypes } from '../../codegen/codegen.js';

export const TYPES_USAGE =
  'usage: triton-node types --repository <dir> [--repository <dir>...] [--out <file.d.ts>]\n' +
  '                         [--model-config-name <name>] [--import-from <module>]\n' +
  "Writes a TypeScript ModelSpec per model from its config.pbtxt, for server.model<Models['name']>('name').\n";

export function typesCommand(args: string[]): number {
  let values: {
    repository?: string[];
    out?: string;
    'model-config-name'?: string;
    'import-from'?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        repository: { type: 'string', multiple: true, short: 'r' },
        out: { type: 'string', short: 'o' },
        'model-config-name': { type: 'string' },
        'import-from': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`triton-node types: ${(err as Error).message}\n${TYPES_USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(TYPES_USAGE);
    return 0;
  }
  if (values.repository === undefined || values.repository.length === 0) {
    process.stderr.write(`triton-node types: --repository is required\n${TYPES_USAGE}`);
    return 2;
  }
  let out: ReturnType<typeof modelTypes>;
  try {
    out = modelTypes(values.repository, {
      ...(values['model-config-name'] === undefined ? {} : { modelConfigName: values['model-config-name'] }),
      ...(values['import-from'] === undefined ? {} : { importFrom: values['import-from'] }),
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  for (const m of out.models) {
    if (m.skipped !== undefined)
      process.stderr.write(`triton-node types: no spec for '${m.model}': ${m.skipped}\n`);
  }
  if (values.out === undefined) process.stdout.write(out.text);
  else writeFileSync(values.out, out.text);
  const written = out.models.filter((m) => m.skipped === undefined).length;
  if (values.out !== undefined)
    process.stderr.write(`triton-node types: ${written} model spec(s) written to ${values.out}\n`);
  return 0;
}
