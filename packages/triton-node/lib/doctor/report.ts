/**
 * The doctor's report: one line per thing checked, each with a status and,
 * for a problem, the fix; the facts behind the lines for `--json`; and the
 * table the CLI prints.
 * @packageDocumentation
 */

import type { CudaDeviceInfo } from '../abi/binding.js';
import { printable } from '../base/printable.js';

/** `fail`: triton-node cannot work this way; `warn`: it works, with a catch; `info`: a fact. */
export type DoctorStatus = 'ok' | 'info' | 'warn' | 'fail';

/** One line of the report. */
export interface DoctorCheck {
  /** What the line is about: addon, library, backends, onnx (ONNX Runtime), python or pytorch (those backends), cuda, gpu, limits or model. */
  topic:
    | 'addon'
    | 'library'
    | 'backends'
    | 'onnx'
    | 'python'
    | 'pytorch'
    | 'cuda'
    | 'gpu'
    | 'limits'
    | 'model';
  /** The thing checked: a path, a GPU, a model. */
  subject: string;
  status: DoctorStatus;
  /** What was found. */
  detail: string;
  /** What to do about it (on warn and fail lines). */
  fix?: string;
}

/** One libtritonserver candidate, probed in a child process of its own. */
export interface LibraryProbe {
  path: string;
  /** Why it is a candidate: the `library` option, TRITON_SERVER_LIB, or Triton's install path. */
  source: 'option' | 'TRITON_SERVER_LIB' | 'default';
  /** The loader's outcome ('missing', 'dlopen', 'symbols', 'version', 'loaded'), or 'probe' when the probe itself failed. */
  outcome: string;
  /** The loader's detail, or why the probe failed. */
  detail: string;
  /** Triton's C API version ('1.36'), when the library loaded. */
  apiVersion: string | null;
  /** Triton's version from server metadata ('2.59.0'), when a server could start on it. */
  version: string | null;
  /** Why no server could start on it, when one could not. */
  serverError: string | null;
  isFake: boolean;
  /** True for the library `Server.create()` would load with these options. */
  used: boolean;
}

/** What `doctor()` found. Every field is plain data (`JSON.stringify` writes it whole). */
export interface DoctorReport {
  /** False when any line failed; the CLI exits with 1 then. */
  ok: boolean;
  /** The lines of the table, in its order. */
  checks: DoctorCheck[];
  addon: {
    /** The binary node-gyp-build picks, or null when there is none. */
    path: string | null;
    kind: 'prebuild' | 'source build' | null;
    /** The Node-API version it was built for, and the one this runtime has. */
    napiVersion: number | null;
    runtimeNapiVersion: number;
    node: string;
    platform: string;
    /** glibc version, or null (musl, or not Linux). */
    glibc: string | null;
    /** Outputs as external ArrayBuffers over Triton's memory; false in Electron or with TRITON_NODE_COPY_OUTPUTS=1. */
    externalBuffers: boolean | null;
    /** The fake engine's libtritonserver.so, where it is installed. */
    fakeEngine: string | null;
  };
  libraries: LibraryProbe[];
  backends: {
    /** The directory Triton would look in (null with the fake engine, whose backends are built in). */
    directory: string | null;
    found: string[];
  };
  /**
   * Each backend library (libtriton_<name>.so): how many libraries it needs,
   * directly and through them, and those the dynamic loader would not find.
   */
  backendLibraries: Array<{
    backend: string;
    library: string;
    needed: number;
    missing: Array<{ name: string; neededBy: string }>;
  }>;
  /** The pytorch backend of the backend directory, or null when it has none. */
  pytorch: {
    /** libtriton_pytorch.so. */
    backend: string;
    /** Where the loader finds libtorch.so, or null. */
    libtorch: string | null;
    /** Whether the backend links libtorch_cuda.so (a build for GPUs). */
    cuda: boolean;
    /** The CUDA runtime libtorch links ('libcudart.so.12') and where it is found (null: not found). */
    cudaRuntime: { name: string; path: string | null } | null;
    /** cuDNN: linked, or opened by libtorch on first use (libcudnn.so.9), and where it is found. */
    cudnn: { name: string; path: string | null; linked: boolean } | null;
    /** Every library of the backend's the loader would not find. */
    missing: Array<{ name: string; neededBy: string }>;
  } | null;
  cuda: {
    runtimePath: string | null;
    /** '12.8' and so on, or null. */
    runtimeVersion: string | null;
    /** The newest CUDA version the driver supports, or null (no driver). */
    driverVersion: string | null;
    /** The kernel module's version from /proc/driver/nvidia/version. */
    kernelModule: string | null;
    available: boolean;
    reason: string;
    /**
     * Each visible device, with its free memory: cudaMemGetInfo in a child
     * process (a CUDA context costs hundreds of MiB on each GPU, and this
     * process keeps none), so it is what a new process sees after creating
     * its own context. Null where the child could not say.
     */
    devices: Array<CudaDeviceInfo & { freeMemory: number | null }>;
    /** The lowest compute capability the server accepts (Triton's default, 6.0, unless given). */
    minComputeCapability: number;
  };
  limits: {
    /** RLIMIT_MEMLOCK in bytes (`ulimit -l` is in KiB); null: unlimited. */
    memlockBytes: number | null;
    /** Size of /dev/shm in bytes (the python backend's shared memory), or null. */
    shmBytes: number | null;
    /** Free bytes in /dev/shm (for unprivileged users), or null. */
    shmFreeBytes: number | null;
  };
  /** The Python backend of the backend directory, or null when it has none (or the fake engine). */
  python: {
    /** libtriton_python.so. */
    backend: string;
    /** triton_python_backend_stub's path (it may be missing: see stubExecutable). */
    stub: string;
    stubExecutable: boolean;
    /** triton_python_backend_utils.py beside the stub. */
    utils: boolean;
    /** The libpython the stub links ('libpython3.11.so.1.0'), or null. */
    libPython: string | null;
    /** Where the dynamic loader finds that libpython, or null. */
    libPythonPath: string | null;
    /** Libraries the backend or its stub need that the loader would not find. */
    missing: Array<{ name: string; neededBy: string }>;
    /** The python3.x of that version on PATH, or null. */
    python: string | null;
    pythonVersion: string | null;
    /** numpy's version as that Python imports it, or null when it cannot. */
    numpy: string | null;
    /** Why that Python could not import numpy, or null. */
    pythonError: string | null;
    /** torch's version as that Python imports it ('2.8.0'), or null. */
    torch: string | null;
    /** The CUDA that torch was built for ('12.8', 'cpu'), or null. */
    torchCuda: string | null;
    /** Why that Python could not import torch (it is optional), or null. */
    torchError: string | null;
    /** bash on PATH (the backend starts stubs through it), or null. */
    bash: string | null;
  } | null;
  /** The ONNX Runtimes that would share one process: onnxruntime-node's and the onnxruntime backend's. */
  onnxRuntime: {
    /** onnxruntime-node as the application resolves it, or null. */
    node: {
      dir: string;
      version: string | null;
      library: string | null;
      libraryVersion: string | null;
    } | null;
    /** The Triton onnxruntime backend's libonnxruntime.so.1, or null (none, or the fake engine). */
    backend: { library: string; libraryVersion: string | null } | null;
  };
  /** With `repository`: one entry per model directory. */
  models: Array<{ name: string; backend: string | null; versions: number[]; problems: string[] }>;
}

