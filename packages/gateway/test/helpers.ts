/**
 * Shared setup of the gateway tests: a gateway over the file's server,
 * listening on an ephemeral loopback port, and the binary tensor body format
 * of the KServe v2 protocol written and read with plain Buffers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Server } from 'triton-node';
import { type Dispatcher, Pool, request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { type Gateway, type GatewayOptions, createGateway } from '../lib/index.js';

export interface Listening {
  gateway: Gateway;
  http: http.Server;
  url: string;
}

/**
 * The options of a test's HTTP server in front of a gateway, as `triton-node
 * serve` has them: an idle connection is kept 65 s, so a client never sends on
 * one the server is closing. With Node's 5 s, a request sent after a busy pause
 * of the event loop met ECONNRESET (hostile-protocol's 3 MB body, 2 of 3 runs
 * on a busy machine).
 */
export const SERVE_HTTP_OPTIONS: http.ServerOptions = { keepAliveTimeout: 65_000, headersTimeout: 66_000 };

/** A gateway over `server()` on 127.0.0.1 for the file's tests. */
export function useGateway(server: () => Server, options: GatewayOptions = {}): () => Listening {
  let listening: Listening | undefined;
  beforeAll(async () => {
    const gateway = createGateway(server(), options);
    const h = http.createServer(SERVE_HTTP_OPTIONS, gateway.handler);
    await new Promise<void>((resolve) => h.listen(0, '127.0.0.1', resolve));
    const { port } = h.address() as AddressInfo;
    listening = { gateway, http: h, url: `http://127.0.0.1:${port}` };
  });
  afterAll(async () => {
    if (listening === undefined) return;
    listening.gateway.close();
    listening.http.closeAllConnections();
    await new Promise((resolve) => listening!.http.close(resolve));
  });
  return () => {
    if (listening === undefined) throw new Error('gateway not started');
    return listening;
  };
}

/** A binary request body: the JSON header, then each part, with the header's length. */
export function binaryBody(header: object, parts: Uint8Array[]): { body: Buffer; headerLength: number } {
  const json = Buffer.from(JSON.stringify(header));
  return { body: Buffer.concat([json, ...parts]), headerLength: json.length };
}

export interface BinaryOutput {
  name: string;
  datatype: string;
  shape: number[];
  data?: unknown[];
  parameters?: Record<string, unknown>;
  /** The binary bytes of an output sent as binary data. */
  bytes?: Buffer;
}

/** Splits a response body by its Inference-Header-Content-Length into the header and each output's bytes. */
export function parseBinaryResponse(
  body: Buffer,
  headerLength: number | undefined,
): { header: Record<string, unknown>; outputs: BinaryOutput[] } {
  const end = headerLength ?? body.length;
  const header = JSON.parse(body.toString('utf8', 0, end)) as { outputs: BinaryOutput[] };
  let pos = end;
  for (const o of header.outputs) {
    const size = o.parameters?.binary_data_size;
    if (typeof size === 'number') {
      o.bytes = body.subarray(pos, pos + size);
      pos += size;
    }
  }
  if (pos !== body.length) throw new Error(`response has ${body.length - pos} bytes after its outputs`);
  return { header, outputs: header.outputs };
}

