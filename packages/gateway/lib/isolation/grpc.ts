/**
 * The isolating front over gRPC: `inference.GRPCInferenceService`, each call
 * admitted by the guard and passed to its group's process, which serves the
 * same service on a Unix socket of its own. `raw_input_contents` of a
 * ModelInfer go through the group's shared memory as the HTTP bodies do.
 * Routing as over HTTP (tenant, `x-triton-group` metadata when enabled, model
 * name); ServerLive, ServerReady, RepositoryIndex and ModelStatistics without
 * a group answer for the whole front; the shared memory RPCs are
 * UNIMPLEMENTED. ModelStreamInfer goes to the group of its first message;
 * every message of it is checked and admitted alone, as on the gateway.
 * A message naming a shared memory region of its own is refused: the group's
 * process knows only the front's region, and a client must never reach it.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError, type Wording, errorMessage, grpcStatus, httpStatus } from '../errors.js';
import { guardRequest as guardRequestOf } from '../exchange.js';
import { grpcMessageBytes } from '../grpc/codec.js';
import { type GrpcServerLike, serviceDefinition } from '../grpc/service.js';
import type { Admission, GuardRequest } from '../guard/types.js';
import { asAnswered } from '../kserve/absent.js';
import { importGatewayPeers } from '../peers.js';
import { ROUTES, type RouteMatch, matchRpc } from '../routes.js';
import type { Front } from './front.js';
import type { GroupProcess, Lease } from './group.js';
import { CONTROL_HEADER } from './messages.js';
import { visibleOnly } from './server-wide.js';

type Msg = Record<string, unknown>;
type Callback = (err: { code: number; details: string } | null, value?: unknown) => void;
interface Call {
  request: Msg;
  metadata: { getMap(): Record<string, unknown> };
  getPeer?(): string;
}
interface GrpcClient {
  close(): void;
  [rpc: string]: unknown;
}
interface GrpcModule {
  makeGenericClientConstructor(
    service: unknown,
    name: string,
  ): new (
    address: string,
    credentials: unknown,
    options?: object,
  ) => GrpcClient;
  credentials: { createInsecure(): unknown };
  Metadata: new () => { set(key: string, value: string): void };
}

const UNAVAILABLE = 14;

/** HTTP status per gRPC code, for the audit line of a call. */
const STATUS_OF_CODE: Record<number, number> = { 0: 200, 1: 499, 3: 400, 5: 404, 12: 501, 14: 503, 8: 429 };

function metadataHeaders(call: Pick<Call, 'metadata'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.metadata.getMap())) out[k.toLowerCase()] = String(v);
  return out;
}

/** What the guard is told of one call (or one message of a stream): its tensor bytes included. */
function guardRequest(
  call: { getPeer?(): string },
  headers: Record<string, string>,
  target: RouteMatch,
  msg: Msg,
): GuardRequest {
  const bytesIn = grpcMessageBytes(msg);
  return guardRequestOf('grpc', target, headers['x-request-id'] ?? randomUUID(), {
    headers,
    ...(bytesIn === 0 ? {} : { bytesIn }),
    ...(call.getPeer === undefined ? {} : { remoteAddress: call.getPeer() }),
  });
}

/** The guard's admission of a call (a model the tenant may not use refused as an absent one). */
async function admit(env: Env, request: GuardRequest): Promise<Admission | undefined> {
  try {
    return await env.front.options.guard?.admit(request);
  } catch (err) {
    throw asAnswered(err, request.route);
  }
}

/** Clients of each process, by its lease's agent (one per process), closed when it exits. */
const clients = new WeakMap<object, GrpcClient>();

function clientFor(grpc: GrpcModule, service: unknown, group: GroupProcess, lease: Lease): GrpcClient {
  let client = clients.get(lease.agent);
  if (client !== undefined) return client;
  if (lease.grpcAddress === undefined) {
    throw new GatewayError(501, `group '${group.name}' does not serve gRPC`, 'UNSUPPORTED');
  }
  const Client = grpc.makeGenericClientConstructor(service, 'GRPCInferenceService');
  client = new Client(lease.grpcAddress, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': -1,
    'grpc.max_send_message_length': -1,
  });
  clients.set(lease.agent, client);
  const c = client;
  void lease.exited.then(() => c.close());
  return client;
}

