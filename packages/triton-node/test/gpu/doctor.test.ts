import { gpuSkipReason } from '@triton-node/test-support/gpu/gpu-env.js';
import { skipAllIf } from '@triton-node/test-support/helpers.js';
/**
 * doctor()'s CUDA and GPU lines: the runtime and driver versions and each
 * device's name, total and free memory (read in a child process) and
 * compute capability against the server's minimum. On a GPU (project gpu) and over the stand-in libcudart (project
 * gpu-stub: two 8 GiB "stub device"s of compute capability 9.0).
 */
import { describe, expect, it } from 'vitest';
import { cuda, doctor } from '../../lib/index.js';

const stub = process.env.TRITON_NODE_CUDA_STUB === '1';
// The library does not matter here; a missing one is probed in no time.
const library = '/nonexistent/libtritonserver.so';

describe('doctor(): CUDA and the GPUs', () => {
  skipAllIf(gpuSkipReason);

  it('reports the runtime, the driver and every visible device', async () => {
    const report = await doctor({ library });
    expect(report.cuda.available).toBe(true);
    expect(report.cuda.runtimeVersion).toMatch(/^\d+\.\d+$/);
    expect(report.cuda.driverVersion).toMatch(/^\d+\.\d+$/);
    expect(report.cuda.devices).toHaveLength(cuda.deviceCount());
    for (const device of report.cuda.devices) {
      expect(device.name).toEqual(expect.any(String));
      expect(device.totalMemory).toBeGreaterThan(0);
      // A new process's view: its own CUDA context is already out of it.
      expect(device.freeMemory).toBeGreaterThan(0);
      expect(device.freeMemory).toBeLessThanOrEqual(device.totalMemory!);
      expect(device.computeCapability).toMatch(/^\d+\.\d+$/);
    }
    if (stub) {
      expect(report.cuda.runtimeVersion).toBe('12.8');
      expect(report.cuda.driverVersion).toBe('13.0');
      expect(report.cuda.devices[1]).toEqual({
        index: 1,
        name: 'stub device 1',
        totalMemory: 8 * 1024 ** 3,
        freeMemory: 8 * 1024 ** 3,
        computeCapability: '9.0',
      });
    }
    const gpuLines = report.checks.filter((c) => c.topic === 'gpu');
    expect(gpuLines.map((c) => c.status)).toEqual(report.cuda.devices.map(() => 'ok'));
    const gib = (n: number) => `${(n / 1024 ** 3).toFixed(1)} GiB`;
    for (const [i, device] of report.cuda.devices.entries()) {
      expect(gpuLines[i]!.detail).toContain(
        `, ${gib(device.totalMemory!)}, ${gib(device.freeMemory!)} free, `,
      );
    }
    expect(report.checks.find((c) => c.topic === 'cuda')?.status).toBe('ok');
  });

  it('a device below the minimum compute capability fails, with the fix', async () => {
    const report = await doctor({ library, minComputeCapability: 99 });
    const line = report.checks.find((c) => c.topic === 'gpu' && c.subject === 'GPU 0')!;
    expect(line.status).toBe('fail');
    expect(line.detail).toMatch(/: below the server's minimum 99\.0, Triton will not use it$/);
    expect(line.fix).toContain('minComputeCapability');
    expect(report.ok).toBe(false);
  });
});
