/**
 * Pinned host memory and CUDA device memory, and CUDA IPC handles for sharing
 * device buffers between processes.
 *
 * The addon opens the CUDA runtime with dlopen, so nothing here needs CUDA to
 * load: without it `cuda.isAvailable()` is false, `cuda.unavailableReason()`
 * says why, and allocations fail with a TritonError of code 'UNSUPPORTED'.
 *
 * Lifetimes: a buffer owns its memory until `dispose()` (or `using`), or
 * until the garbage collector finalizes it. A buffer passed as an inference
 * input or output destination is kept alive by the request until Triton
 * releases it, so it is safe to drop your reference right after `infer()`.
 * Views made with `HostBuffer.view()` are invalid after `dispose()`.
 * @packageDocumentation
 */

import type { NativeCuda, NativeCudaBuffer, NativeHostBuffer } from '../abi/binding.js';
import { addon } from '../addon/load.js';
import { describe, fromNativeError, tritonError } from '../base/errors.js';

/** Size of a `cudaIpcMemHandle_t`. */
export const IPC_HANDLE_BYTES = 64;

/** A TypedArray constructor (Uint8Array, Float32Array, BigInt64Array, ...). */
export type TypedArrayConstructor<T extends ArrayBufferView = ArrayBufferView> = {
  new (buffer: ArrayBuffer, byteOffset?: number, length?: number): T;
  readonly BYTES_PER_ELEMENT: number;
  readonly name: string;
};

/** Where a copy can come from or go to. */
export type CopySource = ArrayBufferView | HostBuffer | CudaBuffer;

let cachedCuda: NativeCuda | undefined;
let loadFailure: string | undefined;

/** The addon's CUDA table, or undefined (with `loadFailure` set) when the addon cannot load. */
function nativeCuda(): NativeCuda | undefined {
  if (cachedCuda) return cachedCuda;
  if (loadFailure !== undefined) return undefined;
  try {
    cachedCuda = addon().cuda;
    return cachedCuda;
  } catch (err) {
    loadFailure = `the triton-node addon did not load: ${(err as Error)?.message ?? String(err)}`;
    return undefined;
  }
}

/** The CUDA table, or a TritonError 'UNSUPPORTED' saying why there is none. */
function requireCuda(what: string): NativeCuda {
  const c = nativeCuda();
  if (c?.isAvailable()) return c;
  const reason = c ? c.unavailableReason() : loadFailure;
  throw tritonError(
    'UNSUPPORTED',
    `${what} needs CUDA, which is not available: ${reason || 'no reason given'}`,
  );
}

function checkByteLength(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`Expected a positive integer byteLength for ${what} but received ${describe(value)}`);
  }
  return value;
}

function checkOffset(what: string, value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`Expected a non-negative integer offset for ${what} but received ${describe(value)}`);
  }
  return value;
}

function checkDevice(what: string, value: unknown, c: NativeCuda): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new TypeError(`Expected a non-negative integer device for ${what} but received ${describe(value)}`);
  }
  const count = c.deviceCount();
  if (value >= count) {
    throw new TypeError(
      `Expected a device below ${count} for ${what} (this machine has ${count} CUDA device(s)) but received ${value}`,
    );
  }
  return value;
}

/** Resolves a copy source/destination to what the addon takes, with its byte length. */
function copyTarget(
  what: string,
  value: unknown,
): { native: ArrayBufferView | NativeHostBuffer | NativeCudaBuffer; byteLength: number } {
  if (value instanceof HostBuffer || value instanceof CudaBuffer) {
    if (value.disposed) throw new TypeError(`${what}: the ${value.constructor.name} was disposed`);
    return { native: value.native, byteLength: value.byteLength };
  }
  if (ArrayBuffer.isView(value)) {
    if (isDetached(value.buffer)) {
      throw new TypeError(`${what}: the TypedArray's buffer is detached`);
    }
    return { native: value, byteLength: value.byteLength };
  }
  throw new TypeError(
    `Expected a TypedArray, DataView, HostBuffer or CudaBuffer for ${what} but received ${describe(value)}`,
  );
}

