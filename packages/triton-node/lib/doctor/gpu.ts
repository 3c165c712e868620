/**
 * The doctor's CUDA, GPU and limits lines: the runtime and driver versions,
 * each device against the server's minimum compute capability, and the
 * process limits that pinned memory and the python backend run into.
 * @internal
 * @packageDocumentation
 */
import { readFileSync, statfsSync } from 'node:fs';
import type { NativeAddon } from '../abi/binding.js';
import { addonBinaryPath } from '../addon/load.js';
import { runChild } from './library.js';
import type { DoctorCheck, DoctorReport } from './report.js';

/** Triton's default minimum compute capability (TRITON_MIN_COMPUTE_CAPABILITY). */
export const TRITON_MIN_COMPUTE_CAPABILITY = 6.0;
/** Triton's default pinned memory pool, bytes. */
const DEFAULT_PINNED_POOL_BYTES = 256 * 1024 * 1024;

type CudaFacts = DoctorReport['cuda'];

/** 12080 -> '12.8'. */
function cudaVersionText(v: number | null): string | null {
  if (v === null || v <= 0) return null;
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

/**
 * The driver version in the text of /proc/driver/nvidia/version: its first
 * line reads "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  <date>"
 * for the proprietary module and "NVRM version: NVIDIA UNIX Open Kernel Module
 * for x86_64  580.65.06  Release Build  (...)  <date>" for the open one.
 */
export function parseKernelModuleVersion(text: string): string | null {
  return /Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)(?:\s|$)/.exec(text)?.[1] ?? null;
}

function kernelModuleVersion(): string | null {
  try {
    return parseKernelModuleVersion(readFileSync('/proc/driver/nvidia/version', 'utf8'));
  } catch {
    return null;
  }
}

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/**
 * The child that reads each device's free memory: it loads the addon, asks
 * cudaMemGetInfo of each device and prints the answers. A child, because
 * the call creates a CUDA context on the device, which would stay in this
 * process (hundreds of MiB of each GPU) until it exits.
 */
const FREE_MEMORY_SOURCE = `
const cuda = require(process.argv[1]).cuda;
const free = [];
for (let i = 0; i < Number(process.argv[2]); i++) {
  try { free.push(cuda.memGetInfo(i).free); } catch { free.push(null); }
}
process.stdout.write('\\n@@free ' + JSON.stringify(free) + '\\n');
`;

/** Each of `count` devices' free memory as a new process sees it; nulls where the child could not say. */
export async function freeMemory(count: number, timeoutMs: number): Promise<Array<number | null>> {
  const none = Array.from({ length: count }, () => null);
  if (count === 0) return [];
  let addonPath: string;
  try {
    addonPath = addonBinaryPath();
  } catch {
    return none;
  }
  const { out } = await runChild(['-e', FREE_MEMORY_SOURCE, addonPath, String(count)], timeoutMs);
  const line = out.split('\n').find((l) => l.startsWith('@@free '));
  try {
    const free = JSON.parse(line?.slice('@@free '.length) ?? 'null') as unknown;
    return Array.isArray(free) && free.length === count ? (free as Array<number | null>) : none;
  } catch {
    return none;
  }
}

/**
 * CUDA's facts and lines; `native` null when the addon does not load.
 * `timeoutMs`: how long the child that reads the free memory may take.
 */
export async function checkCuda(native: NativeAddon | null, minComputeCapability: number, timeoutMs: number) {
  const facts: CudaFacts = {
    runtimePath: null,
    runtimeVersion: null,
    driverVersion: null,
    kernelModule: kernelModuleVersion(),
    available: false,
    reason: 'the addon does not load',
    devices: [],
    minComputeCapability,
  };
  const checks: DoctorCheck[] = [];
  if (native === null) {
    checks.push({
      topic: 'cuda',
      subject: 'libcudart',
      status: 'info',
      detail: 'not checked: the addon does not load',
    });
    return { facts, checks };
  }
  const d = native.cuda.describe();
  const free = d.available ? await freeMemory(d.devices.length, timeoutMs) : [];
  Object.assign(facts, {
    runtimePath: d.runtimePath || null,
    runtimeVersion: cudaVersionText(d.runtimeVersion),
    driverVersion: cudaVersionText(d.driverVersion),
    available: d.available,
    reason: d.reason,
    devices: d.devices.map((device, i) => ({ ...device, freeMemory: free[i] ?? null })),
  });
  checks.push(runtimeCheck(facts, d.driverVersion, d.runtimeVersion));
  for (const device of facts.devices) checks.push(deviceCheck(device, minComputeCapability));
  return { facts, checks };
}

