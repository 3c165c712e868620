/**
 * `doctor()`: what triton-node finds on this machine and what is missing,
 * as `triton-node doctor` prints it. It loads no Triton library into the
 * calling process (each candidate is probed in a child process), so it can
 * run before `Server.create()` in a service's startup or a container's
 * health check.
 * @packageDocumentation
 */
import type { NativeAddon } from '../abi/binding.js';
import { addon } from '../addon/load.js';
import { optionError } from '../base/errors.js';
import { checkAddon } from './addon.js';
import { TRITON_MIN_COMPUTE_CAPABILITY, checkCuda, checkLimits } from './gpu.js';
import type { SearchOptions } from './ldso.js';
import { backendChecks, backendDirectoryFor, libraryChecks, probeLibraries } from './library.js';
import { checkModels } from './models.js';
import { checkBackendNeeds } from './needs.js';
import { checkOnnxRuntime } from './onnxruntime.js';
import { checkPython } from './python.js';
import { checkPytorch } from './pytorch.js';
import type { DoctorReport } from './report.js';

export { formatDoctorReport } from './report.js';
export type { CudaDeviceInfo } from '../abi/binding.js';
export type { DoctorCheck, DoctorReport, DoctorStatus, LibraryProbe } from './report.js';

export interface DoctorOptions {
  /** The library to check, as `Server.create({ library })` takes it; default: TRITON_SERVER_LIB, then /opt/tritonserver/lib/libtritonserver.so. */
  library?: string;
  /** Where the backends are; default: as `Server.create()` decides it for the library found. */
  backendDirectory?: string;
  /** A model repository whose models' configs to check. */
  repository?: string;
  /** The server's minimum compute capability (default 6.0, Triton's). */
  minComputeCapability?: number;
  /** How long one library probe may take, ms (default 60000: a GPU build of Triton starts slowly). */
  probeTimeoutMs?: number;
}

function validate(options: DoctorOptions): void {
  for (const key of ['library', 'backendDirectory', 'repository'] as const) {
    const v = options[key];
    if (v !== undefined && (typeof v !== 'string' || v === ''))
      throw optionError(key, 'a non-empty string', v);
  }
  const cc = options.minComputeCapability;
  if (cc !== undefined && !(typeof cc === 'number' && Number.isFinite(cc) && cc >= 0)) {
    throw optionError('minComputeCapability', 'a non-negative number', cc);
  }
  const t = options.probeTimeoutMs;
  if (t !== undefined && !(Number.isInteger(t) && t > 0))
    throw optionError('probeTimeoutMs', 'a positive integer', t);
}

function loadedAddon(): NativeAddon | null {
  try {
    return addon();
  } catch {
    return null;
  }
}

/**
 * Checks the addon, every Triton library candidate, the backends, CUDA and
 * each GPU, the process limits and (with `repository`) each model's config.
 * Never throws for what it finds: problems are `fail` lines with a fix.
 */
export async function doctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  validate(options);
  const addonPart = checkAddon();
  const native = addonPart.facts.napiVersion === null ? null : loadedAddon();
  const libraries =
    native === null
      ? []
      : await probeLibraries(options.library, options.backendDirectory, options.probeTimeoutMs ?? 60_000);
  const used = libraries.find((p) => p.used);
  const backendDir = backendDirectoryFor(used, options.backendDirectory);
  const backends = backendChecks(used, backendDir);
  // Backends need libtritonserver.so, which the process has loaded by then (the one used, where known).
  const search: SearchOptions = used === undefined ? {} : { loaded: { 'libtritonserver.so': used.path } };
  const needs = checkBackendNeeds(backendDir, backends.facts.found, search);
  const onnxRuntime = checkOnnxRuntime(backendDir);
  const pytorch = checkPytorch(backendDir, search);
  const python = checkPython(backendDir, process.env.PATH, search);
  const cuda = await checkCuda(
    native,
    options.minComputeCapability ?? TRITON_MIN_COMPUTE_CAPABILITY,
    options.probeTimeoutMs ?? 60_000,
  );
  const limits = checkLimits(cuda.facts.available, backends.facts.found);
  const models =
    options.repository === undefined
      ? { facts: [], checks: [] }
      : checkModels(options.repository, {
          backends: backends.facts.found,
          gpuCount: cuda.facts.devices.length,
          backendsKnown: used !== undefined,
        });
  const checks = [
    ...addonPart.checks,
    ...libraryChecks(libraries),
    ...backends.checks,
    ...needs.checks,
    ...onnxRuntime.checks,
    ...pytorch.checks,
    ...python.checks,
    ...cuda.checks,
    ...limits.checks,
    ...models.checks,
  ];
  return {
    ok: checks.every((c) => c.status !== 'fail'),
    checks,
    addon: addonPart.facts,
    libraries,
    backends: backends.facts,
    backendLibraries: needs.facts,
    pytorch: pytorch.facts,
    onnxRuntime: onnxRuntime.facts,
    python: python.facts,
    cuda: cuda.facts,
    limits: limits.facts,
    models: models.facts,
  };
}
