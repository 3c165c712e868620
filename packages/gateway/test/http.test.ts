import { readUntil, useServer } from '@triton-node/test-support/helpers.js';
import { encodeBytes } from 'triton-node';
/**
 * The gateway's KServe v2 HTTP/REST routes, driven with undici: health,
 * metadata, config, statistics, inference with JSON and binary tensors of
 * every datatype, the model repository, /metrics, and the protocol's errors
 * with their status codes.
 */
import { describe, expect, it } from 'vitest';
import { binaryBody, bytesOf, httpCall, parseBinaryResponse, useGateway } from './helpers.js';

const server = useServer([
  'identity_fp32',
  'identity_all_types',
  'identity_bytes',
  'repeat_int32',
  'two_versions',
]);
const gw = useGateway(server);
const small = useGateway(server, { maxBodyBytes: 1024, repositoryControl: false });

const call = (
  path: string,
  options: {
    method?: 'GET' | 'POST';
    json?: unknown;
    body?: Buffer | string;
    headers?: Record<string, string>;
  } = {},
  base = gw().url,
) => httpCall(base, path, options);

/** One input of identity_all_types per datatype: the JSON values and the same data as bytes. */
const CASES: Array<{ datatype: string; json: unknown[]; bytes: Buffer; expected?: string }> = [
  { datatype: 'BOOL', json: [true, false, true], bytes: Buffer.from([1, 0, 1]) },
  { datatype: 'UINT8', json: [0, 7, 255], bytes: bytesOf(new Uint8Array([0, 7, 255])) },
  { datatype: 'UINT16', json: [0, 65535], bytes: bytesOf(new Uint16Array([0, 65535])) },
  { datatype: 'UINT32', json: [1, 4294967295], bytes: bytesOf(new Uint32Array([1, 4294967295])) },
  {
    datatype: 'UINT64',
    json: [1, '18446744073709551615'],
    bytes: bytesOf(new BigUint64Array([1n, 18446744073709551615n])),
    expected: '[1,18446744073709551615]',
  },
  { datatype: 'INT8', json: [-128, 127], bytes: bytesOf(new Int8Array([-128, 127])) },
  { datatype: 'INT16', json: [-32768, 5], bytes: bytesOf(new Int16Array([-32768, 5])) },
  {
    datatype: 'INT32',
    json: [-2147483648, 2147483647],
    bytes: bytesOf(new Int32Array([-2147483648, 2147483647])),
  },
  {
    datatype: 'INT64',
    json: ['-9223372036854775808', 9007199254740991],
    bytes: bytesOf(new BigInt64Array([-9223372036854775808n, 9007199254740991n])),
    expected: '[-9223372036854775808,9007199254740991]',
  },
  // 1.5 and -2 are exact in FP16 (0x3e00, 0xc000) and BF16 (0x3fc0, 0xc000).
  { datatype: 'FP16', json: [1.5, -2], bytes: bytesOf(new Uint16Array([0x3e00, 0xc000])) },
  { datatype: 'FP32', json: [0.5, -1.25], bytes: bytesOf(new Float32Array([0.5, -1.25])) },
  { datatype: 'FP64', json: [Math.PI, -0.1], bytes: bytesOf(new Float64Array([Math.PI, -0.1])) },
  { datatype: 'BYTES', json: ['héllo', ''], bytes: encodeBytes(['héllo', '']) },
  { datatype: 'BF16', json: [1.5, -2], bytes: bytesOf(new Uint16Array([0x3fc0, 0xc000])) },
];

