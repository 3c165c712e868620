// Server options for scheduling and caching: the rate limiter, host policies,
// the response cache, custom model config names and the metrics details.
// Each reaches Triton (on the fake and on a real Triton), and each malformed
// value is a TypeError or RangeError naming it.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODELS, serverOptions } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelConfig, Server, type ServerOptions, TritonError } from '../../lib/index.js';

/** identity_fp32's config with its one instance group asking the rate limiter for `count` of `resource`. */
async function rateLimitedConfig(server: Server, resource: string, count: number, global = false) {
  await server.loadModel('identity_fp32');
  const config = (await server.model('identity_fp32').config()) as ModelConfig & {
    instance_group: Array<Record<string, unknown>>;
  };
  await server.unloadModel('identity_fp32', { wait: true });
  const group = {
    ...config.instance_group[0],
    rate_limiter: { resources: [{ name: resource, global, count }], priority: 1 },
  };
  return { ...config, instance_group: [group] };
}

describe('rateLimiter', () => {
  let server: Server;
  beforeAll(async () => {
    server = await Server.create(
      serverOptions({ rateLimiter: { mode: 'execCount', resources: [{ name: 'R', count: 2 }] } }),
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a model whose instances need more of a resource than the server has fails to load, naming it', async () => {
    const config = await rateLimitedConfig(server, 'R', 4);
    const err = await server.loadModel('identity_fp32', { config }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    expect((err as Error).message).toMatch(/Resource count for "R" is limited to 2/);
    expect((err as Error).message).toMatch(/minimum required count is 4/);
    expect(await server.model('identity_fp32').isReady()).toBe(false);
  });

  it('a resource the server options do not list counts as none once any is listed', async () => {
    const config = await rateLimitedConfig(server, 'S', 1);
    await expect(server.loadModel('identity_fp32', { config })).rejects.toThrow(
      /Resource count for "S" is limited to 0/,
    );
  });

  it('within the counts, the model loads, runs, and its config keeps the rate_limiter', async () => {
    const config = await rateLimitedConfig(server, 'R', 2);
    await server.loadModel('identity_fp32', { config });
    const r = await server.infer('identity_fp32', { inputs: { INPUT0: Float32Array.of(1, 2) } });
    expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2]);
    const loaded = (await server.model('identity_fp32').config()) as {
      instance_group: Array<Record<string, unknown>>;
    };
    expect(loaded.instance_group[0]!.rate_limiter).toMatchObject({
      resources: [{ name: 'R', count: 2 }],
      priority: 1,
    });
    await server.unloadModel('identity_fp32', { wait: true });
  });

  it('with the rate limiter off, resources are not checked', async () => {
    const off = await Server.create(
      serverOptions({ rateLimiter: { mode: 'off', resources: [{ name: 'R', count: 1 }] } }),
    );
    try {
      const config = await rateLimitedConfig(off, 'R', 8);
      await off.loadModel('identity_fp32', { config });
      expect(await off.model('identity_fp32').isReady()).toBe(true);
    } finally {
      await off.stop();
    }
  });
});

describe('hostPolicy', () => {
  it("instances of a group whose host_policy names a policy load and run under it ('cpu' is KIND_CPU's default)", async () => {
    const server = await Server.create(serverOptions({ hostPolicy: { cpu: { cpuCores: '0-0' } } }));
    try {
      await server.loadModel('identity_fp32');
      const r = await server.infer('identity_fp32', { inputs: { INPUT0: Float32Array.of(3) } });
      expect(Array.from(r.outputs.OUTPUT0!.data as Float32Array)).toEqual([3]);
    } finally {
      await server.stop();
    }
  });
});

