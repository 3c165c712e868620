// Shared by the GPU test files: whether this machine can run them, and why not.
import { cuda } from '../../lib/cuda.js';

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