describe('health and metadata', () => {
  it('answers liveness and readiness with 200 and no body', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready']) {
      const r = await call(path);
      expect(r.status).toBe(200);
      expect(r.text).toBe('');
    }
  });

  it('serves the server metadata with its extensions', async () => {
    const r = await call('/v2');
    expect(r.status).toBe(200);
    expect(r.json.name).toBeTypeOf('string');
    expect(r.json.version).toMatch(/^\d+\.\d+/);
    expect(r.json.extensions).toEqual(expect.arrayContaining(['binary_tensor_data', 'model_repository']));
  });

  it('serves model metadata, with and without a version', async () => {
    const r = await call('/v2/models/identity_fp32');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      name: 'identity_fp32',
      versions: ['1'],
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, -1] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [-1, -1] }],
    });
    const v = await call('/v2/models/two_versions/versions/2');
    expect(v.status).toBe(200);
    expect(v.json.name).toBe('two_versions');
  });

  it('answers model readiness 200, and 400 for a version that is not ready', async () => {
    expect((await call('/v2/models/identity_fp32/ready')).status).toBe(200);
    expect((await call('/v2/models/two_versions/versions/2/ready')).status).toBe(200);
    const r = await call('/v2/models/two_versions/versions/7/ready');
    expect(r.status).toBe(400);
    expect(r.json.error).toBeTypeOf('string');
  });

  it('serves the model config as Triton holds it', async () => {
    const r = await call('/v2/models/identity_fp32/config');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'identity_fp32', max_batch_size: 8 });
  });

  it('serves statistics in Triton’s JSON form, per model and for all', async () => {
    await call('/v2/models/identity_fp32/infer', {
      json: { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2] }] },
    });
    // Triton counts the request after its response: read until it did.
    const r = await readUntil(
      () => call('/v2/models/identity_fp32/stats'),
      (x) => x.status !== 200 || x.json.model_stats[0].inference_stats.success.count > 0,
    );
    expect(r.status).toBe(200);
    const [s] = r.json.model_stats;
    expect(s).toMatchObject({ name: 'identity_fp32', version: '1' });
    expect(s.inference_stats.success.count).toBeGreaterThan(0);
    const all = await call('/v2/models/stats');
    expect(all.json.model_stats.map((m: { name: string }) => m.name)).toContain('identity_all_types');
  });

  it('serves Triton’s metrics at /metrics', async () => {
    const r = await call('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    expect(r.text).toContain('nv_inference_request_success');
  });

  it('serves the gateway’s own request counters, durations and overhead at /metrics', async () => {
    await call('/v2/models/identity_fp32/infer', {
      json: { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }] },
    });
    await call('/v2/models/no_such_model/infer', { json: { inputs: [] } });
    const text = (await call('/metrics')).text;
    expect(text).toMatch(
      /triton_node_gateway_requests_total\{[^}]*route="infer"[^}]*status="200"[^}]*\} [1-9]/,
    );
    expect(text).toMatch(
      /triton_node_gateway_requests_total\{[^}]*route="infer"[^}]*status="40[04]"[^}]*\} [1-9]/,
    );
    expect(text).toMatch(/triton_node_gateway_request_duration_us_count\{[^}]*route="infer"[^}]*\} [1-9]/);
    expect(text).toMatch(/triton_node_gateway_overhead_us_count\{protocol="http"\} [1-9]/);
    expect(text).toMatch(/triton_node_gateway_in_flight [0-9]/);
  });
});