function runtimeCheck(facts: CudaFacts, driver: number | null, runtime: number | null): DoctorCheck {
  const module = facts.kernelModule ? `, kernel module ${facts.kernelModule}` : '';
  if (facts.runtimePath === null) {
    return {
      topic: 'cuda',
      subject: 'libcudart',
      status: 'info',
      detail: `no CUDA runtime: CPU only (GPU memory and KIND_GPU models need one)${module}`,
      fix: 'on a GPU machine: use the NGC Triton image, or put libcudart.so on LD_LIBRARY_PATH (or TRITON_NODE_CUDART)',
    };
  }
  const versions = `runtime ${facts.runtimeVersion ?? '?'}, driver supports ${facts.driverVersion ?? 'none'}${module}`;
  if (driver !== null && runtime !== null && driver > 0 && driver < runtime) {
    return {
      topic: 'cuda',
      subject: facts.runtimePath,
      status: 'fail',
      detail: `${versions}: the driver is older than the runtime`,
      fix: `upgrade the NVIDIA driver to one for CUDA ${facts.runtimeVersion}, or use an image built for CUDA ${facts.driverVersion}`,
    };
  }
  if (!facts.available) {
    return {
      topic: 'cuda',
      subject: facts.runtimePath,
      status: 'info',
      detail: `${versions}; no GPU: ${facts.reason.split('\n')[0]}`,
      fix: 'in Docker: run with --gpus all (NVIDIA Container Toolkit); check nvidia-smi',
    };
  }
  return {
    topic: 'cuda',
    subject: facts.runtimePath,
    status: 'ok',
    detail: `${versions}, ${facts.devices.length} GPU(s)`,
  };
}

function deviceCheck(device: CudaFacts['devices'][number], minimum: number): DoctorCheck {
  const total = device.totalMemory === null ? '? GiB' : gib(device.totalMemory);
  const memory = `${total}, ${device.freeMemory === null ? '? GiB' : gib(device.freeMemory)} free`;
  const cc = device.computeCapability;
  const detail = `${device.name ?? '(name unknown)'}, ${memory}, compute capability ${cc ?? '?'}`;
  const subject = `GPU ${device.index}`;
  if (cc !== null && Number(cc) < minimum) {
    return {
      topic: 'gpu',
      subject,
      status: 'fail',
      detail: `${detail}: below the server's minimum ${minimum.toFixed(1)}, Triton will not use it`,
      fix: 'use a GPU of that capability or newer (minComputeCapability lowers the bar, unsupported by the backends)',
    };
  }
  return { topic: 'gpu', subject, status: 'ok', detail: `${detail} (minimum ${minimum.toFixed(1)})` };
}

/** RLIMIT_MEMLOCK's soft limit in bytes from /proc/self/limits; null: unlimited. */
function memlockBytes(): number | null | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max locked memory'));
    const soft = line?.slice('Max locked memory'.length).trim().split(/\s+/)[0];
    if (soft === undefined) return undefined;
    return soft === 'unlimited' ? null : Number(soft);
  } catch {
    return undefined;
  }
}

function shmSpace(): { size: number; free: number } | null {
  try {
    const s = statfsSync('/dev/shm');
    return { size: s.bsize * s.blocks, free: s.bsize * s.bavail };
  } catch {
    return null;
  }
}

/** `ulimit -l` (pinned memory) and /dev/shm (the python backend). */
export function checkLimits(cudaAvailable: boolean, backends: string[]) {
  const memlock = memlockBytes();
  const space = shmSpace();
  const shm = space?.size ?? null;
  const facts: DoctorReport['limits'] = {
    memlockBytes: memlock ?? null,
    shmBytes: shm,
    shmFreeBytes: space?.free ?? null,
  };
  const checks: DoctorCheck[] = [];
  if (memlock !== undefined) {
    const low = memlock !== null && memlock < DEFAULT_PINNED_POOL_BYTES;
    const line: DoctorCheck = {
      topic: 'limits',
      subject: 'ulimit -l (locked memory)',
      status: low && cudaAvailable ? 'warn' : low ? 'info' : 'ok',
      detail:
        memlock === null
          ? 'unlimited'
          : `${Math.round(memlock / 1024)} KiB${low ? `: below Triton's 256 MiB pinned memory pool${cudaAvailable ? '' : ' (no GPU: unused)'}` : ''}`,
    };
    if (low) line.fix = 'docker run --ulimit memlock=-1 (as NVIDIA runs Triton), or ulimit -l unlimited';
    checks.push(line);
  }
  if (shm !== null) {
    const python = backends.includes('python');
    const low = shm < 256 * 1024 * 1024;
    const line: DoctorCheck = {
      topic: 'limits',
      subject: '/dev/shm',
      status: python && low ? 'warn' : 'info',
      detail: `${gib(shm)}, ${gib(space!.free)} free${python ? ' (the python backend keeps tensors here)' : ''}`,
    };
    if (python && low) line.fix = 'docker run --shm-size=1g';
    checks.push(line);
  }
  return { facts, checks };
}