/** Moves `raw_input_contents` into a slot of the group's shared memory; the slot, or undefined. */
function rawIntoSharedMemory(group: GroupProcess, lease: Lease, request: Msg) {
  const raw = (request.raw_input_contents ?? []) as Buffer[];
  const inputs = (request.inputs ?? []) as Msg[];
  const total = raw.reduce((n, b) => n + b.length, 0);
  const slot = raw.length > 0 && raw.length === inputs.length ? lease.pool?.acquire(total) : undefined;
  if (slot === undefined) {
    group.counters.socketRequests++;
    return { request, slot };
  }
  let offset = slot.offset;
  const moved = inputs.map((input, i) => {
    lease.pool!.write({ index: slot.index, offset }, raw[i]!);
    const parameters = {
      ...((input.parameters ?? {}) as Msg),
      shared_memory_region: { string_param: lease.pool!.region },
      shared_memory_offset: { int64_param: String(offset) },
      shared_memory_byte_size: { int64_param: String(raw[i]!.length) },
    };
    offset += raw[i]!.length;
    return { ...input, parameters };
  });
  group.counters.sharedMemoryRequests++;
  return { request: { ...request, inputs: moved, raw_input_contents: [] }, slot };
}

/** Refuses a client's own shared memory regions in a ModelInfer (they could name the front's). */
function refuseClientRegions(request: Msg): void {
  for (const list of [request.inputs, request.outputs]) {
    for (const t of (list ?? []) as Msg[]) {
      if ((t.parameters as Msg | undefined)?.shared_memory_region !== undefined) {
        throw new GatewayError(
          501,
          'shared memory regions of clients are not served by an isolating front (send the tensors in the message)',
          'UNSUPPORTED',
        );
      }
    }
  }
}

interface Env {
  front: Front;
  grpc: GrpcModule;
  service: unknown;
}

/** Calls `rpc` on the group's process; its answer, or the error a dead process means. */
function callGroup(env: Env, group: GroupProcess, rpc: string, request: Msg): Promise<unknown> {
  const lease = group.lease();
  const client = clientFor(env.grpc, env.service, group, lease);
  if (rpc === 'ModelInfer') refuseClientRegions(request);
  const { request: sent, slot } =
    rpc === 'ModelInfer' ? rawIntoSharedMemory(group, lease, request) : { request, slot: undefined };
  // The process serves shared memory only to calls that carry the front's token: the ones moved there.
  const metadata = new env.grpc.Metadata();
  if (slot !== undefined) metadata.set(CONTROL_HEADER, lease.controlToken);
  return new Promise((resolve, reject) => {
    (
      client[rpc] as (
        m: Msg,
        md: unknown,
        cb: (e: (Error & { code: number }) | null, v: unknown) => void,
      ) => void
    )(sent, metadata, (err, value) => {
      if (slot !== undefined) lease.pool?.release(slot);
      if (err === null) return resolve(value);
      if (err.code !== UNAVAILABLE) return reject(err);
      // The process may have died under the call: name its exit if it did.
      let timer: NodeJS.Timeout | undefined;
      void Promise.race([
        lease.exited,
        new Promise<undefined>((r) => {
          timer = setTimeout(() => r(undefined), 2000);
        }),
      ]).then((how) => {
        clearTimeout(timer);
        reject(how === undefined ? err : group.unavailable(how));
      });
    });
  });
}

/** Answers of the calls that name no group: the whole front's. */
async function serverWide(env: Env, rpc: string, request: Msg): Promise<unknown> {
  const { front } = env;
  if (rpc === 'ServerLive') return { live: true };
  if (rpc === 'ServerReady') return { ready: !front.draining && front.groups.every((g) => g.ready) };
  const ready = front.groups.filter((g) => g.ready);
  if (rpc === 'RepositoryIndex' || rpc === 'ModelStatistics') {
    const answers = await Promise.all(
      ready.map((g) => callGroup(env, g, rpc, request).catch(() => undefined)),
    );
    const key = rpc === 'RepositoryIndex' ? 'models' : 'model_stats';
    return { [key]: answers.flatMap((a) => ((a as Msg | undefined)?.[key] as unknown[]) ?? []) };
  }
  const group = ready[0] ?? front.groups[0]!;
  return callGroup(env, group, rpc, request);
}