function isDetached(buffer: ArrayBufferLike): boolean {
  return (buffer as ArrayBuffer & { detached?: boolean }).detached === true;
}

function callNative<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw fromNativeError(err);
  }
}

/**
 * Copies all of `src` into `owner` at byte `offset`; shared by both buffer
 * classes (the addon lets cudaMemcpy infer the direction from the pointers).
 */
function copyInto(owner: HostBuffer | CudaBuffer, src: unknown, offset: unknown): void {
  const cls = owner.constructor.name;
  if (owner.disposed) throw new TypeError(`${cls}.copyFrom() after dispose()`);
  const at = checkOffset(`${cls}.copyFrom()`, offset);
  const source = copyTarget(`${cls}.copyFrom() source`, src);
  if (at + source.byteLength > owner.byteLength) {
    throw new RangeError(
      `${cls}.copyFrom(): ${source.byteLength} bytes at offset ${at} do not fit in ${owner.byteLength} bytes`,
    );
  }
  if (source.native === owner.native)
    throw new TypeError(`${cls}.copyFrom(): source and destination are the same buffer`);
  callNative(() => owner.native.copyFrom(source.native, at));
}

function copyOut(owner: HostBuffer | CudaBuffer, dst: unknown, offset: unknown): void {
  const cls = owner.constructor.name;
  if (owner.disposed) throw new TypeError(`${cls}.copyTo() after dispose()`);
  const at = checkOffset(`${cls}.copyTo()`, offset);
  const dest = copyTarget(`${cls}.copyTo() destination`, dst);
  if (at + owner.byteLength > dest.byteLength) {
    throw new RangeError(
      `${cls}.copyTo(): ${owner.byteLength} bytes at offset ${at} do not fit in the destination's ${dest.byteLength} bytes`,
    );
  }
  if (dest.native === owner.native)
    throw new TypeError(`${cls}.copyTo(): source and destination are the same buffer`);
  callNative(() => owner.native.copyTo(dest.native, at));
}

/**
 * Pinned (page-locked) host memory from `cudaHostAlloc`. Copies between it and
 * the GPU run at full bus speed; pageable memory is staged through a pinned
 * buffer by the driver. Usable as an inference input (`{ data: hostBuffer,
 * shape, datatype }`), as an output destination (`outputs: { OUT: { into:
 * hostBuffer } }`), and returned for outputs placed in `'pinned'` memory.
 */
export class HostBuffer {
  /** @internal */
  readonly native: NativeHostBuffer;
  #arrayBuffer: ArrayBuffer | undefined;

  /** @internal */
  constructor(native: NativeHostBuffer) {
    this.native = native;
  }

  /** @internal Wraps a buffer the addon made (an allocator output, an allocation). */
  static fromNative(native: NativeHostBuffer): HostBuffer {
    if (!native || native.kind !== 'host')
      throw new TypeError('HostBuffer.fromNative: not a native host buffer');
    return new HostBuffer(native);
  }

  get byteLength(): number {
    return this.native.byteLength;
  }

  get disposed(): boolean {
    return this.native.disposed;
  }

  /**
   * An ArrayBuffer over the pinned memory itself (no copy). Throws a
   * TritonError 'UNSUPPORTED' where the runtime refuses external buffers
   * (Electron): use `copyFrom`/`copyTo` there.
   */
  arrayBuffer(): ArrayBuffer {
    if (this.disposed) throw new TypeError('HostBuffer.arrayBuffer() after dispose()');
    if (!this.#arrayBuffer) {
      try {
        this.#arrayBuffer = this.native.arrayBuffer();
      } catch (err) {
        const e = fromNativeError(err);
        throw tritonError(
          e.code === 'UNKNOWN' ? 'UNSUPPORTED' : e.code,
          `HostBuffer.arrayBuffer(): ${e.message} (this runtime may refuse external buffers; use copyFrom()/copyTo())`,
        );
      }
    }
    return this.#arrayBuffer;
  }

