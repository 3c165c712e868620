import { CudaBuffer, HostBuffer, type Tensor, cuda } from 'triton-node';
// Shared by the GPU test files: whether this machine can run them, and why not.

export const gpuAvailable = cuda.isAvailable();

/** Why GPU tests skip here, or false where they run. */
export const gpuSkipReason: string | false = gpuAvailable
  ? false
  : `no usable CUDA device: ${cuda.unavailableReason()}`;

/** Datatypes the round trips cover, as TypedArray constructors and sample values. */
export const SAMPLES = {
  FP32: () => Float32Array.from({ length: 1000 }, (_, i) => i * 0.25 - 100),
  FP64: () => Float64Array.from({ length: 777 }, (_, i) => Math.sin(i) * 1e6),
  INT8: () => Int8Array.from({ length: 513 }, (_, i) => ((i * 37) % 256) - 128),
  UINT16: () => Uint16Array.from({ length: 4096 }, (_, i) => (i * 2654435761) & 0xffff),
  INT32: () => Int32Array.from({ length: 1031 }, (_, i) => (i * 2246822519) | 0),
  INT64: () => BigInt64Array.from({ length: 300 }, (_, i) => BigInt(i) * -12345678901n),
  UINT8: () => Uint8Array.from({ length: (1 << 16) + 3 }, (_, i) => (i * 7) & 0xff),
} as const;

/** Where a test puts an input, and where it asks for an output. */
export type Placement = 'cpu' | 'pinned' | 'gpu';
export const PLACEMENTS: Placement[] = ['cpu', 'pinned', 'gpu'];

/** `values` as they are, or copied into pinned or device memory (the caller disposes that). */
export function place(values: Float32Array, where: Placement): Float32Array | HostBuffer | CudaBuffer {
  if (where === 'cpu') return values;
  const b = where === 'pinned' ? cuda.allocHost(values.byteLength) : cuda.alloc(values.byteLength);
  b.copyFrom(values);
  return b;
}

/** An FP32 output's values, wherever they are. */
export function readFloats(t: Tensor): Float32Array {
  const d = t.data;
  if (d instanceof CudaBuffer) return d.toTypedArray(Float32Array);
  if (d instanceof HostBuffer) return new Float32Array(d.view(Float32Array));
  return d as Float32Array;
}
