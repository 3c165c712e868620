/**
 * Python backend stubs that do not exit when Triton stops them. Triton's
 * python backend runs each model instance in a stub process; at unload it
 * asks the stub to finalize, the stub answers at once, and the backend then
 * waits, without a bound, for the process to exit (r25.07). A stub that
 * hangs in its own teardown after answering (seen with torch models that
 * exchanged GPU tensors) holds a stop to the whole exit timeout, and the
 * server is then left undeleted. During a stop, the stubs of this server
 * still running after a grace period are killed, which ends that wait, and
 * named in a warning.
 */
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { sep } from 'node:path';

/** One stub process of this process. */
export interface StubProcess {
  pid: number;
  /** The model instance it runs (e.g. `resnet50_py_0_0`). */
  instance: string;
  /** Its model.py. */
  modelFile: string;
  /** Its state when it was killed: the process state and what its main thread waited in. */
  state: string;
}

const STUB = 'triton_python_backend_stub';

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The python backend stubs that this process started for models under
 * `repositories` (their command line: the stub, the model file, ..., the
 * parent's pid, ..., the instance name). Linux only; [] where /proc cannot
 * be read.
 */
export function pythonStubs(repositories: readonly string[]): StubProcess[] {
  const roots = repositories.map((r) => real(r) + sep);
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  const me = String(process.pid);
  const found: StubProcess[] = [];
  for (const p of pids) {
    const argv = read(`/proc/${p}/cmdline`).split('\0');
    if (!argv[0]?.endsWith(STUB) || argv[5] !== me) continue;
    const modelFile = argv[1] ?? '';
    if (!roots.some((root) => real(modelFile).startsWith(root))) continue;
    found.push({ pid: Number(p), instance: argv[8] ?? '?', modelFile, state: '' });
  }
  return found;
}

function describeState(pid: number): string {
  const state = /^State:\s*(.*)$/m.exec(read(`/proc/${pid}/status`))?.[1] ?? 'gone';
  const wchan = read(`/proc/${pid}/wchan`).trim();
  const threads = (() => {
    try {
      return readdirSync(`/proc/${pid}/task`).length;
    } catch {
      return 0;
    }
  })();
  return `${state}${wchan && wchan !== '0' ? `, waiting in ${wchan}` : ''}, ${threads} threads`;
}

function kill(stubs: StubProcess[], killed: StubProcess[]): void {
  for (const stub of stubs) {
    if (killed.some((k) => k.pid === stub.pid)) continue;
    stub.state = describeState(stub.pid);
    try {
      process.kill(stub.pid, 'SIGKILL');
      killed.push(stub);
    } catch {
      // It exited meanwhile.
    }
  }
}

/**
 * Watches this server's stubs for a stop: `seconds` from now, every stub
 * still running is killed (SIGKILL), whether Triton's stop is still waiting
 * for it or already gave up. The returned function, called once Triton's
 * stop returned, waits until no stub is left (killing the rest at the
 * deadline) and says which were killed. `seconds` 0: nothing is killed and
 * nothing waited for.
 */
export function watchPythonStubs(
  repositories: readonly string[],
  seconds: number,
): () => Promise<StubProcess[]> {
  const killed: StubProcess[] = [];
  if (seconds === 0) return async () => killed;
  const deadline = Date.now() + seconds * 1000;
  const timer = setTimeout(() => kill(pythonStubs(repositories), killed), seconds * 1000);
  timer.unref();
  return async () => {
    for (;;) {
      const left = pythonStubs(repositories).filter((s) => !killed.some((k) => k.pid === s.pid));
      if (left.length === 0) break;
      if (Date.now() >= deadline) {
        kill(left, killed);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    clearTimeout(timer);
    return killed;
  };
}
