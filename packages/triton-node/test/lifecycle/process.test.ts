import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import {
  BACKEND_DIR,
  FIXTURES,
  LIBRARY_PATH,
  MODELS,
  eventually,
  serverOptions,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { Server } from '../../lib/index.js';

function runChild(extraEnv: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', `${FIXTURES}/exit-without-stop.ts`], {
    env: { ...process.env, TEST_LIBRARY: LIBRARY_PATH, TEST_MODELS: MODELS, ...extraEnv },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('process and thread hygiene', () => {
  it('a process that ends without stop() exits cleanly with code 0', () => {
    const child = runChild({});
    expect(child.signal).toBeNull();
    expect(child.stdout.trim()).toBe('done');
    expect(child.status).toBe(0);
  });

  it('a process that calls process.exit(0) with requests in flight exits cleanly', () => {
    const child = runChild({ TEST_EXPLICIT_EXIT: '1' });
    expect(child.signal).toBeNull();
    expect(child.stdout.trim()).toBe('done');
    expect(child.status).toBe(0);
  });

  it('the addon loaded in a worker thread runs an inference, next to a server on the main thread', async () => {
    const main = await Server.create(serverOptions());
    try {
      await main.loadModel('identity_fp32');
      const worker = new Worker(`${FIXTURES}/worker.mjs`, {
        workerData: { models: MODELS, library: LIBRARY_PATH, backends: BACKEND_DIR },
      });
      const message = new Promise<{ values: number[] }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
      const mainResult = await main.infer('identity_fp32', { inputs: { INPUT0: new Float32Array([8]) } });
      expect(Array.from(mainResult.outputs.OUTPUT0!.data as Float32Array)).toEqual([8]);
      expect((await message).values).toEqual([1.5, 2.5]);
      expect(await exited).toBe(0);
    } finally {
      await main.stop();
    }
  });

  it('a worker terminated while its server runs (requests in flight) leaves this process working', async () => {
    const worker = new Worker(`${FIXTURES}/worker.mjs`, {
      workerData: { models: MODELS, library: LIBRARY_PATH, backends: BACKEND_DIR, hold: true },
    });
    const ready = await new Promise<{ holding?: boolean }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    expect(ready.holding).toBe(true);
    // Requests are in flight (the counter is process-wide) when it is terminated...
    expect(await eventually(() => addon().addonStats().pendingRequests > 0)).toBe(true);
    // ... which ends it as a termination does (exit code 1), not in a crash.
    expect(await worker.terminate()).toBe(1);
    // Its server is stopped by the addon's cleanup: Triton releases every one
    // of those requests.
    expect(await eventually(() => addon().addonStats().pendingRequests === 0)).toBe(true);
    // The addon in this environment is unaffected.
    const main = await Server.create(serverOptions());
    try {
      await main.loadModel('identity_nobatch');
      const r = await main.infer('identity_nobatch', { inputs: { INPUT0: new Float32Array([3]) } });
      expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([3]);
    } finally {
      await main.stop();
    }
  });
});

describe('exit after a stop that timed out with a request still in its backend', () => {
  function run(env: Record<string, string>) {
    return spawnSync(process.execPath, ['--import', 'tsx', `${FIXTURES}/exit-after-timed-out-stop.ts`], {
      env: { ...process.env, TEST_LIBRARY: LIBRARY_PATH, TEST_MODELS: MODELS, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
  }

  it('process.exit(n) ends the process with n, not a signal', () => {
    const child = run({ TEST_EXIT_CODE: '7' });
    expect(child.stderr).not.toMatch(/static objects/);
    expect(child.signal).toBeNull();
    expect(child.stdout).toMatch(/^stopped; stream error/m);
    expect(child.status).toBe(7);
  });

  it('a natural end keeps process.exitCode', () => {
    const child = run({ TEST_EXIT_CODE: '5', TEST_NATURAL: '1' });
    expect(child.signal).toBeNull();
    expect(child.stdout).toMatch(/^stopped; stream error/m);
    expect(child.status).toBe(5);
  });
});
