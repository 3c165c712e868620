/**
 * Isolated tenant groups: each group's Server in a process of its own,
 * supervised by the front, which routes requests to it over a Unix socket
 * and passes binary tensors through shared memory. Real HTTP clients
 * (undici) against the front; processes killed with SIGKILL.
 */
import { spawn } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { BACKEND_DIR, LIBRARY_PATH, MODELS } from '@triton-node/test-support/helpers.js';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Guard } from '../lib/guard/types.js';
import {
  GatewayError,
  type IsolatedGateway,
  type IsolatedGatewayOptions,
  createIsolatedGateway,
  hashApiKey,
} from '../lib/index.js';
import { SERVE_HTTP_OPTIONS, binaryBody, bytesOf, kserveClient, parseBinaryResponse } from './helpers.js';

const FRONT = fileURLToPath(new URL('./fixtures/isolation-front.ts', import.meta.url));
const CLI = fileURLToPath(new URL('../../triton-node/lib/cli/main.ts', import.meta.url));
const repositories: string[] = [];

/** A model repository holding `models` of the test repository (as links). */
function repository(models: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'isolation-repo-'));
  for (const m of models) symlinkSync(join(MODELS, m), join(dir, m));
  repositories.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of repositories) rmSync(dir, { recursive: true, force: true });
});

/** Groups a (identity_fp32, identity_delay) and b (identity_int32, square_int32). */
function twoGroups(): IsolatedGatewayOptions['groups'] {
  const server = (models: string[]) => ({
    modelRepository: repository(models),
    library: LIBRARY_PATH,
    ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
    exitTimeoutSeconds: 5,
  });
  return {
    a: {
      tenants: ['alice'],
      server: server(['identity_fp32', 'identity_delay']),
      env: { CUDA_VISIBLE_DEVICES: '0' },
      restart: { backoffMs: 100 },
    },
    b: {
      tenants: ['bob'],
      server: server(['identity_int32', 'square_int32']),
      env: { CUDA_VISIBLE_DEVICES: '1' },
    },
  };
}

/** Whether a process runs (a zombie does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Front {
  gateway: IsolatedGateway;
  url: string;
  http: http.Server;
}

/** A front with `options` on 127.0.0.1 for the describe's tests; drained after them. */
function useFront(options: () => Omit<IsolatedGatewayOptions, 'groups'>): () => Front {
  let front: Front | undefined;
  beforeAll(async () => {
    const gateway = createIsolatedGateway({ groups: twoGroups(), ...options() });
    await gateway.start();
    const h = http.createServer(SERVE_HTTP_OPTIONS, gateway.handler);
    await new Promise<void>((resolve) => h.listen(0, '127.0.0.1', resolve));
    front = { gateway, http: h, url: `http://127.0.0.1:${(h.address() as AddressInfo).port}` };
  });
  afterAll(async () => {
    if (front === undefined) return;
    await front.gateway.drain({ timeoutMs: 2000 });
    front.http.closeAllConnections();
    await new Promise((resolve) => front!.http.close(resolve));
  });
  return () => front!;
}

const dispatcher = new Agent({ connections: 64 });
afterAll(() => dispatcher.close());

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
    dispatcher,
  });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers, dispatcher });
  return { status: res.statusCode, text: await res.body.text() };
}

const int32Request = { inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [3], data: [1, 2, 3] }] };
const fp32Request = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [0.5, 1.5] }] };

/** A binary FP32 inference of `values` (shape [1, n]) asking for its output as binary. */
async function binaryInfer(
  url: string,
  model: string,
  values: Float32Array,
  headers: Record<string, string>,
) {
  const { body, headerLength } = binaryBody(
    {
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, values.length],
          parameters: { binary_data_size: values.byteLength },
        },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
    },
    [bytesOf(values)],
  );
  const res = await request(`${url}/v2/models/${model}/infer`, {
    method: 'POST',
    body,
    headers: { 'inference-header-content-length': String(headerLength), ...headers },
    dispatcher,
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, bytes, headerLength: res.headers['inference-header-content-length'] };
}

interface AuditLine {
  tenant: string;
  route: string;
  model: string | undefined;
  status: number;
}

