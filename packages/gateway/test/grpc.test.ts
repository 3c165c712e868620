/**
 * The gateway's gRPC service (inference.GRPCInferenceService), driven with
 * @grpc/grpc-js as the client over the package's own proto: health,
 * metadata, config, statistics, ModelInfer with raw and typed contents of
 * every datatype, ModelStreamInfer on decoupled models, the repository, and
 * errors with their gRPC codes.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { readUntil, useServer } from '@triton-node/test-support/helpers.js';
import { encodeBytes } from 'triton-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeGrpcRequest } from '../lib/grpc/codec.js';
import { createGateway } from '../lib/index.js';
import { bytesOf, kserveClient } from './helpers.js';

const server = useServer([
  'identity_fp32',
  'identity_all_types',
  'identity_bytes',
  'repeat_int32',
  'square_int32',
]);

type Msg = Record<string, unknown>;
type Unary = (req: Msg, cb: (err: grpc.ServiceError | null, res: Msg) => void) => void;
let client: grpc.Client & Record<string, Unary>;
let grpcServer: grpc.Server;

beforeAll(async () => {
  grpcServer = new grpc.Server();
  await createGateway(server()).addToGrpcServer(grpcServer);
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const Client = kserveClient<Record<string, Unary>>();
  client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

afterAll(() => {
  client?.close();
  grpcServer?.forceShutdown();
});

function rpc(method: string, req: Msg): Promise<Msg> {
  return new Promise((resolve, reject) =>
    client[method]!(req, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

async function rpcError(method: string, req: Msg): Promise<grpc.ServiceError> {
  try {
    await rpc(method, req);
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error(`${method} succeeded`);
}

const CASES: Array<{ datatype: string; bytes: Buffer }> = [
  { datatype: 'BOOL', bytes: Buffer.from([1, 0, 1]) },
  { datatype: 'UINT8', bytes: bytesOf(new Uint8Array([0, 7, 255])) },
  { datatype: 'UINT16', bytes: bytesOf(new Uint16Array([0, 65535])) },
  { datatype: 'UINT32', bytes: bytesOf(new Uint32Array([1, 4294967295])) },
  { datatype: 'UINT64', bytes: bytesOf(new BigUint64Array([1n, 18446744073709551615n])) },
  { datatype: 'INT8', bytes: bytesOf(new Int8Array([-128, 127])) },
  { datatype: 'INT16', bytes: bytesOf(new Int16Array([-32768, 5])) },
  { datatype: 'INT32', bytes: bytesOf(new Int32Array([-2147483648, 2147483647])) },
  { datatype: 'INT64', bytes: bytesOf(new BigInt64Array([-9223372036854775808n, 1n])) },
  { datatype: 'FP16', bytes: bytesOf(new Uint16Array([0x3e00, 0xc000])) },
  { datatype: 'FP32', bytes: bytesOf(new Float32Array([0.5, -1.25])) },
  { datatype: 'FP64', bytes: bytesOf(new Float64Array([Math.PI, -0.1])) },
  { datatype: 'BYTES', bytes: encodeBytes(['héllo', '']) },
  { datatype: 'BF16', bytes: bytesOf(new Uint16Array([0x3fc0, 0xc000])) },
];

const elements = (c: { datatype: string; bytes: Buffer }) =>
  c.datatype === 'BYTES' ? 2 : c.datatype === 'BOOL' || c.datatype === 'UINT8' ? 3 : 2;

describe('health, metadata, config, statistics', () => {
  it('answers ServerLive, ServerReady and ModelReady', async () => {
    expect(await rpc('ServerLive', {})).toEqual({ live: true });
    expect(await rpc('ServerReady', {})).toEqual({ ready: true });
    expect(await rpc('ModelReady', { name: 'identity_fp32', version: '' })).toEqual({ ready: true });
    expect(await rpc('ModelReady', { name: 'identity_fp32', version: '9' })).toEqual({ ready: false });
  });

  it('answers ServerMetadata and ModelMetadata', async () => {
    const s = await rpc('ServerMetadata', {});
    expect(s.extensions).toContain('binary_tensor_data');
    const m = await rpc('ModelMetadata', { name: 'identity_fp32' });
    expect(m).toMatchObject({
      name: 'identity_fp32',
      versions: ['1'],
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['-1', '-1'] }],
    });
  });

  it('answers ModelConfig with the config’s common fields', async () => {
    const { config } = (await rpc('ModelConfig', { name: 'identity_fp32' })) as { config: Msg };
    expect(config).toMatchObject({ name: 'identity_fp32', max_batch_size: 8, backend: 'identity' });
    expect((config.input as Msg[])[0]).toMatchObject({
      name: 'INPUT0',
      data_type: 'TYPE_FP32',
      dims: ['-1'],
    });
    const { config: repeat } = (await rpc('ModelConfig', { name: 'repeat_int32' })) as { config: Msg };
    expect(repeat.model_transaction_policy).toEqual({ decoupled: true });
  });

  it('answers ModelStatistics', async () => {
    await rpc('ModelInfer', {
      model_name: 'identity_fp32',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], contents: { fp32_contents: [1] } }],
    });
    // Triton counts the request after its response: read until it did.
    const { model_stats } = (await readUntil(
      () => rpc('ModelStatistics', { name: 'identity_fp32' }),
      (x) =>
        Number(
          ((x as { model_stats: Msg[] }).model_stats[0]!.inference_stats as { success: { count: string } })
            .success.count,
        ) > 0,
    )) as {
      model_stats: Msg[];
    };
    expect(model_stats[0]).toMatchObject({ name: 'identity_fp32', version: '1' });
    expect(
      Number((model_stats[0]!.inference_stats as { success: { count: string } }).success.count),
    ).toBeGreaterThan(0);
  });
});

describe('ModelInfer', () => {
  it('takes raw_input_contents of every datatype and returns raw_output_contents', async () => {
    const res = await rpc('ModelInfer', {
      model_name: 'identity_all_types',
      id: 'raw',
      inputs: CASES.map((c, i) => ({ name: `INPUT${i}`, datatype: c.datatype, shape: [elements(c)] })),
      raw_input_contents: CASES.map((c) => c.bytes),
    });
    expect(res).toMatchObject({ model_name: 'identity_all_types', model_version: '1', id: 'raw' });
    const outputs = res.outputs as Array<{ name: string; datatype: string; shape: string[] }>;
    const raw = res.raw_output_contents as Buffer[];
    for (const [i, c] of CASES.entries()) {
      const at = outputs.findIndex((o) => o.name === `OUTPUT${i}`);
      expect(outputs[at], c.datatype).toMatchObject({ datatype: c.datatype, shape: [String(elements(c))] });
      expect(raw[at]!.equals(c.bytes), c.datatype).toBe(true);
    }
  });

  it('takes typed contents', async () => {
    const fp32 = await rpc('ModelInfer', {
      model_name: 'identity_fp32',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [2.5, -1] } }],
    });
    const raw = (fp32.raw_output_contents as Buffer[])[0]!;
    expect(Array.from(new Float32Array(new Uint8Array(raw).buffer))).toEqual([2.5, -1]);
    const bytes = await rpc('ModelInfer', {
      model_name: 'identity_bytes',
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'BYTES',
          shape: [2],
          contents: { bytes_contents: [Buffer.from('xy'), Buffer.from('')] },
        },
      ],
    });
    expect((bytes.raw_output_contents as Buffer[])[0]!.equals(encodeBytes(['xy', '']))).toBe(true);
  });

  it('reads each typed contents field into its datatype', () => {
    const input = (name: string, datatype: string, shape: number[], contents: Msg) => ({
      name,
      datatype,
      shape,
      contents,
    });
    const { request } = decodeGrpcRequest(
      {
        model_name: 'm',
        model_version: '',
        inputs: [
          input('B', 'BOOL', [2], { bool_contents: [true, false] }),
          input('U8', 'UINT8', [1], { uint_contents: [255] }),
          input('U64', 'UINT64', [1], { uint64_contents: ['18446744073709551615'] }),
          input('I16', 'INT16', [1], { int_contents: [-3] }),
          input('I64', 'INT64', [1], { int64_contents: ['-9223372036854775808'] }),
          input('F64', 'FP64', [1], { fp64_contents: [0.25] }),
        ],
      },
      undefined,
    );
    const data = (n: string) => (request.inputs[n] as { data: unknown }).data;
    expect(data('B')).toEqual(new Uint8Array([1, 0]));
    expect(data('U8')).toEqual(new Uint8Array([255]));
    expect(data('U64')).toEqual(new BigUint64Array([18446744073709551615n]));
    expect(data('I16')).toEqual(new Int16Array([-3]));
    expect(data('I64')).toEqual(new BigInt64Array([-9223372036854775808n]));
    expect(data('F64')).toEqual(new Float64Array([0.25]));
  });

  it('refuses with gRPC codes: unknown model, bad shape, wrong raw sizes, a decoupled model', async () => {
    const fp32 = (extra: Msg = {}) => ({
      model_name: 'identity_fp32',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2] }],
      raw_input_contents: [bytesOf(new Float32Array([1, 2]))],
      ...extra,
    });
    const unknown = await rpcError('ModelInfer', fp32({ model_name: 'no_such_model' }));
    expect([grpc.status.NOT_FOUND, grpc.status.INVALID_ARGUMENT, grpc.status.UNAVAILABLE]).toContain(
      unknown.code,
    );
    expect(unknown.details).toMatch(/no_such_model/);
    const shape = await rpcError(
      'ModelInfer',
      fp32({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2, 3] }] }),
    );
    expect(shape.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(shape.details).toMatch(/INPUT0/);
    const size = await rpcError('ModelInfer', fp32({ raw_input_contents: [Buffer.alloc(3)] }));
    expect(size.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(size.details).toMatch(/needs 8 bytes/);
    const count = await rpcError(
      'ModelInfer',
      fp32({ raw_input_contents: [Buffer.alloc(8), Buffer.alloc(8)] }),
    );
    expect(count.code).toBe(grpc.status.INVALID_ARGUMENT);
    const fp16 = await rpcError('ModelInfer', {
      model_name: 'identity_all_types',
      inputs: [{ name: 'INPUT9', datatype: 'FP16', shape: [1], contents: { fp32_contents: [1] } }],
    });
    expect(fp16.code).toBe(grpc.status.INVALID_ARGUMENT);
    const decoupled = await rpcError('ModelInfer', {
      model_name: 'repeat_int32',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], contents: { int_contents: [1] } }],
    });
    expect(decoupled.details).toMatch(/use the ModelStreamInfer RPC/);
  });
});

describe('ModelStreamInfer', () => {
  function streamAll(requests: Msg[]): Promise<Msg[]> {
    return new Promise((resolve, reject) => {
      const call = (
        client as unknown as { ModelStreamInfer(): grpc.ClientDuplexStream<Msg, Msg> }
      ).ModelStreamInfer();
      const got: Msg[] = [];
      call.on('data', (m: Msg) => got.push(m));
      call.on('end', () => resolve(got));
      call.on('error', reject);
      for (const r of requests) call.write(r);
      call.end();
    });
  }

  it('streams every response of a decoupled model', async () => {
    const got = await streamAll([
      {
        model_name: 'repeat_int32',
        inputs: [
          { name: 'IN', datatype: 'INT32', shape: [3] },
          { name: 'DELAY', datatype: 'UINT32', shape: [3] },
          { name: 'WAIT', datatype: 'UINT32', shape: [1] },
        ],
        raw_input_contents: [
          bytesOf(new Int32Array([4, 5, 6])),
          bytesOf(new Uint32Array([0, 0, 0])),
          bytesOf(new Uint32Array([0])),
        ],
        outputs: [{ name: 'OUT' }],
      },
    ]);
    const values = got.map((m) => {
      const raw = (m.infer_response as { raw_output_contents: Buffer[] }).raw_output_contents[0]!;
      return new Int32Array(new Uint8Array(raw).buffer)[0];
    });
    expect(values).toEqual([4, 5, 6]);
    expect(got.every((m) => m.error_message === '')).toBe(true);
  });

  it('runs several requests on one stream, and reports a request’s error in the stream', async () => {
    const square = (n: number) => ({
      model_name: 'square_int32',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], contents: { int_contents: [n] } }],
    });
    const got = await streamAll([square(2), square(3), { model_name: 'no_such_model', inputs: [] }]);
    const errors = got.filter((m) => m.error_message !== '');
    expect(errors.length).toBe(1);
    expect(errors[0]!.error_message).toMatch(/no_such_model/);
    expect(got.length - errors.length).toBe(5);
  });
});

describe('repository', () => {
  it('answers RepositoryIndex, RepositoryModelLoad and RepositoryModelUnload', async () => {
    const { models } = (await rpc('RepositoryIndex', { ready: false })) as { models: Msg[] };
    expect(models.map((m) => m.name)).toContain('identity_nobatch');
    await rpc('RepositoryModelLoad', { model_name: 'identity_nobatch' });
    expect(await rpc('ModelReady', { name: 'identity_nobatch' })).toEqual({ ready: true });
    await rpc('RepositoryModelUnload', {
      model_name: 'identity_nobatch',
      parameters: { unload_dependents: { bool_param: false } },
    });
    const err = await rpcError('RepositoryModelLoad', { model_name: 'no_such_model' });
    expect(err.details).toMatch(/no_such_model/);
  });
});