/**
 * True when the only thing that fails is that no Triton library was found,
 * none having been asked for (no `library`, no TRITON_SERVER_LIB), while the
 * addon and the fake engine are there: a laptop, where triton-node runs on
 * its fake engine (`triton-node demo`, `triton-node serve --fake-engine`).
 * `triton-node doctor` exits 3 then, not 1.
 */
export function onlyTritonMissing(report: DoctorReport): boolean {
  const failed = report.checks.filter((c) => c.status === 'fail');
  // A report made by hand (formatDoctorReport takes any) may lack the facts.
  const libraries = report.libraries ?? [];
  return (
    failed.length > 0 &&
    failed.every((c) => c.topic === 'library') &&
    libraries.length > 0 &&
    libraries.every((p) => p.source === 'default' && p.outcome === 'missing') &&
    typeof report.addon?.fakeEngine === 'string'
  );
}

/** What `doctor` says where no Triton is installed and the fake engine is. */
export const WITHOUT_TRITON =
  'No Triton here (none was asked for): that is expected on a laptop. triton-node runs here on its fake engine,\n' +
  'with the example models: `npx triton-node demo`, or `npx triton-node serve --fake-engine` (HTTP and gRPC).\n' +
  'For real inference, install Triton (the fix above); `doctor` exits 3 until then (1 when something else fails).';

const MARK: Record<DoctorStatus, string> = { ok: 'ok', info: 'info', warn: 'WARN', fail: 'FAIL' };

/** Cuts `text` to `width` characters with an ellipsis. */
function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/**
 * The report as the table `triton-node doctor` prints: a status, the topic,
 * the subject and what was found, one line per check; the fix on the line
 * below each problem; a summary line last. Subjects, details and fixes name
 * things of the machine (folders, config fields), so their control
 * characters are printed escaped: a model folder cannot colour the table or
 * forge a line of it.
 */
export function formatDoctorReport(report: DoctorReport): string {
  const shown = report.checks.map((c) => ({
    ...c,
    subject: printable(c.subject),
    detail: printable(c.detail),
    ...(c.fix === undefined ? {} : { fix: printable(c.fix) }),
  }));
  const subjectWidth = Math.min(48, Math.max(7, ...shown.map((c) => c.subject.length)));
  const lines = [`${'STATUS'.padEnd(6)} ${'TOPIC'.padEnd(8)} ${'SUBJECT'.padEnd(subjectWidth)}  DETAIL`];
  for (const c of shown) {
    const subject = cut(c.subject, subjectWidth).padEnd(subjectWidth);
    lines.push(`${MARK[c.status].padEnd(6)} ${c.topic.padEnd(8)} ${subject}  ${c.detail}`);
    if (c.subject.length > subjectWidth) lines.push(`${' '.repeat(16)}(${c.subject})`);
    if (c.fix !== undefined) lines.push(`${' '.repeat(16)}fix: ${c.fix}`);
  }
  const count = (s: DoctorStatus) => report.checks.filter((c) => c.status === s).length;
  const summary = report.ok
    ? 'triton-node can run here'
    : onlyTritonMissing(report)
      ? 'no Triton library, the rest is fine'
      : 'fix the FAIL lines above';
  lines.push('', `${count('ok')} ok, ${count('warn')} warning(s), ${count('fail')} failure(s): ${summary}`);
  if (!report.ok && onlyTritonMissing(report)) lines.push(WITHOUT_TRITON);
  return `${lines.join('\n')}\n`;
}
