// A small PNG decoder for the examples (8-bit grayscale, gray+alpha, RGB or
// RGBA, not interlaced), on node:zlib alone. A service would rather use an
// image library (sharp: `sharp(file).removeAlpha().raw().toBuffer({
// resolveWithObject: true })`); this keeps the examples free of a native
// image dependency.
import { inflateSync } from 'node:zlib';

export interface RgbImage {
  width: number;
  height: number;
  /** Interleaved R, G, B bytes, row by row. */
  data: Uint8Array;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Channels per PNG color type (0 gray, 2 RGB, 4 gray+alpha, 6 RGBA). */
const CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 4: 2, 6: 4 };

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Undoes the per-row filters in place of a fresh buffer (PNG spec, section 9). */
function unfilter(raw: Uint8Array, width: number, height: number, bpp: number): Uint8Array {
  const stride = width * bpp;
  const out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    const prev = row - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[row + x - bpp]! : 0;
      const b = y > 0 ? out[prev + x]! : 0;
      const c = x >= bpp && y > 0 ? out[prev + x - bpp]! : 0;
      const v = raw[src + x]!;
      switch (filter) {
        case 0:
          out[row + x] = v;
          break;
        case 1:
          out[row + x] = v + a;
          break;
        case 2:
          out[row + x] = v + b;
          break;
        case 3:
          out[row + x] = v + ((a + b) >> 1);
          break;
        case 4:
          out[row + x] = v + paeth(a, b, c);
          break;
        default:
          throw new Error(`PNG: row ${y} has filter type ${filter}, expected 0 to 4`);
      }
    }
  }
  return out;
}

/** Decodes a PNG file's bytes to RGB (alpha dropped, gray repeated). */
export function decodePng(file: Uint8Array): RgbImage {
  if (!SIGNATURE.every((b, i) => file[i] === b)) throw new Error('PNG: not a PNG file (bad signature)');
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 8 <= file.length; ) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...file.subarray(at + 4, at + 8));
    const body = file.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const [depth, color, , , interlace] = body.subarray(8, 13);
      channels = CHANNELS[color!] ?? 0;
      if (depth !== 8 || channels === 0 || interlace !== 0) {
        throw new Error(
          `PNG: expected 8-bit gray, RGB or RGBA, not interlaced, but received depth ${depth}, color type ${color}, interlace ${interlace}`,
        );
      }
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
    at += 12 + length;
  }
  if (width === 0 || idat.length === 0) throw new Error('PNG: no IHDR or no image data');
  const pixels = unfilter(new Uint8Array(inflateSync(Buffer.concat(idat))), width, height, channels);
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const p = i * channels;
    const gray = channels < 3;
    data[i * 3] = pixels[p]!;
    data[i * 3 + 1] = gray ? pixels[p]! : pixels[p + 1]!;
    data[i * 3 + 2] = gray ? pixels[p]! : pixels[p + 2]!;
  }
  return { width, height, data };
}