describe('responseCache', () => {
  it("a cache whose library is not in the directory fails the start with Triton's error", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-caches-'));
    try {
      for (const exitOnError of [true, false]) {
        const err = await Server.create(
          serverOptions({ exitOnError, responseCache: { config: { size: 1 << 20 }, directory: dir } }),
        ).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(TritonError);
        expect(err).toMatchObject({ code: 'INVALID_ARG' });
        expect((err as Error).message).toContain("unable to find 'libtritoncache_local.so' for cache");
        expect((err as Error).message).toContain(dir);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('modelConfigName', () => {
  it('reads configs/<name>.pbtxt where a model has it, config.pbtxt elsewhere', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'triton-node-config-name-'));
    try {
      cpSync(join(MODELS, 'identity_fp32'), join(repo, 'identity_fp32'), { recursive: true });
      cpSync(join(MODELS, 'identity_nobatch'), join(repo, 'identity_nobatch'), { recursive: true });
      mkdirSync(join(repo, 'identity_fp32', 'configs'));
      writeFileSync(
        join(repo, 'identity_fp32', 'configs', 'small.pbtxt'),
        [
          'name: "identity_fp32"',
          'backend: "identity"',
          'max_batch_size: 2',
          'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
          'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
          'instance_group [ { count: 1 kind: KIND_CPU } ]',
          '',
        ].join('\n'),
      );
      const server = await Server.create(serverOptions({ modelRepository: repo, modelConfigName: 'small' }));
      try {
        await server.loadModel('identity_fp32');
        await server.loadModel('identity_nobatch');
        expect(await server.model('identity_fp32').config()).toMatchObject({ max_batch_size: 2 });
        expect(await server.model('identity_nobatch').config()).toMatchObject({ max_batch_size: 0 });
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe('metrics details', () => {
  it('gpu, cpu and intervalMs reach Triton; the server starts and reports metrics', async () => {
    const server = await Server.create(
      serverOptions({ metrics: { gpu: false, cpu: false, intervalMs: 500 } }),
    );
    try {
      await server.loadModel('identity_fp32');
      await server.infer('identity_fp32', { inputs: { INPUT0: Float32Array.of(1) } });
      expect(await server.metrics()).toMatch(/nv_inference_request_success\{[^}]*model="identity_fp32"/);
    } finally {
      await server.stop();
    }
  });
});

describe('malformed values name their option', () => {
  const cases: Array<[string, Partial<ServerOptions>, RegExp, typeof TypeError]> = [
    ['rateLimiter not an object', { rateLimiter: 'on' as never }, /rateLimiter/, TypeError],
    [
      'rateLimiter.mode',
      { rateLimiter: { mode: 'fast' as never } },
      /'off' or 'execCount' for rateLimiter\.mode/,
      TypeError,
    ],
    [
      'rateLimiter unknown key',
      { rateLimiter: { mode: 'off', limit: 1 } as never },
      /rateLimiter\.limit/,
      TypeError,
    ],
    [
      'resource without count',
      { rateLimiter: { mode: 'execCount', resources: [{ name: 'R' }] as never } },
      /rateLimiter\.resources\[0\]\.count/,
      TypeError,
    ],
    [
      'negative count',
      { rateLimiter: { mode: 'execCount', resources: [{ name: 'R', count: -1 }] } },
      /rateLimiter\.resources\[0\]\.count/,
      TypeError,
    ],
    [
      'empty resource name',
      { rateLimiter: { mode: 'execCount', resources: [{ name: '', count: 1 }] } },
      /rateLimiter\.resources\[0\]\.name/,
      TypeError,
    ],
    [
      'hostPolicy setting',
      { hostPolicy: { cpu: { cores: '0-1' } as never } },
      /hostPolicy\.cpu\.cores/,
      TypeError,
    ],
    [
      'cpuCores format',
      { hostPolicy: { cpu: { cpuCores: '3' } } },
      /'5-5'.*hostPolicy\.cpu\.cpuCores/,
      TypeError,
    ],
    ['cpuCores order', { hostPolicy: { cpu: { cpuCores: '4-2' } } }, /hostPolicy\.cpu\.cpuCores/, RangeError],
    ['numaNode', { hostPolicy: { cpu: { numaNode: -1 } } }, /hostPolicy\.cpu\.numaNode/, TypeError],
    ['responseCache.config', { responseCache: { config: 5 as never } }, /responseCache\.config/, TypeError],
    [
      'responseCache.config value',
      { responseCache: { config: { size: Number.NaN } } },
      /responseCache\.config\.size/,
      TypeError,
    ],
    ['responseCache.name', { responseCache: { name: '../x', config: {} } }, /responseCache\.name/, TypeError],
    ['modelConfigName', { modelConfigName: '' }, /modelConfigName/, TypeError],
    ['metrics.intervalMs', { metrics: { intervalMs: 0 } }, /metrics\.intervalMs/, RangeError],
    ['metrics.gpu', { metrics: { gpu: 'yes' as never } }, /metrics\.gpu/, TypeError],
  ];
  it.each(cases)('%s', async (_what, extra, message, kind) => {
    const err = await Server.create(serverOptions(extra)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(kind);
    expect((err as Error).message).toMatch(message);
  });
});