describe('createIsolatedGateway options', () => {
  it('throws a TypeError naming the option for each mistake, before starting anything', () => {
    const server = { modelRepository: MODELS };
    const bad: Array<[unknown, RegExp]> = [
      [undefined, /createIsolatedGateway options/],
      [{}, /Expected an object with at least one group for groups/],
      [{ groups: { 'a/b': { server } } }, /group name/],
      [{ groups: { a: {} } }, /groups\.a\.server/],
      [
        { groups: { a: { server, tenants: ['t'] }, b: { server, tenants: ['t'] } } },
        /Tenant 't' is in two groups/,
      ],
      [{ groups: { a: { server, env: { X: 1 } } } }, /groups\.a\.env/],
      [{ groups: { a: { server, restart: { backoffMs: -1 } } } }, /groups\.a\.restart\.backoffMs/],
      [{ groups: { a: { server } }, sharedMemory: { slots: 0 } }, /sharedMemory\.slots/],
      [{ groups: { a: { server } }, guard: {} }, /guard/],
      [{ groups: { a: { server } }, groupHeader: 'yes' }, /groupHeader/],
    ];
    for (const [options, message] of bad) {
      expect(() => createIsolatedGateway(options as IsolatedGatewayOptions)).toThrow(TypeError);
      expect(() => createIsolatedGateway(options as IsolatedGatewayOptions)).toThrow(message);
    }
  });
});

