/**
 * The system shared memory extension: a second process creates a POSIX
 * shared memory object, registers it with the gateway, and passes an
 * inference's input and output through it; and the extension's errors (an
 * unregistered region, a region too small, a key that does not exist, a
 * region registered twice) with the statuses Triton gives them, over HTTP and
 * gRPC.
 */
import { execFile } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { FIXTURES, useServer } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeGrpcRequest, encodeGrpcResponse } from '../lib/grpc/codec.js';
import { SharedMemoryRegistry } from '../lib/kserve/shared-memory.js';
import { httpCall, useGateway } from './helpers.js';

const server = useServer(['identity_fp32']);
const gw = useGateway(server);
const KEY = `triton-node-test-${process.pid}`;

const call = (path: string, body?: unknown) => httpCall(gw().url, path, { json: body });

describe('system shared memory from a second process', () => {
  it('registers a region, infers through it, reads the output from it, unregisters', async () => {
    // Asynchronously: the gateway answering the child runs in this process.
    const child = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      `${FIXTURES}/shm-client.ts`,
      gw().url,
      `${KEY}-child`,
    ]);
    const report = JSON.parse(child.stdout);
    expect(report.register.status).toBe(200);
    expect(report.status).toEqual([{ name: 'io', key: `${KEY}-child`, offset: 0, byte_size: 64 }]);
    expect(report.infer.status).toBe(200);
    expect(report.infer.body.outputs[0]).toEqual({
      name: 'OUTPUT0',
      datatype: 'FP32',
      shape: [1, 4],
      parameters: { shared_memory_region: 'io', shared_memory_byte_size: 16 },
    });
    expect(report.output).toEqual([1.5, -2, 3.25, 4]);
    expect(report.unregister.status).toBe(200);
    expect(report.afterStatus).toBe(404);
    expect(report.afterBody.error).toMatch(/Unable to find shared memory region: 'io'/);
  });
});

describe('errors', () => {
  const key = `${KEY}-errors`;
  beforeAll(() => {
    const fd = openSync(`/dev/shm/${key}`, 'w+');
    ftruncateSync(fd, 32);
    writeSync(fd, new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer), 0, 16, 0);
    closeSync(fd);
  });
  afterAll(() => {
    unlinkSync(`/dev/shm/${key}`);
  });

  const infer = (region: string, offset: number, size: number) =>
    call('/v2/models/identity_fp32/infer', {
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, size / 4],
          parameters: {
            shared_memory_region: region,
            shared_memory_offset: offset,
            shared_memory_byte_size: size,
          },
        },
      ],
    });

  it('an unregistered region: 404', async () => {
    const r = await infer('nowhere', 0, 16);
    expect(r.status).toBe(404);
    expect(r.json.error).toBe("Unable to find shared memory region: 'nowhere'");
  });

  it('a region too small for the tensor, or registered past the object’s end: 400', async () => {
    expect(
      (await call('/v2/systemsharedmemory/region/small/register', { key, offset: 0, byte_size: 16 })).status,
    ).toBe(200);
    const r = await infer('small', 8, 16);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/Invalid offset \+ byte size for shared memory region: 'small'/);
    const ok = await infer('small', 0, 16);
    expect(ok.status).toBe(200);
    expect(ok.json.outputs[0].data).toEqual([1, 2, 3, 4]);
    const past = await call('/v2/systemsharedmemory/region/big/register', { key, offset: 16, byte_size: 32 });
    expect(past.status).toBe(400);
    expect(past.json.error).toMatch(/exceeds the 32 bytes/);
    await call('/v2/systemsharedmemory/region/small/unregister', {});
  });

  it('a region registered twice: 400; a key that does not exist or is no name: 500 as Triton answers; a bad body: 400', async () => {
    expect((await call('/v2/systemsharedmemory/region/twice/register', { key, byte_size: 8 })).status).toBe(
      200,
    );
    const again = await call('/v2/systemsharedmemory/region/twice/register', { key, byte_size: 8 });
    expect(again.status).toBe(400);
    expect(again.json.error).toMatch(/already in manager/);
    await call('/v2/systemsharedmemory/unregister', {});
    expect((await call('/v2/systemsharedmemory/status')).json).toEqual([]);
    const missing = await call('/v2/systemsharedmemory/region/x/register', {
      key: 'no-such-key',
      byte_size: 8,
    });
    expect(missing.status).toBe(500);
    expect(missing.json.error).toMatch(/Unable to open shared memory region: 'no-such-key'/);
    const bad = await call('/v2/systemsharedmemory/region/x/register', { key, byte_size: -1 });
    expect(bad.status).toBe(400);
    const outside = await call('/v2/systemsharedmemory/region/x/register', {
      key: '../etc/passwd',
      byte_size: 8,
    });
    // shm_open refuses a '/' inside the name, and Triton answers 500 for it: never a file outside /dev/shm.
    expect(outside.status).toBe(500);
    expect(outside.json.error).toMatch(
      /^Unable to open shared memory region: '\.\.\/etc\/passwd' \(invalid key/,
    );
  });

  it('an output larger than its region: 400 naming the output', async () => {
    await call('/v2/systemsharedmemory/region/tiny/register', { key, offset: 0, byte_size: 32 });
    const r = await call('/v2/models/identity_fp32/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }],
      outputs: [
        { name: 'OUTPUT0', parameters: { shared_memory_region: 'tiny', shared_memory_byte_size: 8 } },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/output 'OUTPUT0' has 16 bytes, more than the 8 bytes/);
    await call('/v2/systemsharedmemory/region/tiny/unregister', {});
  });

  it('gRPC: inputs and outputs that name a region', async () => {
    const registry = new SharedMemoryRegistry();
    registry.register('g', key, 0, 32);
    try {
      const decoded = decodeGrpcRequest(
        {
          model_name: 'identity_fp32',
          model_version: '',
          inputs: [
            {
              name: 'INPUT0',
              datatype: 'FP32',
              shape: ['1', '4'],
              parameters: {
                shared_memory_region: { parameter_choice: 'string_param', string_param: 'g' },
                shared_memory_byte_size: { parameter_choice: 'int64_param', int64_param: '16' },
              },
            },
          ],
          outputs: [
            {
              name: 'OUTPUT0',
              parameters: {
                shared_memory_region: { parameter_choice: 'string_param', string_param: 'g' },
                shared_memory_offset: { parameter_choice: 'int64_param', int64_param: '16' },
                shared_memory_byte_size: { parameter_choice: 'int64_param', int64_param: '16' },
              },
            },
          ],
        },
        registry,
      );
      const result = await server().model('identity_fp32').infer(decoded.request);
      const message = encodeGrpcResponse(result, decoded.outputs, registry) as {
        raw_output_contents: Buffer[];
      };
      expect(message.raw_output_contents).toEqual([]);
      expect(
        Array.from(
          new Float32Array(
            new Uint8Array(registry.read({ region: 'g', offset: 16, byteSize: 16 }) as Buffer).buffer,
          ),
        ),
      ).toEqual([1, 2, 3, 4]);
    } finally {
      registry.close();
    }
  });
});
