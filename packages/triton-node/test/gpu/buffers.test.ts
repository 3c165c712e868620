import { SAMPLES, gpuSkipReason } from '@triton-node/test-support/gpu/gpu-env.js';
import { collectGarbage, skipAllIf } from '@triton-node/test-support/helpers.js';
// Pinned and device buffers without a server: allocation, copies in every
// direction for several datatypes, offsets, validation, disposal.
import { describe, expect, it } from 'vitest';
import { CudaBuffer, HostBuffer, cuda } from '../../lib/tensor/cuda.js';

type Sample = (typeof SAMPLES)[keyof typeof SAMPLES];

describe('HostBuffer and CudaBuffer', () => {
  skipAllIf(gpuSkipReason);
  it('sees at least one device', () => {
    expect(cuda.deviceCount()).toBeGreaterThan(0);
    expect(cuda.unavailableReason()).toBe('');
  });

  for (const [datatype, make] of Object.entries(SAMPLES) as Array<[string, Sample]>) {
    it(`round-trips ${datatype} pageable → pinned → device → device → pinned → pageable`, () => {
      const data = make();
      const Ctor = data.constructor as new (n: number) => typeof data;
      using pinned = cuda.allocHost(data.byteLength);
      using device = cuda.alloc(data.byteLength);
      using device2 = cuda.alloc(data.byteLength);
      using pinnedBack = cuda.allocHost(data.byteLength);
      pinned.copyFrom(data);
      device.copyFrom(pinned);
      device2.copyFrom(device);
      pinnedBack.copyFrom(device2);
      const out = new Ctor(data.length);
      pinnedBack.copyTo(out);
      expect(out).toEqual(data);
      // The views see the same bytes without a copy.
      expect(pinnedBack.view(Ctor as never)).toEqual(data);
      // Straight between pageable memory and the device, both ways.
      const direct = new Ctor(data.length);
      using device3 = cuda.alloc(data.byteLength);
      device3.copyFrom(data);
      device3.copyTo(direct);
      expect(direct).toEqual(data);
    });
  }

  it('copies at offsets and refuses copies that do not fit', () => {
    using device = cuda.alloc(64);
    device.copyFrom(new Uint8Array(64));
    device.copyFrom(Uint8Array.of(1, 2, 3, 4), 60);
    device.copyFrom(Uint8Array.of(9, 9), 0);
    // copyTo puts the whole buffer at an offset of the destination.
    const wide = new Uint8Array(128).fill(7);
    device.copyTo(wide, 64);
    expect([...wide.subarray(0, 64)].every((b) => b === 7)).toBe(true);
    expect([...wide.subarray(124, 128)]).toEqual([1, 2, 3, 4]);
    expect([...wide.subarray(64, 67)]).toEqual([9, 9, 0]);
    expect(() => device.copyFrom(new Uint8Array(8), 60)).toThrow(RangeError);
    expect(() => device.copyTo(new Uint8Array(64), 1)).toThrow(RangeError);
    expect(() => device.copyTo(new Uint8Array(8))).toThrow(/do not fit in the destination's 8 bytes/);
    expect(() => device.copyFrom(new Uint8Array(65))).toThrow(/do not fit in 64 bytes/);
    expect(() => device.copyFrom(new Uint8Array(1), -1)).toThrow(TypeError);
    expect(() => device.copyFrom('bytes' as never)).toThrow(/TypedArray, DataView, HostBuffer or CudaBuffer/);
    expect(() => device.copyFrom(device)).toThrow(/same buffer/);
  });

  it('views pinned memory as any TypedArray and writes through', () => {
    using pinned = cuda.allocHost(16);
    const f = pinned.view(Float32Array);
    f.set([1.5, 2.5, 3.5, 4.5]);
    const u = pinned.view();
    expect(u.byteLength).toBe(16);
    expect(new Float32Array(u.buffer, u.byteOffset, 4)).toEqual(Float32Array.of(1.5, 2.5, 3.5, 4.5));
    expect(() => pinned.view(Float64Array).length).not.toThrow();
    using odd = cuda.allocHost(6);
    expect(() => odd.view(Float32Array)).toThrow(/not a multiple of 4/);
    expect(() => pinned.view('x' as never)).toThrow(TypeError);
  });

  it('keeps pinned memory alive while a view of it is reachable', async () => {
    // The HostBuffer itself becomes garbage at once; only the view remains.
    const view = cuda.allocHost(4096).view(Uint32Array);
    view.fill(0x12345678);
    await collectGarbage(6);
    const others = Array.from({ length: 8 }, () => {
      const b = cuda.allocHost(4096);
      b.view(Uint32Array).fill(0xdeadbeef);
      return b;
    });
    try {
      expect(view.length).toBe(1024);
      expect(view.every((v) => v === 0x12345678)).toBe(true);
    } finally {
      for (const b of others) b.dispose();
    }
  });

  it('disposes idempotently and refuses use after dispose', () => {
    const pinned = cuda.allocHost(32);
    const view = pinned.view(Uint32Array);
    view[0] = 42;
    pinned.dispose();
    pinned.dispose();
    expect(pinned.disposed).toBe(true);
    // The view was detached rather than left pointing at freed memory.
    expect(view.length).toBe(0);
    expect(() => pinned.view()).toThrow(/after dispose/);
    expect(() => pinned.copyFrom(new Uint8Array(1))).toThrow(/after dispose/);

    const device = cuda.alloc(32);
    device.dispose();
    device.dispose();
    expect(device.disposed).toBe(true);
    expect(() => device.copyTo(new Uint8Array(1))).toThrow(/after dispose/);
    expect(() => device.ipcHandle()).toThrow(/after dispose/);
    using other = cuda.alloc(32);
    expect(() => other.copyFrom(device)).toThrow(/disposed/);
  });

  it('validates devices and sizes', () => {
    const count = cuda.deviceCount();
    expect(() => cuda.alloc(16, { device: count })).toThrow(new RegExp(`below ${count}`));
    expect(() => cuda.alloc(16, { device: -1 })).toThrow(TypeError);
    expect(() => cuda.alloc(0)).toThrow(TypeError);
    expect(() => cuda.allocHost(1.5)).toThrow(TypeError);
  });

  it('allocates on every device and copies between devices', () => {
    const count = cuda.deviceCount();
    const data = SAMPLES.FP32();
    const buffers: CudaBuffer[] = [];
    try {
      for (let d = 0; d < count; d++) {
        const b = cuda.alloc(data.byteLength, { device: d });
        expect(b.device).toBe(d);
        buffers.push(b);
      }
      buffers[0]!.copyFrom(data);
      for (let d = 1; d < count; d++) buffers[d]!.copyFrom(buffers[d - 1]!);
      expect(buffers[count - 1]!.toTypedArray(Float32Array)).toEqual(data);
    } finally {
      for (const b of buffers) b.dispose();
    }
  });

  it('exports a 64-byte IPC handle', () => {
    using device = cuda.alloc(1024);
    const handle = device.ipcHandle();
    expect(handle).toBeInstanceOf(Uint8Array);
    expect(handle.byteLength).toBe(64);
    expect(handle.some((b) => b !== 0)).toBe(true);
    expect(device.imported).toBe(false);
  });

  it('wraps only native buffers of the right kind', () => {
    using pinned = cuda.allocHost(8);
    using device = cuda.alloc(8);
    expect(HostBuffer.fromNative(pinned.native).byteLength).toBe(8);
    expect(CudaBuffer.fromNative(device.native).device).toBe(device.device);
    expect(() => HostBuffer.fromNative(device.native as never)).toThrow(TypeError);
    expect(() => CudaBuffer.fromNative(pinned.native as never)).toThrow(TypeError);
  });
});