describe.sequential('isolated groups behind a guard', () => {
  const audit: AuditLine[] = [];
  const guard: Guard = {
    async admit(r) {
      const tenant = String(r.headers['x-tenant'] ?? 'anonymous');
      if (tenant === 'denied') throw new GatewayError(401, 'unknown caller');
      return {
        tenant,
        done: (o) => audit.push({ tenant, route: r.route, model: r.model, status: o.status }),
        canSee: () => true,
        spendTokens: () => true,
        tokensRetryAfterSeconds: () => 1,
      };
    },
  };
  const front = useFront(() => ({ guard, sharedMemory: { slots: 4, slotBytes: 1 << 20 } }));
  const alice = { 'x-tenant': 'alice' };
  const bob = { 'x-tenant': 'bob' };

  it('runs each group in a process of its own', () => {
    const [a, b] = front().gateway.groups();
    expect(a!.state).toBe('ready');
    expect(b!.state).toBe('ready');
    expect(a!.pid).not.toBe(b!.pid);
    expect([a!.pid, b!.pid]).not.toContain(process.pid);
    expect(a!.models.sort()).toEqual(['identity_delay', 'identity_fp32']);
    expect(b!.models.sort()).toEqual(['identity_int32', 'square_int32']);
    // Each process got its group's environment (its GPUs, on a GPU machine).
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ(a!.pid!)).toContain('CUDA_VISIBLE_DEVICES=0');
    expect(environ(b!.pid!)).toContain('CUDA_VISIBLE_DEVICES=1');
  });

  it("routes a tenant to its group only: another group's model is not reachable", async () => {
    const { url } = front();
    const ok = await post(`${url}/v2/models/identity_int32/infer`, int32Request, bob);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).outputs[0].data).toEqual([1, 2, 3]);
    expect((await post(`${url}/v2/models/identity_fp32/infer`, fp32Request, alice)).status).toBe(200);
    // Each other's models: not found, as a model the group does not have.
    const crossed = await post(`${url}/v2/models/identity_int32/infer`, int32Request, alice);
    expect(crossed.status).toBe(404);
    expect((await get(`${url}/v2/models/identity_fp32`, bob)).status).toBe(404);
    expect((await get(`${url}/v2/models/identity_fp32`, alice)).status).toBe(200);
    // A tenant of no group, and a caller the guard refuses.
    const stranger = await post(`${url}/v2/models/identity_int32/infer`, int32Request, { 'x-tenant': 'eve' });
    expect(stranger.status).toBe(403);
    expect(JSON.parse(stranger.text).error).toBe("tenant 'eve' is in no isolated group");
    expect(
      (await post(`${url}/v2/models/identity_int32/infer`, int32Request, { 'x-tenant': 'denied' })).status,
    ).toBe(401);
    const index = await post(`${url}/v2/repository/index`, {}, alice);
    expect(
      JSON.parse(index.text)
        .map((m: { name: string }) => m.name)
        .sort(),
    ).toEqual(['identity_delay', 'identity_fp32']);
  });

  it('audits each admitted request once with its status', async () => {
    const before = audit.length;
    await post(`${front().url}/v2/models/identity_int32/infer`, int32Request, bob);
    await post(`${front().url}/v2/models/identity_int32/infer`, int32Request, alice);
    await until('the audit lines', () => audit.length === before + 2);
    expect(audit.slice(before)).toEqual([
      { tenant: 'bob', route: 'infer', model: 'identity_int32', status: 200 },
      { tenant: 'alice', route: 'infer', model: 'identity_int32', status: 404 },
    ]);
  });

  it("streams a decoupled model's responses (SSE) through the front as they come", async () => {
    const res = await request(`${front().url}/v2/models/square_int32/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ IN: 3 }),
      headers: bob,
      dispatcher,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = (await res.body.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)));
    expect(events.map((e) => e.OUT)).toEqual([3, 3, 3]);
  });

  it('passes binary tensors through shared memory, not the socket', async () => {
    const { url, gateway } = front();
    const values = Float32Array.from({ length: 64 * 1024 }, (_, i) => i * 0.25); // 256 KiB
    const before = gateway.groups()[0]!;
    const res = await binaryInfer(url, 'identity_fp32', values, alice);
    expect(res.status).toBe(200);
    const { outputs } = parseBinaryResponse(res.bytes, Number(res.headerLength));
    expect(bytesOf(values).equals(outputs[0]!.bytes!)).toBe(true);
    const after = gateway.groups()[0]!;
    expect(after.sharedMemoryRequests).toBe(before.sharedMemoryRequests + 1);
    expect(after.socketRequests).toBe(before.socketRequests);
    // Only the JSON header crossed the socket.
    expect(after.socketBytes - before.socketBytes).toBeLessThan(1024);
    // The group's process has the front's region registered, and its name is gone from /dev/shm.
    const status = await new Promise<string>((resolve, reject) => {
      http
        .get({ socketPath: after.socketPath, path: '/v2/systemsharedmemory/status' }, (r) => {
          let text = '';
          r.on('data', (c) => {
            text += c;
          });
          r.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    const [region] = JSON.parse(status) as Array<{ name: string; key: string; byte_size: number }>;
    expect(region).toMatchObject({
      name: expect.stringMatching(/^triton-node-isolation-[0-9a-f]{32}$/),
      byte_size: 4 << 20,
    });
    expect(existsSync(`/dev/shm${region!.key}`)).toBe(false);
  });

  it('sends a tensor larger than a slot over the socket instead, intact', async () => {
    const { url, gateway } = front();
    const values = Float32Array.from({ length: 512 * 1024 }, (_, i) => i); // 2 MiB > 1 MiB slot
    const before = gateway.groups()[0]!;
    const res = await binaryInfer(url, 'identity_fp32', values, alice);
    expect(res.status).toBe(200);
    const { outputs } = parseBinaryResponse(res.bytes, Number(res.headerLength));
    expect(bytesOf(values).equals(outputs[0]!.bytes!)).toBe(true);
    const after = gateway.groups()[0]!;
    expect(after.socketRequests).toBe(before.socketRequests + 1);
    expect(after.socketBytes - before.socketBytes).toBeGreaterThan(values.byteLength);
  });

  it('passes a raw binary request (Inference-Header-Content-Length: 0) over the socket, as it came', async () => {
    const { url, gateway } = front();
    const values = Float32Array.from([1, 2, 3, 4]);
    const before = gateway.groups()[0]!;
    const res = await request(`${url}/v2/models/identity_fp32/infer`, {
      method: 'POST',
      body: bytesOf(values),
      headers: { 'inference-header-content-length': '0', ...alice },
      dispatcher,
    });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode, bytes.toString()).toBe(200);
    const { outputs } = parseBinaryResponse(bytes, Number(res.headers['inference-header-content-length']));
    expect(outputs[0]).toMatchObject({ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 4] });
    expect(bytesOf(values).equals(outputs[0]!.bytes!)).toBe(true);
    expect(gateway.groups()[0]!.socketRequests).toBe(before.socketRequests + 1);
  });

  it("refuses clients' own shared memory regions (they would name the front's)", async () => {
    const { url } = front();
    const sneaky = {
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, 2],
          parameters: { shared_memory_region: 'triton-node-isolation', shared_memory_byte_size: 8 },
        },
      ],
    };
    const res = await post(`${url}/v2/models/identity_fp32/infer`, sneaky, alice);
    expect(res.status).toBe(501);
    expect((await get(`${url}/v2/systemsharedmemory/status`, alice)).status).toBe(501);
  });

  it('kill -9 of one group under load: the other serves on, in-flight requests get 503, it restarts', async () => {
    const { url, gateway } = front();
    const oldPid = gateway.groups()[0]!.pid!;
    const results: Record<'a' | 'b', Array<{ status: number; text: string; sent: number }>> = {
      a: [],
      b: [],
    };
    let stop = false;
    let killedAt = Number.POSITIVE_INFINITY;
    const loop = async (group: 'a' | 'b') => {
      while (!stop) {
        const sent = performance.now();
        const res =
          group === 'a'
            ? await binaryInfer(url, 'identity_delay', new Float32Array([1, 2, 3, 4]), alice)
            : await post(`${url}/v2/models/identity_int32/infer`, int32Request, bob);
        const text = 'bytes' in res ? res.bytes.toString() : res.text;
        results[group].push({ status: res.status, text, sent });
      }
    };
    const clients = [...Array(6)].flatMap(() => [loop('a'), loop('b')]);
    const answered = (group: 'a' | 'b') => results[group].filter((r) => r.status === 200).length;
    await until('both groups to answer', () => answered('a') >= 10 && answered('b') >= 10);
    killedAt = performance.now();
    process.kill(oldPid, 'SIGKILL');
    await until('group a to exit', () => gateway.groups()[0]!.state !== 'ready');
    expect((await get(`${url}/v2/health/ready`, alice)).status).toBe(400);
    expect((await get(`${url}/v2/health/ready`, bob)).status).toBe(200);
    await until('group a to be back', () => gateway.groups()[0]!.state === 'ready');
    // Group a answers again, from its new process, and b went on meanwhile.
    const bBefore = results.b.length;
    await until(
      'group a to answer again and b to go on',
      () => results.a.some((r) => r.status === 200 && r.sent > killedAt) && results.b.length >= bBefore + 20,
    );
    stop = true;
    await Promise.all(clients);

    expect(results.b.length).toBeGreaterThan(20);
    expect(results.b.filter((r) => r.status !== 200)).toEqual([]);
    const failed = results.a.filter((r) => r.status !== 200);
    expect(failed.length).toBeGreaterThan(0);
    for (const f of failed) {
      expect(f.status).toBe(503);
      expect(JSON.parse(f.text)).toEqual({ error: "group 'a' process exited (signal SIGKILL); restarting" });
    }
    // Some of them were in flight in the killed process when it died.
    expect(failed.some((f) => f.sent < killedAt)).toBe(true);
    // And group a serves again, from a new process.
    expect(results.a.some((r) => r.status === 200 && r.sent > killedAt)).toBe(true);
    const a = gateway.groups()[0]!;
    expect(a).toMatchObject({ state: 'ready', restarts: 1, generation: 2, lastExit: 'signal SIGKILL' });
    expect(a.pid).not.toBe(oldPid);
    expect(alive(oldPid)).toBe(false);
    expect((await get(`${url}/v2/health/ready`, alice)).status).toBe(200);
    const again = await binaryInfer(url, 'identity_fp32', new Float32Array([7, 8]), alice);
    expect(again.status).toBe(200);
  });
});

type Msg = Record<string, unknown>;
type Unary = (req: Msg, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: Msg) => void) => void;

/** A KServe gRPC client of `address`. */
function grpcClient(address: string): grpc.Client & Record<string, Unary> {
  const Client = kserveClient<Record<string, Unary>>();
  return new Client(address, grpc.credentials.createInsecure());
}

describe.sequential('isolated groups over gRPC', () => {
  const front = useFront(() => ({
    guard: {
      admit: async (r) => ({
        tenant: String(r.headers['x-tenant'] ?? 'anonymous'),
        done: () => {},
        canSee: () => true,
        spendTokens: () => true,
        tokensRetryAfterSeconds: () => 1,
      }),
    },
  }));
  let server: grpc.Server;
  let client: grpc.Client & Record<string, Unary>;
  beforeAll(async () => {
    server = new grpc.Server();
    await front().gateway.addToGrpcServer(server);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    client = grpcClient(`127.0.0.1:${port}`);
  });
  afterAll(() => {
    client?.close();
    server?.forceShutdown();
  });
  const call = (method: string, req: Msg, tenant: string) =>
    new Promise<Msg>((resolve, reject) => {
      const md = new grpc.Metadata();
      md.set('x-tenant', tenant);
      client[method]!(req, md, (err, res) => (err ? reject(err) : resolve(res)));
    });
  const infer = (values: Float32Array) => ({
    model_name: 'identity_fp32',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length] }],
    raw_input_contents: [bytesOf(values)],
  });

  it("passes ModelInfer to the tenant's group, its raw tensors through shared memory", async () => {
    const values = Float32Array.from({ length: 1024 }, (_, i) => i / 2);
    const before = front().gateway.groups()[0]!.sharedMemoryRequests;
    const res = await call('ModelInfer', infer(values), 'alice');
    expect(bytesOf(values).equals((res.raw_output_contents as Buffer[])[0]!)).toBe(true);
    expect(front().gateway.groups()[0]!.sharedMemoryRequests).toBe(before + 1);
    expect((await call('ServerReady', {}, 'alice')).ready).toBe(true);
    expect((await call('ModelReady', { name: 'identity_fp32' }, 'alice')).ready).toBe(true);
    const index = await call('RepositoryIndex', { ready: true }, 'bob');
    expect((index.models as Msg[]).map((m) => m.name).sort()).toEqual(['identity_int32', 'square_int32']);
  });

  it("does not reach another group's model, nor serve a tenant of no group", async () => {
    await expect(call('ModelMetadata', { name: 'identity_fp32' }, 'bob')).rejects.toMatchObject({ code: 5 });
    await expect(call('ModelInfer', infer(new Float32Array([1])), 'eve')).rejects.toMatchObject({
      code: 7,
      details: "tenant 'eve' is in no isolated group",
    });
    await expect(call('SystemSharedMemoryStatus', {}, 'alice')).rejects.toMatchObject({ code: 12 });
  });

  it('streams ModelStreamInfer through to the group of its model', async () => {
    const md = new grpc.Metadata();
    md.set('x-tenant', 'bob');
    const stream = (
      client as unknown as { ModelStreamInfer(md: grpc.Metadata): grpc.ClientDuplexStream<Msg, Msg> }
    ).ModelStreamInfer(md);
    const responses: Msg[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      stream.on('data', (r: Msg) => responses.push(r));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    stream.write({
      model_name: 'square_int32',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1] }],
      raw_input_contents: [bytesOf(new Int32Array([3]))],
    });
    stream.end();
    await ended;
    const values = responses.map((r) => (r.infer_response as Msg).raw_output_contents as Buffer[]);
    expect(values.map((v) => v[0]!.readInt32LE(0))).toEqual([3, 3, 3]);
  });

  it('answers UNAVAILABLE naming the exit while a killed group restarts', async () => {
    const b = front().gateway.groups()[1]!;
    process.kill(b.pid!, 'SIGKILL');
    const req = {
      model_name: 'identity_int32',
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1] }],
      raw_input_contents: [bytesOf(new Int32Array([5]))],
    };
    await until('group b to notice', () => front().gateway.groups()[1]!.state !== 'ready');
    await expect(call('ModelInfer', req, 'bob')).rejects.toMatchObject({
      code: 14,
      details: "group 'b' process exited (signal SIGKILL); restarting",
    });
    await until('group b to be back', () => front().gateway.groups()[1]!.state === 'ready');
    const res = await call('ModelInfer', req, 'bob');
    expect((res.raw_output_contents as Buffer[])[0]!.readInt32LE(0)).toBe(5);
  });
});

describe.sequential('isolated groups without a guard', () => {
  const front = useFront(() => ({ groupHeader: true }));

  it('routes by model name to the group that has it ready', async () => {
    const { url } = front();
    expect((await post(`${url}/v2/models/identity_int32/infer`, int32Request)).status).toBe(200);
    expect((await post(`${url}/v2/models/identity_fp32/infer`, fp32Request)).status).toBe(200);
    const unknown = await post(`${url}/v2/models/no_such_model/infer`, int32Request);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text).error).toBe("Request for unknown model: 'no_such_model' is not found");
  });

  it("with x-triton-group enabled, a group does not serve another group's model", async () => {
    const { url } = front();
    expect(
      (await post(`${url}/v2/models/identity_int32/infer`, int32Request, { 'x-triton-group': 'a' })).status,
    ).toBe(404);
    expect(
      (await post(`${url}/v2/models/identity_int32/infer`, int32Request, { 'x-triton-group': 'b' })).status,
    ).toBe(200);
    expect(
      (await post(`${url}/v2/models/identity_int32/infer`, int32Request, { 'x-triton-group': 'z' })).status,
    ).toBe(400);
  });

  it('answers readiness, the index, statistics and metrics for all groups', async () => {
    const { url } = front();
    expect((await get(`${url}/v2/health/ready`)).status).toBe(200);
    expect((await get(`${url}/v2/health/live`)).status).toBe(200);
    const index = JSON.parse((await post(`${url}/v2/repository/index`, {})).text) as Array<{ name: string }>;
    expect(index.map((m) => m.name).sort()).toEqual([
      'identity_delay',
      'identity_fp32',
      'identity_int32',
      'square_int32',
    ]);
    const stats = JSON.parse((await get(`${url}/v2/models/stats`)).text);
    expect(stats.model_stats.length).toBe(4);
    const metrics = (await get(`${url}/metrics`)).text;
    expect(metrics).toContain('triton_node_isolation_group_ready{group="a"} 1');
    expect(metrics).toMatch(/nv_inference_request_success\{group="b",model="identity_int32"/);
    expect((await get(`${url}/v2`)).status).toBe(200);
  });

  it("never forwards a client's control header: the front's token goes only with what it moved to shared memory", async () => {
    const { url } = front();
    const sent: Array<{ path: string; control: unknown }> = [];
    const onStart = (message: unknown) => {
      const r = (message as { request: http.ClientRequest }).request;
      sent.push({ path: r.path, control: r.getHeader('x-triton-node-isolation-control') });
    };
    diagnostics.subscribe('http.client.request.start', onStart);
    try {
      const forged = { 'x-triton-node-isolation-control': 'f'.repeat(32) };
      expect((await post(`${url}/v2/models/identity_fp32/infer`, fp32Request, forged)).status).toBe(200);
      expect((await get(`${url}/v2/models/identity_fp32`, forged)).status).toBe(200);
      const values = new Float32Array([1, 2, 3]);
      const binary = await binaryInfer(url, 'identity_fp32', values, forged);
      expect(binary.status).toBe(200);
    } finally {
      diagnostics.unsubscribe('http.client.request.start', onStart);
    }
    const toGroup = sent.filter((r) => r.path.startsWith('/v2/models/identity_fp32'));
    expect(toGroup.map((r) => r.path)).toEqual([
      '/v2/models/identity_fp32/infer',
      '/v2/models/identity_fp32',
      '/v2/models/identity_fp32/infer',
    ]);
    // The JSON inference and the metadata: no control header at all (the client's was dropped).
    expect(toGroup[0]!.control).toBeUndefined();
    expect(toGroup[1]!.control).toBeUndefined();
    // The binary inference, moved into the front's region: the front's own token, not the client's.
    expect(toGroup[2]!.control).toMatch(/^[0-9a-f]{32}$/);
    expect(toGroup[2]!.control).not.toBe('f'.repeat(32));
  });

  it('stops every group process on drain, and new requests get 503', async () => {
    const { url, gateway } = front();
    const pids = gateway.groups().map((g) => g.pid!);
    const socketDir = join(gateway.groups()[0]!.socketPath, '..');
    expect(pids.every(alive)).toBe(true);
    expect(await gateway.drain({ timeoutMs: 2000 })).toBe(true);
    expect(pids.some(alive)).toBe(false);
    expect(gateway.groups().map((g) => g.state)).toEqual(['stopped', 'stopped']);
    // Each stopped itself when told (exit code 0), not by the SIGKILL after the deadline.
    expect(gateway.groups().map((g) => g.lastExit)).toEqual(['code 0', 'code 0']);
    expect(existsSync(socketDir)).toBe(false);
    expect((await post(`${url}/v2/models/identity_int32/infer`, int32Request)).status).toBe(503);
    expect((await get(`${url}/v2/health/ready`)).status).toBe(400);
  });
});

describe('isolated group processes that fail', () => {
  it('reports a group that cannot start, and stops the others', async () => {
    const groups = twoGroups();
    groups.b!.server.modelRepository = '/nonexistent/models';
    const gateway = createIsolatedGateway({ groups });
    await expect(gateway.start()).rejects.toThrow(
      /the isolated groups did not start: group 'b' failed to start: .*nonexistent.* \(code 1\)/,
    );
    const a = gateway.groups()[0]!;
    expect(a.state).toBe('stopped');
    expect(alive(a.pid ?? process.pid) && a.pid !== undefined).toBe(false);
  });

  it('reports a process that crashes before it can say anything', async () => {
    const groups = twoGroups();
    groups.a!.env = { NODE_OPTIONS: '--require /nonexistent/crash.cjs' };
    const gateway = createIsolatedGateway({ groups });
    await expect(gateway.start()).rejects.toThrow(/group 'a' failed to start: its process exited \(code 1\)/);
  });

  it('keeps a group down after its restarts run out, the others serving', async () => {
    const groups = twoGroups();
    groups.a!.restart = { maxRestarts: 0 };
    // No time to stop on SIGTERM: the drain below kills with SIGKILL at once.
    const gateway = createIsolatedGateway({ groups, groupHeader: true, stopTimeoutMs: 0 });
    await gateway.start();
    const h = http.createServer(SERVE_HTTP_OPTIONS, gateway.handler);
    await new Promise<void>((resolve) => h.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(h.address() as AddressInfo).port}`;
    try {
      process.kill(gateway.groups()[0]!.pid!, 'SIGKILL');
      await until('group a to fail', () => gateway.groups()[0]!.state === 'failed');
      const down = await post(`${url}/v2/models/identity_fp32/infer`, fp32Request);
      expect(down.status).toBe(503);
      expect(down.headers['retry-after']).toBe('1');
      expect(JSON.parse(down.text).error).toBe(
        "group 'a' is down: its process exited (signal SIGKILL) after 0 restarts in a row; not restarting",
      );
      expect((await post(`${url}/v2/models/identity_int32/infer`, int32Request)).status).toBe(200);
      expect((await get(`${url}/v2/health/ready`)).status).toBe(400);
      expect((await get(`${url}/v2/health/ready`, { 'x-triton-group': 'b' })).status).toBe(200);
    } finally {
      const pid = gateway.groups()[1]!.pid!;
      await gateway.drain({ timeoutMs: 1000 });
      h.closeAllConnections();
      h.close();
      expect(gateway.groups()[1]!.lastExit).toBe('signal SIGKILL');
      expect(alive(pid)).toBe(false);
    }
  });

  it('leaves no orphan: group processes exit when the front is killed', async () => {
    const groups = twoGroups();
    const child = spawn(process.execPath, ['--import', 'tsx', FRONT, JSON.stringify({ groups })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (c) => {
        text += c;
        if (text.includes('\n')) resolve(text.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`the front exited (${code}) before starting`)));
    });
    const { pids } = JSON.parse(line) as { pids: number[] };
    expect(pids.length).toBe(2);
    expect(pids.every(alive)).toBe(true);
    child.kill('SIGKILL');
    await until('the group processes to exit', () => !pids.some(alive));
  });
});

