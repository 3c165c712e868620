/**
 * `triton-node tune --repository R --model M --sla-p99 20ms [--concurrency 1,8,32]
 * [--instances 1,2,4] [--preferred 2,4,8] [--queue-delays 100,1000]
 * [--duration 3s] [--warmup 300ms] [--input NAME=DTYPE:1x16]... [--library L]
 * [--fake-engine] [--backend-dir D] [--out DIR] [--force]`. --fake-engine runs
 * on triton-node's fake engine with the example models unless a repository is
 * given, as `serve --fake-engine` does. Exit code: 0 a pick within the
 * SLA, 1 none, 2 a usage or start error, 130 stopped by SIGINT (the original
 * config put back first).
 * @internal
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type DataType, isDataType } from '../../config/datatypes.js';
import type { Server, ServerOptions } from '../../index.js';
import type { InputValue } from '../../request/types.js';
import type { TuneOptions, TuneResult } from '../../tune/index.js';
import { progressReporter } from '../../tune/progress.js';
import { tuneReportHtml, tuneSummaryText } from '../../tune/report.js';

export const TUNE_USAGE =
  'usage: triton-node tune --repository <dir> --model <name> --sla-p99 <time> [--concurrency 1,8,32]\n' +
  '                        [--instances 1,2] [--preferred 2,4,8] [--queue-delays 100,500,1000] [--duration 3s]\n' +
  '                        [--warmup 300ms] [--input NAME=DTYPE:1x16]... [--library <libtritonserver.so>]\n' +
  '                        [--fake-engine] [--backend-dir <dir>] [--out <dir>] [--force]\n' +
  "Runs Triton's dynamic batching procedure on the model in-process; writes a report and the recommended config.\n" +
  "--fake-engine runs on triton-node's fake engine (no Triton, no GPU), with the example models the package\n" +
  "ships unless a repository is given: a trial of the command, whose timings are not a real backend's.\n";

/** '20ms', '3s', '500us', '20' (ms) → ms. */
export function parseMs(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(us|µs|ms|s)?$/.exec(text.trim());
  if (m === null) throw new TypeError(`${option}: a time such as 20ms, 3s or 500us, got '${text}'`);
  const v = Number(m[1]);
  return m[2] === 's' ? v * 1000 : m[2] === 'us' || m[2] === 'µs' ? v / 1000 : v;
}

function list(text: string, option: string): number[] {
  const out = text.split(',').map((s) => Number(s.trim()));
  if (out.length === 0 || !out.every((n) => Number.isInteger(n) && n >= 0)) {
    throw new TypeError(`${option}: a comma-separated list of integers, got '${text}'`);
  }
  return out;
}

/** 'INPUT0=FP32:1x16' → zeros of that datatype and shape. */
function inputOf(spec: string): [string, InputValue] {
  const m = /^([^=]+)=([A-Z0-9]+):(\d+(?:x\d+)*)$/.exec(spec);
  if (m === null || !isDataType(m[2]))
    throw new TypeError(`--input: NAME=DTYPE:SHAPE such as INPUT0=FP32:1x16, got '${spec}'`);
  const datatype = m[2] as DataType;
  const shape = m[3]!.split('x').map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  if (datatype === 'BYTES') return [m[1]!, { data: Array.from({ length: count }, () => 'x'), shape }];
  if (datatype === 'BOOL') return [m[1]!, { data: Array.from({ length: count }, () => false), shape }];
  const bytes = {
    UINT64: 8,
    INT64: 8,
    FP64: 8,
    UINT32: 4,
    INT32: 4,
    FP32: 4,
    UINT16: 2,
    INT16: 2,
    FP16: 2,
    BF16: 2,
  }[datatype as string];
  return [m[1]!, { data: new DataView(new ArrayBuffer(count * (bytes ?? 1))), shape, datatype }];
}

/**
 * What the command needs from the library, passed in: the CLI imports the
 * package by name (one copy of the library), tests pass the sources.
 */
export interface TuneCommandLibrary {
  createServer(options: ServerOptions): Promise<Server>;
  tune(server: Server, name: string, options: TuneOptions): Promise<TuneResult>;
  /** For --fake-engine: triton-node's fake engine (`triton-node/testing`) and the example models. */
  fakeEngine: { libraryPath: string; available(): boolean; exampleModels(): string };
}

