/**
 * Triton's system shared memory extension: a client on the same machine
 * creates a POSIX shared memory object (`shm_open(key)`, which Linux keeps
 * at /dev/shm/<key>), registers a region of it by name, and then names that
 * region, an offset and a size in place of tensor data. Tensors then never
 * pass through the socket.
 *
 * The region is read and written through its file descriptor, opened once at
 * registration: an input is one read from the shared pages into the request's
 * buffer, an output one write from Triton's output buffer. (Mapping the
 * object instead would need native code; what the socket saved is the same.)
 *
 * CUDA shared memory: a client exports device memory as a CUDA IPC handle
 * and registers it with its device and size; the gateway opens the handle
 * once. An input that names a whole region goes to Triton as that device
 * memory (no copy); a part of one is copied out to host memory first (the
 * library takes whole device buffers). An output is copied into the region
 * at its offset. System and CUDA regions share one namespace, as in Triton.
 *
 * Errors as Triton's shared memory manager gives them: an unknown region is
 * NOT_FOUND, a region registered twice ALREADY_EXISTS, an offset and size
 * past the region's end INVALID_ARG.
 */
import { constants, closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { CudaBuffer, IPC_HANDLE_BYTES, cuda } from 'triton-node';
import { describe } from 'triton-node/internal';
import { GatewayError, badRequest } from '../errors.js';
import type { ShmReader, ShmReference, ShmWriter } from './codec.js';

/** Where POSIX shared memory objects live on Linux. */
const SHM_DIRECTORY = '/dev/shm';

interface Region {
  name: string;
  key: string;
  offset: number;
  byteSize: number;
  fd: number;
}

interface CudaRegion {
  name: string;
  deviceId: number;
  byteSize: number;
  buffer: CudaBuffer;
}

/** One registered CUDA region, as the status endpoints report it. */
export interface CudaRegionStatus {
  name: string;
  device_id: number;
  byte_size: number;
}

/** One registered region, as the status endpoints report it. */
export interface RegionStatus {
  name: string;
  key: string;
  offset: number;
  byte_size: number;
}

/**
 * How shm_open opens an object, plus O_NONBLOCK: a link planted in /dev/shm
 * is not followed (ELOOP), and a FIFO there opens at once (then fstat
 * refuses it) instead of blocking the event loop. libuv adds O_CLOEXEC.
 */
const SHM_OPEN_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The longest name of a file in /dev/shm (NAME_MAX). */
const SHM_NAME_MAX = 255;

/** The file name of a key under shm_open's rules: leading '/'s dropped, then one name, no NUL. */
function shmName(region: string, key: string): string {
  const file = key.replace(/^\/+/, '');
  // A NUL would cut Triton's C string short and open another object: refused.
  if (file.includes('\0')) {
    throw badRequest(
      `failed to register shared memory region '${region}': invalid key '${key.replace(/\0/g, '\\0')}' (it has a NUL character)`,
    );
  }
  const why =
    file === '' || file === '.' || file === '..'
      ? 'it names no object'
      : file.includes('/')
        ? "it has a '/' after the leading one"
        : Buffer.byteLength(file) > SHM_NAME_MAX
          ? `it is longer than ${SHM_NAME_MAX} bytes`
          : undefined;
  if (why === undefined) return file;
  // shm_open refuses these: Triton answers INTERNAL (500) "Unable to open
  // shared memory region: '<key>'", and so does the gateway.
  throw new GatewayError(
    500,
    `Unable to open shared memory region: '${key}' (invalid key: ${why})`,
    'INTERNAL',
  );
}

function nonNegative(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw badRequest(`Expected a non-negative integer for '${what}' but received ${describe(v)}`);
  }
  return v;
}

export class SharedMemoryRegistry implements ShmReader, ShmWriter {
  readonly #regions = new Map<string, Region>();
  readonly #cudaRegions = new Map<string, CudaRegion>();