/**
 * One group serving repeat_int32, which ignores cancellation (as Triton's
 * own repeat backend does), on a server whose stop waits 60 s for such a
 * model: what a group does must not wait for it.
 */
function stubbornGroup(): IsolatedGatewayOptions['groups'] {
  return {
    a: {
      server: {
        modelRepository: repository(['repeat_int32']),
        library: LIBRARY_PATH,
        ...(BACKEND_DIR === undefined ? {} : { backendDirectory: BACKEND_DIR }),
        exitTimeoutSeconds: 60,
      },
    },
  };
}

/** A generate_stream of repeat_int32: one response at once, then one every `gapMs`. */
async function repeatStream(url: string, count: number, gapMs: number) {
  const res = await request(`${url}/v2/models/repeat_int32/generate_stream`, {
    method: 'POST',
    body: JSON.stringify({
      IN: Array.from({ length: count }, (_, i) => i + 1),
      DELAY: Array.from({ length: count }, (_, i) => (i === 0 ? 10 : gapMs)),
      WAIT: 0,
    }),
    dispatcher,
  });
  expect(res.statusCode).toBe(200);
  let text = '';
  let ended = false;
  const events = () => text.split('\n\n').filter((e) => e.startsWith('data:'));
  // Resolves once the answer ended, whole or cut (then with the error).
  const done = (async () => {
    try {
      for await (const chunk of res.body) text += chunk;
    } catch (err) {
      return err as Error;
    } finally {
      ended = true;
    }
    return undefined;
  })();
  await until('the first event', () => events().length >= 1, 10_000);
  return { events, done, ended: () => ended };
}