describe('inference', () => {
  it('takes and returns JSON tensors of every datatype', async () => {
    const inputs = CASES.map((c, i) => ({
      name: `INPUT${i}`,
      datatype: c.datatype,
      shape: [c.json.length],
      data: c.json,
    }));
    const r = await call('/v2/models/identity_all_types/infer', { json: { id: 'all-json', inputs } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ model_name: 'identity_all_types', model_version: '1', id: 'all-json' });
    for (const [i, c] of CASES.entries()) {
      const out = r.json.outputs.find((o: { name: string }) => o.name === `OUTPUT${i}`);
      expect(out, c.datatype).toMatchObject({ datatype: c.datatype, shape: [c.json.length] });
      if (c.expected) {
        // 64-bit integers come back exact: read them from the text.
        expect(r.text).toContain(
          `"name":"OUTPUT${i}","datatype":"${c.datatype}","shape":[2],"data":${c.expected}`,
        );
      } else {
        expect(out.data, c.datatype).toEqual(c.json);
      }
    }
  });

  it('takes nested JSON data in row-major order', async () => {
    const r = await call('/v2/models/identity_fp32/infer', {
      json: {
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'FP32',
            shape: [2, 2],
            data: [
              [1, 2],
              [3, 4],
            ],
          },
        ],
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.outputs[0]).toMatchObject({ shape: [2, 2], data: [1, 2, 3, 4] });
  });

  it('takes binary tensors of every datatype and returns binary outputs on request', async () => {
    const inputs = CASES.map((c, i) => ({
      name: `INPUT${i}`,
      datatype: c.datatype,
      shape: [c.json.length],
      parameters: { binary_data_size: c.bytes.length },
    }));
    const { body, headerLength } = binaryBody(
      { inputs, parameters: { binary_data_output: true } },
      CASES.map((c) => c.bytes),
    );
    const r = await call('/v2/models/identity_all_types/infer', {
      body,
      headers: {
        'Inference-Header-Content-Length': String(headerLength),
        'Content-Type': 'application/octet-stream',
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    const { outputs } = parseBinaryResponse(r.bytes, Number(r.headers['inference-header-content-length']));
    for (const [i, c] of CASES.entries()) {
      const out = outputs.find((o) => o.name === `OUTPUT${i}`)!;
      expect(out.data, c.datatype).toBeUndefined();
      expect(out.bytes!.equals(c.bytes), c.datatype).toBe(true);
    }
  });

  it('mixes JSON and binary inputs, and JSON and binary outputs per output', async () => {
    const data = new Float32Array([1, 2, 3]);
    const { body, headerLength } = binaryBody(
      {
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], parameters: { binary_data_size: 12 } }],
        outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }],
        parameters: { binary_data_output: true },
      },
      [bytesOf(data)],
    );
    const r = await call('/v2/models/identity_fp32/infer', {
      body,
      headers: { 'Inference-Header-Content-Length': String(headerLength) },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json.outputs[0]).toMatchObject({ name: 'OUTPUT0', data: [1, 2, 3] });

    const json = await call('/v2/models/identity_bytes/infer', {
      json: {
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2], data: ['a', 'bc'] }],
        outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
      },
    });
    const parsed = parseBinaryResponse(json.bytes, Number(json.headers['inference-header-content-length']));
    expect(parsed.outputs[0]!.bytes!.equals(encodeBytes(['a', 'bc']))).toBe(true);
  });

  it('passes request parameters and a version from the path', async () => {
    const r = await call('/v2/models/two_versions/versions/2/infer', {
      json: {
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [5] }],
        parameters: { priority: 0 },
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.model_version).toBe('2');
  });

  it('sends a large binary tensor through and back', async () => {
    const data = new Float32Array(256 * 1024).map((_, i) => i);
    const { body, headerLength } = binaryBody(
      {
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'FP32',
            shape: [1, data.length],
            parameters: { binary_data_size: data.byteLength },
          },
        ],
        parameters: { binary_data_output: true },
      },
      [bytesOf(data)],
    );
    const r = await call('/v2/models/identity_fp32/infer', {
      body,
      headers: { 'Inference-Header-Content-Length': String(headerLength) },
    });
    expect(r.status).toBe(200);
    const { outputs } = parseBinaryResponse(r.bytes, Number(r.headers['inference-header-content-length']));
    expect(outputs[0]!.bytes!.equals(bytesOf(data))).toBe(true);
  });
});

