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
 * Errors as Triton's shared memory manager gives them: an unknown region is
 * NOT_FOUND, a region registered twice ALREADY_EXISTS, an offset and size
 * past the region's end INVALID_ARG.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { describe } from '../errors.js';
import type { ShmReference, ShmResolver, ShmWriter } from './codec.js';
import { GatewayError, badRequest } from './errors.js';

/** Where POSIX shared memory objects live on Linux. */
const SHM_DIRECTORY = '/dev/shm';

interface Region {
  name: string;
  key: string;
  offset: number;
  byteSize: number;
  fd: number;
}

/** One registered region, as the status endpoints report it. */
export interface RegionStatus {
  name: string;
  key: string;
  offset: number;
  byte_size: number;
}

function nonNegative(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw badRequest(`Expected a non-negative integer for '${what}' but received ${describe(v)}`);
  }
  return v;
}

export class SharedMemoryRegistry {
  readonly #regions = new Map<string, Region>();

  /** Registers `name` as `byteSize` bytes at `offset` of the shared memory object `key`. */
  register(name: string, key: string, offset: number, byteSize: number): void {
    if (this.#regions.has(name)) {
      throw new GatewayError(400, `shared memory region '${name}' already in manager`, 'ALREADY_EXISTS');
    }
    const file = key.replace(/^\/+/, '');
    if (file === '' || file.includes('/') || file === '.' || file === '..') {
      throw badRequest(`failed to register shared memory region '${name}': invalid key '${key}'`);
    }
    let fd: number;
    try {
      fd = openSync(`${SHM_DIRECTORY}/${file}`, 'r+');
    } catch (err) {
      throw new GatewayError(
        500,
        `Unable to open shared memory region: '${key}' (${(err as NodeJS.ErrnoException).code})`,
        'INTERNAL',
      );
    }
    const size = fstatSync(fd).size;
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
    if (ref.offset + ref.byteSize > region.byteSize) {
      throw badRequest(
        `Invalid offset + byte size for shared memory region: '${ref.region}' (offset ${ref.offset} + ${ref.byteSize} bytes exceeds its ${region.byteSize} bytes)`,
      );
    }
    return region;
  }

  /** Reads an input's bytes from its region. */
  read(ref: ShmReference): Buffer {
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
    const region = this.#locate(ref);
    if (bytes.byteLength > ref.byteSize) {
      throw badRequest(
        `${what} has ${bytes.byteLength} bytes, more than the ${ref.byteSize} bytes its shared memory region '${ref.region}' was given`,
      );
    }
    let done = 0;
    while (done < bytes.byteLength) {
      done += writeSync(region.fd, bytes, done, bytes.byteLength - done, region.offset + ref.offset + done);
    }
  }

  /** The first-pass check of an output reference (before inference runs). */
  check(ref: ShmReference): void {
    this.#locate(ref);
  }

  resolver(): ShmResolver {
    return (ref) => this.read(ref);
  }

  writer(): ShmWriter {
    return (ref, bytes, what) => this.write(ref, bytes, what);
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
  }
}

function notFound(name: string): GatewayError {
  return new GatewayError(404, `Unable to find shared memory region: '${name}'`, 'NOT_FOUND');
}