describe('isolated groups and a model that ignores cancellation', () => {
  it('counts a stream at the front in flight, and a drain waits for it to finish', async () => {
    const gateway = createIsolatedGateway({ groups: stubbornGroup() });
    await gateway.start();
    const h = http.createServer(gateway.handler);
    await new Promise<void>((resolve) => h.listen(0, '127.0.0.1', resolve));
    try {
      const stream = await repeatStream(`http://127.0.0.1:${(h.address() as AddressInfo).port}`, 3, 300);
      // Before: the front's ledger counted nothing (0 in flight), so a drain stopped the groups at once.
      expect(gateway.inFlight).toBe(1);
      expect(await gateway.drain({ timeoutMs: 60_000 })).toBe(true);
      expect(await stream.done).toBeUndefined();
      expect(stream.events().map((e) => JSON.parse(e.slice(5)).OUT)).toEqual([1, 2, 3]);
    } finally {
      h.closeAllConnections();
      h.close();
    }
  });

  it('ends a stream past the drain deadline at once, and each process exits within its stop deadline', async () => {
    // A generous SIGKILL deadline: what ends the processes must be their own.
    const gateway = createIsolatedGateway({ groups: stubbornGroup(), stopTimeoutMs: 60_000 });
    await gateway.start();
    const pid = gateway.groups()[0]!.pid!;
    const h = http.createServer(gateway.handler);
    await new Promise<void>((resolve) => h.listen(0, '127.0.0.1', resolve));
    try {
      const stream = await repeatStream(`http://127.0.0.1:${(h.address() as AddressInfo).port}`, 5, 20_000);
      const drained = gateway.drain({ timeoutMs: 300 });
      // Before: the group drained another 5 s of its own once told to stop.
      await until('the stream to end (drain deadline 300 ms)', stream.ended, 2500);
      expect(JSON.parse(stream.events().at(-1)!.slice(5))).toEqual({ error: 'the server is shutting down' });
      // Before: Triton's stop waited the 60 s of exitTimeoutSeconds for the model, and the exit again.
      let resolved = false;
      void drained.then(() => {
        resolved = true;
      });
      await until('the drain to resolve (the process stops within 5 s)', () => resolved, 15_000);
      expect(await drained).toBe(false);
      expect(alive(pid)).toBe(false);
    } finally {
      h.closeAllConnections();
      h.close();
    }
  });

  it('leaves no orphan while a stream runs: the group exits within 5 s of the front killed', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', FRONT, JSON.stringify({ groups: stubbornGroup() })],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const line = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (c) => {
        text += c;
        if (text.includes('\n')) resolve(text.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`the front exited (${code}) before starting`)));
    });
    const { pids, port } = JSON.parse(line) as { pids: number[]; port: number };
    const stream = await repeatStream(`http://127.0.0.1:${port}`, 5, 20_000);
    child.kill('SIGKILL');
    // Before: ~61 s (the worker's exit waited for Triton's stop, 60 s for this model).
    await until('the group process to exit', () => !pids.some(alive), 15_000);
    // The front's connection went with it: the client's stream was cut.
    expect(await stream.done).toBeInstanceOf(Error);
  });
});

