/**
 * Forwarding one HTTP request from the front to a group's process over its
 * Unix socket. Inference bodies are read whole at the front: their binary
 * input tensors go into a slot of the group's shared memory and the process
 * gets only the JSON header naming the slot; everything else is streamed
 * through as it is (responses too, so SSE streams flow).
 *
 * When the process dies under a request, the request is answered 503 naming
 * the exit (`group 'a' process exited (signal SIGKILL); restarting`); a
 * response already under way is cut, as a stream from a dead server is.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { GatewayError, badRequest } from '../errors.js';
import type { BodyCharge } from '../exchange.js';
import { readBody } from '../http/body.js';
import { inferenceHeaderLength, parseJsonHeader } from '../kserve/codec.js';
import type { GroupProcess, Lease } from './group.js';
import { CONTROL_HEADER } from './messages.js';
import type { Slot } from './shm-pool.js';

/** Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** How long to wait for a process's exit after its socket failed, to name the exit. */
const EXIT_GRACE_MS = 2000;

/** A request body as the process will get it, and the shared memory slot it holds. */
interface Outgoing {
  body: Buffer | undefined;
  headerLength: number | undefined;
  slot: Slot | undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The tensors of a request (inputs, outputs), each with its parameters object. */
function tensorParameters(json: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const list of [json.inputs, json.outputs]) {
    if (!Array.isArray(list)) continue;
    for (const t of list) if (isObject(t) && isObject(t.parameters)) out.push(t.parameters);
  }
  return out;
}

/**
 * Moves the binary inputs of `body` into a slot of the group's shared memory
 * and rewrites the header to name it. Unchanged (undefined) when the request
 * has no binary inputs, does not add up (the process answers the error), is
 * larger than a slot, or no slot is free.
 */
function intoSharedMemory(lease: Lease, body: Buffer, headerLength: number, json: Record<string, unknown>) {
  const pool = lease.pool;
  const binary = body.length - headerLength;
  if (pool === undefined || binary === 0 || !Array.isArray(json.inputs)) return undefined;
  let total = 0;
  for (const input of json.inputs) {
    const size =
      isObject(input) && isObject(input.parameters) ? input.parameters.binary_data_size : undefined;
    if (size === undefined) continue;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return undefined;
    total += size;
  }
  if (total !== binary) return undefined;
  const slot = pool.acquire(binary);
  if (slot === undefined) return undefined;
  pool.write(slot, body.subarray(headerLength));
  let offset = slot.offset;
  for (const input of json.inputs as Record<string, unknown>[]) {
    const params = input.parameters as Record<string, unknown> | undefined;
    if (params?.binary_data_size === undefined) continue;
    const { binary_data_size: size, ...rest } = params as Record<string, unknown> & {
      binary_data_size: number;
    };
    input.parameters = {
      ...rest,
      shared_memory_region: pool.region,
      shared_memory_offset: offset,
      shared_memory_byte_size: size,
    };
    offset += size;
  }
  return { body: Buffer.from(JSON.stringify(json)), slot };
}

/** Reads an inference body and prepares it for the process (shared memory when it can). */
async function inferBody(
  group: GroupProcess,
  lease: Lease,
  req: IncomingMessage,
  maxBodyBytes: number,
  charge: BodyCharge | undefined,
): Promise<Outgoing> {
  // Parsed as the group's gateway parses it, and a malformed one answered
  // here: the front must read the JSON header exactly as the process will,
  // or it could not vouch for what the header names.
  const headerLength = inferenceHeaderLength(req);
  const body = await readBody(req, maxBodyBytes, charge);
  if (headerLength !== undefined && headerLength > body.length) {
    throw badRequest(
      `Inference-Header-Content-Length ${headerLength} is larger than the request body (${body.length} bytes)`,
    );
  }
  // A raw binary request has no header, so names no region: passed on as it is.
  if (headerLength === 0) {
    group.counters.socketRequests++;
    return { body, headerLength, slot: undefined };
  }
  // Every request the process gets had its JSON header read here, so no
  // client-named region reaches it, whatever the headers say.
  const json = parseJsonHeader(body.toString('utf8', 0, headerLength ?? body.length));
  for (const params of tensorParameters(json)) {
    if (params.shared_memory_region !== undefined) {
      throw new GatewayError(
        501,
        'shared memory regions of clients are not served by an isolating front (send the tensors in the body)',
        'UNSUPPORTED',
      );
    }
  }
  const moved = headerLength === undefined ? undefined : intoSharedMemory(lease, body, headerLength, json);
  if (moved !== undefined) {
    group.counters.sharedMemoryRequests++;
    return { body: moved.body, headerLength: undefined, slot: moved.slot };
  }
  group.counters.socketRequests++;
  return { body, headerLength, slot: undefined };
}

