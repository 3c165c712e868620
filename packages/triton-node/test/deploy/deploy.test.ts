// server.deploy(), rollback() and deployments(): versions rolled out and
// back while 8 clients send requests without pause. No request may fail, and
// each response must come from the version pinned when it was sent. On the
// fake and on a real Triton.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { MODELS, serverOptions, until } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DeployHost, Deployments } from '../../lib/deploy/deploy.js';
import {
  type Deployment,
  type DeploymentStep,
  type InferResult,
  type Metric,
  Server,
  type Tensor,
} from '../../lib/index.js';

const MODEL = 'identity_fp32';

/** A repository with identity_fp32 at version 1 only. */
function repository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'triton-node-deploy-'));
  cpSync(join(MODELS, MODEL), join(dir, MODEL), { recursive: true });
  return dir;
}

/** Clients that send requests without pause, and check each response's version against the pin at send time. */
function startClients(server: Server, count: number) {
  const state = {
    running: true,
    sent: 0,
    failures: [] as string[],
    wrongVersion: [] as string[],
    byVersion: new Map<number, number>(),
  };
  const model = server.model(MODEL);
  const loops = Array.from({ length: count }, async (_, client) => {
    let i = 0;
    while (state.running) {
      const expected = server.pinnedVersion(MODEL);
      const value = client * 1_000_000 + i++;
      state.sent++;
      try {
        const r = await model.infer({ inputs: { INPUT0: Float32Array.of(value) } });
        if ((r.outputs.OUTPUT0!.data as Float32Array)[0] !== value)
          state.failures.push(`client ${client}: wrong output`);
        if (expected !== undefined && r.version !== expected) {
          state.wrongVersion.push(`client ${client}: pinned ${expected}, served by ${r.version}`);
        }
        state.byVersion.set(r.version, (state.byVersion.get(r.version) ?? 0) + 1);
      } catch (err) {
        state.failures.push(`client ${client}: ${(err as Error).message}`);
      }
    }
  });
  return {
    state,
    async stop() {
      state.running = false;
      await Promise.all(loops);
    },
  };
}

/** Waits until the clients got `n` more answers from `version` than they had. */
async function answered(clients: ReturnType<typeof startClients>, version: number, n: number): Promise<void> {
  const by = () => clients.state.byVersion.get(version) ?? 0;
  const from = by();
  await until(
    `${n} answers from version ${version}`,
    () => by() >= from + n,
    () => ({
      byVersion: [...clients.state.byVersion],
      failures: clients.state.failures.slice(0, 3),
    }),
  );
}

const sameOutputs = (a: Record<string, Tensor>, b: Record<string, Tensor>) =>
  Object.keys(a).every(
    (k) => Buffer.compare(bytesOf(a[k]!.data as Float32Array), bytesOf(b[k]!.data as Float32Array)) === 0,
  );

/**
 * The bytes of a view only: outputs of 1 KiB or less share one 32 KiB
 * ArrayBuffer with other responses, so `.buffer` alone would compare theirs.
 */
const bytesOf = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

