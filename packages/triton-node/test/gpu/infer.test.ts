import { gpuSkipReason } from '@triton-node/test-support/gpu/gpu-env.js';
import {
  collectGarbage,
  eventually,
  fakeOnly,
  skipAllIf,
  useServer,
} from '@triton-node/test-support/helpers.js';
// Inference with pinned and device memory: GPU in/GPU out, mixed placements,
// caller-provided destinations, output pools, and no leak over 10,000 GPU
// requests. Skips (with the reason) where there is no usable CUDA device.
import { describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { CudaBuffer, HostBuffer, type Tensor, TritonError, cuda } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';

describe('inference with GPU memory', () => {
  skipAllIf(gpuSkipReason);
  const server = useServer(
    ['identity_nobatch', 'identity_multi', 'identity_fp32', 'identity_delay'],
    {},
    gpuSkipReason,
  );
  const data = Float32Array.from({ length: 4096 }, (_, i) => i * 0.5 - 7);

  function onDevice(values: ArrayBufferView, device = 0): CudaBuffer {
    const b = cuda.alloc(values.byteLength, { device });
    b.copyFrom(values);
    return b;
  }

  function floats(t: Tensor | undefined): Float32Array {
    const d = t!.data;
    if (d instanceof CudaBuffer) return d.toTypedArray(Float32Array);
    if (d instanceof HostBuffer) return new Float32Array(d.view(Float32Array));
    return d as Float32Array;
  }

  it('GPU input → GPU output', async () => {
    using input = onDevice(data);
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: { data: input, shape: [data.length], datatype: 'FP32' } },
      outputMemory: 'gpu',
    });
    const out = r.outputs.OUTPUT0!;
    expect(out.data).toBeInstanceOf(CudaBuffer);
    using buf = out.data as CudaBuffer;
    expect(buf.device).toBe(0);
    expect(buf.byteLength).toBe(data.byteLength);
    expect(out.shape).toEqual([data.length]);
    expect(buf.toTypedArray(Float32Array)).toEqual(data);
  });

  it('GPU input → CPU output, and CPU input → GPU output', async () => {
    using input = onDevice(data);
    const toCpu = await server().infer('identity_nobatch', {
      inputs: { INPUT0: { data: input, shape: [data.length], datatype: 'FP32' } },
    });
    expect(toCpu.outputs.OUTPUT0!.data).toBeInstanceOf(Float32Array);
    expect(toCpu.outputs.OUTPUT0!.data).toEqual(data);

    const toGpu = await server().infer('identity_nobatch', {
      inputs: { INPUT0: data },
      outputs: { OUTPUT0: { memory: 'gpu' } },
    });
    expect(toGpu.outputs.OUTPUT0!.data).toBeInstanceOf(CudaBuffer);
    expect(floats(toGpu.outputs.OUTPUT0)).toEqual(data);
    (toGpu.outputs.OUTPUT0!.data as CudaBuffer).dispose();
  });

  it('pinned input → pinned output, and pinned ↔ GPU', async () => {
    using pinned = cuda.allocHost(data.byteLength);
    pinned.copyFrom(data);
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: { data: pinned, shape: [data.length], datatype: 'FP32' } },
      outputMemory: 'pinned',
    });
    expect(r.outputs.OUTPUT0!.data).toBeInstanceOf(HostBuffer);
    expect(floats(r.outputs.OUTPUT0)).toEqual(data);
    (r.outputs.OUTPUT0!.data as HostBuffer).dispose();

    const g = await server().infer('identity_nobatch', {
      inputs: { INPUT0: { data: pinned, shape: [data.length], datatype: 'FP32' } },
      outputMemory: 'gpu',
    });
    expect(floats(g.outputs.OUTPUT0)).toEqual(data);
    using fromGpu = g.outputs.OUTPUT0!.data as CudaBuffer;
    const back = await server().infer('identity_nobatch', {
      inputs: { INPUT0: { data: fromGpu, shape: [data.length], datatype: 'FP32' } },
      outputMemory: 'pinned',
    });
    expect(floats(back.outputs.OUTPUT0)).toEqual(data);
    (back.outputs.OUTPUT0!.data as HostBuffer).dispose();
  });

  it('toJSON: pinned outputs give their values (read in place), GPU outputs their device and no data', async () => {
    const small = Float32Array.of(1.5, -2, 3);
    const pinned = await server().infer('identity_nobatch', {
      inputs: { INPUT0: small },
      outputMemory: 'pinned',
    });
    expect(JSON.parse(JSON.stringify(pinned)).outputs.OUTPUT0).toEqual({
      name: 'OUTPUT0',
      datatype: 'FP32',
      shape: [3],
      memoryType: 'pinned',
      data: [1.5, -2, 3],
    });
    pinned.dispose();
    expect(pinned.outputs.OUTPUT0!.toJSON().data).toBeUndefined();
    const gpu = await server().infer('identity_nobatch', { inputs: { INPUT0: small }, outputMemory: 'gpu' });
    expect(gpu.outputs.OUTPUT0!.toJSON()).toEqual({
      name: 'OUTPUT0',
      datatype: 'FP32',
      shape: [3],
      memoryType: 'gpu',
      device: 0,
    });
    gpu.dispose();
  });

  it('mixes memory per input and per output (FP32 and INT32 on the GPU, BYTES on the CPU)', async () => {
    const ints = Int32Array.from({ length: 100 }, (_, i) => i * -3);
    using f = onDevice(data);
    using n = onDevice(ints);
    const r = await server().infer('identity_multi', {
      inputs: {
        INPUT0: { data: f, shape: [data.length], datatype: 'FP32' },
        INPUT1: { data: n, shape: [ints.length], datatype: 'INT32' },
        INPUT2: ['a', 'bc', ''],
      },
      outputs: { OUTPUT0: { memory: 'gpu' }, OUTPUT1: { memory: 'pinned' }, OUTPUT2: true },
    });
    using o0 = r.outputs.OUTPUT0!.data as CudaBuffer;
    using o1 = r.outputs.OUTPUT1!.data as HostBuffer;
    expect(o0).toBeInstanceOf(CudaBuffer);
    expect(o1).toBeInstanceOf(HostBuffer);
    expect(o0.toTypedArray(Float32Array)).toEqual(data);
    expect(new Int32Array(o1.view(Int32Array))).toEqual(ints);
    expect(r.outputs.OUTPUT2!.data).toHaveLength(3);
  });

  it('writes into caller-provided CudaBuffer and HostBuffer destinations', async () => {
    using dst = cuda.alloc(data.byteLength);
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: data },
      outputs: { OUTPUT0: { into: dst } },
    });
    expect(r.outputs.OUTPUT0!.data).toBe(dst);
    expect(dst.toTypedArray(Float32Array)).toEqual(data);

    using host = cuda.allocHost(data.byteLength);
    using input = onDevice(data);
    const r2 = await server().infer('identity_nobatch', {
      inputs: { INPUT0: { data: input, shape: [data.length], datatype: 'FP32' } },
      outputs: { OUTPUT0: { into: host } },
    });
    expect(r2.outputs.OUTPUT0!.data).toBe(host);
    expect(new Float32Array(host.view(Float32Array))).toEqual(data);

    using small = cuda.alloc(16);
    const err = await server()
      .infer('identity_nobatch', { inputs: { INPUT0: data }, outputs: { OUTPUT0: { into: small } } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(TritonError);
    expect((err as TritonError).code).toBe('INVALID_ARG');
    expect((err as TritonError).message).toContain('OUTPUT0');
  });

  it('places outputs on the device asked for', async () => {
    const last = cuda.deviceCount() - 1;
    const r = await server().infer('identity_nobatch', {
      inputs: { INPUT0: data },
      outputMemory: 'gpu',
      outputDevice: last,
    });
    using out = r.outputs.OUTPUT0!.data as CudaBuffer;
    expect(out.device).toBe(last);
    expect(out.toTypedArray(Float32Array)).toEqual(data);
    // The same placement as { type: 'gpu', device }, per request and per output.
    const r2 = await server().infer('identity_multi', {
      inputs: { INPUT0: data.slice(0, 4), INPUT1: new Int32Array([1, 2]), INPUT2: ['a'] },
      outputMemory: { type: 'gpu', device: last },
      outputs: { OUTPUT0: true, OUTPUT1: { memory: { type: 'gpu', device: 0 } }, OUTPUT2: { memory: 'cpu' } },
    });
    using o0 = r2.outputs.OUTPUT0!.data as CudaBuffer;
    using o1 = r2.outputs.OUTPUT1!.data as CudaBuffer;
    expect(o0.device).toBe(last);
    expect(o1.device).toBe(0);
    expect(o0.toTypedArray(Float32Array)).toEqual(data.subarray(0, 4));
    expect(o1.toTypedArray(Int32Array)).toEqual(new Int32Array([1, 2]));
    expect(r2.outputs.OUTPUT2!.memoryType).toBe('cpu');
  });

  it('refuses a device input whose size does not match its shape', async () => {
    using tiny = cuda.alloc(8);
    await expect(
      server().infer('identity_nobatch', {
        inputs: { INPUT0: { data: tiny, shape: [4], datatype: 'FP32' } },
      }),
    ).rejects.toThrow(/INPUT0/);
  });

  it('refuses a disposed buffer as input or destination', async () => {
    const gone = onDevice(data);
    gone.dispose();
    await expect(
      server().infer('identity_nobatch', {
        inputs: { INPUT0: { data: gone, shape: [data.length], datatype: 'FP32' } },
      }),
    ).rejects.toThrow(/dispos/);
  });

  it('does not free an input under an in-flight request when it is disposed early', async () => {
    // identity_delay holds the request 20 ms; the input is disposed at once
    // and a decoy of the same size (likely the same address) is written.
    // With the model's config cached, infer() submits before it returns.
    await server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([0]) } });
    const input = onDevice(data);
    const pending = server().infer('identity_delay', {
      inputs: { INPUT0: { data: input, shape: [1, data.length], datatype: 'FP32' } },
    });
    try {
      input.dispose();
    } catch (err) {
      // Refusing is acceptable too, as long as it says why.
      expect(err).toBeInstanceOf(TypeError);
    }
    using decoy = cuda.alloc(data.byteLength);
    decoy.copyFrom(new Float32Array(data.length).fill(-1));
    const r = await pending;
    expect(r.outputs.OUTPUT0!.data).toEqual(data);
    input.dispose();
  });

  it('defers the free of a pinned input and a destination disposed under an in-flight request', async () => {
    await server().infer('identity_delay', { inputs: { INPUT0: new Float32Array([0]) } });
    const input = cuda.allocHost(data.byteLength);
    input.copyFrom(data);
    const dst = cuda.alloc(data.byteLength);
    // One request reads the pinned input (its CPU output shows what it read);
    // the other writes into the device destination.
    const reading = server().infer('identity_delay', {
      inputs: { INPUT0: { data: input, shape: [1, data.length], datatype: 'FP32' } },
    });
    const writing = server().infer('identity_delay', {
      inputs: { INPUT0: data.subarray(0) },
      outputs: { OUTPUT0: { into: dst } },
    });
    input.dispose();
    dst.dispose();
    // Disposed at once for JS: any further use is refused by name.
    expect(input.disposed).toBe(true);
    expect(dst.disposed).toBe(true);
    expect(() => input.copyFrom(data)).toThrow(TypeError);
    await expect(
      server().infer('identity_nobatch', {
        inputs: { INPUT0: { data: input, shape: [data.length], datatype: 'FP32' } },
      }),
    ).rejects.toThrow(TypeError);
    // Decoys of the same sizes (likely the freed addresses, were they freed).
    const minusOne = new Float32Array(data.length).fill(-1);
    const minusTwo = new Float32Array(data.length).fill(-2);
    using hostDecoy = cuda.allocHost(data.byteLength);
    hostDecoy.copyFrom(minusOne);
    using devDecoy = cuda.alloc(data.byteLength);
    devDecoy.copyFrom(minusTwo);
    const [read, written] = await Promise.all([reading, writing]);
    expect(read.outputs.OUTPUT0!.data).toEqual(data);
    expect(written.outputs.OUTPUT0!.data).toBe(dst);
    // Nothing wrote into memory that was handed out again.
    expect(new Float32Array(hostDecoy.view(Float32Array))).toEqual(minusOne);
    expect(devDecoy.toTypedArray(Float32Array)).toEqual(minusTwo);
    // Disposing again after the release is a no-op.
    input.dispose();
    dst.dispose();
  });

  it('reuses pooled GPU output buffers after dispose()', async () => {
    const native = addon();
    // Let earlier tests' outputs go back to their pools first.
    await collectGarbage();
    const run = async () => {
      const r = await server().infer('identity_nobatch', { inputs: { INPUT0: data }, outputMemory: 'gpu' });
      (r.outputs.OUTPUT0!.data as CudaBuffer).dispose();
    };
    await run();
    const pooled = native.addonStats().pooledBytes;
    expect(pooled).toBeGreaterThanOrEqual(data.byteLength);
    for (let i = 0; i < 50; i++) await run();
    // Sequential requests of one size reuse the same pooled buffer.
    expect(native.addonStats().pooledBytes).toBe(pooled);
  });

  it('leaks nothing over 10,000 GPU requests', async () => {
    const native = addon();
    const small = Float32Array.from({ length: 64 }, (_, i) => i);
    using input = onDevice(small);
    const baseLive = native.addonStats().liveOutputBuffers;
    const total = 10_000;
    const concurrency = 32;
    let next = 0;
    let wrong = 0;
    const worker = async () => {
      while (next < total) {
        const i = next++;
        const r = await server().infer('identity_nobatch', {
          inputs: { INPUT0: { data: input, shape: [small.length], datatype: 'FP32' } },
          outputMemory: 'gpu',
        });
        const out = r.outputs.OUTPUT0!.data as CudaBuffer;
        if (i % 1000 === 0 && out.toTypedArray(Float32Array)[63] !== 63) wrong++;
        // Half disposed explicitly, half left to the garbage collector.
        if (i % 2 === 0) out.dispose();
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    expect(wrong).toBe(0);
    await collectGarbage(8);
    expect(
      await eventually(async () => {
        await collectGarbage(1);
        const s = native.addonStats();
        return s.liveOutputBuffers === baseLive && s.pendingRequests === 0;
      }),
    ).toBe(true);
    if (!fakeOnly()) {
      const live = fakeEngine.liveObjects()!;
      expect(live.requests).toBe(0);
      expect(live.responses).toBe(0);
      expect(live.outputBuffers).toBe(0);
    }
  });
});