  /**
   * A TypedArray over the pinned memory (no copy), Uint8Array by default.
   * The byte length must be a multiple of the element size.
   */
  view(): Uint8Array;
  view<T extends ArrayBufferView>(type: TypedArrayConstructor<T>): T;
  view(type: TypedArrayConstructor = Uint8Array): ArrayBufferView {
    if (typeof type !== 'function' || typeof type.BYTES_PER_ELEMENT !== 'number') {
      throw new TypeError(
        `Expected a TypedArray constructor for HostBuffer.view() but received ${describe(type)}`,
      );
    }
    if (this.byteLength % type.BYTES_PER_ELEMENT !== 0) {
      throw new RangeError(
        `HostBuffer.view(${type.name}): ${this.byteLength} bytes is not a multiple of ${type.BYTES_PER_ELEMENT}`,
      );
    }
    return new type(this.arrayBuffer(), 0, this.byteLength / type.BYTES_PER_ELEMENT);
  }

  /** Copies all of `src` into this buffer at byte `offset` (default 0). */
  copyFrom(src: CopySource, offset?: number): void {
    copyInto(this, src, offset);
  }

  /** Copies all of this buffer into `dst` at byte `offset` of `dst` (default 0). */
  copyTo(dst: CopySource, offset?: number): void {
    copyOut(this, dst, offset);
  }