describe('deploy, canary, rollback under load', () => {
  const repo = repository();
  let server: Server;
  beforeAll(async () => {
    server = await Server.create(serverOptions({ modelRepository: repo }));
    await server.loadModel(MODEL);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repo, { recursive: true, force: true });
  });

  it('deploys v2 (canary passes), v3 (canary fails: rolled back), rolls back to v1: no request fails, each served by its pinned version', async () => {
    const clients = startClients(server, 8);
    const steps: DeploymentStep[] = [];
    try {
      await answered(clients, 1, 20);
      const v2 = await server.deploy(MODEL, {
        files: { 'notes.txt': 'version 2' },
        canary: { requests: [{ inputs: { INPUT0: Float32Array.of(1, 2, 3) } }], compare: sameOutputs },
        reason: 'first rollout',
        onStep: (s) => steps.push(s),
      });
      expect(v2).toMatchObject({
        kind: 'deploy',
        from: 1,
        to: 2,
        status: 'succeeded',
        pinned: 2,
        reason: 'first rollout',
      });
      expect(v2.canary).toMatchObject({ requests: 1, requestErrors: 0, mismatches: 0 });
      expect(v2.loaded).toEqual([1, 2]);
      expect(server.pinnedVersion(MODEL)).toBe(2);
      expect(readFileSync(join(repo, MODEL, '2', 'notes.txt'), 'utf8')).toBe('version 2');
      expect(steps.map((s) => s.step)).toEqual(['writing', 'loading', 'canary', 'switching', 'done']);
      await answered(clients, 2, 20);

      // v3's canary sends a request v3 refuses (no such input): rolled back.
      const v3 = await server.deploy(MODEL, {
        files: { 'notes.txt': 'version 3' },
        canary: { requests: [{ inputs: { NOT_AN_INPUT: Float32Array.of(1) } }] },
      });
      expect(v3).toMatchObject({ from: 2, to: 3, status: 'rolled-back', pinned: 2 });
      expect(v3.reason).toMatch(/canary request 1 failed on version 3/);
      expect(v3.loaded).toEqual([1, 2]);
      expect(server.pinnedVersion(MODEL)).toBe(2);
      await answered(clients, 2, 20);

      const back = await server.rollback(MODEL, { to: 1, reason: 'v2 misbehaves' });
      expect(back).toMatchObject({ kind: 'rollback', from: 2, to: 1, status: 'succeeded', pinned: 1 });
      expect(server.pinnedVersion(MODEL)).toBe(1);
      await answered(clients, 1, 20);
    } finally {
      await clients.stop();
    }
    expect(clients.state.failures).toEqual([]);
    expect(clients.state.wrongVersion).toEqual([]);
    // Traffic really moved: versions 1 and 2 both served; 3 never did.
    expect(clients.state.byVersion.get(1)).toBeGreaterThan(0);
    expect(clients.state.byVersion.get(2)).toBeGreaterThan(0);
    expect(clients.state.byVersion.has(3)).toBe(false);
    expect(clients.state.sent).toBeGreaterThan(50);
  });

  it('keeps the history in the model folder; a new Server reads it and loads the deployed version', async () => {
    const history = await server.deployments(MODEL);
    expect(history.map((d) => [d.kind, d.to, d.status])).toEqual([
      ['deploy', 2, 'succeeded'],
      ['deploy', 3, 'rolled-back'],
      ['rollback', 1, 'succeeded'],
    ]);
    const lines = readFileSync(join(repo, MODEL, 'deployments.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(3);
    // The failed version stays on disk; no staging folder is left behind.
    expect(readdirSync(join(repo, MODEL)).sort()).toEqual([
      '1',
      '2',
      '3',
      'config.pbtxt',
      'deployments.jsonl',
    ]);

    const again = await Server.create(serverOptions({ modelRepository: repo }));
    try {
      expect(await again.deployments(MODEL)).toEqual(history);
      await again.loadModel(MODEL);
      expect(again.pinnedVersion(MODEL)).toBe(1);
      const r = await again.model(MODEL).infer({ inputs: { INPUT0: Float32Array.of(5) } });
      expect(r.version).toBe(1);
      // Version 3 (rolled back) is on disk but not loaded.
      expect(await again.model(MODEL, 3).isReady()).toBe(false);
    } finally {
      await again.stop();
    }
  });

  it('reports the pinned version and the outcomes as metrics', async () => {
    const text = await server.metrics();
    expect(text).toMatch(/triton_node_deployment\{model="identity_fp32"\} 1\b/);
    expect(text).toMatch(/triton_node_deployments_total\{[^}]*outcome="rolled-back"[^}]*\} 1\b/);
  });

  it('a live-traffic canary sends a share of requests to the new version, then pins it', async () => {
    const clients = startClients(server, 8);
    let d: Deployment;
    try {
      // The live share opens right after the 'canary' step (nothing to
      // await between): two requests sent at once from there go one to each
      // version, whatever else the clients manage in the 400 ms.
      let opened!: () => void;
      const canaryOpen = new Promise<void>((r) => {
        opened = r;
      });
      const deployed = server.deploy(MODEL, {
        version: 2,
        canary: { traffic: 0.5, durationMs: 400, maxErrorRate: 0 },
        onStep: (s) => s.step === 'canary' && opened(),
      });
      await canaryOpen;
      const both = await Promise.all(
        [1, 2].map(() => server.model(MODEL).infer({ inputs: { INPUT0: Float32Array.of(9) } })),
      );
      expect(both.map((r) => r.version).sort()).toEqual([1, 2]);
      d = await deployed;
    } finally {
      await clients.stop();
    }
    expect(d).toMatchObject({ from: 1, to: 2, status: 'succeeded', pinned: 2 });
    expect(d.canary!.liveRequests).toBeGreaterThan(0);
    expect(d.canary!.liveErrors).toBe(0);
    expect(clients.state.failures).toEqual([]);
  });

  it('a version that does not load fails the deployment and changes nothing', async () => {
    const before = server.pinnedVersion(MODEL);
    const d = await server.deploy(MODEL, { version: 3, config: { name: MODEL, backend: 'no_such_backend' } });
    expect(d.status).toBe('failed');
    expect(d.reason).toMatch(/version 3 did not load/);
    expect(server.pinnedVersion(MODEL)).toBe(before);
    const r = await server.model(MODEL).infer({ inputs: { INPUT0: Float32Array.of(1) } });
    expect(r.version).toBe(before);
  });

  it('refuses malformed calls with errors that name the mistake', async () => {
    await expect(server.deploy(MODEL, {} as never)).rejects.toThrow(/either version .* or files/);
    await expect(server.deploy(MODEL, { version: 0 })).rejects.toThrow(/deploy version/);
    await expect(server.deploy(MODEL, { files: { '../x': 'a' } })).rejects.toThrow(/without '\.\.'/);
    await expect(server.deploy(MODEL, { version: 9 })).rejects.toThrow(/no version folder 9/);
    await expect(server.deploy(MODEL, { version: 1, canary: { traffic: 2 } })).rejects.toThrow(
      /canary\.traffic/,
    );
    await expect(server.deploy(MODEL, { version: 1, keep: -1 })).rejects.toThrow(/deploy keep/);
    await expect(server.deploy('no_such_model', { version: 1 })).rejects.toThrow(/no 'no_such_model'/);
    await expect(server.rollback(MODEL, { to: 42 })).rejects.toThrow(/no version folder 42/);
    expect(existsSync(join(repo, MODEL, '4'))).toBe(false);
  });
});

