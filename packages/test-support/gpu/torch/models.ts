/**
 * The GPU models of test/gpu/torch/make_models.py, made at test (or bench)
 * time with the machine's torch: real architectures, random weights, never
 * committed. Shared by test/gpu/torch-models.test.ts and bench/torch.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAKE_MODELS = fileURLToPath(new URL('./make_models.py', import.meta.url));

/** The Python to make the models with: TRITON_NODE_TORCH_PYTHON, else the GPU machine's venv, else python3. */
export function torchPython(): string {
  const given = process.env.TRITON_NODE_TORCH_PYTHON;
  if (given) return given;
  const venv = '/opt/torch/.venv/bin/python';
  return existsSync(venv) ? venv : 'python3';
}

/** Why the models cannot be made here (a Python without torch and CUDA, its own words), or false. */
export function torchMissing(python = torchPython()): string | false {
  const probe = spawnSync(
    python,
    [
      '-c',
      'import torch, torchvision, transformers, tokenizers; assert torch.cuda.is_available(), "no CUDA"',
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (probe.error) return `${python}: ${probe.error.message}`;
  if (probe.status !== 0) {
    const last = probe.stderr.trim().split('\n').pop() ?? `exit ${probe.status}`;
    return `${python} cannot make the GPU models (torch, torchvision, transformers, tokenizers with CUDA): ${last}`;
  }
  return false;
}

export interface RefFile {
  file: string;
  shape: number[];
}

export interface Manifest {
  torch: string;
  cuda: string;
  cudnn: number;
  gpu: string;
  tf32: { cudnn: boolean; matmul: boolean };
  resnet50: {
    images: number;
    inputs: RefFile;
    single: RefFile;
    batched: RefFile;
    singleVsBatchedMaxAbs: number;
    weightBytes: number;
  };
  encoder: {
    texts: { file: string; count: number };
    single: RefFile;
    batched: RefFile;
    singleVsBatchedMaxAbs: number;
    size: number;
    weightBytes: number;
  };
}

/**
 * Runs a model generator (`args[0]` a script) with `python`; rejects with its
 * output when it fails or runs past 10 minutes. Not spawnSync: making models
 * takes minutes, which a test's vitest worker must spend answering its runner
 * (its calls time out after 60 s).
 */
export async function runGenerator(python: string, args: string[]): Promise<string> {
  const run = await new Promise<{ status: number | null; error?: Error; stdout: string; stderr: string }>(
    (resolve) => {
      const child = spawn(python, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let error: Error | undefined;
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      const timer = setTimeout(() => {
        error = new Error('ran past 600 s');
        child.kill('SIGTERM');
      }, 600_000);
      child.on('error', (e) => {
        error = e;
      });
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr, ...(error === undefined ? {} : { error }) });
      });
    },
  );
  if (run.status !== 0) {
    const script = args[0]?.split('/').pop() ?? python;
    throw new Error(
      `${script} failed (${run.error?.message ?? `exit ${run.status}`}):\n${run.stderr}\n${run.stdout}`,
    );
  }
  return run.stdout;
}

/**
 * Makes the models into `dir` (unless its manifest is there already) and
 * returns the manifest. Rejects with the generator's output when it fails.
 */
export async function makeGpuModels(
  dir: string,
  options: { onnx?: boolean; python?: string } = {},
): Promise<Manifest> {
  const manifestPath = join(dir, 'references', 'manifest.json');
  if (!existsSync(manifestPath)) {
    await runGenerator(options.python ?? torchPython(), [
      MAKE_MODELS,
      '--out',
      dir,
      ...(options.onnx ? ['--onnx'] : []),
    ]);
  }
  return JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
}

/** A reference file of float32 values. */
export function readF32(dir: string, ref: RefFile): Float32Array {
  const bytes = readFileSync(join(dir, 'references', ref.file));
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice();
}

export function readTexts(dir: string, manifest: Manifest): string[] {
  return JSON.parse(readFileSync(join(dir, 'references', manifest.encoder.texts.file), 'utf8')) as string[];
}

/** Row `i` of a [rows, width] array. */
export function row(values: Float32Array, i: number, width: number): Float32Array {
  return values.subarray(i * width, (i + 1) * width);
}

/** The largest absolute difference between two arrays of one length. */
export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`lengths differ: ${a.length} and ${b.length}`);
  let max = 0;
  for (let i = 0; i < a.length; i += 1) {
    const d = Math.abs(a[i]! - b[i]!);
    if (d > max || Number.isNaN(d)) max = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
  }
  return max;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}
