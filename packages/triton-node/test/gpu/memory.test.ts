import { gpuSkipReason as skip } from '@triton-node/test-support/gpu/gpu-env.js';
import {
  collectGarbage,
  eventually,
  requestsSettled,
  skipAllIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
// What the memory really is, as CUDA sees it: pinned buffers and pinned
// outputs are page-locked (cudaPointerGetAttributes, cudaHostGetFlags),
// device buffers and GPU outputs are device memory on the device asked for;
// device memory comes back to its level after many GPU requests
// (cudaMemGetInfo); no cudaFree/cudaFreeHost ever fails (a double free, or
// memory that was never CUDA's). Skips (with the reason) where there is no
// usable CUDA device.
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { CudaBuffer, HostBuffer, cuda } from '../../lib/index.js';

describe('memory as CUDA sees it', () => {
  skipAllIf(skip);
  const server = useServer(['identity_nobatch'], {}, skip);
  const nativeCuda = () => addon().cuda;
  const data = Float32Array.from({ length: 4096 }, (_, i) => i);

  it('pinned buffers are page-locked host memory; pageable memory is not', () => {
    using pinned = cuda.allocHost(1 << 16);
    const a = nativeCuda().pointerAttributes(pinned.native);
    expect(a.memoryType).toBe('host');
    expect(a.hostFlags).not.toBeNull();
    const pageable = nativeCuda().pointerAttributes(new Float32Array(1 << 14));
    expect(pageable.memoryType).toBe('unregistered');
    expect(pageable.hostFlags).toBeNull();
  });

  it('device buffers are device memory on their device', () => {
    for (let d = 0; d < cuda.deviceCount(); d++) {
      using b = cuda.alloc(1 << 16, { device: d });
      const a = nativeCuda().pointerAttributes(b.native);
      expect(a.memoryType).toBe('device');
      expect(a.device).toBe(d);
      expect(a.hostFlags).toBeNull();
    }
  });

  it("outputs placed in 'pinned' are page-locked; outputs placed on a GPU are that device's memory", async () => {
    const last = cuda.deviceCount() - 1;
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: data },
      outputMemory: 'pinned',
    });
    using pinned = r.outputs.OUTPUT0!.data as HostBuffer;
    expect(pinned).toBeInstanceOf(HostBuffer);
    const p = nativeCuda().pointerAttributes(pinned.native);
    expect(p.memoryType).toBe('host');
    expect(p.hostFlags).not.toBeNull();
    expect(new Float32Array(pinned.view(Float32Array))).toEqual(data);

    const g = await server().infer('identity_nobatch', {
      inputs: { INPUT0: data },
      outputMemory: { type: 'gpu', device: last },
    });
    using device = g.outputs.OUTPUT0!.data as CudaBuffer;
    expect(device).toBeInstanceOf(CudaBuffer);
    const d = nativeCuda().pointerAttributes(device.native);
    expect(d.memoryType).toBe('device');
    expect(d.device).toBe(last);
    expect(device.toTypedArray(Float32Array)).toEqual(data);
  });

  it('device memory comes back to its level after 1,000 requests with 256 KiB GPU outputs', async () => {
    const native = addon();
    const input = Float32Array.from({ length: 64 * 1024 }, (_, i) => i % 997);
    const run = async (requests: number) => {
      for (let done = 0; done < requests; done += 8) {
        const results = await Promise.all(
          Array.from({ length: 8 }, () =>
            server().infer('identity_nobatch', { inputs: { INPUT0: input }, outputMemory: 'gpu' }),
          ),
        );
        // Half disposed, half left to the garbage collector.
        results.forEach((r, i) => {
          if (i % 2 === 0) r.dispose();
        });
      }
    };
    await run(16);
    await collectGarbage(6);
    const before = native.cuda.memGetInfo(0);
    const pooledBefore = native.addonStats().pooledBytes;
    const liveBefore = native.addonStats().liveOutputBuffers;
    await run(1000);
    expect(await requestsSettled()).toBe(true);
    expect(
      await eventually(async () => {
        await collectGarbage(1);
        return native.addonStats().liveOutputBuffers === liveBefore;
      }),
    ).toBe(true);
    const mib = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
    // What the pool keeps for reuse is not a leak; a leak of the outputs
    // would be 250 MiB, and would stay. The free memory is the device's, so
    // another test process holding device memory for a moment (test files
    // run in parallel) is waited out; this process's own memory never is.
    let grown = 0;
    const back = await eventually(() => {
      const after = native.cuda.memGetInfo(0);
      const pooledGrowth = Math.max(0, native.addonStats().pooledBytes - pooledBefore);
      grown = mib(before.free - after.free - pooledGrowth);
      return grown < 32;
    }, 30_000);
    expect(back, `${grown} MiB of device memory not back`).toBe(true);
  });

  it('no cudaFree or cudaFreeHost has failed in this process (no double free, nothing freed that was not CUDA’s)', async () => {
    // Pinned and device buffers through every way they go: dispose, GC, twice.
    for (let i = 0; i < 8; i++) {
      const h = cuda.allocHost(4096);
      const d = cuda.alloc(4096);
      if (i % 2 === 0) {
        h.dispose();
        d.dispose();
        h.dispose();
        d.dispose();
      }
    }
    const r = await server().infer('identity_nobatch', { inputs: { INPUT0: data }, outputMemory: 'pinned' });
    r.dispose();
    r.dispose();
    await collectGarbage(6);
    expect(addon().cuda.freeFailures()).toBe(0);
  });
});
