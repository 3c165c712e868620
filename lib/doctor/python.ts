/**
 * The doctor's Python backend lines, where the backend directory has one:
 * the backend library, its stub (`triton_python_backend_stub`, present and
 * executable, with triton_python_backend_utils.py beside it, as the backend
 * requires), the libpython the stub links (its ELF NEEDED name, read from
 * the file), the Python that library belongs to (where ldd finds it; else
 * one of that version on PATH) and whether it imports numpy (the stub
 * embeds that Python; its numpy is what model.py imports), and
 * `bash` on PATH (the backend starts every stub through bash).
 * @internal
 * @packageDocumentation
 */
import { spawnSync } from 'node:child_process';
import { constants, accessSync, existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import type { DoctorCheck, DoctorReport } from './report.js';

const STUB = 'triton_python_backend_stub';
const UTILS = 'triton_python_backend_utils.py';

/** The libpython a binary links ('libpython3.11.so.1.0'), from its dynamic string table; null when none. */
export function linkedLibPython(file: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return null;
  }
  const marker = Buffer.from('libpython3.');
  for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, at + 1)) {
    const m = /^libpython3\.\d+[a-z]?\.so(?:\.[\d.]+)?(?=\0)/.exec(
      bytes.subarray(at, at + 40).toString('latin1'),
    );
    if (m !== null) return m[0];
  }
  return null;
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
 * Where the dynamic loader finds `libPython` for `stub` (ldd), or null (no
 * ldd, not a real ELF file, not found).
 */
function resolvedLibPython(stub: string, libPython: string): string | null {
  const child = spawnSync('ldd', [stub], { encoding: 'utf8', timeout: 10_000 });
  if (child.status !== 0) return null;
  const line = child.stdout.split('\n').find((l) => l.trim().startsWith(`${libPython} =>`));
  const m = line === undefined ? null : /=>\s+(\/\S+)/.exec(line);
  return m === null ? null : m[1]!;
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

/** Python's and numpy's versions from `python`, or why it could not import numpy. */
function probePython(python: string): { version: string | null; numpy: string | null; error: string | null } {
  const child = spawnSync(
    python,
    ['-c', 'import sys; print(sys.version.split()[0]); import numpy; print(numpy.__version__)'],
    { encoding: 'utf8', timeout: 20_000 },
  );
  const [version, numpy] = (child.stdout ?? '').trim().split('\n');
  const last = (child.stderr ?? '').trim().split('\n').at(-1) ?? '';
  const error = child.status === 0 ? null : (child.error?.message ?? (last || `exit status ${child.status}`));
  return { version: version || null, numpy: child.status === 0 ? (numpy ?? null) : null, error };
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

/**
 * The Python backend's lines for `backendDir` (null: the fake engine, no
 * lines). `path`: the PATH to search for Python and bash (default the
 * process's).
 */
export function checkPython(
  backendDir: string | null,
  path: string | undefined = process.env.PATH,
): { facts: DoctorReport['python']; checks: DoctorCheck[] } {
  const dir = backendDir === null ? null : join(backendDir, 'python');
  if (dir === null || !existsSync(join(dir, 'libtriton_python.so'))) return { facts: null, checks: [] };
  const stub = join(dir, STUB);
  const libPython = linkedLibPython(stub);
  const want = libPython?.match(/^lib(python3\.\d+)/)?.[1];
  // The Python the stub runs: the one its libpython belongs to, else one of that version on PATH.
  const library = libPython === null ? null : resolvedLibPython(stub, libPython);
  const beside = library === null || want === undefined ? null : pythonBeside(library, want);
  const python = want === undefined ? null : (beside ?? onPath(want, path));
  const probe = python === null ? null : probePython(python);
  const facts: PythonFacts = {
    backend: join(dir, 'libtriton_python.so'),
    stub,
    stubExecutable: existsSync(stub) && executable(stub),
    utils: existsSync(join(dir, UTILS)),
    libPython,
    python,
    pythonVersion: probe?.version ?? null,
    numpy: probe?.numpy ?? null,
    pythonError: probe?.error ?? null,
    bash: onPath('bash', path),
  };
  const checks = [stubCheck(facts), pythonCheck(facts), bashCheck(facts)].filter((c) => c !== null);
  return { facts, checks };
}
