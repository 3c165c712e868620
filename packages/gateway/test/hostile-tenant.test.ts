/**
 * A hostile tenant against the guard and the isolating front (issue 27):
 * reading another tenant's in-flight tensors through the front's shared
 * memory region, bodies and messages that escape `bytesPerSecond`, and
 * `/metrics` naming every tenant's models. Also the breakages an audit found
 * surviving every other test (each a named mutation in
 * scripts/mutations/tenant-front.mjs): gRPC statistics unfiltered, one
 * bucket's refusal spending the others, a removed tenant's key still
 * working, shared memory outputs written at the wrong offset, and the body
 * limit of a chunked body checked only once it was all read.
 * Real clients only: undici, node:http and @grpc/grpc-js.
 */
import {
  closeSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { BACKEND_DIR, LIBRARY_PATH, MODELS, useServer } from '@triton-node/test-support/helpers.js';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcMessageBytes } from '../lib/grpc/codec.js';
import {
  GatewayGuard,
  type GuardOptions,
  type IsolatedGateway,
  createIsolatedGateway,
  hashApiKey,
} from '../lib/index.js';
import {
  SERVE_HTTP_OPTIONS,
  binaryBody,
  bytesOf,
  kserveClient,
  parseBinaryResponse,
  useGateway,
} from './helpers.js';

type Msg = Record<string, unknown>;
type Unary = (req: Msg, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: Msg) => void) => void;
type GrpcClient = grpc.Client & Record<string, Unary>;
type StreamClient = { ModelStreamInfer(md: grpc.Metadata): grpc.ClientDuplexStream<Msg, Msg> };

const dispatcher = new Agent({ connections: 16 });
afterAll(() => dispatcher.close());

