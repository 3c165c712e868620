// CUDA IPC between two Node processes: a child opens the parent's buffer by
// handle and writes to it; a buffer the child exports is an inference input
// in the parent. Skips (with the reason) where there is no usable CUDA device.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gpuSkipReason } from '@triton-node/test-support/gpu/gpu-env.js';
import { skipAllIf, useServer } from '@triton-node/test-support/helpers.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CudaBuffer, TritonError, cuda } from '../../lib/index.js';

const CHILD = fileURLToPath(new URL('./ipc-child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Child {
  proc: ChildProcessWithoutNullStreams;
  next(): Promise<Record<string, unknown>>;
  send(line: string): void;
  exit: Promise<number | null>;
  stderr(): string;
}

const children: Child[] = [];

function startChild(args: string[]): Child {
  // tsx as an import hook: works where node_modules/.bin is missing.
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { cwd: ROOT, stdio: 'pipe' });
  let err = '';
  proc.stderr.on('data', (d) => {
    err += String(d);
  });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const child: Child = {
    proc,
    async next() {
      const r = await Promise.race([
        lines.next(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`child sent nothing in 30 s; stderr: ${err}`)), 30_000),
        ),
      ]);
      if (r.done) throw new Error(`child exited early; stderr: ${err}`);
      const msg = JSON.parse(r.value) as Record<string, unknown>;
      if (msg.error) throw new Error(`child failed: ${String(msg.error)}; stderr: ${err}`);
      return msg;
    },
    send(line) {
      proc.stdin.write(`${line}\n`);
    },
    exit,
    stderr: () => err,
  };
  children.push(child);
  return child;
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill();
});

describe('CUDA IPC between processes', () => {
  skipAllIf(gpuSkipReason);
  const server = useServer(['identity_nobatch'], {}, gpuSkipReason);
  const n = 1024;

  it("a child opens the parent's buffer by handle, writes, and the parent reads the change", async () => {
    using buf = cuda.alloc(n * 4);
    buf.copyFrom(Float32Array.from({ length: n }, (_, i) => i + 0.5));
    const child = startChild(['import']);
    child.send(
      JSON.stringify({
        handle: Buffer.from(buf.ipcHandle()).toString('base64'),
        byteLength: n * 4,
        device: 0,
      }),
    );
    const seen = await child.next();
    expect(seen).toEqual({ seen: [0.5, 1.5, 2.5, 3.5], imported: true });
    expect(await child.next()).toEqual({ written: true });
    expect(await child.exit).toBe(0);
    const now = buf.toTypedArray(Float32Array);
    expect(now[0]).toBe(1000);
    expect(now[n - 1]).toBe(1000 + n - 1);
    expect(now).toEqual(Float32Array.from({ length: n }, (_, i) => 1000 + i));
  });

  it('a buffer exported by a child is an inference input in the parent (CPU and GPU outputs)', async () => {
    const child = startChild(['export', String(n * 4), '0']);
    const msg = (await child.next()) as { handle: string; byteLength: number; device: number };
    expect(msg.byteLength).toBe(n * 4);
    const expected = Float32Array.from({ length: n }, (_, i) => i * 2);
    {
      using shared = CudaBuffer.fromIpcHandle(
        new Uint8Array(Buffer.from(msg.handle, 'base64')),
        msg.byteLength,
        {
          device: msg.device,
        },
      );
      expect(shared.imported).toBe(true);
      expect(shared.byteLength).toBe(n * 4);
      const cpu = await server().infer('identity_nobatch', {
        inputs: { INPUT0: { data: shared, shape: [n], datatype: 'FP32' } },
      });
      expect(cpu.outputs.OUTPUT0!.data).toEqual(expected);
      const gpu = await server().infer('identity_nobatch', {
        inputs: { INPUT0: { data: shared, shape: [n], datatype: 'FP32' } },
        outputMemory: 'gpu',
      });
      using out = gpu.outputs.OUTPUT0!.data as CudaBuffer;
      expect(out.imported).toBe(false);
      expect(out.toTypedArray(Float32Array)).toEqual(expected);
    }
    // The parent closed its mapping; now the owner frees the memory.
    child.send('close');
    expect(await child.next()).toEqual({ closed: true });
    expect(await child.exit).toBe(0);
  });

  it('rejects a malformed handle before touching CUDA', () => {
    expect(() => CudaBuffer.fromIpcHandle(new Uint8Array(32), 16)).toThrow(/64-byte/);
  });

  it('fails cleanly (TritonError, no crash) on a handle that names nothing, or its own process', () => {
    const junk = Uint8Array.from({ length: 64 }, (_, i) => (i * 91 + 17) & 0xff);
    expect(() => CudaBuffer.fromIpcHandle(junk, 1024)).toThrow(TritonError);
    // CUDA does not open a handle in the process that exported it.
    using own = cuda.alloc(1024);
    expect(() => CudaBuffer.fromIpcHandle(own.ipcHandle(), 1024)).toThrow(TritonError);
  });
});
