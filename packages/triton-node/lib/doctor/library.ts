/**
 * The doctor's library and backend lines. Each libtritonserver candidate is
 * probed in a child process of its own: a process can load one Triton
 * library, once, so probing in the caller's process would load Triton into
 * it and hide every candidate after the first that loads. The child loads
 * the candidate through the public API, starts a server on an empty
 * repository to read Triton's version, stops it and prints JSON.
 * @internal
 * @packageDocumentation
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type LoadAttempt, MIN_TRITON_API, TRITON_API } from '../abi/binding.js';
import { DEFAULT_LIBRARY_PATH, libraryCandidates } from '../addon/load.js';
import { PROVEN_RELEASES, provenRelease } from '../api/releases.js';
import type { DoctorCheck, DoctorReport, LibraryProbe } from './report.js';

/** The backends the fake engine has built in. */
export const FAKE_BACKENDS = ['identity', 'repeat', 'square', 'fake_text_stream', 'fake_text_embedding'];

/** Triton's compiled-in backend directory (its container layout). */
const TRITON_BACKEND_DIR = '/opt/tritonserver/backends';

/** The module the child imports: the package's dist/index.js once built (beside this chunk), lib/index.ts under tsx. */
function entryModule(): { url: string; nodeArgs: string[] } {
  const self = import.meta.url;
  if (self.endsWith('.ts')) return { url: new URL('../index.ts', self).href, nodeArgs: ['--import', 'tsx'] };
  return { url: new URL('./index.js', self).href, nodeArgs: [] };
}

/** The child's program: load, start a server with nothing in it, print what was seen. */
const PROBE_SOURCE = `
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const [entry, library, backendDirectory] = process.argv.slice(-3);
const api = await import(entry);
const out = { library: null, error: null, version: null, serverError: null };
try {
  out.library = api.loadLibrary(library);
} catch (err) {
  out.error = { message: err.message, attempts: err.attempts ?? [] };
}
if (out.library !== null) {
  const repository = mkdtempSync(join(tmpdir(), 'triton-node-doctor-'));
  try {
    const server = await api.Server.create({
      library, modelRepository: repository, modelControlMode: 'explicit', metrics: false,
      exitTimeoutSeconds: 1, log: { info: false, warn: false, error: false },
      ...(backendDirectory ? { backendDirectory } : {}),
    });
    out.version = (await server.metadata()).version;
    await server.stop();
  } catch (err) {
    out.serverError = err.message.split('\\n')[0];
  } finally {
    rmSync(repository, { recursive: true, force: true });
  }
}
process.stdout.write('\\n@@doctor ' + JSON.stringify(out) + '\\n');
process.exit(0);
`;

interface ProbeOutput {
  library: { apiMajor: number; apiMinor: number; isFake: boolean } | null;
  error: { message: string; attempts: LoadAttempt[] } | null;
  version: string | null;
  serverError: string | null;
}

/** Runs this Node (plain Node in Electron) with `args`; never rejects. */
export function runChild(
  args: string[],
  timeoutMs: number,
): Promise<{ out: string; err: string; why: string }> {
  return new Promise((resolve) => {
    // In Electron's main process execPath is Electron itself: run it as plain Node.
    const env = process.versions.electron ? { ...process.env, ELECTRON_RUN_AS_NODE: '1' } : process.env;
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
      env,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += String(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      err += String(d);
    });
    child.on('error', (e) => resolve({ out, err, why: e.message }));
    child.on('close', (code, signal) => {
      const why = signal
        ? `the probe was killed by ${signal}`
        : code === 0
          ? ''
          : `the probe exited with ${code}`;
      resolve({ out, err, why });
    });
  });
}

/** Probes one candidate in a child process. */
async function probe(path: string, source: LibraryProbe['source'], backendDir: string, timeoutMs: number) {
  const entry = entryModule();
  const args = [...entry.nodeArgs, '--input-type=module', '-e', PROBE_SOURCE, entry.url, path, backendDir];
  const { out, err, why } = await runChild(args, timeoutMs);
  const result: LibraryProbe = {
    path,
    source,
    outcome: 'probe',
    detail: '',
    apiVersion: null,
    version: null,
    serverError: null,
    isFake: false,
    used: false,
  };
  const line = out.split('\n').find((l) => l.startsWith('@@doctor '));
  if (line === undefined) {
    const tail = err.trim().split('\n').slice(-1)[0] ?? '';
    result.detail = `${why || 'the probe printed nothing'}${tail ? `: ${tail}` : ''}`;
    return result;
  }
  const seen = JSON.parse(line.slice('@@doctor '.length)) as ProbeOutput;
  if (seen.library !== null) {
    result.outcome = 'loaded';
    result.apiVersion = `${seen.library.apiMajor}.${seen.library.apiMinor}`;
    result.isFake = seen.library.isFake;
    result.version = seen.version;
    result.serverError = seen.serverError;
  } else {
    const attempt = seen.error?.attempts[0];
    result.outcome = attempt?.outcome ?? 'probe';
    result.detail = attempt?.detail ?? seen.error?.message.split('\n')[0] ?? '';
  }
  return result;
}

/** Every candidate, in the loader's order; the first that loads is the one used. */
export async function probeLibraries(
  library: string | undefined,
  backendDir: string | undefined,
  timeoutMs: number,
): Promise<LibraryProbe[]> {
  const sourceOf = (path: string, i: number): LibraryProbe['source'] =>
    library !== undefined
      ? 'option'
      : i === 0 && path !== DEFAULT_LIBRARY_PATH
        ? 'TRITON_SERVER_LIB'
        : 'default';
  const probes = await Promise.all(
    libraryCandidates(library).map((path, i) => probe(path, sourceOf(path, i), backendDir ?? '', timeoutMs)),
  );
  const used = probes.find((p) => p.outcome === 'loaded');
  if (used !== undefined) used.used = true;
  return probes;
}

