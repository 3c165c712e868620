/**
 * What the lint rules look at: one model folder of a repository, read once
 * (its config with the position of each field, its version folders, the
 * bytes of its weight files, a vLLM backend's engine arguments).
 * @internal
 */
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readRepositoryFileSync } from '../config/files.js';
import type { ModelConfig } from '../config/model-config.js';
import { type TextPosition, parseModelConfigTextWithPositions } from '../config/pbtxt.js';
import { versionWeightBytes } from './weights.js';

export type Severity = 'error' | 'warning' | 'info';

/** One finding, ESLint-like: where, which rule, how bad, what, and the fix. */
export interface LintFinding {
  rule: string;
  severity: Severity;
  model: string;
  /** The file the finding is about (absolute). */
  file: string;
  line: number;
  column: number;
  message: string;
  fix?: string;
}

export interface LintOptions {
  /** 'online' (default: latency matters, queue delays of 100 µs–10 ms) or 'offline' (throughput). */
  profile?: 'online' | 'offline';
  /** GPUs on the machine the models will run on. */
  gpus?: number;
  /**
   * Memory of each GPU, bytes (for `instance-count-memory` and
   * `gpu-memory-budget`); without it, `gpu-memory-budget` reads the memory
   * of this machine's GPUs, and says so where it sees none.
   */
  gpuMemoryBytes?: number;
  /** Host memory the models' CPU instances may use, bytes (for `instance-count-memory`). */
  hostMemoryBytes?: number;
  /** Read `configs/<name>.pbtxt` where present (the server option `modelConfigName`). */
  modelConfigName?: string;
  /** The server options the repository is served with (for `explicit-control`). */
  serverOptions?: { modelControlMode?: string };
  /** The file `serverOptions` came from, for the finding's location. */
  serverOptionsFile?: string;
  /** Rules to leave out, by id. */
  disable?: readonly string[];
}

/** A model folder, read for the rules. */
export interface LintModel {
  name: string;
  dir: string;
  /** The config file (absolute), and its text; undefined when the folder has none. */
  configFile: string | undefined;
  config: ModelConfig;
  /** Where each field of the config starts ('input[0].dims'...). */
  positions: Map<string, TextPosition>;
  /** Numeric version folders, sorted. */
  versions: number[];
  /** Folder entries that look like versions but are not plain numeric folders (symlinks, 'latest'...). */
  oddEntries: Array<{ name: string; symlink: boolean }>;
  /** Weight bytes of the largest version (what one instance holds; lib/lint/weights.ts says which files count). */
  weightBytes: number;
  /** Weight bytes of each numeric version. */
  versionBytes: Map<number, number>;
  /** A vLLM backend's engine arguments (`<version>/model.json`), the file and its text. */
  engineArgs?: { file: string; text: string; values: Record<string, unknown> };
}

/** Entries of a model folder that are neither versions nor what Triton expects beside them. */
const NOT_VERSIONS = new Set(['config.pbtxt', 'configs', 'deployments.jsonl']);

export function readLintModel(dir: string, name: string, options: LintOptions): LintModel {
  const custom =
    options.modelConfigName === undefined
      ? undefined
      : join(dir, 'configs', `${options.modelConfigName}.pbtxt`);
  const configFile =
    custom !== undefined && existsSync(custom)
      ? custom
      : existsSync(join(dir, 'config.pbtxt'))
        ? join(dir, 'config.pbtxt')
        : undefined;
  let config: ModelConfig = {};
  let positions = new Map<string, TextPosition>();
  if (configFile !== undefined) {
    const parsed = parseModelConfigTextWithPositions(readRepositoryFileSync(configFile));
    config = parsed.config as ModelConfig;
    positions = parsed.positions;
  }
  const versions: number[] = [];
  const oddEntries: LintModel['oddEntries'] = [];
  const versionBytes = new Map<number, number>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || NOT_VERSIONS.has(entry.name)) continue;
    const symlink = lstatSync(join(dir, entry.name)).isSymbolicLink();
    if (/^[0-9]+$/.test(entry.name) && entry.isDirectory() && !symlink) {
      versions.push(Number(entry.name));
      versionBytes.set(Number(entry.name), versionWeightBytes(join(dir, entry.name), config));
    } else if (symlink || entry.isDirectory()) {
      oddEntries.push({ name: entry.name, symlink });
    }
  }
  versions.sort((a, b) => a - b);
  const weightBytes = Math.max(0, ...versionBytes.values());
  const model: LintModel = {
    name,
    dir,
    configFile,
    config,
    positions,
    versions,
    oddEntries,
    weightBytes,
    versionBytes,
  };
  const latest = versions.at(-1);
  if (latest !== undefined) {
    const file = join(dir, String(latest), 'model.json');
    if (existsSync(file)) {
      const text = readRepositoryFileSync(file);
      try {
        const values = JSON.parse(text) as unknown;
        if (typeof values === 'object' && values !== null && !Array.isArray(values)) {
          model.engineArgs = { file, text, values: values as Record<string, unknown> };
        }
      } catch {
        model.engineArgs = { file, text, values: {} };
      }
    }
  }
  return model;
}

/** Line and column of `"key"` in a JSON text (1:1 when absent). */
export function jsonKeyPosition(text: string, key: string): TextPosition {
  const at = text.indexOf(`"${key}"`);
  if (at < 0) return { line: 1, column: 1 };
  const before = text.slice(0, at).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/**
 * A Python-backend LLM's `gpu_memory_utilization` config.pbtxt parameter
 * (the share of its GPU's memory its weights and KV cache may take, as
 * vLLM's engine argument means it), with the parameter's index; undefined
 * for any other model, or a value that is not a number.
 */
export function pythonLlmUtilization(m: LintModel): { value: number; index: number } | undefined {
  if (m.config.backend !== 'python') return undefined;
  const params = (m.config.parameters ?? {}) as Record<string, { string_value?: unknown }>;
  const index = Object.keys(params).indexOf('gpu_memory_utilization');
  if (index < 0) return undefined;
  const value = Number(params.gpu_memory_utilization?.string_value);
  return Number.isNaN(value) ? undefined : { value, index };
}