/**
 * A stand-in for the server under Deployments: versions load after
 * `loadMs` (or once `loaded` settles), and an inference at a version that is
 * not loaded fails as Triton's does. Routing and verdicts are then exact,
 * whatever the engine.
 */
function standInHost(repo: string, options: { loadMs?: number; loaded?: () => Promise<void> } = {}) {
  const state = { loaded: new Set<number>([1]), loads: 0 };
  const host: DeployHost = {
    repositories: [repo],
    async loadModel(_name, { versions }) {
      state.loads++;
      if (options.loaded !== undefined) await options.loaded();
      else await new Promise((r) => setTimeout(r, options.loadMs ?? 0));
      state.loaded = new Set(versions);
    },
    async unloadModel() {
      state.loaded.clear();
    },
    async readyVersions() {
      return [...state.loaded].sort((a, b) => a - b);
    },
    async inferAt(_name, version) {
      return { version, outputs: {}, dispose() {} } as unknown as InferResult;
    },
    createMetric: () => ({ increment() {}, set() {} }) as unknown as Metric,
    stopped: false,
  };
  return { host, state };
}

/** Unversioned requests through `deployments` until `until` settles; run(version) answers after `latencyMs(version)`. */
async function routeUntil(
  deployments: Deployments,
  state: { loaded: Set<number> },
  until: Promise<unknown>,
  latencyMs: (version: number) => number,
  clients = 4,
  served: number[] = [],
) {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const failures: string[] = [];
  const run = async (version: number) => {
    const v = version === -1 ? Math.max(...state.loaded) : version;
    if (!state.loaded.has(v)) throw new Error(`version ${v} of '${MODEL}' is not available`);
    await new Promise((r) => setTimeout(r, latencyMs(v)));
    return { version: v } as InferResult;
  };
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!done) {
        try {
          served.push((await deployments.infer(MODEL, run)).version);
        } catch (err) {
          failures.push((err as Error).message);
          await new Promise((r) => setImmediate(r)); // a failure is at once: let timers run
        }
      }
    }),
  );
  return { served, failures };
}

