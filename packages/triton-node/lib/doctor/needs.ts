/**
 * The doctor's lines about the libraries each backend needs: every
 * libtriton_<name>.so of the backend directory, its DT_NEEDED libraries
 * and theirs, resolved as the dynamic loader would (lib/doctor/ldso.ts).
 * A backend with a library missing does not load, and Triton says only
 * that the backend failed; these lines name the library and the fix.
 * @internal
 * @packageDocumentation
 */
import { basename, join } from 'node:path';
import { type NeededLibrary, type SearchOptions, neededLibraries } from './ldso.js';
import type { DoctorCheck, DoctorReport } from './report.js';

/** What to do about a missing library, by what it is. */
export function libraryFix(name: string): string {
  const cuda = /^libcudart\.so\.(\d+)/.exec(name);
  if (cuda !== null) {
    return `install the CUDA ${cuda[1]} runtime (the NGC Triton image has it), or put its folder on LD_LIBRARY_PATH (/usr/local/cuda-${cuda[1]}/lib64; pip: nvidia-cuda-runtime-cu${cuda[1]}'s lib)`;
  }
  const cudnn = /^libcudnn[a-z_]*\.so\.(\d+)/.exec(name);
  if (cudnn !== null) {
    return `install cuDNN ${cudnn[1]} (pip install nvidia-cudnn-cu12 and put its lib on LD_LIBRARY_PATH, or apt-get install libcudnn${cudnn[1]}-cuda-12), or use the NGC Triton image`;
  }
  if (/^lib(torch|c10)/.test(name)) {
    return "use the NGC Triton image (nvcr.io/nvidia/tritonserver:<yy.mm>-py3 ships libtorch in backends/pytorch/), or put the libtorch the backend was built with on LD_LIBRARY_PATH (pip's torch: $(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/lib)";
  }
  const python = /^libpython(3\.\d+)/.exec(name);
  if (python !== null) {
    return `install Python ${python[1]}'s shared library (Debian/Ubuntu: apt-get install libpython${python[1]}), or put the folder of its ${name} on LD_LIBRARY_PATH`;
  }
  if (/^libnvinfer/.test(name)) {
    return "use the NGC Triton image, or put TensorRT's lib folder on LD_LIBRARY_PATH (pip install tensorrt)";
  }
  if (name === 'libarchive.so.13')
    return 'apt-get install libarchive13 (the python backend unpacks environments with it)';
  return `install the package that ships ${name} (Debian/Ubuntu: apt-file search ${name}), or put the folder that holds it on LD_LIBRARY_PATH`;
}

/** 'libx.so.1 (for liby.so)' for each missing library. */
export function missingText(missing: NeededLibrary[]): string {
  return missing.map((m) => `${m.name} (for ${basename(m.neededBy)})`).join(', ');
}

/** The fixes of the missing libraries, each once. */
export function missingFix(missing: NeededLibrary[]): string {
  return [...new Set(missing.map((m) => libraryFix(m.name)))].join('; ');
}

/**
 * `search` for a backend library: it is loaded into a process that has
 * libtritonserver.so already (the loader matches that SONAME), so that need
 * is met whatever the folders hold.
 */
export function inServer(search: SearchOptions): SearchOptions {
  return { ...search, loaded: { 'libtritonserver.so': 'libtritonserver.so', ...search.loaded } };
}

/** The backend libraries whose needs have lines of their own elsewhere (the pytorch and python topics). */
const OWN_LINES = new Set(['pytorch', 'python']);

/**
 * Each backend's needs, and a line for every backend (but pytorch and
 * python, whose topics say it) with a library missing. `search`: how the
 * loader searches (the Triton library the backends load into, as loaded).
 */
export function checkBackendNeeds(
  backendDir: string | null,
  backends: string[],
  search: SearchOptions,
): { facts: DoctorReport['backendLibraries']; checks: DoctorCheck[] } {
  if (backendDir === null) return { facts: [], checks: [] };
  const facts: DoctorReport['backendLibraries'] = [];
  const checks: DoctorCheck[] = [];
  for (const backend of backends) {
    const library = join(backendDir, backend, `libtriton_${backend}.so`);
    const needed = neededLibraries(library, inServer(search));
    if (needed === null) continue;
    const missing = needed.filter((n) => n.path === null);
    facts.push({
      backend,
      library,
      needed: needed.length,
      missing: missing.map((m) => ({ name: m.name, neededBy: m.neededBy })),
    });
    if (missing.length === 0 || OWN_LINES.has(backend)) continue;
    checks.push({
      topic: 'backends',
      subject: library,
      status: 'fail',
      detail: `the ${backend} backend does not load: the loader finds no ${missingText(missing)}`,
      fix: missingFix(missing),
    });
  }
  return { facts, checks };
}