/** The backend directory a server on `library` would use: as ServerOptions decides it. */
export function backendDirectoryFor(
  used: LibraryProbe | undefined,
  given: string | undefined,
): string | null {
  if (given !== undefined) return given;
  if (used?.isFake) return null;
  if (used !== undefined) {
    const beside = join(dirname(dirname(used.path)), 'backends');
    if (existsSync(beside)) return beside;
  }
  return TRITON_BACKEND_DIR;
}

/** Backends in `dir`: folders holding libtriton_<name>.so, or a model.py-based backend. */
export function listBackends(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
    const files = existsSync(join(dir, entry.name)) ? readdirSync(join(dir, entry.name)) : [];
    if (files.includes(`libtriton_${entry.name}.so`) || files.includes('model.py')) found.push(entry.name);
  }
  return found.sort();
}

const OUTCOME_TEXT: Record<string, string> = {
  missing: 'not found',
  dlopen: 'found, but it does not load',
  symbols: "not Triton's server library",
  version: 'Triton too old (or of another API major)',
  probe: 'could not be probed',
};

const OUTCOME_FIX: Record<string, string> = {
  missing:
    'use the NGC Triton image (nvcr.io/nvidia/tritonserver:<yy.mm>-py3, /opt/tritonserver), or set TRITON_SERVER_LIB=/path/to/libtritonserver.so; to try triton-node without Triton: npx triton-node demo, npx triton-node serve --fake-engine',
  dlopen:
    'a library it needs is missing (the detail names it; `ldd` on the file lists them all): run in the image Triton was built for, or add that library to LD_LIBRARY_PATH',
  symbols: 'point TRITON_SERVER_LIB at libtritonserver.so itself',
  version: `upgrade Triton to C API ${MIN_TRITON_API} or a later ${TRITON_API.major}.x (triton-node is tested on Triton ${Object.values(PROVEN_RELEASES).join(' and ')}, C API ${TRITON_API.major}.${TRITON_API.minor})`,
  probe: 'run `node -e "require(\'triton-node\').loadLibrary()"` to see the error',
};

function whereFrom(p: LibraryProbe): string {
  return p.source === 'option'
    ? '--library'
    : p.source === 'TRITON_SERVER_LIB'
      ? 'TRITON_SERVER_LIB'
      : "Triton's path";
}

/** One line per candidate: the one used, the ones passed over, and why each was refused. */
export function libraryChecks(probes: LibraryProbe[]): DoctorCheck[] {
  const anyLoaded = probes.some((p) => p.used);
  const usedIndex = probes.findIndex((p) => p.used);
  return probes.map((p, i): DoctorCheck => {
    if (p.outcome === 'loaded') {
      const release = p.version === null ? null : provenRelease(p.version);
      const what = p.isFake
        ? "triton-node's fake engine"
        : `Triton ${p.version ?? '(version unknown)'}${release === null ? '' : ` (${release})`}`;
      const role = p.used ? 'used' : 'not used: an earlier candidate loads';
      const line: DoctorCheck = {
        topic: 'library',
        subject: p.path,
        status: p.used ? (p.isFake ? 'warn' : 'ok') : 'info',
        detail: `${what}, C API ${p.apiVersion} (${whereFrom(p)}; ${role})`,
      };
      if (p.used && p.isFake) line.fix = 'the fake engine is for tests; point at a real Triton for inference';
      if (p.serverError !== null) {
        line.status = 'warn';
        line.detail += `; a server does not start: ${p.serverError}`;
        line.fix =
          'see the message; `doctor --repository DIR` checks the models, docs/troubleshooting.md the rest';
      }
      return line;
    }
    const passedOver = anyLoaded && i > usedIndex;
    const quiet = passedOver || (p.outcome === 'missing' && p.source === 'default');
    const status = !anyLoaded ? 'fail' : quiet ? 'info' : 'warn';
    const line: DoctorCheck = {
      topic: 'library',
      subject: p.path,
      status,
      detail: `${OUTCOME_TEXT[p.outcome] ?? p.outcome} (${whereFrom(p)})${p.detail ? `: ${p.detail}` : ''}`,
    };
    if (status !== 'info') line.fix = OUTCOME_FIX[p.outcome];
    return line;
  });
}

/** The backend directory's line: which backends a model can use. */
export function backendChecks(
  used: LibraryProbe | undefined,
  dir: string | null,
): {
  facts: DoctorReport['backends'];
  checks: DoctorCheck[];
} {
  if (dir === null) {
    const facts = { directory: null, found: [...FAKE_BACKENDS] };
    const detail = `built into the fake engine: ${FAKE_BACKENDS.join(', ')}`;
    return { facts, checks: [{ topic: 'backends', subject: '(fake engine)', status: 'info', detail }] };
  }
  const found = existsSync(dir) ? listBackends(dir) : [];
  const facts = { directory: dir, found };
  const status = found.length > 0 ? 'ok' : used === undefined ? 'info' : 'warn';
  const detail = !existsSync(dir)
    ? 'no such directory'
    : found.length === 0
      ? 'no backends in it (folders with libtriton_<name>.so)'
      : `${found.length} backend(s): ${found.join(', ')}`;
  const line: DoctorCheck = { topic: 'backends', subject: dir, status, detail };
  if (status === 'warn')
    line.fix = 'pass backendDirectory (or --backend-dir) where the backends are installed';
  return { facts, checks: [line] };
}
