// The gateway's CUDA shared memory extension: other processes export device
// memory by CUDA IPC handle, the test registers it over HTTP, and an
// inference reads its input from one region (the device memory itself) and
// writes its output into another; plus the extension's errors. Skips (with
// the reason) where there is no usable CUDA device.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gpuSkipReason } from '@triton-node/test-support/gpu/gpu-env.js';
import { skipAllIf, useServer } from '@triton-node/test-support/helpers.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../lib/index.js';

const CHILD = fileURLToPath(new URL('../../../triton-node/test/gpu/ipc-child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const N = 1024;

interface Exported {
  proc: ChildProcessWithoutNullStreams;
  handle: string;
  device: number;
}

/** A child process holding N FP32 values (i * 2) of device memory, exported by IPC handle. */
async function exportFromChild(): Promise<Exported> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, 'export', String(N * 4), '0'], {
    cwd: ROOT,
    stdio: 'pipe',
  });
  let err = '';
  proc.stderr.on('data', (d) => {
    err += String(d);
  });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`child exited early: ${err}`);
  const msg = JSON.parse(first.value) as { handle: string; device: number; error?: string };
  if (msg.error) throw new Error(`child failed: ${msg.error}; ${err}`);
  return { proc, handle: msg.handle, device: msg.device };
}

describe('CUDA shared memory through the gateway', () => {
  skipAllIf(gpuSkipReason);
  const server = useServer(['identity_nobatch'], {}, gpuSkipReason);
  let url = '';
  let h: http.Server | undefined;
  const children: Exported[] = [];

  beforeAll(async () => {
    if (gpuSkipReason) return;
    h = http.createServer(createGateway(server()).handler);
    await new Promise<void>((resolve) => h!.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(h.address() as AddressInfo).port}`;
    children.push(await exportFromChild(), await exportFromChild());
  });

  afterAll(async () => {
    for (const c of children) {
      c.proc.stdin.write('close\n');
      c.proc.stdin.end();
    }
    h?.closeAllConnections();
    await new Promise((resolve) => (h ? h.close(resolve) : resolve(undefined)));
  });

  async function call(path: string, body?: unknown) {
    const res = await request(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: text === '' ? undefined : JSON.parse(text) };
  }

  const shmParams = (region: string, offset: number, size: number) => ({
    shared_memory_region: region,
    shared_memory_offset: offset,
    shared_memory_byte_size: size,
  });

  it('registers exported device memory, infers from one region into another, and reads it back', async () => {
    const [a, b] = children as [Exported, Exported];
    for (const [name, c] of [
      ['in', a],
      ['out', b],
    ] as const) {
      const r = await call(`/v2/cudasharedmemory/region/${name}/register`, {
        raw_handle: { b64: c.handle },
        device_id: c.device,
        byte_size: N * 4,
      });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    }
    const status = await call('/v2/cudasharedmemory/status');
    expect(status.json).toEqual([
      { name: 'in', device_id: 0, byte_size: N * 4 },
      { name: 'out', device_id: 0, byte_size: N * 4 },
    ]);
    const r = await call('/v2/models/identity_nobatch/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [N], parameters: shmParams('in', 0, N * 4) }],
      outputs: [{ name: 'OUTPUT0', parameters: shmParams('out', 0, N * 4) }],
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.outputs[0].parameters).toEqual({
      shared_memory_region: 'out',
      shared_memory_byte_size: N * 4,
    });
    // Read the output region back: an inference with it as the input.
    const back = await call('/v2/models/identity_nobatch/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [N], parameters: shmParams('out', 0, N * 4) }],
    });
    expect(back.json.outputs[0].data).toEqual(Array.from({ length: N }, (_, i) => i * 2));
    // Part of a region: values 4..7.
    const part = await call('/v2/models/identity_nobatch/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: shmParams('in', 16, 16) }],
    });
    expect(part.json.outputs[0].data).toEqual([8, 10, 12, 14]);
  });

  it('refuses a region too small, an unregistered one, a malformed handle and a name already taken', async () => {
    const tooSmall = await call('/v2/models/identity_nobatch/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [N], parameters: shmParams('in', 4, N * 4) }],
    });
    expect(tooSmall.status).toBe(400);
    expect(tooSmall.json.error).toMatch(/Invalid offset \+ byte size for shared memory region: 'in'/);
    const missing = await call('/v2/models/identity_nobatch/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: shmParams('nowhere', 0, 16) }],
    });
    expect(missing.status).toBe(404);
    const badHandle = await call('/v2/cudasharedmemory/region/x/register', {
      raw_handle: { b64: Buffer.alloc(32).toString('base64') },
      device_id: 0,
      byte_size: 16,
    });
    expect(badHandle.status).toBe(400);
    expect(badHandle.json.error).toMatch(/32 bytes, expected 64/);
    const taken = await call('/v2/cudasharedmemory/region/in/register', {
      raw_handle: { b64: children[0]!.handle },
      device_id: 0,
      byte_size: 16,
    });
    expect(taken.status).toBe(400);
    expect(taken.json.error).toMatch(/already in manager/);
    expect((await call('/v2/cudasharedmemory/unregister', {})).status).toBe(200);
    expect((await call('/v2/cudasharedmemory/status')).json).toEqual([]);
  });
});