describe('errors, as the protocol shapes them', () => {
  const fp32 = (extra: object = {}) => ({
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2], ...extra }],
  });

  it('an unknown model: the status of Triton’s error code', async () => {
    const r = await call('/v2/models/no_such_model/infer', { json: fp32() });
    expect([400, 404]).toContain(r.status);
    expect(r.json.error).toMatch(/no_such_model/);
    const m = await call('/v2/models/no_such_model');
    expect([400, 404]).toContain(m.status);
    expect(m.json.error).toMatch(/no_such_model/);
  });

  it('a bad shape, a wrong datatype, an unknown or missing input: 400 naming it', async () => {
    let r = await call('/v2/models/identity_fp32/infer', { json: fp32({ shape: [1, 3] }) });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/INPUT0.*3 elements but 'data' has 2/);
    r = await call('/v2/models/identity_fp32/infer', { json: fp32({ datatype: 'INT32' }) });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/INPUT0/);
    r = await call('/v2/models/identity_fp32/infer', { json: fp32({ name: 'NOPE' }) });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/NOPE/);
    r = await call('/v2/models/identity_fp32/infer', { json: { inputs: [] } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/INPUT0/);
    r = await call('/v2/models/identity_fp32/infer', { json: fp32({ datatype: 'FLOAT' }) });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/datatype/);
    r = await call('/v2/models/identity_fp32/infer', { json: fp32({ data: [1, 'x'] }) });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/data\[1\]/);
  });

  it('malformed JSON and a body that is not an inference request: 400', async () => {
    let r = await call('/v2/models/identity_fp32/infer', { body: '{"inputs": [' });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/malformed JSON/);
    r = await call('/v2/models/identity_fp32/infer', { body: '[1]' });
    expect(r.status).toBe(400);
    r = await call('/v2/models/identity_fp32/infer', { json: { inputs: 'x' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/'inputs'/);
  });

  it('wrong binary sizes: 400 naming the input', async () => {
    const header = (size: number) => ({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], parameters: { binary_data_size: size } }],
    });
    const send = (h: object, parts: Uint8Array[], length?: number) => {
      const { body, headerLength } = binaryBody(h, parts);
      return call('/v2/models/identity_fp32/infer', {
        body,
        headers: { 'Inference-Header-Content-Length': String(length ?? headerLength) },
      });
    };
    let r = await send(header(8), [Buffer.alloc(4)]);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/INPUT0/);
    r = await send(header(8), [Buffer.alloc(12)]);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/additional/);
    r = await send(header(12), [Buffer.alloc(12)]);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/needs 8 bytes/);
    r = await send(header(8), [Buffer.alloc(8)], 100_000);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/Inference-Header-Content-Length/);
    r = await call('/v2/models/identity_fp32/infer', { json: header(8) });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/Inference-Header-Content-Length/);
  });

  it('a decoupled model on infer: an error pointing to streaming', async () => {
    const r = await call('/v2/models/repeat_int32/infer', {
      json: { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }] },
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.json.error).toMatch(/stream/);
  });

  it('an unknown path is 404, a wrong method 405, a bad version 400', async () => {
    expect((await call('/v2/nothing')).status).toBe(404);
    expect((await call('/v2/health/live', { method: 'POST', body: '' })).json).toEqual({
      error: 'Method Not Allowed',
    });
    expect((await call('/v2/models/identity_fp32/infer')).status).toBe(405);
    const r = await call('/v2/models/identity_fp32/versions/x1');
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/x1/);
  });

  it('a body over the limit: 413', async () => {
    const r = await call('/v2/models/identity_fp32/infer', { body: Buffer.alloc(4096, 32) }, small().url);
    expect(r.status).toBe(413);
    expect(r.json.error).toMatch(/limit of 1024 bytes/);
  });
});

describe('model repository', () => {
  it('lists the index, loads and unloads', async () => {
    let r = await call('/v2/repository/index', { method: 'POST', body: '' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'identity_nobatch' })]));
    r = await call('/v2/repository/models/identity_nobatch/load', { method: 'POST', body: '' });
    expect(r.status, r.text).toBe(200);
    expect((await call('/v2/models/identity_nobatch/ready')).status).toBe(200);
    r = await call('/v2/repository/index', { json: { ready: true } });
    expect(r.json.map((e: { name: string }) => e.name)).toContain('identity_nobatch');
    expect(r.json.find((e: { name: string }) => e.name === 'identity_nobatch')).toMatchObject({
      version: '1',
      state: 'READY',
    });
    r = await call('/v2/repository/models/identity_nobatch/unload', {
      json: { parameters: { unload_dependents: false } },
    });
    expect(r.status, r.text).toBe(200);
  });

  it('loads a model with a config override', async () => {
    const config = JSON.stringify({
      name: 'identity_nobatch',
      backend: 'identity',
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
    });
    const r = await call('/v2/repository/models/identity_nobatch/load', { json: { parameters: { config } } });
    expect(r.status, r.text).toBe(200);
    const c = await call('/v2/models/identity_nobatch/config');
    expect(c.json.max_batch_size).toBe(4);
    expect(
      (await call('/v2/repository/models/identity_nobatch/unload', { method: 'POST', body: '' })).status,
    ).toBe(200);
  });

  it('refuses a malformed load request and unknown models', async () => {
    let r = await call('/v2/repository/models/identity_nobatch/load', {
      json: { parameters: { config: 5 } },
    });
    expect(r.status).toBe(400);
    r = await call('/v2/repository/models/no_such_model/load', { method: 'POST', body: '' });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.json.error).toMatch(/no_such_model/);
    r = await call('/v2/repository/models/identity_nobatch/load', { method: 'POST', body: '' }, small().url);
    expect(r.status).toBe(403);
  });
});