function forwardedHeaders(req: IncomingMessage, out: Outgoing, lease: Lease): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (!HOP_BY_HOP.has(name) && name !== 'inference-header-content-length' && name !== CONTROL_HEADER)
      headers[name] = value;
  }
  if (out.headerLength !== undefined) headers['inference-header-content-length'] = String(out.headerLength);
  // The process serves shared memory only to requests that carry this: the ones the front moved there.
  if (out.slot !== undefined) headers[CONTROL_HEADER] = lease.controlToken;
  if (out.body !== undefined) headers['content-length'] = String(out.body.length);
  else if (req.headers['content-length'] !== undefined)
    headers['content-length'] = req.headers['content-length'];
  else if (req.headers['transfer-encoding'] !== undefined) headers['transfer-encoding'] = 'chunked';
  return headers;
}

/** The error for a socket failure: a 503 naming the exit when the process died, else 502. */
async function upstreamFailure(group: GroupProcess, lease: Lease, err: Error): Promise<GatewayError> {
  let timer: NodeJS.Timeout | undefined;
  const how = await Promise.race([
    lease.exited,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), EXIT_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  if (how !== undefined) return group.unavailable(how);
  return new GatewayError(502, `group '${group.name}' did not answer: ${err.message}`, 'UNAVAILABLE');
}

/**
 * Sends `req` to the group's process and streams its answer into `res`.
 * Resolves once the answer is through; rejects (nothing sent yet) with the
 * GatewayError to answer. `charge` pays for a body the guard could not size
 * at admission (the request's Exchange's).
 */
export async function forward(
  group: GroupProcess,
  req: IncomingMessage,
  res: ServerResponse,
  options: { infer: boolean; maxBodyBytes: number; path: string; charge: BodyCharge | undefined },
): Promise<void> {
  const lease = group.lease();
  const out: Outgoing = options.infer
    ? await inferBody(group, lease, req, options.maxBodyBytes, options.charge)
    : { body: undefined, headerLength: undefined, slot: undefined };
  try {
    await relay(group, lease, req, res, out, options.path, options.charge);
  } finally {
    if (out.slot !== undefined) lease.pool?.release(out.slot);
  }
}

function relay(
  group: GroupProcess,
  lease: Lease,
  req: IncomingMessage,
  res: ServerResponse,
  out: Outgoing,
  path: string,
  pay: BodyCharge | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const upstream = http.request({
      socketPath: lease.socketPath,
      agent: lease.agent,
      method: req.method,
      path,
      headers: forwardedHeaders(req, out, lease),
    });
    const onClientGone = () => {
      if (!res.writableFinished) upstream.destroy();
    };
    res.once('close', onClientGone);
    upstream.on('response', (answer) => {
      if (res.destroyed) {
        answer.destroy();
        resolve();
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (!HOP_BY_HOP.has(name) || name === 'content-length') headers[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
      answer.on('end', () => resolve());
      answer.on('aborted', () => res.destroy());
      res.once('close', () => resolve());
    });
    upstream.on('error', (err) => {
      res.off('close', onClientGone);
      if (res.headersSent) {
        res.destroy();
        resolve();
        return;
      }
      if (res.destroyed) return resolve();
      upstreamFailure(group, lease, err).then(reject);
    });
    if (out.body !== undefined) {
      group.counters.socketBytes += out.body.length;
      upstream.end(out.body);
    } else {
      // A chunked body passes on as it comes: its bytes are charged once it ended.
      let bytes = 0;
      req.on('data', (c: Buffer) => {
        bytes += c.length;
        group.counters.socketBytes += c.length;
      });
      req.on('end', () => void pay?.(bytes, true));
      req.pipe(upstream);
    }
  });
}
