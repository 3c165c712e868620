/**
 * The doctor's pytorch lines, where the backend directory has the pytorch
 * backend (libtriton_pytorch.so): the libtorch it links (libtorch.so,
 * libtorch_cuda.so for GPUs), the CUDA runtime and cuDNN libtorch needs,
 * each resolved as the dynamic loader would (lib/doctor/ldso.ts), and any
 * other library of theirs the loader would not find. libtorch opens cuDNN
 * itself on the first GPU convolution when it does not link it: then it is
 * looked for where libtorch_cuda.so would look.
 * @internal
 * @packageDocumentation
 */
import { dirname, join } from 'node:path';
import { type NeededLibrary, type SearchOptions, locateFor, neededLibraries } from './ldso.js';
import { inServer, libraryFix, missingFix, missingText } from './needs.js';
import type { DoctorCheck, DoctorReport } from './report.js';

/** The cuDNN libtorch opens when it does not link one (PyTorch 2.x builds use cuDNN 9). */
const CUDNN = 'libcudnn.so.9';
const LIBTORCH = /^lib(torch|c10)[\w]*\.so/;
const CUDART = /^libcudart\.so/;
const LIBCUDNN = /^libcudnn\.so/;

export type PytorchFacts = NonNullable<DoctorReport['pytorch']>;

function libtorchCheck(facts: PytorchFacts, torch: NeededLibrary[]): DoctorCheck {
  const missing = torch.filter((t) => t.path === null);
  if (missing.length > 0) {
    return {
      topic: 'pytorch',
      subject: 'libtorch',
      status: 'fail',
      detail: `the pytorch backend does not load: the loader finds no ${missingText(missing)}`,
      fix: libraryFix(missing[0]!.name),
    };
  }
  const main = torch.find((t) => t.name === 'libtorch.so') ?? torch[0];
  if (main === undefined) {
    return { topic: 'pytorch', subject: 'libtorch', status: 'info', detail: 'the backend links no libtorch' };
  }
  return {
    topic: 'pytorch',
    subject: 'libtorch',
    status: 'ok',
    detail: `${main.name} in ${dirname(main.path!)} (${main.via})${facts.cuda ? ', with CUDA (libtorch_cuda.so)' : ': CPU only (no libtorch_cuda.so): KIND_GPU models cannot run'}`,
  };
}

function linkedCheck(subject: string, lib: NeededLibrary): DoctorCheck {
  if (lib.path === null) {
    return {
      topic: 'pytorch',
      subject,
      status: 'fail',
      detail: `the loader finds no ${missingText([lib])}: the pytorch backend does not load`,
      fix: libraryFix(lib.name),
    };
  }
  return { topic: 'pytorch', subject, status: 'ok', detail: `${lib.name}: ${lib.path} (${lib.via})` };
}

/** cuDNN: linked (then as found), or opened by libtorch_cuda.so on first use (then where it would look). */
function cudnnCheck(facts: PytorchFacts, linked: NeededLibrary | undefined): DoctorCheck | null {
  if (linked !== undefined) return linkedCheck('cuDNN', linked);
  if (facts.cudnn === null) return null;
  if (facts.cudnn.path !== null) {
    const detail = `${CUDNN}: ${facts.cudnn.path} (libtorch opens it on the first GPU convolution)`;
    return { topic: 'pytorch', subject: 'cuDNN', status: 'ok', detail };
  }
  return {
    topic: 'pytorch',
    subject: 'cuDNN',
    status: 'warn',
    detail: `no ${CUDNN} where libtorch_cuda.so looks: models load, and their first GPU convolution fails`,
    fix: libraryFix(CUDNN),
  };
}

/** The pytorch backend's facts and lines for `backendDir` (no backend: null, no lines). */
export function checkPytorch(
  backendDir: string | null,
  search: SearchOptions = {},
): { facts: DoctorReport['pytorch']; checks: DoctorCheck[] } {
  const backend = backendDir === null ? null : join(backendDir, 'pytorch', 'libtriton_pytorch.so');
  const needed = backend === null ? null : neededLibraries(backend, inServer(search));
  if (backend === null || needed === null) return { facts: null, checks: [] };
  const torch = needed.filter((n) => LIBTORCH.test(n.name));
  const torchCuda = needed.find((n) => n.name === 'libtorch_cuda.so');
  const cudart = needed.find((n) => CUDART.test(n.name));
  const cudnnLinked = needed.find((n) => LIBCUDNN.test(n.name));
  const opened =
    cudnnLinked === undefined && torchCuda?.path ? locateFor(torchCuda.path, CUDNN, search) : null;
  const facts: PytorchFacts = {
    backend,
    libtorch: torch.find((t) => t.name === 'libtorch.so')?.path ?? null,
    cuda: torchCuda !== undefined,
    cudaRuntime: cudart === undefined ? null : { name: cudart.name, path: cudart.path },
    cudnn:
      cudnnLinked !== undefined
        ? { name: cudnnLinked.name, path: cudnnLinked.path, linked: true }
        : torchCuda?.path
          ? { name: CUDNN, path: opened, linked: false }
          : null,
    missing: needed.filter((n) => n.path === null).map((n) => ({ name: n.name, neededBy: n.neededBy })),
  };
  const checks: DoctorCheck[] = [libtorchCheck(facts, torch)];
  if (cudart !== undefined) checks.push(linkedCheck('CUDA runtime', cudart));
  const cudnn = cudnnCheck(facts, cudnnLinked);
  if (cudnn !== null) checks.push(cudnn);
  const others = needed.filter(
    (n) => n.path === null && !LIBTORCH.test(n.name) && n !== cudart && n !== cudnnLinked,
  );
  if (others.length > 0) {
    checks.push({
      topic: 'pytorch',
      subject: 'libraries',
      status: 'fail',
      detail: `the pytorch backend does not load: the loader finds no ${missingText(others)}`,
      fix: missingFix(others),
    });
  }
  return { facts, checks };
}
