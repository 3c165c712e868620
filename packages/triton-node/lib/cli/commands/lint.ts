/**
 * `triton-node lint <repository>... [--profile online|offline] [--gpus N]
 * [--gpu-memory GiB] [--host-memory GiB] [--server-options file.json] [--format text|json|sarif]
 * [--max-warnings N]`. Exit code: 0 clean (info allowed), 1 errors (or more
 * warnings than --max-warnings), 2 a usage error.
 * @internal
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatLintSarif, formatLintText, lint } from '../../lint/index.js';
import type { LintOptions } from '../../lint/model.js';

export const LINT_USAGE =
  'usage: triton-node lint <repository>... [--profile online|offline] [--gpus N] [--gpu-memory GiB]\n' +
  '                        [--host-memory GiB]\n' +
  '                        [--server-options file.json] [--format text|json|sarif] [--max-warnings N]\n' +
  "Checks model configs against Triton's guidance; rules: docs/lint/.\n" +
  "--gpu-memory: each GPU's memory (default: what CUDA says of this machine's GPUs).\n";

function fail(message: string): number {
  process.stderr.write(`triton-node lint: ${message}\n${LINT_USAGE}`);
  return 2;
}

export function lintCommand(args: string[]): number {
  let parsed: ReturnType<
    typeof parseArgs<{ options: Record<string, { type: 'string' | 'boolean' }>; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        profile: { type: 'string' },
        gpus: { type: 'string' },
        'gpu-memory': { type: 'string' },
        'host-memory': { type: 'string' },
        'server-options': { type: 'string' },
        format: { type: 'string' },
        'max-warnings': { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (err) {
    return fail((err as Error).message);
  }
  const v = parsed.values as Record<string, string | boolean | undefined>;
  if (v.help === true) {
    process.stdout.write(LINT_USAGE);
    return 0;
  }
  if (parsed.positionals.length === 0) return fail('give at least one model repository');
  const options: LintOptions = {};
  if (v.profile !== undefined) {
    if (v.profile !== 'online' && v.profile !== 'offline')
      return fail(`--profile: 'online' or 'offline', got '${v.profile}'`);
    options.profile = v.profile;
  }
  if (v.gpus !== undefined) {
    const n = Number(v.gpus);
    if (!Number.isInteger(n) || n < 0) return fail(`--gpus: a GPU count, got '${v.gpus}'`);
    options.gpus = n;
  }
  if (v['gpu-memory'] !== undefined) {
    const gib = Number(v['gpu-memory']);
    if (!(gib > 0)) return fail(`--gpu-memory: GiB per GPU, got '${v['gpu-memory']}'`);
    options.gpuMemoryBytes = gib * 1024 ** 3;
  }
  if (v['host-memory'] !== undefined) {
    const gib = Number(v['host-memory']);
    if (!(gib > 0)) return fail(`--host-memory: GiB for the CPU instances, got '${v['host-memory']}'`);
    options.hostMemoryBytes = gib * 1024 ** 3;
  }
  const file = v['server-options'];
  if (typeof file === 'string') {
    try {
      options.serverOptions = JSON.parse(readFileSync(file, 'utf8')) as { modelControlMode?: string };
      options.serverOptionsFile = file;
    } catch (err) {
      return fail(`--server-options: ${(err as Error).message}`);
    }
  }
  const format = (v.format as string | undefined) ?? 'text';
  if (!['text', 'json', 'sarif'].includes(format))
    return fail(`--format: text, json or sarif, got '${format}'`);
  let maxWarnings = Number.POSITIVE_INFINITY;
  if (v['max-warnings'] !== undefined) {
    maxWarnings = Number(v['max-warnings']);
    if (!Number.isInteger(maxWarnings) || maxWarnings < 0)
      return fail(`--max-warnings: a count, got '${v['max-warnings']}'`);
  }
  let report: ReturnType<typeof lint>;
  try {
    report = lint(parsed.positionals, options);
  } catch (err) {
    return fail((err as Error).message);
  }
  const text =
    format === 'json'
      ? `${JSON.stringify(report, null, 2)}\n`
      : format === 'sarif'
        ? formatLintSarif(report)
        : formatLintText(report);
  process.stdout.write(text);
  return report.errorCount > 0 || report.warningCount > maxWarnings ? 1 : 0;
}
