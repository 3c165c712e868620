/**
 * An ELF file's dynamic section, read by the doctor without loading the
 * file: the libraries it needs (DT_NEEDED), its SONAME and its search paths
 * (DT_RPATH, DT_RUNPATH). Only the headers, the dynamic segment and the
 * strings it names are read: a libtorch_cuda.so is a gigabyte.
 * @internal
 * @packageDocumentation
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface ElfDynamic {
  /** 32 or 64 (EI_CLASS). */
  bits: 32 | 64;
  /** e_machine (62: x86-64, 183: AArch64). */
  machine: number;
  needed: string[];
  soname: string | null;
  /** DT_RPATH's directories as written ($ORIGIN unexpanded), or null when it has none. */
  rpath: string[] | null;
  /** DT_RUNPATH's directories as written, or null when it has none. */
  runpath: string[] | null;
}

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const DT_NULL = 0;
const DT_NEEDED = 1;
const DT_STRTAB = 5;
const DT_SONAME = 14;
const DT_RPATH = 15;
const DT_RUNPATH = 29;
/** A dynamic segment bigger than this is not one (real ones hold a few dozen entries). */
const MAX_DYNAMIC_BYTES = 1 << 20;

/** Reads the file at offsets; each read must be whole. */
class Reader {
  readonly size: number;
  constructor(private readonly fd: number) {
    this.size = fstatSync(fd).size;
  }

  at(offset: number, length: number): Buffer {
    if (offset < 0 || length < 0 || offset + length > this.size) throw new Error('past the end of the file');
    const out = Buffer.alloc(length);
    if (readSync(this.fd, out, 0, length, offset) !== length) throw new Error('short read');
    return out;
  }

  /** The NUL-terminated string at `offset`. */
  string(offset: number): string {
    let length = 256;
    for (;;) {
      const chunk = this.at(offset, Math.min(length, this.size - offset));
      const end = chunk.indexOf(0);
      if (end >= 0) return chunk.subarray(0, end).toString('utf8');
      if (offset + chunk.length >= this.size || length > 65536) throw new Error('unterminated string');
      length *= 4;
    }
  }
}

/** The fields of a header or table entry, in either byte order and class. */
function fields(buf: Buffer, little: boolean) {
  return {
    u16: (o: number) => (little ? buf.readUInt16LE(o) : buf.readUInt16BE(o)),
    u32: (o: number) => (little ? buf.readUInt32LE(o) : buf.readUInt32BE(o)),
    u64: (o: number) => Number(little ? buf.readBigUInt64LE(o) : buf.readBigUInt64BE(o)),
    i64: (o: number) => Number(little ? buf.readBigInt64LE(o) : buf.readBigInt64BE(o)),
  };
}

interface Segment {
  type: number;
  offset: number;
  vaddr: number;
  filesz: number;
}

function segments(r: Reader, head: Buffer, bits: 32 | 64, little: boolean): Segment[] {
  const h = fields(head, little);
  const phoff = bits === 64 ? h.u64(32) : h.u32(28);
  const entsize = bits === 64 ? h.u16(54) : h.u16(42);
  const count = bits === 64 ? h.u16(56) : h.u16(44);
  if (entsize < (bits === 64 ? 56 : 32)) throw new Error('program header entries too small');
  const table = r.at(phoff, entsize * count);
  const out: Segment[] = [];
  for (let i = 0; i < count; i++) {
    const p = fields(table.subarray(i * entsize, (i + 1) * entsize), little);
    out.push(
      bits === 64
        ? { type: p.u32(0), offset: p.u64(8), vaddr: p.u64(16), filesz: p.u64(32) }
        : { type: p.u32(0), offset: p.u32(4), vaddr: p.u32(8), filesz: p.u32(16) },
    );
  }
  return out;
}

/** The file offset of a virtual address, through the loadable segment that maps it. */
function fileOffset(loads: Segment[], vaddr: number): number {
  const s = loads.find((l) => vaddr >= l.vaddr && vaddr < l.vaddr + l.filesz);
  if (s === undefined) throw new Error('an address no segment maps');
  return s.offset + (vaddr - s.vaddr);
}

function readDynamic(r: Reader): ElfDynamic | null {
  const head = r.at(0, Math.min(64, r.size));
  if (head.length < 52 || head.readUInt32BE(0) !== 0x7f454c46) return null;
  const bits = head[4] === 2 ? 64 : head[4] === 1 ? 32 : null;
  const little = head[5] === 1 ? true : head[5] === 2 ? false : null;
  if (bits === null || little === null || (bits === 64 && head.length < 64)) return null;
  const machine = fields(head, little).u16(18);
  const segs = segments(r, head, bits, little);
  const dynamic = segs.find((s) => s.type === PT_DYNAMIC);
  const result: ElfDynamic = { bits, machine, needed: [], soname: null, rpath: null, runpath: null };
  // Statically linked: nothing needed.
  if (dynamic === undefined) return result;
  const entry = bits === 64 ? 16 : 8;
  const table = r.at(dynamic.offset, Math.min(dynamic.filesz, MAX_DYNAMIC_BYTES));
  const d = fields(table, little);
  const tags: Array<[number, number]> = [];
  for (let o = 0; o + entry <= table.length; o += entry) {
    const tag = bits === 64 ? d.i64(o) : d.u32(o);
    if (tag === DT_NULL) break;
    tags.push([tag, bits === 64 ? d.u64(o + 8) : d.u32(o + 4)]);
  }
  const strtab = tags.find(([t]) => t === DT_STRTAB)?.[1];
  if (strtab === undefined) return result;
  const strings = fileOffset(
    segs.filter((s) => s.type === PT_LOAD),
    strtab,
  );
  const text = (index: number) => r.string(strings + index);
  for (const [tag, value] of tags) {
    if (tag === DT_NEEDED) result.needed.push(text(value));
    else if (tag === DT_SONAME) result.soname = text(value);
    else if (tag === DT_RPATH) result.rpath = text(value).split(':').filter(Boolean);
    else if (tag === DT_RUNPATH) result.runpath = text(value).split(':').filter(Boolean);
  }
  return result;
}

/**
 * The dynamic section of the ELF file `file`: null when it is not an ELF
 * file (or cannot be read, or its headers do not hold together).
 */
export function readElfDynamic(file: string): ElfDynamic | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    return readDynamic(new Reader(fd));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
