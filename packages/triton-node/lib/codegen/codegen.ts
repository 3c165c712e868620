/**
 * `triton-node types`: TypeScript model specs (see lib/request/typed.ts) written from
 * the `config.pbtxt` files of model repositories, so that
 * `server.model<Models['name']>('name')` types requests and results by the
 * config's input and output names and datatypes.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type DataType, isDataType } from '../config/datatypes.js';
import { readRepositoryFileSync } from '../config/files.js';
import { parseModelConfigText } from '../config/pbtxt.js';

export interface ModelTypesOptions {
  /** Read `configs/<name>.pbtxt` where a model has it (as the server option `modelConfigName`). */
  modelConfigName?: string;
  /** The module the specs import `ModelSpec` from (default 'triton-node'). */
  importFrom?: string;
}

/** One model the generator read, or could not. */
export interface ModelTypesEntry {
  model: string;
  /** The config file read. */
  config?: string;
  /** Why no spec was written (no config, a config that does not parse, an unknown datatype). */
  skipped?: string;
}

export interface ModelTypesOutput {
  /** The `.d.ts` text. */
  text: string;
  models: ModelTypesEntry[];
}

interface IoEntry {
  name: string;
  datatype: DataType;
  optional: boolean;
}

/** `TYPE_FP32` → 'FP32' (TYPE_STRING is BYTES, as Triton names it on the wire). */
function datatypeOf(configType: unknown): DataType | undefined {
  if (typeof configType !== 'string' || !configType.startsWith('TYPE_')) return undefined;
  const name = configType.slice(5);
  if (name === 'STRING') return 'BYTES';
  return isDataType(name) ? name : undefined;
}

function ioList(config: Record<string, unknown>, field: 'input' | 'output', model: string): IoEntry[] {
  const list = config[field];
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${field} is not a list`);
  return list.map((raw, i) => {
    const io = raw as Record<string, unknown>;
    if (typeof io.name !== 'string' || io.name === '') throw new Error(`${field}[${i}] has no name`);
    const datatype = datatypeOf(io.data_type);
    if (datatype === undefined) {
      throw new Error(`${field} '${io.name}' of model '${model}' has data_type ${String(io.data_type)}`);
    }
    return { name: io.name, datatype, optional: io.optional === true };
  });
}

/**
 * Text from a config (or a path) inside a generated comment, made inert: a
 * line terminator would end a `//` comment and a star-slash a block comment,
 * and what follows would be code that runs when the module is imported.
 * Control characters, U+2028 and U+2029 are written as `\uXXXX` escapes,
 * and a backslash goes between the star and the slash.
 */
function commentText(text: string): string {
  return text
    .replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
      /[\u0000-\u001f\u007f\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    )
    .replace(/\*\//g, '*\\/');
}

/**
 * A TypeScript property name: the name itself where it is an identifier,
 * else a JSON string (U+2028 and U+2029 escaped too, as JSON leaves them).
 */
function propertyName(name: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(name)) return name;
  return JSON.stringify(name).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/** identity_fp32 → IdentityFp32; a leading digit gets a `Model` prefix. */
function interfaceName(model: string, taken: Set<string>): string {
  let name = model
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p !== '')
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
  if (name === '' || /^\d/.test(name)) name = `Model${name}`;
  let unique = name;
  for (let n = 2; taken.has(unique); n++) unique = `${name}${n}`;
  taken.add(unique);
  return unique;
}

function members(list: IoEntry[], indent: string): string {
  if (list.length === 0) return '{}';
  const lines = list.map(
    (io) => `${indent}  ${propertyName(io.name)}${io.optional ? '?' : ''}: '${io.datatype}';`,
  );
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/** The model folders of the repositories, first repository first (Triton refuses a name in two). */
function modelFolders(repositories: readonly string[]): Array<{ model: string; dir: string }> {
  const out: Array<{ model: string; dir: string }> = [];
  for (const repo of repositories) {
    const root = resolve(repo);
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new TypeError(`triton-node types: the model repository '${root}' is not a directory`);
    }
    for (const entry of readdirSync(root, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      if (entry.isDirectory() && !entry.name.startsWith('.'))
        out.push({ model: entry.name, dir: join(root, entry.name) });
    }
  }
  return out;
}

/**
 * Writes a `ModelSpec` interface per model of the repositories, and a
 * `Models` interface that maps each model name to its spec. Models without a
 * config file, or whose config cannot be read, are listed in `models` with
 * the reason (and in a comment of the text) and get no spec.
 */
export function modelTypes(
  repositories: string | readonly string[],
  options: ModelTypesOptions = {},
): ModelTypesOutput {
  const repos = typeof repositories === 'string' ? [repositories] : [...repositories];
  if (repos.length === 0) throw new TypeError('triton-node types: no model repository given');
  const importFrom = options.importFrom ?? 'triton-node';
  const taken = new Set(['ModelSpec', 'Models']);
  const blocks: string[] = [];
  const map: string[] = [];
  const models: ModelTypesEntry[] = [];
  for (const { model, dir } of modelFolders(repos)) {
    const custom =
      options.modelConfigName === undefined
        ? undefined
        : join(dir, 'configs', `${options.modelConfigName}.pbtxt`);
    const file = custom !== undefined && existsSync(custom) ? custom : join(dir, 'config.pbtxt');
    if (!existsSync(file)) {
      models.push({
        model,
        skipped: 'no config.pbtxt (a config Triton completes itself has no names to type)',
      });
      continue;
    }
    let inputs: IoEntry[];
    let outputs: IoEntry[];
    let config: Record<string, unknown>;
    try {
      config = parseModelConfigText(readRepositoryFileSync(file));
      inputs = ioList(config, 'input', model);
      outputs = ioList(config, 'output', model);
    } catch (err) {
      models.push({ model, config: file, skipped: (err as Error).message });
      continue;
    }
    const name = interfaceName(model, taken);
    const about = [
      typeof config.backend === 'string' && config.backend !== '' ? `backend ${config.backend}` : undefined,
      typeof config.platform === 'string' && config.platform !== ''
        ? `platform ${config.platform}`
        : undefined,
      `max_batch_size ${typeof config.max_batch_size === 'number' ? config.max_batch_size : 0}`,
    ].filter((s) => s !== undefined);
    blocks.push(
      [
        `/** Model '${commentText(model)}' (${commentText(about.join(', '))}). */`,
        `export interface ${name} extends ModelSpec {`,
        `  inputs: ${members(inputs, '  ')};`,
        `  outputs: ${members(outputs, '  ')};`,
        '}',
      ].join('\n'),
    );
    map.push(`  ${propertyName(model)}: ${name};`);
    models.push({ model, config: file });
  }
  const skipped = models.filter((m) => m.skipped !== undefined);
  const header = [
    '// Model specs written by `triton-node types` from the configs of:',
    ...repos.map((r) => `//   ${commentText(resolve(r))}`),
    '// Run it again after a config changes; edits here are lost.',
    ...(skipped.length > 0
      ? ['// No spec for:', ...skipped.map((m) => `//   ${commentText(`${m.model}: ${m.skipped}`)}`)]
      : []),
    `import type { ModelSpec } from ${JSON.stringify(importFrom)};`,
  ];
  const index = [
    "/** Every model above by name: `server.model<Models['name']>('name')`. */",
    'export interface Models {',
    ...map,
    '}',
  ];
  return { text: `${[header.join('\n'), ...blocks, index.join('\n')].join('\n\n')}\n`, models };
}
