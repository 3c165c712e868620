// tune(): the dynamic batching procedure in-process, on identity_delay (20 ms
// per execution, whatever the batch: batching multiplies throughput). The
// pick is the best measured point within the SLA; the original config comes
// back after a normal end, an error, an abort and SIGINT.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKEND_DIR, LIBRARY_PATH, MODELS, serverOptions } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ModelConfig,
  Server,
  TritonError,
  type TuneProgress,
  tune,
  tuneReportHtml,
} from '../../lib/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODEL = 'identity_delay';
const quick = { durationMs: 300, warmupMs: 100, concurrency: [1, 8], instances: [1] } as const;

describe('tune()', () => {
  let server: Server;
  let original: ModelConfig;
  beforeAll(async () => {
    server = await Server.create(serverOptions());
    await server.loadModel(MODEL);
    await server.loadModel('repeat_int32');
    original = await server.model(MODEL).config();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('picks the best throughput within the SLA, measures it again, and puts the original config back', async () => {
    const progress: string[] = [];
    const steps: TuneProgress[] = [];
    const result = await tune(server, MODEL, {
      ...quick,
      slaP99Ms: 500,
      preferredBatchSizes: [2, 8],
      queueDelaysUs: [1000],
      onProgress: (p) => {
        progress.push(p.what);
        steps.push(p);
      },
    });
    // One total for the whole run (4 sweeps × 2 concurrencies + the recheck), never changing.
    expect(new Set(steps.map((p) => p.planned))).toEqual(new Set([9]));
    expect(steps.map((p) => p.done)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(steps.at(-1)).toMatchObject({ done: 9, planned: 9, skipped: 0 });
    // Baseline first, then the preferred sizes in order, then the queue delay.
    expect(result.points.map((p) => [p.preferredBatchSize, p.queueDelayUs, p.concurrency])).toEqual([
      [null, 0, 1],
      [null, 0, 8],
      [2, 0, 1],
      [2, 0, 8],
      [8, 0, 1],
      [8, 0, 8],
      [8, 1000, 1],
      [8, 1000, 8],
    ]);
    expect(progress.at(-1)).toBe('done');
    const within = result.points.filter((p) => p.meetsSla);
    const top = within.reduce((a, b) => (b.throughput > a.throughput ? b : a));
    expect(result.best).toEqual(top);
    // 20 ms per execution whatever the batch: at concurrency 8 batching wins by far.
    expect(result.best!.preferredBatchSize).not.toBeNull();
    expect(result.best!.concurrency).toBe(8);
    expect(result.best!.meanBatchSize).toBeGreaterThan(1);
    expect(result.recheck).toMatchObject({ instances: result.best!.instances, meetsSla: true });
    expect(result.configText).toContain(`preferred_batch_size: [ ${result.best!.preferredBatchSize} ]`);
    expect(result.config!.dynamic_batching).toMatchObject({
      preferred_batch_size: [result.best!.preferredBatchSize],
    });
    expect(await server.model(MODEL).config()).toEqual(original);
    const html = tuneReportHtml(result);
    expect(html).toContain('<svg');
    expect(html).toContain('SLA p99 500 ms');
    expect(html).toContain('pick:');
  });

  it('stops raising the preferred size at the first configuration that breaks the SLA everywhere', async () => {
    // An SLA under one execution (20 ms): nothing meets it.
    const steps: TuneProgress[] = [];
    const result = await tune(server, MODEL, {
      ...quick,
      slaP99Ms: 5,
      preferredBatchSizes: [2, 4, 8],
      queueDelaysUs: [1000],
      onProgress: (p) => steps.push(p),
    });
    expect(result.points.map((p) => p.preferredBatchSize)).toEqual([null, null, 2, 2]);
    expect(result.best).toBeUndefined();
    // The total stays 11 (5 sweeps × 2 + the recheck): the sizes, the delay and the recheck left out count as done.
    expect(new Set(steps.map((p) => p.planned))).toEqual(new Set([11]));
    expect(steps.at(-1)).toMatchObject({ done: 11, planned: 11, skipped: 7, what: 'done' });
    expect(steps.map((p) => p.done)).toEqual([...steps.map((p) => p.done)].sort((a, b) => a - b));
    // Why, in numbers: one request alone (20 ms per execution) is already over 5 ms.
    const single = result.points.find((p) => p.preferredBatchSize === null && p.concurrency === 1)!;
    expect(result.reason).toBe(
      `a single request already took ${single.p99Ms.toFixed(1)} ms (p99) against 5 ms: the model is slower than the SLA before any load`,
    );
    expect(tuneReportHtml(result)).toContain(`No configuration met the SLA</b>: ${result.reason}`);
    expect(tuneReportHtml(result)).toContain('No configuration met the SLA</text>');
    expect(result.configText).toBeUndefined();
    expect(await server.model(MODEL).config()).toEqual(original);
  });

  it('puts the original config back after an error and after an abort', async () => {
    let calls = 0;
    await expect(
      tune(server, MODEL, {
        ...quick,
        slaP99Ms: 500,
        preferredBatchSizes: [8],
        onProgress: () => {
          if (++calls === 3) throw new Error('listener failed');
        },
      }),
    ).rejects.toThrow('listener failed');
    expect(await server.model(MODEL).config()).toEqual(original);

    const abort = new AbortController();
    const err = await tune(server, MODEL, {
      ...quick,
      slaP99Ms: 500,
      preferredBatchSizes: [8],
      signal: abort.signal,
      onProgress: (p) => {
        if (p.done === 2) abort.abort();
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    expect(err).toMatchObject({ name: 'AbortError', code: 'CANCELLED' });
    expect(await server.model(MODEL).config()).toEqual(original);
  });

  it('refuses a decoupled model unless forced, and malformed options', async () => {
    await expect(tune(server, 'repeat_int32', { slaP99Ms: 10 })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
    });
    await expect(tune(server, MODEL, { slaP99Ms: 0 })).rejects.toThrow(/slaP99Ms/);
    await expect(tune(server, MODEL, { slaP99Ms: 10, concurrency: [0] })).rejects.toThrow(/concurrency/);
  });
});

describe('tune(): failures, a second run, an unload during a run', () => {
  // identity_delay whose dynamic batcher queues at most one request: at
  // concurrency 8 the rest are refused (UNAVAILABLE), while the baseline
  // (no dynamic batching, no queue policy) refuses none.
  const repo = mkdtempSync(join(tmpdir(), 'triton-node-tune-'));
  cpSync(join(MODELS, MODEL), join(repo, MODEL), { recursive: true });
  const config = readFileSync(join(repo, MODEL, 'config.pbtxt'), 'utf8');
  writeFileSync(
    join(repo, MODEL, 'config.pbtxt'),
    `${config}dynamic_batching { default_queue_policy { max_queue_size: 1 } }\n`,
  );
  let server: Server;
  beforeAll(async () => {
    server = await Server.create(serverOptions({ modelRepository: repo }));
    await server.loadModel(MODEL);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repo, { recursive: true, force: true });
  });

  it('a point where requests failed never meets the SLA, however fast the rest were', async () => {
    const result = await tune(server, MODEL, {
      ...quick,
      concurrency: [8],
      slaP99Ms: 5000,
      preferredBatchSizes: [2],
      queueDelaysUs: [100],
    });
    const failed = result.points.filter((p) => p.errors > 0);
    expect(failed.length).toBeGreaterThan(0);
    for (const p of failed) expect(p.meetsSla, JSON.stringify(p)).toBe(false);
    // The baseline queues without a limit: no failures, within the SLA, the pick.
    expect(result.best).toMatchObject({ preferredBatchSize: null, errors: 0, meetsSla: true });
  });

  it('a second run on the same model is refused while the first runs; one after it is not', async () => {
    const first = tune(server, MODEL, {
      ...quick,
      slaP99Ms: 5000,
      preferredBatchSizes: [2],
      queueDelaysUs: [100],
    });
    const second = await tune(server, MODEL, { ...quick, slaP99Ms: 5000 }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(TritonError);
    expect(second).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/'identity_delay' is already being tuned/),
    });
    await first;
    const third = await tune(server, MODEL, {
      ...quick,
      slaP99Ms: 5000,
      preferredBatchSizes: [2],
      queueDelaysUs: [100],
    });
    expect(third.points.length).toBeGreaterThan(0);
  });

  it('a model unloaded during a run stays unloaded: tune stops and says so', async () => {
    // Unloaded once the run reported its first step (it is measuring then).
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    const run = tune(server, MODEL, {
      ...quick,
      slaP99Ms: 5000,
      preferredBatchSizes: [2, 4],
      queueDelaysUs: [100],
      onProgress: () => started(),
    }).catch((e: unknown) => e);
    await running;
    await server.unloadModel(MODEL, { wait: true });
    const err = await run;
    expect(err).toBeInstanceOf(TritonError);
    expect(err).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/unloaded during the run, and stays unloaded/),
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(await server.model(MODEL).isReady()).toBe(false);
    await server.loadModel(MODEL);
  });
});

describe('triton-node tune', () => {
  it('SIGINT puts the original config back and exits 130', async () => {
    const args = [
      '--repository',
      MODELS,
      '--model',
      MODEL,
      '--sla-p99',
      '500ms',
      '--concurrency',
      '1',
      '--instances',
      '1,2',
      '--duration',
      '2s',
      '--library',
      LIBRARY_PATH,
      ...(BACKEND_DIR === undefined ? [] : ['--backend-dir', BACKEND_DIR]),
    ];
    const script = [
      `const lib = await import('${ROOT}lib/index.ts');`,
      `const { tuneCommand } = await import('${ROOT}lib/cli/commands/tune.ts');`,
      `const { fakeEngine } = await import('${ROOT}lib/testing.ts');`,
      `const code = await tuneCommand(${JSON.stringify(args)}, { createServer: (o) => lib.Server.create(o), tune: lib.tune, fakeEngine: { libraryPath: fakeEngine.libraryPath, available: () => fakeEngine.available(), exampleModels: () => '' } });`,
      'process.exit(code);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      // Once the first measurement runs (a config override is loaded), interrupt.
      if (stderr.includes('[1/') && !child.killed) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(stderr).toContain('putting the original config back');
    expect(stderr).toContain('the original config is back');
    expect(code).toBe(130);
  });
});

describe('triton-node tune --fake-engine', () => {
  it('starts the fake engine on the example models, and refuses --library beside it', async () => {
    const out = mkdtempSync(join(tmpdir(), 'tune-fake-'));
    // No Triton named: the fake engine is the library only because --fake-engine says so.
    const { TRITON_SERVER_LIB: _lib, TRITON_BACKEND_DIR: _dir, ...env } = process.env;
    const run = async (args: string[]) => {
      const script = [
        `const lib = await import('${ROOT}lib/index.ts');`,
        `const { tuneCommand } = await import('${ROOT}lib/cli/commands/tune.ts');`,
        `const { fakeEngine } = await import('${ROOT}lib/testing.ts');`,
        `const fake = { libraryPath: fakeEngine.libraryPath, available: () => fakeEngine.available(), exampleModels: () => '${ROOT}examples/models' };`,
        `process.exit(await tuneCommand(${JSON.stringify(args)}, { createServer: (o) => lib.Server.create(o), tune: lib.tune, fakeEngine: fake }));`,
      ].join('\n');
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      return { code, stderr };
    };
    try {
      const point = ['--concurrency', '1', '--instances', '1', '--preferred', '2', '--queue-delays', '100'];
      const args = ['--fake-engine', '--model', 'identity_fp32', '--sla-p99', '5s', ...point];
      const ran = await run([...args, '--duration', '200ms', '--warmup', '50ms', '--out', out]);
      expect([0, 1], ran.stderr).toContain(ran.code);
      expect(ran.stderr).toContain(
        `on triton-node's fake engine (not Triton), models from ${ROOT}examples/models`,
      );
      const both = await run([...args, '--library', '/x.so']);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('--fake-engine and --library name two libraries: give one of them');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('the progress bar of triton-node tune', () => {
  it('fills with done/planned and keeps within the terminal width', async () => {
    const { progressLine } = await import('../../lib/tune/progress.js');
    const line = (done: number) => progressLine({ done, planned: 12, skipped: 0, what: 'instances 1' }, 80);
    expect(line(0)).toBe(`[>${' '.repeat(23)}] 0/12  instances 1`);
    expect(line(6)).toBe(`[${'='.repeat(12)}>${' '.repeat(11)}] 6/12  instances 1`);
    expect(line(12)).toBe(`[${'='.repeat(24)}] 12/12  instances 1`);
    const long = progressLine({ done: 1, planned: 2, skipped: 0, what: 'x'.repeat(200) }, 60);
    expect(long).toHaveLength(60);
    expect(long.endsWith('…')).toBe(true);
  });
});
