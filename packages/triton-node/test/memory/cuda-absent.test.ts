import { skipAllIf } from '@triton-node/test-support/helpers.js';
// CUDA-absent behaviour: on a machine without a GPU the cuda namespace says
// so and every allocation fails with a clear UNSUPPORTED error. (With a GPU
// these tests skip; test/gpu/ covers that machine.)
import { describe, expect, it } from 'vitest';
import { TritonError } from '../../lib/base/errors.js';
import { CudaBuffer, cuda } from '../../lib/tensor/cuda.js';

const hasGpu = cuda.isAvailable();

function expectUnsupported(fn: () => unknown): TritonError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TritonError);
  const err = caught as TritonError;
  expect(err.code).toBe('UNSUPPORTED');
  expect(err.message).toMatch(/CUDA/);
  // The reason the runtime gave is part of the message.
  expect(err.message).toContain(cuda.unavailableReason());
  return err;
}

describe('CUDA absent', () => {
  skipAllIf(hasGpu && 'this machine has a GPU (test/gpu covers it)');
  it('reports unavailability with a reason, without throwing', () => {
    expect(cuda.isAvailable()).toBe(false);
    const reason = cuda.unavailableReason();
    expect(typeof reason).toBe('string');
    expect(reason.length).toBeGreaterThan(0);
    expect(cuda.deviceCount()).toBe(0);
  });

  it('fails pinned and device allocations with UNSUPPORTED naming the call', () => {
    expect(expectUnsupported(() => cuda.allocHost(1024)).message).toMatch(/cuda\.allocHost\(\)/);
    expect(expectUnsupported(() => cuda.alloc(1024)).message).toMatch(/cuda\.alloc\(\)/);
    expectUnsupported(() => cuda.alloc(1024, { device: 0 }));
    expect(expectUnsupported(() => CudaBuffer.fromIpcHandle(new Uint8Array(64), 16)).message).toMatch(
      /fromIpcHandle/,
    );
  });

  it('validates arguments before looking for CUDA', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '16', undefined, 2 ** 60]) {
      expect(() => cuda.allocHost(bad as number)).toThrow(TypeError);
      expect(() => cuda.alloc(bad as number)).toThrow(TypeError);
    }
    expect(() => cuda.allocHost(-1)).toThrow(/positive integer byteLength for cuda\.allocHost\(\)/);
    expect(() => cuda.alloc(16, null as unknown as { device: number })).toThrow(/options object/);
    expect(() => CudaBuffer.fromIpcHandle(new Uint8Array(63), 16)).toThrow(/64-byte Uint8Array/);
    expect(() => CudaBuffer.fromIpcHandle([] as unknown as Uint8Array, 16)).toThrow(TypeError);
    expect(() => CudaBuffer.fromIpcHandle(new Uint8Array(64), 0)).toThrow(/positive integer byteLength/);
  });

  it('keeps answering the same after failures (nothing cached in a broken state)', () => {
    expectUnsupported(() => cuda.allocHost(8));
    expect(cuda.isAvailable()).toBe(false);
    expect(cuda.deviceCount()).toBe(0);
    expectUnsupported(() => cuda.allocHost(8));
  });
});
