/**
 * Finding ONNX Runtime's library: the one onnxruntime-node ships
 * (`bin/napi-v6/<platform>/<arch>/libonnxruntime.so.1`), resolved as the
 * application would resolve the package, never a dependency of triton-node.
 * The fake engine's onnxruntime backend computes with it (handed over as the
 * backend setting `fake-onnxruntime-library`), and `doctor` compares its
 * version with the Triton onnxruntime backend's.
 * @internal
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The environment variable naming a libonnxruntime.so.1 explicitly. */
export const ONNXRUNTIME_LIB_ENV = 'TRITON_NODE_ONNXRUNTIME_LIB';

/** onnxruntime-node as found: its folder, version and library (when its platform's is there). */
export interface OnnxRuntimeNode {
  dir: string;
  version: string | undefined;
  library: string | undefined;
}

/** Where ONNX Runtime's library is, or what was searched for it. */
export interface OnnxRuntimeLocation {
  library: string | undefined;
  /** What was tried, in words (for an error that says so). */
  searched: string;
}

function packageDir(name: string, from: string): string | undefined {
  const req = createRequire(join(from, 'noop.js'));
  for (const base of req.resolve.paths(name) ?? []) {
    if (existsSync(join(base, name, 'package.json'))) return join(base, name);
  }
  return undefined;
}

/** onnxruntime-node as the application (from `cwd`) or triton-node itself would resolve it. */
export function findOnnxRuntimeNode(cwd: string = process.cwd()): OnnxRuntimeNode | undefined {
  const dir =
    packageDir('onnxruntime-node', cwd) ??
    packageDir('onnxruntime-node', dirname(fileURLToPath(import.meta.url)));
  if (dir === undefined) return undefined;
  let version: string | undefined;
  try {
    version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    version = undefined;
  }
  const lib = join(dir, 'bin', 'napi-v6', process.platform, process.arch, 'libonnxruntime.so.1');
  return { dir, version, library: existsSync(lib) ? lib : undefined };
}

/** The ONNX Runtime library to use: TRITON_NODE_ONNXRUNTIME_LIB, else onnxruntime-node's. */
export function locateOnnxRuntime(cwd: string = process.cwd()): OnnxRuntimeLocation {
  const explicit = process.env[ONNXRUNTIME_LIB_ENV];
  if (explicit !== undefined && explicit !== '') return { library: explicit, searched: ONNXRUNTIME_LIB_ENV };
  const found = findOnnxRuntimeNode(cwd);
  if (found === undefined) {
    return {
      library: undefined,
      searched: `onnxruntime-node, not resolvable from ${cwd} nor from triton-node`,
    };
  }
  if (found.library === undefined) {
    return {
      library: undefined,
      searched: `onnxruntime-node at ${found.dir}, which has no libonnxruntime.so.1 for ${process.platform}-${process.arch}`,
    };
  }
  return { library: found.library, searched: `onnxruntime-node at ${found.dir}` };
}

/**
 * The backend settings that tell the fake engine's onnxruntime backend
 * where ONNX Runtime is, unless `backendConfig` already has them.
 */
export function fakeOnnxRuntimeSettings(
  backendConfig: ReadonlyArray<readonly [string, string, string]>,
): Array<[string, string, string]> {
  if (backendConfig.some(([b, s]) => b === 'onnxruntime' && s === 'fake-onnxruntime-library')) return [];
  const where = locateOnnxRuntime();
  return [
    ['onnxruntime', 'fake-onnxruntime-library', where.library ?? ''],
    ['onnxruntime', 'fake-onnxruntime-searched', where.searched],
  ];
}

/** The onnxruntime backend's thread count parameters. */
export const ONNX_THREAD_PARAMETERS = ['intra_op_thread_count', 'inter_op_thread_count'] as const;

/**
 * The most threads the fake engine gives one session (4 per core, at least
 * 64; native/fake/backends/onnxruntime_backend.cc counts the cores online
 * as os.cpus() does), and what lint warns above for real Triton.
 */
export function maxSessionThreads(cores = cpus().length): number {
  return Math.max(64, 4 * cores);
}

/** A thread count parameter that r25.07 refuses, aborts on, or takes and starts too many threads for. */
export interface OnnxThreadCountProblem {
  parameter: (typeof ONNX_THREAD_PARAMETERS)[number];
  value: string;
  /**
   * 'not-a-number': the backend refuses the load ("failed to convert");
   * 'out-of-range': beyond a C int, std::stoi throws and r25.07 aborts the
   * whole process (std::terminate); 'too-many': above maxSessionThreads,
   * each instance's session starts that many threads at load.
   */
  kind: 'not-a-number' | 'out-of-range' | 'too-many';
}

const INT_MAX = 2 ** 31 - 1;

/** The thread count parameters of an onnxruntime model that are a problem, read as the backend reads them (std::stoi). */
export function onnxThreadCountProblems(
  config: { backend?: string; platform?: string; parameters?: Record<string, unknown> },
  limit = maxSessionThreads(),
): OnnxThreadCountProblem[] {
  if (config.backend !== 'onnxruntime' && config.platform !== 'onnxruntime_onnx') return [];
  const out: OnnxThreadCountProblem[] = [];
  for (const parameter of ONNX_THREAD_PARAMETERS) {
    const raw = (config.parameters?.[parameter] as { string_value?: unknown } | undefined)?.string_value;
    if (typeof raw !== 'string') continue;
    // std::stoi: leading white space, a sign, then digits; the rest ignored.
    const leading = /^\s*([+-]?\d+)/.exec(raw)?.[1];
    if (leading === undefined) out.push({ parameter, value: raw, kind: 'not-a-number' });
    else if (Math.abs(Number(leading)) > INT_MAX) out.push({ parameter, value: raw, kind: 'out-of-range' });
    else if (Number(leading) > limit) out.push({ parameter, value: raw, kind: 'too-many' });
  }
  return out;
}