describe('triton-node serve with an "isolation" config', () => {
  it('serves the groups over HTTP and gRPC behind the guard, and SIGTERM stops them all and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'isolation-serve-'));
    repositories.push(dir);
    const config = join(dir, 'config.json');
    const audit = join(dir, 'audit.log');
    const guard = {
      apiKeys: [
        { sha256: hashApiKey('alice-key'), tenant: 'alice' },
        { sha256: hashApiKey('bob-key'), tenant: 'bob' },
      ],
      tenants: { alice: { models: ['*'] }, bob: { models: ['*'] } },
      audit: { file: audit },
    };
    writeFileSync(
      config,
      JSON.stringify({
        isolation: { groups: twoGroups() },
        gateway: { guard },
        httpPort: 0,
        grpcPort: 0,
        host: '127.0.0.1',
      }),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--config', config], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines: Array<Record<string, unknown>> = [];
    const serving = await new Promise<Record<string, unknown>>((resolve, reject) => {
      let buffered = '';
      child.stdout!.on('data', (d: Buffer) => {
        buffered += d.toString();
        const parts = buffered.split('\n');
        buffered = parts.pop()!;
        for (const p of parts) {
          const line = JSON.parse(p) as Record<string, unknown>;
          lines.push(line);
          if (line.msg === 'serving') resolve(line);
        }
      });
      void exit.then((code) => reject(new Error(`serve exited (${code}) before serving`)));
    });
    const pids = (serving.groups as Array<{ pid: number }>).map((g) => g.pid);
    expect(pids.length).toBe(2);
    const url = `http://127.0.0.1:${serving.httpPort}`;
    // No key: refused at the front. Bob's key: his group's model. Alice's
    // group does not have it: to her it is unknown.
    expect((await post(`${url}/v2/models/identity_int32/infer`, int32Request)).status).toBe(401);
    const bob = { authorization: 'Bearer bob-key' };
    expect((await post(`${url}/v2/models/identity_int32/infer`, int32Request, bob)).status).toBe(200);
    const alice = { 'x-api-key': 'alice-key' };
    expect((await post(`${url}/v2/models/identity_int32/infer`, int32Request, alice)).status).toBe(404);
    const client = grpcClient(`127.0.0.1:${serving.grpcPort}`);
    const metadata = new grpc.Metadata();
    metadata.set('x-api-key', 'alice-key');
    const ready = await new Promise<Msg>((resolve, reject) =>
      client.ModelReady!({ name: 'identity_fp32' }, metadata, (err, r) => (err ? reject(err) : resolve(r))),
    );
    const refused = await new Promise<grpc.ServiceError>((resolve, reject) =>
      client.ModelReady!({ name: 'identity_fp32' }, new grpc.Metadata(), (err) =>
        err ? resolve(err) : reject(new Error('answered without credentials')),
      ),
    );
    client.close();
    expect(ready.ready).toBe(true);
    expect(refused.code).toBe(grpc.status.UNAUTHENTICATED);
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(pids.some(alive)).toBe(false);
    expect(lines.filter((l) => l.msg === 'group stopped').length).toBe(2);
    // One audit line per request, written out by the shutdown.
    const records = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tenant: string | null; status: number; protocol: string });
    expect(records.map((r) => [r.protocol, r.tenant, r.status])).toEqual([
      ['http', null, 401],
      ['http', 'bob', 200],
      ['http', 'alice', 404],
      ['grpc', 'alice', 200],
      ['grpc', null, 401],
    ]);
  });
});
