/**
 * The doctor's Python backend lines, where the backend directory has one:
 * the backend library, its stub (`triton_python_backend_stub`, present and
 * executable, with triton_python_backend_utils.py beside it, as the backend
 * requires), the libraries both need (ELF DT_NEEDED, resolved as the
 * dynamic loader would: lib/doctor/ldso.ts), the libpython the stub links,
 * the Python that library belongs to (where the loader finds it; else one
 * of that version on PATH) and whether it imports numpy (the stub embeds
 * that Python; its numpy is what model.py imports) and torch (optional:
 * only the models that import it need it), and `bash` on PATH (the
 * backend starts every stub through bash).
 * @internal
 * @packageDocumentation
 */
import { spawnSync } from 'node:child_process';
import { constants, accessSync, existsSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import { readElfDynamic } from './elf.js';
import { type NeededLibrary, type SearchOptions, neededLibraries } from './ldso.js';
import { inServer, missingFix, missingText } from './needs.js';
import type { DoctorCheck, DoctorReport } from './report.js';

const STUB = 'triton_python_backend_stub';
const UTILS = 'triton_python_backend_utils.py';

const LIBPYTHON = /^libpython3\.\d+[a-z]?\.so(?:\.[\d.]+)?$/;

/** The libpython a binary links ('libpython3.11.so.1.0'), from its DT_NEEDED entries; null when none. */
export function linkedLibPython(file: string): string | null {
  return readElfDynamic(file)?.needed.find((n) => LIBPYTHON.test(n)) ?? null;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` on `path` (a PATH value), or null. */
export function onPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, name))) return join(dir, name);
  }
  return null;
}

/**
 * The Python executable of the installation `library` belongs to: the
 * library in `<prefix>/lib` or `<prefix>/lib/<multiarch>`, the executable
 * `<prefix>/bin/<name>` (the interpreter the stub embeds takes its prefix
 * from its library). Null when there is none.
 */
function pythonBeside(library: string, name: string): string | null {
  let dir = dirname(realpathSync(library));
  for (let i = 0; i < 3 && dir !== dirname(dir); i++, dir = dirname(dir)) {
    if (basename(dir) === 'lib' || basename(dir) === 'lib64') {
      const python = join(dirname(dir), 'bin', name);
      return executable(python) ? python : null;
    }
  }
  return null;
}

/** How long the probe of the stub's Python may take: importing torch takes seconds. */
const PROBE_TIMEOUT_MS = 30_000;

/** What the probe prints, one fact a line, flushed as it goes (a timeout keeps what came). */
const PROBE = `import sys
print('version', sys.version.split()[0], flush=True)
import numpy
print('numpy', numpy.__version__, flush=True)
try:
    import torch
    print('torch', torch.__version__, torch.version.cuda or 'cpu', flush=True)
except Exception as e:
    print('torch-error', type(e).__name__ + ': ' + str(e).split(chr(10))[0], flush=True)
`;

interface PythonProbe {
  version: string | null;
  numpy: string | null;
  error: string | null;
  torch: string | null;
  torchCuda: string | null;
  torchError: string | null;
}

/** Python's, numpy's and torch's versions from `python`, or why it could not import them. */
function probePython(python: string): PythonProbe {
  const child = spawnSync(python, ['-u', '-c', PROBE], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  const seen = new Map<string, string>();
  for (const line of (child.stdout ?? '').split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0) seen.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  const timedOut = child.error !== undefined && /ETIMEDOUT/.test(child.error.message);
  const last = (child.stderr ?? '').trim().split('\n').at(-1) ?? '';
  const numpy = seen.get('numpy') ?? null;
  const error =
    numpy !== null
      ? null
      : timedOut
        ? `it did not answer in ${PROBE_TIMEOUT_MS / 1000} s`
        : (child.error?.message ?? (last || `exit status ${child.status}`));
  const [torch, torchCuda] = seen.get('torch')?.split(' ') ?? [];
  const torchError =
    seen.get('torch-error') ??
    (numpy !== null && torch === undefined
      ? timedOut
        ? `importing it took more than ${PROBE_TIMEOUT_MS / 1000} s`
        : last || 'the probe ended first'
      : null);
  return {
    version: seen.get('version') ?? null,
    numpy,
    error,
    torch: torch ?? null,
    torchCuda: torchCuda ?? null,
    torchError: numpy === null ? null : torchError,
  };
}

/** What the doctor found of the Python backend (null: the backend directory has none). */
export type PythonFacts = NonNullable<DoctorReport['python']>;

function stubCheck(facts: PythonFacts): DoctorCheck {
  const subject = facts.stub;
  if (!existsSync(subject)) {
    return {
      topic: 'python',
      subject,
      status: 'fail',
      detail: `no ${STUB} beside libtriton_python.so: python models cannot start`,
      fix: 'install the python backend whole (the stub comes with it), from the same Triton release',
    };
  }
  if (!facts.stubExecutable) {
    return {
      topic: 'python',
      subject,
      status: 'fail',
      detail: `${STUB} is not executable`,
      fix: `chmod +x ${subject}`,
    };
  }
  if (!facts.utils) {
    return {
      topic: 'python',
      subject,
      status: 'fail',
      detail: `${UTILS} is missing beside the stub: the backend refuses to start without it`,
      fix: 'install the python backend whole, from the same Triton release',
    };
  }
  return {
    topic: 'python',
    subject,
    status: 'ok',
    detail: `present and executable, links ${facts.libPython ?? 'no libpython (?)'}`,
  };
}

function pythonCheck(facts: PythonFacts): DoctorCheck | null {
  if (facts.libPython === null) return null;
  const want = facts.libPython.match(/^lib(python3\.\d+)/)![1]!;
  if (facts.python === null) {
    return {
      topic: 'python',
      subject: want,
      status: 'fail',
      detail: `the stub embeds ${facts.libPython}, and no ${want} is on PATH`,
      fix: `install ${want} with numpy (Debian/Ubuntu: apt-get install ${want} python3-numpy), or use a python backend built for the Python you have`,
    };
  }
  if (facts.numpy === null) {
    return {
      topic: 'python',
      subject: facts.python,
      status: 'fail',
      detail: `Python ${facts.pythonVersion ?? '?'} cannot import numpy (${facts.pythonError ?? 'unknown error'}); every python model needs it`,
      fix: `${facts.python} -m pip install numpy (or apt-get install python3-numpy)`,
    };
  }
  return {
    topic: 'python',
    subject: facts.python,
    status: 'ok',
    detail: `Python ${facts.pythonVersion} with numpy ${facts.numpy} (the stub links ${facts.libPython})`,
  };
}

function bashCheck(facts: PythonFacts): DoctorCheck {
  if (facts.bash !== null) return { topic: 'python', subject: 'bash', status: 'ok', detail: facts.bash };
  return {
    topic: 'python',
    subject: 'bash',
    status: 'fail',
    detail: 'no bash on PATH: the python backend starts every stub through bash',
    fix: 'install bash in the image (distroless and busybox images have none)',
  };
}

/** The torch line: its version where that Python imports it; a fact, not a problem, where it does not. */
function torchCheck(facts: PythonFacts): DoctorCheck | null {
  if (facts.python === null || facts.numpy === null) return null;
  if (facts.torch !== null) {
    const cuda = facts.torchCuda === 'cpu' ? 'CPU only' : `CUDA ${facts.torchCuda}`;
    return { topic: 'python', subject: 'torch', status: 'ok', detail: `torch ${facts.torch} (${cuda})` };
  }
  return {
    topic: 'python',
    subject: 'torch',
    status: 'info',
    detail: `${facts.python} does not import torch (${facts.torchError ?? 'unknown error'}): only models that import it need it`,
    fix: `${facts.python} -m pip install torch, if your models import it`,
  };
}

/** The libraries the backend and its stub need that the loader would not find. */
function librariesCheck(missing: NeededLibrary[]): DoctorCheck | null {
  if (missing.length === 0) return null;
  return {
    topic: 'python',
    subject: 'libraries',
    status: 'fail',
    detail: `the loader finds no ${missingText(missing)}: python models cannot start`,
    fix: missingFix(missing),
  };
}

/**
 * The Python backend's lines for `backendDir` (null: the fake engine, no
 * lines). `path`: the PATH to search for Python and bash (default the
 * process's); `search`: how the loader searches for libraries.
 */
export function checkPython(
  backendDir: string | null,
  path: string | undefined = process.env.PATH,
  search: SearchOptions = {},
): { facts: DoctorReport['python']; checks: DoctorCheck[] } {
  const dir = backendDir === null ? null : join(backendDir, 'python');
  if (dir === null || !existsSync(join(dir, 'libtriton_python.so'))) return { facts: null, checks: [] };
  const backend = join(dir, 'libtriton_python.so');
  const stub = join(dir, STUB);
  const stubNeeds = neededLibraries(stub, search) ?? [];
  const backendNeeds = neededLibraries(backend, inServer(search)) ?? [];
  const missing = [...backendNeeds, ...stubNeeds].filter((n) => n.path === null);
  const libPython = linkedLibPython(stub);
  const want = libPython?.match(/^lib(python3\.\d+)/)?.[1];
  // The Python the stub runs: the one its libpython belongs to, else one of that version on PATH.
  const library = stubNeeds.find((n) => n.name === libPython)?.path ?? null;
  const beside = library === null || want === undefined ? null : pythonBeside(library, want);
  const python = want === undefined ? null : (beside ?? onPath(want, path));
  const probe = python === null ? null : probePython(python);
  const facts: PythonFacts = {
    backend,
    stub,
    stubExecutable: existsSync(stub) && executable(stub),
    utils: existsSync(join(dir, UTILS)),
    libPython,
    libPythonPath: library,
    missing: missing.map((m) => ({ name: m.name, neededBy: m.neededBy })),
    python,
    pythonVersion: probe?.version ?? null,
    numpy: probe?.numpy ?? null,
    pythonError: probe?.error ?? null,
    torch: probe?.torch ?? null,
    torchCuda: probe?.torchCuda ?? null,
    torchError: probe?.torchError ?? null,
    bash: onPath('bash', path),
  };
  const checks = [
    stubCheck(facts),
    librariesCheck(missing),
    pythonCheck(facts),
    torchCheck(facts),
    bashCheck(facts),
  ].filter((c) => c !== null);
  return { facts, checks };
}
