// Child process for test/gpu/ipc.test.ts: the other side of a CUDA IPC
// hand-off. Speaks JSON lines: requests on stdin, replies on stdout.
//
//   mode 'import': {handle, byteLength, device} → opens the parent's buffer,
//     replies {seen: [first 4 floats]}, fills it with 1000 + i, replies
//     {written: true}, closes the mapping and exits.
//   mode 'export': allocates byteLength bytes on device, fills them with
//     i * 2 (FP32), replies {handle, byteLength, device}, keeps the buffer
//     alive until a 'close' line, then frees it and exits.
import { createInterface } from 'node:readline';
import { CudaBuffer, cuda } from '../../lib/tensor/cuda.js';

const mode = process.argv[2];
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function reply(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function next(): Promise<string> {
  const r = await lines.next();
  if (r.done) throw new Error('parent closed stdin');
  return r.value;
}

async function main(): Promise<void> {
  if (!cuda.isAvailable()) throw new Error(`no CUDA in the child: ${cuda.unavailableReason()}`);
  if (mode === 'import') {
    const { handle, byteLength, device } = JSON.parse(await next()) as {
      handle: string;
      byteLength: number;
      device: number;
    };
    const shared = CudaBuffer.fromIpcHandle(new Uint8Array(Buffer.from(handle, 'base64')), byteLength, {
      device,
    });
    const seen = shared.toTypedArray(Float32Array);
    reply({ seen: Array.from(seen.subarray(0, 4)), imported: shared.imported });
    const mine = Float32Array.from({ length: byteLength / 4 }, (_, i) => 1000 + i);
    shared.copyFrom(mine);
    reply({ written: true });
    shared.dispose();
  } else if (mode === 'export') {
    const byteLength = Number(process.argv[3]);
    const device = Number(process.argv[4] ?? 0);
    const buffer = cuda.alloc(byteLength, { device });
    buffer.copyFrom(Float32Array.from({ length: byteLength / 4 }, (_, i) => i * 2));
    reply({ handle: Buffer.from(buffer.ipcHandle()).toString('base64'), byteLength, device });
    while ((await next()) !== 'close') {
      // ignore anything else
    }
    buffer.dispose();
    reply({ closed: true });
  } else {
    throw new Error(`unknown mode '${mode}'`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    reply({ error: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  },
);