/** The bytes of a TypedArray. */
export function bytesOf(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** The KServe gRPC client class from the repository's proto; `C` types the calls a test makes. */
export function kserveClient<C>(): new (
  address: string,
  credentials: grpc.ChannelCredentials,
) => grpc.Client & C {
  const def = protoLoader.loadSync(fileURLToPath(new URL('../proto/kserve_v2.proto', import.meta.url)), {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    inference: { GRPCInferenceService: new (a: string, c: grpc.ChannelCredentials) => grpc.Client & C };
  };
  return pkg.inference.GRPCInferenceService;
}

/** What an HTTP call to the gateway answered: the status, headers and body, and the body as JSON when it is JSON. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
  text: string;
  json: unknown;
}

/**
 * One HTTP request with undici: GET without a body, POST with one (`json`
 * is sent stringified), unless `method` says otherwise.
 */
export async function httpCall(
  base: string,
  path: string,
  options: { method?: string; json?: unknown; body?: Buffer | string; headers?: Record<string, string> } = {},
  // biome-ignore lint/suspicious/noExplicitAny: the parsed body's shape is the test's to check
): Promise<HttpAnswer & { json: any }> {
  const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;
  const res = await request(`${base}${path}`, {
    method: (options.method ?? (body === undefined ? 'GET' : 'POST')) as Dispatcher.HttpMethod,
    body,
    headers: options.headers,
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const text = bytes.toString('utf8');
  const type = String(res.headers['content-type'] ?? '');
  return {
    status: res.statusCode,
    headers: res.headers,
    bytes,
    text,
    json: type.startsWith('application/json') && text !== '' ? JSON.parse(text) : undefined,
  };
}

/** What `offer()` saw: answers by status, failed requests, and how long it ran. */
export interface Offered {
  sent: number;
  byStatus: Map<number, number>;
  errors: string[];
  seconds: number;
}

/**
 * Offers load for a time rather than an amount: `connections` undici
 * connections each send their next POST as soon as the last is answered,
 * until `seconds` have passed. Every request started is awaited, so none is
 * cut off mid-flight and `sent` is exact however fast the machine is (a fixed
 * amount ends sooner on a faster one, and a rate measured over it gets less
 * precise).
 */
export async function offer(
  url: string,
  call: { path: string; body: string; headers: Record<string, string> },
  connections: number,
  seconds: number,
): Promise<Offered> {
  const { origin } = new URL(url);
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const byStatus = new Map<number, number>();
  const errors: string[] = [];
  let sent = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const connection = async () => {
    while (performance.now() < deadline) {
      sent++;
      try {
        const res = await pool.request({ method: 'POST', ...call });
        await res.body.dump();
        byStatus.set(res.statusCode, (byStatus.get(res.statusCode) ?? 0) + 1);
      } catch (err) {
        errors.push(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, connection));
  await pool.close();
  return { sent, byStatus, errors, seconds: (performance.now() - started) / 1000 };
}

/**
 * When the guard began to admit the request of an audit line, in ms since
 * the epoch: the line is written when the request ends (`time`), `latencyMs`
 * after its admission began. A limiter's rate is measured on these instants:
 * the times requests end carry the inference's latency, which a busy machine
 * stretches by more than the 5% the rate is held to.
 */
export function admittedAt(line: { time: string; latencyMs: number }): number {
  return Date.parse(line.time) - line.latencyMs;
}

/**
 * The rate a token bucket of `rate` per second and `burst` tokens admitted at,
 * measured only while it was short of tokens, from the audit lines of one
 * bucket: between two refusals (429) less than burst / rate apart the bucket
 * was empty at both ends and could not fill up in between, so the admissions
 * between them are exactly its refill, within a token at the ends of each run
 * of such gaps. A busy machine that cannot offer more than the rate for a
 * while (its clients start late, a pause) leaves gaps too long to count,
 * instead of lowering the rate measured. `span` is the seconds counted.
 */
export function saturatedRate(
  lines: Array<{ status: number; time: string; latencyMs: number }>,
  rate: number,
  burst: number,
): { rate: number; span: number; admitted: number } {
  const refused = lines
    .filter((l) => l.status === 429)
    .map(admittedAt)
    .sort((a, b) => a - b);
  const accepted = lines
    .filter((l) => l.status === 200)
    .map(admittedAt)
    .sort((a, b) => a - b);
  const longest = (burst / rate) * 1000;
  let spanMs = 0;
  let admitted = 0;
  let next = 0;
  for (let i = 1; i < refused.length; i++) {
    const from = refused[i - 1]!;
    const to = refused[i]!;
    let inGap = 0;
    while (next < accepted.length && accepted[next]! <= to) {
      if (accepted[next]! > from) inGap++;
      next++;
    }
    if (to - from >= longest) continue;
    spanMs += to - from;
    admitted += inGap;
  }
  return { rate: spanMs === 0 ? 0 : admitted / (spanMs / 1000), span: spanMs / 1000, admitted };
}