const key = (tenant: string) => `${tenant}-key-0123456789abcdef`;
const auth = (tenant: string) => ({ authorization: `Bearer ${key(tenant)}` });
function metadata(tenant: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${key(tenant)}`);
  return md;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers, dispatcher });
  return { status: res.statusCode, text: await res.body.text() };
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await request(url, { method: 'POST', body, headers, dispatcher });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

/** A POST whose body undici sends chunked (no Content-Length: a stream of unknown length). */
async function postChunked(url: string, body: string, headers: Record<string, string> = {}) {
  const half = Math.floor(body.length / 2);
  const res = await request(url, {
    method: 'POST',
    body: Readable.from([Buffer.from(body.slice(0, half)), Buffer.from(body.slice(half))]),
    headers,
    dispatcher,
  });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

/** A POST over node:http with its path sent exactly as given (undici would resolve dot segments first). */
function rawPost(base: string, path: string, body: string, headers: Record<string, string>) {
  const { hostname, port } = new URL(base);
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'POST', path, headers }, (res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function unary(client: GrpcClient, rpc: string, req: Msg, md: grpc.Metadata): Promise<Msg> {
  return new Promise((resolve, reject) =>
    client[rpc]!(req, md, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

/** A ModelStreamInfer call: send messages one by one, each answered before the next. */
function openStream(client: GrpcClient, md: grpc.Metadata) {
  const call = (client as unknown as StreamClient).ModelStreamInfer(md);
  const waiting: Array<(m: Msg) => void> = [];
  const got: Msg[] = [];
  call.on('data', (m: Msg) => {
    const w = waiting.shift();
    if (w) w(m);
    else got.push(m);
  });
  call.on('error', () => {});
  return {
    send(msg: Msg): Promise<Msg> {
      call.write(msg);
      const ready = got.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve) => waiting.push(resolve));
    },
    end: () => call.end(),
  };
}

/** A JSON inference of identity_fp32, padded with trailing spaces to `bytes` bytes. */
function fp32Json(bytes: number, values = [0.5, 1.5]): string {
  const text = JSON.stringify({
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length], data: values }],
  });
  if (text.length > bytes) throw new Error(`a body of ${bytes} bytes is too small`);
  return text + ' '.repeat(bytes - text.length);
}

/** A gRPC inference of identity_fp32 with its tensor in typed `fp32_contents`. */
function typedInfer(n: number): Msg {
  return {
    model_name: 'identity_fp32',
    inputs: [
      {
        name: 'INPUT0',
        datatype: 'FP32',
        shape: [1, n],
        contents: { fp32_contents: Array.from({ length: n }, (_, i) => i) },
      },
    ],
  };
}

/** A gRPC inference of identity_fp32 with its tensor in `raw_input_contents`. */
function rawInfer(values: Float32Array): Msg {
  return {
    model_name: 'identity_fp32',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length] }],
    raw_input_contents: [bytesOf(values)],
  };
}

async function grpcServerFor(
  add: (s: grpc.Server) => Promise<void>,
): Promise<{ server: grpc.Server; client: GrpcClient }> {
  const server = new grpc.Server();
  await add(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const Client = kserveClient<Record<string, Unary>>();
  return { server, client: new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) };
}

// ---------------------------------------------------------------------------
// The gateway over an in-process Server.

const served = useServer(['identity_fp32', 'identity_int32', 'square_int32']);

/** Two buckets of one tenant: one request at a time (1/s), 3 × UNIT body bytes that barely refill. */
const UNIT = 200;
function gatewayGuard(without: string[] = []): GuardOptions {
  const tenants: GuardOptions['tenants'] = {
    carol: { models: ['identity_fp32'] },
    root: { models: ['*'], admin: true },
    meter: { models: ['identity_*'], limits: { bytesPerSecond: 2_000, bytesBurst: 20_000 } },
    typed: { models: ['identity_*'], limits: { bytesPerSecond: 2_000, bytesBurst: 20_000 } },
    two: {
      models: ['identity_*'],
      limits: { requestsPerSecond: 1, requestBurst: 1, bytesPerSecond: 1, bytesBurst: 3 * UNIT },
    },
    temp: { models: ['identity_*'] },
  };
  for (const t of without) delete tenants[t];
  return {
    apiKeys: Object.keys(tenants).map((t) => ({ sha256: hashApiKey(key(t)), tenant: t })),
    tenants,
    open: ['health'],
  };
}

const MAX_BODY = 1024 * 1024;
const gw = useGateway(served, { maxBodyBytes: MAX_BODY, guard: gatewayGuard() });
let plain: { server: grpc.Server; client: GrpcClient };
beforeAll(async () => {
  plain = await grpcServerFor((s) => gw().gateway.addToGrpcServer(s));
});
afterAll(() => {
  plain?.client.close();
  plain?.server.forceShutdown();
});

describe.sequential('bytesPerSecond charges every byte (gateway)', () => {
  it('charges a chunked HTTP body: 429 once the budget is spent', async () => {
    const url = `${gw().url}/v2/models/identity_fp32/infer`;
    const body = fp32Json(16_000);
    const first = await postChunked(url, body, auth('meter'));
    expect(first.status).toBe(200);
    // Before: chunked bodies counted as 0 bytes, every one admitted (460-517 kB/s past a 20 kB/s limit).
    const second = await postChunked(url, body, auth('meter'));
    expect(second.status).toBe(429);
    expect(second.text).toMatch(/rate limit of tenant 'meter' reached/);
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('charges typed gRPC contents by their element size: RESOURCE_EXHAUSTED once spent', async () => {
    const md = metadata('typed');
    const res = await unary(plain.client, 'ModelInfer', typedInfer(4000), md); // 16 000 bytes
    expect((res.outputs as Msg[])[0]!.name).toBe('OUTPUT0');
    await expect(unary(plain.client, 'ModelInfer', typedInfer(4000), md)).rejects.toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
    });
  });

  it('counts each typed field at its datatype, BYTES with their length prefixes', () => {
    const msg = {
      inputs: [
        { datatype: 'INT8', contents: { int_contents: [1, 2, 3] } },
        { datatype: 'FP64', contents: { fp64_contents: [1, 2] } },
        { datatype: 'BYTES', contents: { bytes_contents: [Buffer.alloc(10), Buffer.alloc(20)] } },
      ],
      raw_input_contents: [Buffer.alloc(7)],
    };
    expect(grpcMessageBytes(msg)).toBe(3 + 16 + (4 + 10) + (4 + 20) + 7);
  });
});

describe.sequential('/metrics behind a guard (gateway)', () => {
  it('is admin-only: a tenant gets 403, an admin 200, no credentials 401', async () => {
    const before = await get(`${gw().url}/metrics`, auth('carol'));
    expect(before.status).toBe(403);
    expect(before.text).not.toMatch(/square_int32/);
    const admin = await get(`${gw().url}/metrics`, auth('root'));
    expect(admin.status).toBe(200);
    expect(admin.text).toMatch(/nv_inference_request_success/);
    expect((await get(`${gw().url}/metrics`)).status).toBe(401);
  });

  it("is everyone's once listed in open, without credentials", async () => {
    const guard = gw().gateway.guard!;
    guard.update({ ...gatewayGuard(), open: ['health', 'metrics'] });
    try {
      expect((await get(`${gw().url}/metrics`)).status).toBe(200);
      expect((await get(`${gw().url}/metrics`, auth('carol'))).status).toBe(200);
    } finally {
      guard.update(gatewayGuard());
    }
  });
});

describe.sequential('what the audit found surviving every test (gateway)', () => {
  it("filters gRPC ModelStatistics to the tenant's models, as HTTP does", async () => {
    const res = await unary(plain.client, 'ModelStatistics', {}, metadata('carol'));
    expect((res.model_stats as Msg[]).map((s) => s.name)).toEqual(['identity_fp32']);
    const http = JSON.parse((await get(`${gw().url}/v2/models/stats`, auth('carol'))).text);
    expect((http.model_stats as Msg[]).map((s) => s.name)).toEqual(['identity_fp32']);
    const all = await unary(plain.client, 'ModelStatistics', {}, metadata('root'));
    expect((all.model_stats as Msg[]).map((s) => s.name).sort()).toEqual([
      'identity_fp32',
      'identity_int32',
      'square_int32',
    ]);
  });

  it("a refusal by one bucket spends nothing of the other's", async () => {
    // gRPC: a message's bytes are taken at admission (an HTTP body is charged once read).
    const md = metadata('two');
    const unit = UNIT / 4; // FP32 values
    // One request, UNIT bytes: the request bucket is empty now, 2 × UNIT bytes are left.
    await unary(plain.client, 'ModelInfer', typedInfer(unit), md);
    // Refused by the request bucket: its UNIT bytes must stay in the bytes bucket.
    await expect(unary(plain.client, 'ModelInfer', typedInfer(unit), md)).rejects.toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
    });
    // 1.5 × UNIT fits the 2 × UNIT left once a request token is back (1/s; bytes refill 1/s); had the
    // refusals spent their bytes, only 1 × UNIT or less would be left, and it never would in time.
    await expect
      .poll(
        () =>
          unary(plain.client, 'ModelInfer', typedInfer(1.5 * unit), md).then(
            () => 'admitted',
            (e: { code: number }) => e.code,
          ),
        { timeout: 5000, interval: 200 },
      )
      .toBe('admitted');
  });

  it("a tenant removed by update() loses access at once: HTTP, gRPC and an open stream's next message", async () => {
    const url = `${gw().url}/v2/models/identity_fp32/infer`;
    const headers = { 'content-type': 'application/json', ...auth('temp') };
    const guard = gw().gateway.guard!;
    expect((await post(url, fp32Json(100), headers)).status).toBe(200);
    expect((await unary(plain.client, 'ModelReady', { name: 'identity_fp32' }, metadata('temp'))).ready).toBe(
      true,
    );
    const stream = openStream(plain.client, metadata('temp'));
    const ok = await stream.send(rawInfer(new Float32Array([1, 2])));
    expect(ok.error_message).toBe('');
    guard.update(gatewayGuard(['temp']));
    try {
      expect((await post(url, fp32Json(100), headers)).status).toBe(401);
      await expect(
        unary(plain.client, 'ModelReady', { name: 'identity_fp32' }, metadata('temp')),
      ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
      const refused = await stream.send(rawInfer(new Float32Array([3, 4])));
      expect(refused.error_message).toMatch(/not valid/);
      expect(refused.infer_response).toBeFalsy();
    } finally {
      stream.end();
      guard.update(gatewayGuard());
    }
  });

  it("writes a shared memory output at the region's registered offset", async () => {
    const shmKey = `triton-node-hostile-${process.pid}`;
    const fd = openSync(`/dev/shm/${shmKey}`, 'w+');
    try {
      ftruncateSync(fd, 256);
      const admin = { 'content-type': 'application/json', ...auth('root') };
      const reg = await post(
        `${gw().url}/v2/systemsharedmemory/region/out64/register`,
        JSON.stringify({ key: shmKey, offset: 64, byte_size: 64 }),
        admin,
      );
      expect(reg.status).toBe(200);
      const res = await post(
        `${gw().url}/v2/models/identity_fp32/infer`,
        JSON.stringify({
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1.5, -2, 3.25, 4] }],
          outputs: [
            {
              name: 'OUTPUT0',
              parameters: {
                shared_memory_region: 'out64',
                shared_memory_offset: 8,
                shared_memory_byte_size: 16,
              },
            },
          ],
        }),
        admin,
      );
      expect(res.status).toBe(200);
      const file = Buffer.alloc(256);
      readSync(fd, file, 0, 256, 0);
      const at = (offset: number) => Array.from(new Float32Array(file.buffer.slice(offset, offset + 16)));
      expect(at(64 + 8)).toEqual([1.5, -2, 3.25, 4]);
      expect(file.subarray(0, 64).every((b) => b === 0)).toBe(true);
    } finally {
      await post(`${gw().url}/v2/systemsharedmemory/region/out64/unregister`, '', auth('root'));
      closeSync(fd);
      unlinkSync(`/dev/shm/${shmKey}`);
    }
  });

  it('answers 413 to a chunked body past the limit while it is still being sent', async () => {
    const { port } = gw().http.address() as AddressInfo;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const total = 64 * MAX_BODY;
    const outcome = await new Promise<{ status: number | undefined; sent: number }>((resolve) => {
      let sent = 0;
      let status: number | undefined;
      let over = false;
      const done = () => {
        if (over) return;
        over = true;
        resolve({ status, sent });
      };
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v2/models/identity_fp32/infer',
        headers: { 'transfer-encoding': 'chunked', ...auth('root') },
      });
      req.on('response', (res) => {
        status = res.statusCode;
        res.resume();
        done();
        req.destroy();
      });
      req.on('error', () => done());
      const pump = () => {
        while (!over && sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        if (!over) req.end();
      };
      pump();
    });
    expect(outcome.status).toBe(413);
    // The answer came (and the server stopped taking the body) long before the client could send it all.
    expect(outcome.sent).toBeLessThan(total / 4);
  });
});

// ---------------------------------------------------------------------------
// The isolating front: group a (alice, carol, temp) and b (bob), behind a GatewayGuard.

const repositories: string[] = [];
function repository(models: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostile-front-'));
  for (const m of models) symlinkSync(join(MODELS, m), join(dir, m));
  repositories.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of repositories) rmSync(dir, { recursive: true, force: true });
});

function frontGuard(without: string[] = []): GuardOptions {
  const tenants: GuardOptions['tenants'] = {
    alice: { models: ['identity_*'] },
    carol: { models: ['identity_fp32'] },
    temp: { models: ['identity_*'] },
    bob: { models: ['*'] },
    meter: { models: ['identity_*'], limits: { bytesPerSecond: 2_000, bytesBurst: 20_000 } },
    typed: { models: ['identity_*'], limits: { bytesPerSecond: 2_000, bytesBurst: 20_000 } },
    raw: { models: ['identity_*'], limits: { bytesPerSecond: 2_000, bytesBurst: 20_000 } },
    root: { models: ['*'], admin: true },
  };
  for (const t of without) delete tenants[t];
  return {
    apiKeys: Object.keys(tenants).map((t) => ({ sha256: hashApiKey(key(t)), tenant: t })),
    tenants,
  };
}

describe.sequential('the isolating front under a hostile tenant', () => {
  const guard = new GatewayGuard(frontGuard());
  let front: IsolatedGateway;
  let url: string;
  let listener: http.Server;
  let rpc: { server: grpc.Server; client: GrpcClient };
  beforeAll(async () => {
    const server = (models: string[]) => ({
      modelRepository: repository(models),
      library: LIBRARY_PATH,
      ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
      exitTimeoutSeconds: 5,
    });
    front = createIsolatedGateway({
      groups: {
        a: {
          tenants: ['alice', 'carol', 'temp', 'meter', 'typed', 'raw'],
          server: server(['identity_fp32', 'identity_int32']),
        },
        b: { tenants: ['bob'], server: server(['square_int32']) },
      },
      guard,
      sharedMemory: { slots: 1, slotBytes: 1 << 16 },
    });
    await front.start();
    listener = http.createServer(SERVE_HTTP_OPTIONS, front.handler);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    rpc = await grpcServerFor((s) => front.addToGrpcServer(s));
  });
  afterAll(async () => {
    rpc?.client.close();
    rpc?.server.forceShutdown();
    await front?.drain({ timeoutMs: 2000 });
    listener?.closeAllConnections();
    await new Promise((resolve) => listener?.close(resolve));
  });

  /** The front's region in a group's process, as that process reports it (only the front's socket reaches it). */
  function regionOf(group: number): Promise<{ name: string; byte_size: number }> {
    const socketPath = front.groups()[group]!.socketPath;
    return new Promise((resolve, reject) => {
      http
        .get({ socketPath, path: '/v2/systemsharedmemory/status' }, (r) => {
          let text = '';
          r.on('data', (c) => {
            text += c;
          });
          r.on('end', () => resolve((JSON.parse(text) as Array<{ name: string; byte_size: number }>)[0]!));
        })
        .on('error', reject);
    });
  }

  /** Carol's tensor, left in the slot of group a's region (one slot: offset 0) by a binary inference. */
  const secret = Float32Array.from({ length: 16 }, (_, i) => 1000 + i);
  async function carolInfers(): Promise<void> {
    const before = front.groups()[0]!.sharedMemoryRequests;
    const { body, headerLength } = binaryBody(
      {
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'FP32',
            shape: [1, secret.length],
            parameters: { binary_data_size: secret.byteLength },
          },
        ],
        outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
      },
      [bytesOf(secret)],
    );
    const res = await request(`${url}/v2/models/identity_fp32/infer`, {
      method: 'POST',
      body,
      headers: { 'inference-header-content-length': String(headerLength), ...auth('carol') },
      dispatcher,
    });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    const { outputs } = parseBinaryResponse(bytes, Number(res.headers['inference-header-content-length']));
    expect(bytesOf(secret).equals(outputs[0]!.bytes!)).toBe(true);
    expect(front.groups()[0]!.sharedMemoryRequests).toBe(before + 1);
  }

  function naming(region: string, where: 'input' | 'output'): string {
    const shm = {
      shared_memory_region: region,
      shared_memory_offset: 0,
      shared_memory_byte_size: secret.byteLength,
    };
    return JSON.stringify({
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, secret.length],
          ...(where === 'input' ? { parameters: shm } : { data: Array.from(secret, () => 0) }),
        },
      ],
      ...(where === 'output' ? { outputs: [{ name: 'OUTPUT0', parameters: shm }] } : {}),
    });
  }

  it('names its region at random, per process: no tenant can guess it', async () => {
    const [a, b] = [await regionOf(0), await regionOf(1)];
    expect(a.name).toMatch(/^triton-node-isolation-[0-9a-f]{32}$/);
    expect(b.name).toMatch(/^triton-node-isolation-[0-9a-f]{32}$/);
    expect(a.name).not.toBe(b.name);
  });

  it('never serves a client-named region: a malformed Inference-Header-Content-Length is 400 at the front', async () => {
    await carolInfers();
    const region = (await regionOf(0)).name;
    const before = front.groups()[0]!;
    for (const name of [region, 'triton-node-isolation']) {
      for (const where of ['input', 'output'] as const) {
        const body = naming(name, where);
        for (const length of ['x', '-1', String(body.length + 1), '1e3']) {
          const res = await post(`${url}/v2/models/identity_fp32/infer`, body, {
            'inference-header-content-length': length,
            ...auth('alice'),
          });
          // Before: the front skipped its check and dropped the header; the process read carol's tensor (200).
          expect(res.status, `${where} in '${name}' with header '${length}'`).toBe(400);
          expect(res.text).toMatch(/Inference-Header-Content-Length/);
          expect(res.text).not.toMatch(/1000/);
        }
        // Without the header (or with a correct one): 501, as before.
        const plainRes = await post(`${url}/v2/models/identity_fp32/infer`, body, auth('alice'));
        expect(plainRes.status).toBe(501);
        const exact = await post(`${url}/v2/models/identity_fp32/infer`, body, {
          'inference-header-content-length': String(body.length),
          ...auth('alice'),
        });
        expect(exact.status).toBe(501);
      }
    }
    // Nothing of it reached the process.
    const after = front.groups()[0]!;
    expect(after.socketRequests).toBe(before.socketRequests);
    expect(after.sharedMemoryRequests).toBe(before.sharedMemoryRequests);
  });

  it("lets only the front register or unregister regions in a group's process", async () => {
    const socketPath = front.groups()[0]!.socketPath;
    const region = (await regionOf(0)).name;
    const overSocket = (path: string, body: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          { socketPath, method: 'POST', path, headers: { 'content-type': 'application/json', ...headers } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const forged = { 'x-triton-node-isolation-control': '0'.repeat(32) };
    for (const headers of [{}, forged]) {
      expect(await overSocket(`/v2/systemsharedmemory/region/${region}/unregister`, '', headers)).toBe(403);
      expect(await overSocket('/v2/systemsharedmemory/unregister', '', headers)).toBe(403);
      expect(
        await overSocket(
          '/v2/x/../systemsharedmemory/region/other/register',
          JSON.stringify({ key: 'anything', byte_size: 8 }),
          headers,
        ),
      ).toBe(403);
    }
    // The front's region is still there, and still used.
    expect((await regionOf(0)).name).toBe(region);
    await carolInfers();
  });

  it("has a group's process serve the front's region only to requests the front moved there", async () => {
    await carolInfers();
    const { socketPath } = front.groups()[0]!;
    const region = (await regionOf(0)).name;
    // As if the front had let one by: straight to the process's sockets, without the front's token.
    const overSocket = (body: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          {
            socketPath,
            method: 'POST',
            path: '/v2/models/identity_fp32/infer',
            headers: { 'content-type': 'application/json', 'x-triton-node-isolation-control': 'guess' },
          },
          (res) => {
            let text = '';
            res.on('data', (c) => {
              text += c;
            });
            res.on('end', () => resolve({ status: res.statusCode!, text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    for (const where of ['input', 'output'] as const) {
      const res = await overSocket(naming(region, where));
      expect(res.status, where).toBeGreaterThanOrEqual(400);
      expect(res.text).toMatch(/shared memory is not enabled/);
      expect(res.text).not.toMatch(/1000/);
    }
    const Client = kserveClient<Record<string, Unary>>();
    const direct = new Client(`unix:${socketPath}.grpc`, grpc.credentials.createInsecure());
    try {
      const sneaky = {
        model_name: 'identity_fp32',
        inputs: [
          {
            name: 'INPUT0',
            datatype: 'FP32',
            shape: [1, secret.length],
            parameters: {
              shared_memory_region: { string_param: region },
              shared_memory_byte_size: { int64_param: String(secret.byteLength) },
            },
          },
        ],
      };
      await expect(unary(direct, 'ModelInfer', sneaky, new grpc.Metadata())).rejects.toMatchObject({
        details: expect.stringMatching(/shared memory/),
      });
    } finally {
      direct.close();
    }
    // The front's own requests still go through the region.
    await carolInfers();
    const values = new Float32Array([7, 8, 9]);
    const before = front.groups()[0]!.sharedMemoryRequests;
    const res = await unary(rpc.client, 'ModelInfer', rawInfer(values), metadata('alice'));
    expect(bytesOf(values).equals((res.raw_output_contents as Buffer[])[0]!)).toBe(true);
    expect(front.groups()[0]!.sharedMemoryRequests).toBe(before + 1);
  });

  it('checks the route the process serves: dot segments in a path do not slip past the front', async () => {
    await carolInfers();
    const region = (await regionOf(0)).name;
    const json = { 'content-type': 'application/json' };
    for (const path of [
      '/v2/models/identity_fp32/infer/../../identity_fp32/infer',
      '/v2/models/x/%2e%2e/identity_fp32/infer',
      '/v2/models/x\\..\\identity_fp32/infer',
    ]) {
      // Before: 'other' at the front, streamed through; the process resolved the path and read carol's tensor.
      const res = await rawPost(url, path, naming(region, 'input'), { ...json, ...auth('alice') });
      expect(res.status, path).toBe(501);
      expect(res.text).not.toMatch(/1000/);
    }
    // A model of the group that carol may not use stays hidden, whatever the path's detour.
    const int32 = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [2], data: [1, 2] }],
    });
    const detour = await rawPost(url, '/v2/models/identity_fp32/../identity_int32/infer', int32, {
      ...json,
      ...auth('carol'),
    });
    expect(detour.status).toBe(404);
    expect(detour.text).toMatch(/unknown model: 'identity_int32'/);
    const direct = await rawPost(url, '/v2/models/identity_int32/infer', int32, {
      ...json,
      ...auth('alice'),
    });
    expect(direct.status).toBe(200);
  });

  it('refuses a client-named region in every message of a gRPC stream, not only its first', async () => {
    await carolInfers();
    const region = (await regionOf(0)).name;
    const sneaky = {
      model_name: 'identity_fp32',
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, secret.length],
          parameters: {
            shared_memory_region: { string_param: region },
            shared_memory_byte_size: { int64_param: String(secret.byteLength) },
          },
        },
      ],
    };
    await expect(unary(rpc.client, 'ModelInfer', sneaky, metadata('alice'))).rejects.toMatchObject({
      code: grpc.status.UNIMPLEMENTED,
    });
    const stream = openStream(rpc.client, metadata('alice'));
    try {
      const first = await stream.send(rawInfer(new Float32Array([1, 2])));
      expect(first.error_message).toBe('');
      // Before: only the first message was checked; this one read carol's tensor from the slot.
      const second = await stream.send(sneaky);
      expect(second.error_message).toMatch(/shared memory regions of clients are not served/);
      expect(second.infer_response).toBeFalsy();
    } finally {
      stream.end();
    }
  });

  it('admits every message of a gRPC stream: a tenant removed by update() is refused on its open stream', async () => {
    const stream = openStream(rpc.client, metadata('temp'));
    try {
      expect((await stream.send(rawInfer(new Float32Array([1, 2])))).error_message).toBe('');
      guard.update(frontGuard(['temp']));
      const refused = await stream.send(rawInfer(new Float32Array([3, 4])));
      expect(refused.error_message).toMatch(/not valid/);
      expect((await post(`${url}/v2/models/identity_fp32/infer`, fp32Json(100), auth('temp'))).status).toBe(
        401,
      );
    } finally {
      stream.end();
      guard.update(frontGuard());
    }
  });

  it('charges chunked HTTP bodies and gRPC tensors (typed and raw) at the front', async () => {
    const body = fp32Json(16_000);
    const infer = `${url}/v2/models/identity_fp32/infer`;
    expect((await postChunked(infer, body, auth('meter'))).status).toBe(200);
    expect((await postChunked(infer, body, auth('meter'))).status).toBe(429);
    const typed = metadata('typed');
    await unary(rpc.client, 'ModelInfer', typedInfer(4000), typed);
    await expect(unary(rpc.client, 'ModelInfer', typedInfer(4000), typed)).rejects.toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
    });
    const raw = metadata('raw');
    await unary(rpc.client, 'ModelInfer', rawInfer(new Float32Array(4000)), raw);
    await expect(
      unary(rpc.client, 'ModelInfer', rawInfer(new Float32Array(4000)), raw),
    ).rejects.toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
    });
  });

  it("names server metadata as the guard does: 'server' in open serves GET /v2 and ServerMetadata without credentials", async () => {
    expect((await get(`${url}/v2`)).status).toBe(401);
    await expect(unary(rpc.client, 'ServerMetadata', {}, new grpc.Metadata())).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
    guard.update({ ...frontGuard(), open: ['server'] });
    try {
      // Before: the front called this route 'server_metadata', so opening 'server' still asked for credentials.
      expect((await get(`${url}/v2`)).status).toBe(200);
      expect((await unary(rpc.client, 'ServerMetadata', {}, new grpc.Metadata())).name).toBeTruthy();
      expect((await get(`${url}/v2/models/stats`)).status).toBe(401);
    } finally {
      guard.update(frontGuard());
    }
  });

  it("serves its /metrics (every group's series) to admins only", async () => {
    const tenant = await get(`${url}/metrics`, auth('alice'));
    expect(tenant.status).toBe(403);
    expect(tenant.text).not.toMatch(/square_int32/);
    const admin = await get(`${url}/metrics`, auth('root'));
    expect(admin.status).toBe(200);
    expect(admin.text).toMatch(/square_int32/);
  });

  it("lists to a tenant only its own models of its group's (index and statistics, HTTP and gRPC)", async () => {
    const names = (list: unknown) => (list as Msg[]).map((m) => m.name).sort();
    const index = async (tenant: string) =>
      names(JSON.parse((await post(`${url}/v2/repository/index`, '{}', auth(tenant))).text));
    const stats = async (tenant: string) =>
      names(JSON.parse((await get(`${url}/v2/models/stats`, auth(tenant))).text).model_stats);
    // Before: the group's process answered unfiltered (it has no guard): carol saw identity_int32.
    expect(await index('carol')).toEqual(['identity_fp32']);
    expect(await stats('carol')).toEqual(['identity_fp32']);
    expect(await index('alice')).toEqual(['identity_fp32', 'identity_int32']);
    expect(await stats('alice')).toEqual(['identity_fp32', 'identity_int32']);
    const carol = metadata('carol');
    expect(names((await unary(rpc.client, 'RepositoryIndex', {}, carol)).models)).toEqual(['identity_fp32']);
    expect(names((await unary(rpc.client, 'ModelStatistics', {}, carol)).model_stats)).toEqual([
      'identity_fp32',
    ]);
    expect(names((await unary(rpc.client, 'ModelStatistics', {}, metadata('alice'))).model_stats)).toEqual([
      'identity_fp32',
      'identity_int32',
    ]);
  });
});
