// A Python backend stub that does not exit when Triton stops it: Triton's
// python backend waits for the process without a bound (r25.07, seen with
// torch models on the GPU; test/gpu/torch-lifecycle.test.ts), which held
// stop() to the whole exit timeout and left the server undeleted. stop()
// kills this server's stubs still running `pythonStubExitSeconds` into it,
// and names them in a TritonWarning. Here the "stub" is a process of our own
// with a stub's command line (the model file, this process's pid, the
// instance name), and the stop is held by a request on a slow model.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, serverOptions } from '@triton-node/test-support/helpers.js';
import { afterEach, describe, expect, it } from 'vitest';
import { pythonStubs } from '../../lib/api/python-stubs.js';
import { Server } from '../../lib/index.js';

const SLOW_CONFIG = `name: "identity_slow_stop"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "execute_delay_ms" value: { string_value: "2000" } }
`;

/** A process whose command line is a stub's, for a model file under `repo`; it never exits by itself. */
function fakeStub(repo: string, instance: string): ChildProcess {
  const dir = join(repo, 'pystub', '1');
  mkdirSync(dir, { recursive: true });
  // A model whose one request holds the stop a while.
  mkdirSync(join(repo, 'identity_slow_stop', '1'), { recursive: true });
  writeFileSync(join(repo, 'identity_slow_stop', 'config.pbtxt'), SLOW_CONFIG);
  const file = join(dir, 'model.py');
  // Node runs the file as CommonJS whatever its extension: it only waits.
  writeFileSync(file, 'setInterval(() => {}, 1 << 30);\n');
  return spawn(
    process.execPath,
    [file, 'shm_region', '1048576', '1048576', String(process.pid), 'backends', '0', instance],
    {
      argv0: join(repo, 'triton_python_backend_stub'),
      stdio: 'ignore',
    },
  );
}

describe('stop() and Python stubs that do not exit', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });

  it('kills this server’s stubs still running pythonStubExitSeconds into stop(), and says which', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'tn-stubs-'));
    cleanup.push(() => rmSync(repo, { recursive: true, force: true }));
    const stub = fakeStub(repo, 'pystub_0_0');
    cleanup.push(() => stub.kill('SIGKILL'));
    const other = fakeStub(mkdtempSync(join(tmpdir(), 'tn-stubs-other-')), 'elsewhere_0_0');
    cleanup.push(() => other.kill('SIGKILL'));
    expect(await eventually(() => pythonStubs([repo]).length === 1, 30_000), 'the stub is seen').toBe(true);
    expect(pythonStubs([repo])[0]).toMatchObject({ pid: stub.pid, instance: 'pystub_0_0' });

    const server = await Server.create(
      serverOptions({ modelRepository: repo, pythonStubExitSeconds: 1, exitTimeoutSeconds: 30 }),
    );
    await server.loadModel('identity_slow_stop');
    const inFlight = server
      .model('identity_slow_stop')
      .infer({ inputs: { INPUT0: new Float32Array(4) } })
      .catch((e: unknown) => e);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      stub.once('exit', (_code, signal) => resolve(signal)),
    );
    try {
      await server.stop();
      await inFlight;
    } finally {
      process.off('warning', onWarning);
    }
    expect(await exited).toBe('SIGKILL');
    // Only this server's stubs: one under another repository is left alone.
    expect(other.exitCode).toBe(null);
    expect(other.signalCode).toBe(null);
    const said = warnings.find((w) => w.includes('Python backend stub'));
    expect(said, warnings.join('\n')).toMatch(/'pystub_0_0' \(pid \d+: .+\).*killed/);
  });

  it('pythonStubExitSeconds: 0 kills nothing; a bad value is a RangeError naming the option', async () => {
    await expect(Server.create(serverOptions({ pythonStubExitSeconds: -1 }))).rejects.toThrow(
      /pythonStubExitSeconds/,
    );
    const repo = mkdtempSync(join(tmpdir(), 'tn-stubs-'));
    cleanup.push(() => rmSync(repo, { recursive: true, force: true }));
    const stub = fakeStub(repo, 'pystub_0_0');
    cleanup.push(() => stub.kill('SIGKILL'));
    expect(await eventually(() => pythonStubs([repo]).length === 1, 30_000)).toBe(true);
    const server = await Server.create(serverOptions({ modelRepository: repo, pythonStubExitSeconds: 0 }));
    await server.loadModel('identity_slow_stop');
    const inFlight = server
      .model('identity_slow_stop')
      .infer({ inputs: { INPUT0: new Float32Array(4) } })
      .catch((e: unknown) => e);
    await server.stop();
    await inFlight;
    expect(stub.exitCode).toBe(null);
    expect(stub.signalCode).toBe(null);
  });
});