/** gRPC codes of the guard's refusals (the gateway's tables have no such Triton codes). */
/** The groups' gateways serve the repository RPCs: the front's own answers (a hidden model's) say so as theirs do. */
const GRPC_WORDS: Wording = { protocol: 'grpc', repositoryControl: true };

const CODE_OF_STATUS: Record<number, number> = { 401: 16, 403: 7, 429: 8, 431: 8 };

function codeOf(err: unknown): number {
  if (err instanceof GatewayError) return CODE_OF_STATUS[err.status] ?? grpcStatus(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : grpcStatus(err);
}

/** One unary RPC of the front: admit, choose the group, pass the call on, audit. */
function unary(env: Env, rpc: string) {
  return (call: Call, callback: Callback) => {
    const done = env.front.ledger.begin();
    let admission: Admission | undefined;
    const finish = (err: unknown, value?: unknown) => {
      done();
      const code = err === undefined ? 0 : codeOf(err);
      const status = err instanceof GatewayError ? httpStatus(err) : (STATUS_OF_CODE[code] ?? 500);
      admission?.done({ status, ...(err === undefined ? {} : { error: errorMessage(err, GRPC_WORDS) }) });
      if (err === undefined) callback(null, value);
      else
        callback({ code, details: (err as { details?: string }).details ?? errorMessage(err, GRPC_WORDS) });
    };
    (async () => {
      const headers = metadataHeaders(call);
      const target = matchRpc(rpc, call.request);
      admission = await admit(env, guardRequest(call, headers, target, call.request));
      if (env.front.draining && target.route.name !== ROUTES.live.name) {
        throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
      }
      if (target.route.name === ROUTES.systemStatus.name) {
        throw new GatewayError(501, `${rpc} is not served by an isolating front`, 'UNSUPPORTED');
      }
      const group = env.front.choose(headers, admission, target);
      const answer =
        group === undefined
          ? await serverWide(env, rpc, call.request)
          : await callGroup(env, group, rpc, call.request);
      // A group's process has no guard: what its tenants may not see is taken out here.
      return rpc === 'RepositoryIndex' || rpc === 'ModelStatistics' ? visibleOnly(answer, admission) : answer;
    })().then(
      (value) => finish(undefined, value),
      (err) => finish(err),
    );
  };
}

interface Duplex {
  metadata: Call['metadata'];
  getPeer?(): string;
  on(event: string, listener: (arg: never) => void): void;
  write(msg: unknown): boolean;
  end(): void;
  emit(event: 'error', err: { code: number; details: string }): boolean;
}
interface ClientDuplex {
  on(event: string, listener: (arg: never) => void): void;
  write(msg: unknown): boolean;
  end(): void;
  cancel(): void;
}

/** The group process's stream for a ModelStreamInfer call, chosen by its first message. */
async function openUpstream(env: Env, call: Duplex, first: Msg, admitted: (a: Admission) => void) {
  const headers = metadataHeaders(call);
  const target = matchRpc('ModelStreamInfer', first);
  const admission = await admit(env, guardRequest(call, headers, target, first));
  if (admission !== undefined) admitted(admission);
  if (env.front.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
  const group = env.front.choose(headers, admission, target);
  if (group === undefined)
    throw new GatewayError(400, 'ModelStreamInfer: the request names no model', 'INVALID_ARG');
  const lease = group.lease();
  const client = clientFor(env.grpc, env.service, group, lease);
  const upstream = (client.ModelStreamInfer as () => ClientDuplex)();
  return { upstream, group, lease };
}

/**
 * A message of a stream after its first is a request of its own, as on the
 * gateway: checked for regions, admitted (its model, its bytes) and kept to
 * the stream's group. Rejects with why it is refused (answered on the stream,
 * not passed on).
 */
async function admitFollowing(env: Env, call: Duplex, msg: Msg, streamGroup: GroupProcess | undefined) {
  refuseClientRegions(msg);
  const headers = metadataHeaders(call);
  const target = matchRpc('ModelStreamInfer', msg);
  const a = await admit(env, guardRequest(call, headers, target, msg));
  try {
    const group = env.front.choose(headers, a, target);
    if (group !== streamGroup) {
      throw new GatewayError(
        400,
        `ModelStreamInfer: every message of a stream goes to the group of its first ('${streamGroup?.name}')`,
        'INVALID_ARG',
      );
    }
  } catch (err) {
    a?.done({ status: httpStatus(err), error: errorMessage(err, GRPC_WORDS) });
    throw err;
  }
  a?.done({ status: 200 });
}

/**
 * ModelStreamInfer: the call goes to the group of its first message's model
 * (or tenant); each message and each response is passed through as it comes.
 * Tensors go through the socket (no shared memory on streams).
 */
function streamForward(env: Env, call: Duplex): void {
  const done = env.front.ledger.begin();
  let admission: Admission | undefined;
  let upstream: ClientDuplex | undefined;
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    done();
    const code = err === undefined ? 0 : codeOf(err);
    const status = err instanceof GatewayError ? httpStatus(err) : (STATUS_OF_CODE[code] ?? 500);
    admission?.done({ status, ...(err === undefined ? {} : { error: errorMessage(err, GRPC_WORDS) }) });
    if (err === undefined) call.end();
    else
      call.emit('error', {
        code,
        details: (err as { details?: string }).details ?? errorMessage(err, GRPC_WORDS),
      });
  };
  // The first message opens the upstream (after its admission); the others
  // follow it in order, once it is open.
  let opening: Promise<ClientDuplex | undefined> | undefined;
  let streamGroup: GroupProcess | undefined;
  const open = async (msg: Msg): Promise<ClientDuplex | undefined> => {
    try {
      refuseClientRegions(msg);
      const opened = await openUpstream(env, call, msg, (a) => {
        if (finished) a.done({ status: 499 });
        else admission = a;
      });
      if (finished) {
        opened.upstream.cancel();
        return undefined;
      }
      upstream = opened.upstream;
      streamGroup = opened.group;
      upstream.on('data', (r: unknown) => call.write(r));
      upstream.on('end', () => finish());
      upstream.on('error', (err: Error & { code: number }) => {
        if (err.code !== UNAVAILABLE) return finish(err);
        void Promise.race([opened.lease.exited, new Promise((r) => setTimeout(r, 2000).unref())]).then(
          (how) => finish(typeof how === 'string' ? opened.group.unavailable(how) : err),
        );
      });
      return upstream;
    } catch (err) {
      finish(err);
      return undefined;
    }
  };
  // Messages are handled one after another, in order.
  let queue: Promise<void> = Promise.resolve();
  call.on('data', (msg: Msg) => {
    if (finished) return;
    const first = opening === undefined;
    opening ??= open(msg);
    const opened = opening;
    queue = queue.then(async () => {
      const up = await opened;
      if (finished || up === undefined) return;
      if (!first) {
        try {
          await admitFollowing(env, call, msg, streamGroup);
        } catch (err) {
          if (!finished) call.write({ error_message: errorMessage(err, GRPC_WORDS) });
          return;
        }
      }
      if (!finished) up.write(msg);
    });
  });
  call.on('end', () => {
    if (opening === undefined) finish();
    else void queue.then(() => upstream?.end());
  });
  call.on('cancelled', () => {
    upstream?.cancel();
    finished = true;
    done();
  });
}

/** Adds the front's GRPCInferenceService to a `@grpc/grpc-js` Server. */
export async function addIsolatedGrpcService(front: Front, grpcServer: GrpcServerLike): Promise<void> {
  const service = await serviceDefinition();
  const [grpc] = (await importGatewayPeers(['@grpc/grpc-js'], 'the gRPC gateway')) as [GrpcModule];
  const env: Env = { front, grpc, service };
  const impl: Record<string, unknown> = {};
  for (const rpc of Object.keys(service as object)) {
    if (rpc === 'ModelStreamInfer') continue;
    impl[rpc] = unary(env, rpc);
  }
  impl.ModelStreamInfer = (call: Duplex) => streamForward(env, call);
  grpcServer.addService(service, impl);
}
