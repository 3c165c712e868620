/**
 * The front's shared memory for one group process: a POSIX shared memory
 * object cut into fixed slots. The front writes a request's binary input
 * tensors into a free slot and sends the process only the JSON header, whose
 * inputs name the slot (Triton's system shared memory extension, which the
 * process's gateway serves); the tensors never pass through the socket.
 *
 * The object is unlinked from /dev/shm as soon as the group's process has
 * registered it (both hold it open): nothing is left behind when either
 * process dies, and no other process can open it by name afterwards.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';

/** Region names the front reserves in each group's process; clients may not name them. */
export const RESERVED_REGION_PREFIX = 'triton-node-isolation';

export interface Slot {
  index: number;
  offset: number;
}

export class ShmPool {
  /** The shared memory key (`shm_open` name) the group's process registers. */
  readonly key: string;
  /** The region name the group's process knows it by: random, new for each process. */
  readonly region: string;
  readonly slotBytes: number;
  readonly #fd: number;
  readonly #free: number[];
  #linked = true;
  #closed = false;

  constructor(group: string, slots: number, slotBytes: number) {
    const tag = `${process.pid}-${group}-${randomBytes(6).toString('hex')}`;
    this.key = `/${RESERVED_REGION_PREFIX}-${tag}`;
    // A secret of this front and the process alone (never in an answer to a
    // client): a request that names it can only come from the front.
    this.region = `${RESERVED_REGION_PREFIX}-${randomBytes(16).toString('hex')}`;
    this.slotBytes = slotBytes;
    // 'wx': a new object only, readable and writable by this user alone.
    this.#fd = openSync(`/dev/shm${this.key}`, 'wx+', 0o600);
    ftruncateSync(this.#fd, slots * slotBytes);
    this.#free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  }

  get size(): number {
    return this.#free.length;
  }

  /** A free slot for `bytes` bytes, or undefined (too large, or all slots busy). */
  acquire(bytes: number): Slot | undefined {
    if (this.#closed || bytes > this.slotBytes) return undefined;
    const index = this.#free.pop();
    return index === undefined ? undefined : { index, offset: index * this.slotBytes };
  }

  release(slot: Slot): void {
    if (!this.#closed) this.#free.push(slot.index);
  }

  /** Writes `bytes` at the start of `slot`. */
  write(slot: Slot, bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.byteLength) {
      done += writeSync(this.#fd, bytes, done, bytes.byteLength - done, slot.offset + done);
    }
  }

  /** Removes the object's name (its memory lives on while open). */
  unlink(): void {
    if (!this.#linked) return;
    this.#linked = false;
    try {
      unlinkSync(`/dev/shm${this.key}`);
    } catch {
      // Already gone.
    }
  }

  close(): void {
    if (this.#closed) return;
    this.unlink();
    this.#closed = true;
    closeSync(this.#fd);
  }
}
