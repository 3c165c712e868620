/**
 * Triton calls back after stop(): decoupled backends send responses (and release traces) from
 * their own threads past the exit timeout and past ServerDelete. Nothing those callbacks touch
 * may be freed first, and teardown (exit, worker termination) must not crash on them.
 */
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import {
  BACKEND_DIR,
  FIXTURES,
  LIBRARY_PATH,
  MODELS,
  eventually,
  library,
  serverOptions,
} from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { Server } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

function runChild(mode: string, fixture = 'late-callbacks.ts') {
  return spawnSync(process.execPath, ['--import', 'tsx', `${FIXTURES}/${fixture}`], {
    env: { ...process.env, TEST_LIBRARY: LIBRARY_PATH, TEST_MODELS: MODELS, TEST_MODE: mode },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('callbacks after stop', () => {
  it('stop() with open decoupled streams, server collected: late responses crash nothing and free everything', () => {
    const child = runChild('stop-streams');
    expect(child.stderr).not.toMatch(/Segmentation|double free|terminate called/);
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
    const lines = child.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('done');
    const report = JSON.parse(lines.at(-2)!) as {
      stopped: string;
      codes: string[];
      live: Record<string, number> | null;
    };
    // stop() settles (the exit timeout of 1 s expires with the streams still running: a warning).
    expect(report.stopped).toBe('ok');
    expect(report.codes).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE']);
    if (library().isFake) {
      // Every request, response, trace and the allocator are gone. The server
      // is left undeleted for good: its stop timed out, and deleting it would
      // let Triton destroy its models on threads that use the deleted server.
      expect(report.live).toMatchObject({
        requests: 0,
        responses: 0,
        traces: 0,
        allocators: 0,
        servers: 1,
        outputBuffers: 0,
      });
    }
  });

  it('process.exit(0) while stream responses wait in the queue exits cleanly', () => {
    const child = runChild('exit-queued');
    expect(child.stderr).not.toMatch(/Segmentation|double free|terminate called/);
    expect(child.signal).toBeNull();
    expect(child.stdout.trim()).toBe('done');
    expect(child.status).toBe(0);
  });

  it('workers terminated with open decoupled streams leave this process working', async () => {
    for (let round = 0; round < 2; round++) {
      const worker = new Worker(`${FIXTURES}/worker-streams.mjs`, {
        workerData: { models: MODELS, library: LIBRARY_PATH, backends: BACKEND_DIR },
      });
      const ready = await new Promise<{ holding?: boolean }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      // The first response came; seven more follow, 200 ms apart.
      expect(ready.holding).toBe(true);
      expect(await worker.terminate()).toBe(1);
    }
    // The streams' backend threads still call back into the terminated
    // workers' servers: on the fake, wait until every such request and
    // response is gone (the late callbacks all ran and freed everything);
    // elsewhere, give them the time the streams take.
    if (library().isFake) {
      expect(
        await eventually(() => {
          const live = fakeEngine.liveObjects()!;
          return live.requests === 0 && live.responses === 0;
        }),
      ).toBe(true);
    } else {
      await new Promise((r) => setTimeout(r, 2500));
    }
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

/**
 * Triton destroys a model on a detached thread of its own once the model's last
 * reference goes. Nothing those threads use may be freed under them, and no model
 * may be destroyed right after its load (test/fixtures/model-teardown.ts).
 */
describe("Triton's model deleter threads", () => {
  it('a stop that times out leaves its server undeleted: a second server, and the exit, crash nothing', () => {
    const child = runChild('timed-out-stop', 'model-teardown.ts');
    expect(child.stderr).not.toMatch(/Segmentation|double free|terminate called|triton fake:/);
    expect(child.signal).toBeNull();
    const lines = child.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('done');
    // The natural end keeps process.exitCode although a server is left behind.
    expect(child.status).toBe(3);
    const report = JSON.parse(lines.at(-2)!) as {
      first: { stop: string; ok: number; failed: number };
      second: number[];
      parked: number;
      live: Record<string, number> | null;
    };
    expect(report.first.stop).toBe('timed out');
    expect(report.first.ok + report.first.failed).toBe(1000);
    expect(report.first.failed).toBeGreaterThan(0);
    expect(report.second).toEqual([3]);
    // The first server still counts as running, so the second one is parked
    // rather than deleted (Triton's memory managers go with any delete).
    expect(report.parked).toBe(1);
    if (library().isFake) {
      // Both servers remain; every request and response is gone.
      expect(report.live).toMatchObject({ servers: 2, requests: 0, responses: 0 });
    }
  });

  it('models unloaded, and servers stopped, right after their load crash nothing', () => {
    const child = runChild('load-then-unload', 'model-teardown.ts');
    expect(child.stderr).not.toMatch(/Segmentation|double free|terminate called|triton fake:/);
    expect(child.signal).toBeNull();
    expect(child.stdout.trim()).toBe('done');
    expect(child.status).toBe(0);
  });
});