describe('the canary and the rollback, on a stand-in server', () => {
  let repo: string;
  beforeAll(() => {
    repo = repository();
    mkdirSync(join(repo, MODEL, '2'));
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));
  const fresh = (loaded?: () => Promise<void>) => {
    rmSync(join(repo, MODEL, 'deployments.jsonl'), { force: true });
    const { host, state } = standInHost(repo, { loadMs: 100, loaded });
    return { deployments: new Deployments(host), state };
  };

  it('judges latency on the new version: a new version 10× slower is rolled back, one as fast is pinned', async () => {
    // Latency by a clock the test moves: each request takes exactly its version's time, however busy the machine.
    let now = 0;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      for (const slow of [true, false]) {
        const { deployments, state } = fresh();
        const d = deployments.deploy(MODEL, {
          version: 2,
          canary: { traffic: 0.5, durationMs: 300, maxLatencyRatio: 3, minRequests: 5 },
        });
        let done = false;
        void d.finally(() => {
          done = true;
        });
        while (!done) {
          await deployments.infer(MODEL, async (version) => {
            const v = version === -1 ? Math.max(...state.loaded) : version;
            now += v === 2 && slow ? 30 : 3;
            await new Promise((r) => setImmediate(r));
            return { version: v } as InferResult;
          });
        }
        const result = await d;
        expect(result.canary!.liveRequests).toBeGreaterThan(5);
        if (slow) {
          expect(result).toMatchObject({ status: 'rolled-back', pinned: 1 });
          expect(result.reason).toMatch(/p99 latency ratio 10\.00 over maxLatencyRatio 3/);
          expect(result.canary).toMatchObject({ p99Ms: 30, baselineP99Ms: 3 });
        } else {
          expect(result).toMatchObject({ status: 'succeeded', pinned: 2 });
          expect(result.canary).toMatchObject({ p99Ms: 3, baselineP99Ms: 3, latencyRatio: 1 });
        }
      }
    } finally {
      clock.mockRestore();
    }
  });

  it('traffic: 0.1 sends about a tenth of live requests to the canary', async () => {
    const { deployments, state } = fresh();
    let live!: () => void;
    const canaryStarted = new Promise<void>((r) => {
      live = r;
    });
    const d = deployments.deploy(MODEL, {
      version: 2,
      canary: { traffic: 0.1, durationMs: 500 },
      onStep: (s) => s.step === 'canary' && live(),
    });
    await canaryStarted;
    await new Promise((r) => setImmediate(r)); // the canary routes from here on
    const served: number[] = [];
    const run = async (version: number) => ({
      version: version === -1 ? Math.max(...state.loaded) : version,
    });
    for (let i = 0; i < 200; i++) served.push((await deployments.infer(MODEL, run as never)).version);
    const share = served.filter((v) => v === 2).length / served.length;
    expect(share).toBeGreaterThan(0.02);
    expect(share).toBeLessThan(0.25);
    expect((await d).canary!.liveRequests).toBe(served.filter((v) => v === 2).length);
  });

  it('a rollback to an unloaded version pins it only once it loaded: no request fails meanwhile', async () => {
    // The rollback's load ends once 20 requests were served during it.
    const served: number[] = [];
    let loading = false;
    const { deployments, state } = fresh(async () => {
      if (!loading) return;
      await until('20 requests served during the load', () => served.length >= 20);
    });
    await deployments.deploy(MODEL, { version: 2, keep: 0 });
    expect([...state.loaded]).toEqual([2]);
    loading = true;
    const rollback = deployments.rollback(MODEL, { to: 1 });
    const { failures } = await routeUntil(deployments, state, rollback, () => 1, 4, served);
    expect(await rollback).toMatchObject({ kind: 'rollback', to: 1, pinned: 1 });
    expect(failures).toEqual([]);
    expect(served.length).toBeGreaterThanOrEqual(20);
    expect(deployments.pinned(MODEL)).toBe(1);
  });
});

describe('keep', () => {
  const repo = repository();
  let server: Server;
  beforeAll(async () => {
    server = await Server.create(serverOptions({ modelRepository: repo }));
    await server.loadModel(MODEL);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repo, { recursive: true, force: true });
  });

  it('keep: 2 keeps exactly the two versions pinned before the new one loaded', async () => {
    expect((await server.deploy(MODEL, { files: { 'v.txt': '2' } })).loaded).toEqual([1, 2]);
    expect((await server.deploy(MODEL, { files: { 'v.txt': '3' }, keep: 2 })).loaded).toEqual([1, 2, 3]);
    expect((await server.deploy(MODEL, { files: { 'v.txt': '4' }, keep: 2 })).loaded).toEqual([2, 3, 4]);
    expect((await server.deploy(MODEL, { files: { 'v.txt': '5' }, keep: 0 })).loaded).toEqual([5]);
  });
});