  #taken(name: string): void {
    if (this.#regions.has(name) || this.#cudaRegions.has(name)) {
      throw new GatewayError(400, `shared memory region '${name}' already in manager`, 'ALREADY_EXISTS');
    }
  }

  /** Registers `name` as the device memory another process exported with a CUDA IPC handle. */
  registerCuda(name: string, handle: Uint8Array, deviceId: number, byteSize: number): void {
    this.#taken(name);
    if (!cuda.isAvailable()) {
      throw new GatewayError(
        501,
        `CUDA shared memory needs CUDA: ${cuda.unavailableReason()}`,
        'UNSUPPORTED',
      );
    }
    if (handle.byteLength !== IPC_HANDLE_BYTES) {
      throw badRequest(
        `failed to register CUDA shared memory region '${name}': the raw handle has ${handle.byteLength} bytes, expected ${IPC_HANDLE_BYTES}`,
      );
    }
    let buffer: CudaBuffer;
    try {
      buffer = CudaBuffer.fromIpcHandle(handle, byteSize, { device: deviceId });
    } catch (err) {
      throw badRequest(`failed to register CUDA shared memory region '${name}': ${(err as Error).message}`);
    }
    this.#cudaRegions.set(name, { name, deviceId, byteSize, buffer });
  }

  /** Unregisters the CUDA region `name`, or every CUDA region (its mapping is closed). */
  unregisterCuda(name?: string): void {
    for (const region of [...this.#cudaRegions.values()]) {
      if (name !== undefined && region.name !== name) continue;
      this.#cudaRegions.delete(region.name);
      region.buffer.dispose();
    }
  }

  /** The status of the CUDA region `name` (NOT_FOUND when unknown) or of every CUDA region. */
  cudaStatus(name?: string): CudaRegionStatus[] {
    if (name !== undefined && !this.#cudaRegions.has(name)) throw notFound(name);
    return [...this.#cudaRegions.values()]
      .filter((r) => name === undefined || r.name === name)
      .map((r) => ({ name: r.name, device_id: r.deviceId, byte_size: r.byteSize }));
  }

  /** A CUDA region's tensor: the device memory itself when the reference is the whole region, else a host copy of its part. */
  #readCuda(region: CudaRegion, ref: ShmReference): CudaBuffer | Buffer {
    if (ref.offset + ref.byteSize > region.byteSize) throw outOfBounds(ref, region.byteSize);
    if (ref.offset === 0 && ref.byteSize === region.byteSize) return region.buffer;
    const host = Buffer.allocUnsafeSlow(region.byteSize);
    region.buffer.copyTo(host);
    return host.subarray(ref.offset, ref.offset + ref.byteSize);
  }

  /** Registers `name` as `byteSize` bytes at `offset` of the shared memory object `key`. */
  register(name: string, key: string, offset: number, byteSize: number): void {
    this.#taken(name);
    const file = shmName(name, key);
    let fd: number;
    try {
      fd = openSync(`${SHM_DIRECTORY}/${file}`, SHM_OPEN_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') {
        throw badRequest(
          `failed to register shared memory region '${name}': '${key}' is a symbolic link in ${SHM_DIRECTORY}, not a shared memory object`,
        );
      }
      throw new GatewayError(500, `Unable to open shared memory region: '${key}' (${code})`, 'INTERNAL');
    }
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      closeSync(fd);
      throw badRequest(
        `failed to register shared memory region '${name}': '${key}' is not a shared memory object (not a regular file in ${SHM_DIRECTORY})`,
      );
    }
    const size = stats.size;
    if (offset + byteSize > size) {
      closeSync(fd);
      throw badRequest(
        `failed to register shared memory region '${name}': offset ${offset} + byte_size ${byteSize} exceeds the ${size} bytes of '${key}'`,
      );
    }
    this.#regions.set(name, { name, key, offset, byteSize, fd });
  }

  /** Unregisters `name`, or every region. Unknown names are ignored, as Triton does. */
  unregister(name?: string): void {
    for (const region of [...this.#regions.values()]) {
      if (name !== undefined && region.name !== name) continue;
      this.#regions.delete(region.name);
      closeSync(region.fd);
    }
  }

  /** The status of `name` (NOT_FOUND when unknown) or of every region. */
  status(name?: string): RegionStatus[] {
    if (name !== undefined && !this.#regions.has(name)) throw notFound(name);
    return [...this.#regions.values()]
      .filter((r) => name === undefined || r.name === name)
      .map((r) => ({ name: r.name, key: r.key, offset: r.offset, byte_size: r.byteSize }));
  }

  /** The region of a tensor reference, checked to hold it. */
  #locate(ref: ShmReference): Region {
    const region = this.#regions.get(ref.region);
    if (region === undefined) throw notFound(ref.region);
    if (ref.offset + ref.byteSize > region.byteSize) throw outOfBounds(ref, region.byteSize);
    return region;
  }

  /** An input's data from its region: bytes read from system shared memory, or CUDA memory. */
  read(ref: ShmReference): Buffer | CudaBuffer {
    const cudaRegion = this.#cudaRegions.get(ref.region);
    if (cudaRegion !== undefined) return this.#readCuda(cudaRegion, ref);
    const region = this.#locate(ref);
    const out = Buffer.allocUnsafe(ref.byteSize);
    let done = 0;
    while (done < out.length) {
      const n = readSync(region.fd, out, done, out.length - done, region.offset + ref.offset + done);
      if (n === 0) throw badRequest(`shared memory region '${ref.region}' ended early (its object shrank)`);
      done += n;
    }
    return out;
  }

  /** Writes an output into its region; an output larger than the reference is an error. */
  write(ref: ShmReference, bytes: Uint8Array, what: string): void {
    const cudaRegion = this.#cudaRegions.get(ref.region);
    const region = cudaRegion === undefined ? this.#locate(ref) : undefined;
    if (cudaRegion !== undefined && ref.offset + ref.byteSize > cudaRegion.byteSize) {
      throw outOfBounds(ref, cudaRegion.byteSize);
    }
    if (bytes.byteLength > ref.byteSize) {
      throw badRequest(
        `${what} has ${bytes.byteLength} bytes, more than the ${ref.byteSize} bytes its shared memory region '${ref.region}' was given`,
      );
    }
    if (cudaRegion !== undefined) {
      cudaRegion.buffer.copyFrom(bytes, ref.offset);
      return;
    }
    let done = 0;
    while (done < bytes.byteLength) {
      done += writeSync(region!.fd, bytes, done, bytes.byteLength - done, region!.offset + ref.offset + done);
    }
  }

  /** The first-pass check of an output reference (before inference runs). */
  check(ref: ShmReference): void {
    const cudaRegion = this.#cudaRegions.get(ref.region);
    if (cudaRegion === undefined) this.#locate(ref);
    else if (ref.offset + ref.byteSize > cudaRegion.byteSize) throw outOfBounds(ref, cudaRegion.byteSize);
  }

  /** The CUDA endpoints: status, register (`{ raw_handle: { b64 }, device_id, byte_size }`) and unregister. */
  async handleCuda(
    action: string,
    name: string | undefined,
    body: Record<string, unknown>,
  ): Promise<unknown> {
    if (action === 'status') return this.cudaStatus(name);
    if (action === 'unregister') {
      this.unregisterCuda(name);
      return {};
    }
    if (name === undefined) throw badRequest('register needs a region name in the path');
    const raw = body.raw_handle as { b64?: unknown } | undefined;
    if (typeof raw !== 'object' || raw === null || typeof raw.b64 !== 'string') {
      throw badRequest(`Expected { "b64": string } for 'raw_handle' but received ${describe(raw)}`);
    }
    this.registerCuda(
      name,
      new Uint8Array(Buffer.from(raw.b64, 'base64')),
      nonNegative(body.device_id ?? 0, 'device_id'),
      nonNegative(body.byte_size, 'byte_size'),
    );
    return {};
  }

  /** The HTTP endpoints: status, register and unregister, answering their JSON documents. */
  async handle(action: string, name: string | undefined, body: Record<string, unknown>): Promise<unknown> {
    if (action === 'status') return this.status(name);
    if (action === 'unregister') {
      this.unregister(name);
      return {};
    }
    if (name === undefined) throw badRequest('register needs a region name in the path');
    if (typeof body.key !== 'string')
      throw badRequest(`Expected a string for 'key' but received ${describe(body.key)}`);
    this.register(
      name,
      body.key,
      nonNegative(body.offset ?? 0, 'offset'),
      nonNegative(body.byte_size, 'byte_size'),
    );
    return {};
  }

  /** Closes every region (the gateway is closing). */
  close(): void {
    this.unregister();
    this.unregisterCuda();
  }
}

function outOfBounds(ref: ShmReference, size: number): GatewayError {
  return badRequest(
    `Invalid offset + byte size for shared memory region: '${ref.region}' (offset ${ref.offset} + ${ref.byteSize} bytes exceeds its ${size} bytes)`,
  );
}

function notFound(name: string): GatewayError {
  return new GatewayError(404, `Unable to find shared memory region: '${name}'`, 'NOT_FOUND');
}