  /** Frees the pinned memory now (idempotent). Views over it become invalid. */
  dispose(): void {
    this.#arrayBuffer = undefined;
    if (!this.native.disposed) callNative(() => this.native.dispose());
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * Device memory on one CUDA device: allocated with `cuda.alloc()`, opened
 * from another process's IPC handle with `CudaBuffer.fromIpcHandle()`, or
 * returned for outputs placed in `'gpu'` memory. As an inference input it
 * goes to Triton as GPU memory on its device.
 */
export class CudaBuffer {
  /** @internal */
  readonly native: NativeCudaBuffer;

  /** @internal */
  constructor(native: NativeCudaBuffer) {
    this.native = native;
  }

  /** @internal Wraps a buffer the addon made. */
  static fromNative(native: NativeCudaBuffer): CudaBuffer {
    if (!native || native.kind !== 'cuda')
      throw new TypeError('CudaBuffer.fromNative: not a native CUDA buffer');
    return new CudaBuffer(native);
  }

  /**
   * Opens a device buffer another process exported with `ipcHandle()`. The
   * memory stays the exporter's: it must keep its buffer alive while this one
   * is in use; `dispose()` here only closes the mapping.
   */
  static fromIpcHandle(
    handle: Uint8Array,
    byteLength: number,
    options: { device?: number } = {},
  ): CudaBuffer {
    if (!(handle instanceof Uint8Array) || handle.byteLength !== IPC_HANDLE_BYTES) {
      throw new TypeError(
        `Expected a ${IPC_HANDLE_BYTES}-byte Uint8Array for the IPC handle but received ${describe(handle)}`,
      );
    }
    checkByteLength('CudaBuffer.fromIpcHandle()', byteLength);
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(
        `Expected an options object for CudaBuffer.fromIpcHandle() but received ${describe(options)}`,
      );
    }
    const c = requireCuda('CudaBuffer.fromIpcHandle()');
    const device = checkDevice('CudaBuffer.fromIpcHandle()', options.device, c);
    return new CudaBuffer(callNative(() => c.openIpcHandle(handle, byteLength, device)));
  }

  get device(): number {
    return this.native.device;
  }

  get byteLength(): number {
    return this.native.byteLength;
  }

  get disposed(): boolean {
    return this.native.disposed;
  }

  /** True when this buffer was opened from another process's IPC handle. */
  get imported(): boolean {
    return this.native.imported;
  }

  /** Copies all of `src` (host or device memory) into this buffer at byte `offset`. */
  copyFrom(src: CopySource, offset?: number): void {
    copyInto(this, src, offset);
  }

  /** Copies all of this buffer into `dst` (host or device memory) at byte `offset` of `dst`. */
  copyTo(dst: CopySource, offset?: number): void {
    copyOut(this, dst, offset);
  }

  /** Copies the whole buffer into a new TypedArray (Uint8Array by default). */
  toTypedArray(): Uint8Array;
  toTypedArray<T extends ArrayBufferView>(type: TypedArrayConstructor<T>): T;
  toTypedArray(type: TypedArrayConstructor = Uint8Array): ArrayBufferView {
    if (typeof type !== 'function' || typeof type.BYTES_PER_ELEMENT !== 'number') {
      throw new TypeError(
        `Expected a TypedArray constructor for CudaBuffer.toTypedArray() but received ${describe(type)}`,
      );
    }
    if (this.byteLength % type.BYTES_PER_ELEMENT !== 0) {
      throw new RangeError(
        `CudaBuffer.toTypedArray(${type.name}): ${this.byteLength} bytes is not a multiple of ${type.BYTES_PER_ELEMENT}`,
      );
    }
    const out = new type(new ArrayBuffer(this.byteLength), 0, this.byteLength / type.BYTES_PER_ELEMENT);
    this.copyTo(out);
    return out;
  }

  /**
   * The 64-byte CUDA IPC handle of this allocation, for another process to
   * open with `CudaBuffer.fromIpcHandle()`. Send it by any means (a pipe, a
   * message); keep this buffer alive while the other side uses it.
   */
  ipcHandle(): Uint8Array {
    if (this.disposed) throw new TypeError('CudaBuffer.ipcHandle() after dispose()');
    const handle = callNative(() => this.native.ipcHandle());
    if (!(handle instanceof Uint8Array) || handle.byteLength !== IPC_HANDLE_BYTES) {
      throw tritonError('INTERNAL', `CudaBuffer.ipcHandle(): the addon returned ${describe(handle)}`);
    }
    return handle;
  }

  /** Frees the device memory (or closes an imported mapping) now; idempotent. */
  dispose(): void {
    if (!this.native.disposed) callNative(() => this.native.dispose());
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** CUDA helpers: availability, devices, pinned and device allocations. */
export const cuda = {
  /** True when the CUDA runtime was found and at least one device is usable. Never throws. */
  isAvailable(): boolean {
    try {
      return nativeCuda()?.isAvailable() ?? false;
    } catch {
      return false;
    }
  },

  /** Why CUDA is unavailable ('' when it is available): libraries tried, driver errors. */
  unavailableReason(): string {
    const c = nativeCuda();
    if (!c) return loadFailure ?? 'unknown';
    try {
      return c.isAvailable() ? '' : c.unavailableReason() || 'no reason given';
    } catch (err) {
      return (err as Error)?.message ?? String(err);
    }
  },

  /** Number of CUDA devices (0 without CUDA). */
  deviceCount(): number {
    const c = nativeCuda();
    if (!c?.isAvailable()) return 0;
    return callNative(() => c.deviceCount());
  },

  /** Allocates `byteLength` bytes of pinned host memory. */
  allocHost(byteLength: number): HostBuffer {
    checkByteLength('cuda.allocHost()', byteLength);
    const c = requireCuda('cuda.allocHost()');
    return new HostBuffer(callNative(() => c.allocHost(byteLength)));
  },

  /** Allocates `byteLength` bytes on `device` (default 0). */
  alloc(byteLength: number, options: { device?: number } = {}): CudaBuffer {
    checkByteLength('cuda.alloc()', byteLength);
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`Expected an options object for cuda.alloc() but received ${describe(options)}`);
    }
    const c = requireCuda('cuda.alloc()');
    const device = checkDevice('cuda.alloc()', options.device, c);
    return new CudaBuffer(callNative(() => c.alloc(byteLength, device)));
  },
} as const;