const TUNE_ARGS = {
  repository: { type: 'string' },
  model: { type: 'string' },
  'sla-p99': { type: 'string' },
  concurrency: { type: 'string' },
  instances: { type: 'string' },
  preferred: { type: 'string' },
  'queue-delays': { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  input: { type: 'string', multiple: true },
  library: { type: 'string' },
  'fake-engine': { type: 'boolean' },
  'backend-dir': { type: 'string' },
  out: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

type Values = Record<string, string | string[] | boolean | undefined>;

interface TuneArguments {
  repository: string;
  model: string;
  options: TuneOptions;
  /** The library to start, when one is named (--library, or the fake engine's). */
  library?: string;
}

/** What to tune and how, from the command's arguments; a TypeError names a mistake. */
function tuneArguments(values: Values, lib: TuneCommandLibrary): TuneArguments {
  const fake = values['fake-engine'] === true;
  if (fake && typeof values.library === 'string')
    throw new TypeError('--fake-engine and --library name two libraries: give one of them');
  // As serve --fake-engine: the example models unless a repository is given.
  if (fake && typeof values.repository !== 'string') values.repository = lib.fakeEngine.exampleModels();
  if (typeof values.repository !== 'string') throw new TypeError('--repository is required');
  if (typeof values.model !== 'string') throw new TypeError('--model is required');
  if (typeof values['sla-p99'] !== 'string') throw new TypeError('--sla-p99 is required (e.g. 20ms)');
  const options: TuneOptions = { slaP99Ms: parseMs(values['sla-p99'], '--sla-p99') };
  const text = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const c = text('concurrency');
  if (c !== undefined) options.concurrency = list(c, '--concurrency');
  const n = text('instances');
  if (n !== undefined) options.instances = list(n, '--instances');
  const p = text('preferred');
  if (p !== undefined) options.preferredBatchSizes = list(p, '--preferred');
  const d = text('queue-delays');
  if (d !== undefined) options.queueDelaysUs = list(d, '--queue-delays');
  const duration = text('duration');
  if (duration !== undefined) options.durationMs = Math.round(parseMs(duration, '--duration'));
  const warmup = text('warmup');
  if (warmup !== undefined) options.warmupMs = Math.round(parseMs(warmup, '--warmup'));
  if (Array.isArray(values.input)) options.inputs = Object.fromEntries(values.input.map(inputOf));
  if (values.force === true) options.force = true;
  const library = fake ? lib.fakeEngine.libraryPath : text('library');
  return {
    repository: resolve(values.repository),
    model: values.model,
    options,
    ...(library === undefined ? {} : { library }),
  };
}

/** Writes the report, the JSON and the recommended config, and prints where. */
function writeResults(result: TuneResult, out: string, model: string): void {
  mkdirSync(out, { recursive: true });
  const stem = join(out, `tune-${model}-${result.startedAt.replace(/[:.]/g, '-')}`);
  writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${stem}.html`, tuneReportHtml(result));
  if (result.configText !== undefined) writeFileSync(`${stem}.pbtxt`, result.configText);
  const config = result.configText === undefined ? '' : `config: ${stem}.pbtxt\n`;
  process.stdout.write(`report: ${stem}.html\njson:   ${stem}.json\n${config}`);
}

/** A server on the repository with the model loaded; undefined (after saying why) when it cannot start. */
async function startServer(lib: TuneCommandLibrary, values: Values, what: TuneArguments) {
  const { repository, model, library } = what;
  if (values['fake-engine'] === true) {
    if (!lib.fakeEngine.available()) {
      process.stderr.write(
        `triton-node tune: the fake engine is not here (${lib.fakeEngine.libraryPath}): run npx triton-node doctor\n`,
      );
      return undefined;
    }
    process.stderr.write(
      `triton-node tune: on triton-node's fake engine (not Triton), models from ${repository}: ` +
        "the timings are the fake's, not a real backend's\n",
    );
  }
  try {
    const server = await lib.createServer({
      modelRepository: repository,
      ...(library === undefined ? {} : { library }),
      ...(typeof values['backend-dir'] === 'string' ? { backendDirectory: values['backend-dir'] } : {}),
    });
    await server.loadModel(model);
    return server;
  } catch (err) {
    process.stderr.write(`triton-node tune: ${(err as Error).message}\n`);
    return undefined;
  }
}

export async function tuneCommand(args: string[], lib: TuneCommandLibrary): Promise<number> {
  let values: Values;
  let what: TuneArguments;
  try {
    values = parseArgs({ args, strict: true, options: TUNE_ARGS }).values;
    if (values.help === true) {
      process.stdout.write(TUNE_USAGE);
      return 0;
    }
    what = tuneArguments(values, lib);
  } catch (err) {
    process.stderr.write(`triton-node tune: ${(err as Error).message}\n${TUNE_USAGE}`);
    return 2;
  }
  const { model, options } = what;
  const server = await startServer(lib, values, what);
  if (server === undefined) return 2;
  const abort = new AbortController();
  const onSigint = () => {
    process.stderr.write('\ntriton-node tune: stopping; putting the original config back\n');
    abort.abort();
  };
  process.once('SIGINT', onSigint);
  options.signal = abort.signal;
  const progress = progressReporter(process.stderr);
  options.onProgress = progress.onProgress;
  try {
    const result = await lib.tune(server, model, options);
    progress.end();
    process.stdout.write(tuneSummaryText(result));
    writeResults(result, resolve(typeof values.out === 'string' ? values.out : 'tune-results'), model);
    return result.best !== undefined && result.recheck?.meetsSla !== false ? 0 : 1;
  } catch (err) {
    progress.end();
    if (abort.signal.aborted) {
      process.stderr.write('triton-node tune: stopped; the original config is back\n');
      return 130;
    }
    process.stderr.write(`triton-node tune: ${(err as Error).message}\n`);
    return 2;
  } finally {
    process.off('SIGINT', onSigint);
    await server.stop();
  }
}
