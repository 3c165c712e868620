/**
 * The entry of a group's server process (forked by the front's supervisor):
 * it creates the group's own Server (its own Triton, models and GPUs) and a
 * KServe gateway over it, listening on a Unix domain socket only the front
 * can reach. It tells the front over the IPC channel when it is ready or why
 * it could not start, stops cleanly on SIGTERM, and exits when the IPC
 * channel closes (the front is gone): no orphan server processes.
 *
 * An entry point of its own (dist/gateway-worker.js): it uses the gateway as
 * an application does, by the package's name, so that the process holds one
 * copy of the gateway and of the library (the package's, next to this file).
 * @internal
 */
import { timingSafeEqual } from 'node:crypto';
import { rmdirSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import { dirname } from 'node:path';
import { Server, type ServerOptions } from 'triton-node';
import { type Gateway, createGateway } from '../index.js';
import { importPeers } from '../peers.js';
import { CONTROL_HEADER, type FrontMessage, type WorkerMessage, type WorkerStart } from './messages.js';

interface GrpcModule {
  Server: new (
    options?: object,
  ) => {
    addService(service: unknown, impl: object): void;
    bindAsync(address: string, credentials: unknown, callback: (err: Error | null) => void): void;
    forceShutdown(): void;
  };
  ServerCredentials: { createInsecure(): unknown };
}

/**
 * How long a stop may take, from the front's word or from the loss of the
 * front, until the process is gone: past it the process kills itself, so
 * neither a model that ignores cancellation nor Triton's stop (which waits
 * up to `exitTimeoutSeconds` for such a model, in `stop()` and again at
 * exit) can keep it running (docs/isolation.md).
 */
const STOP_DEADLINE_MS = 5000;

/** How long cancelled streams get to write their last words before the connections are closed. */
const LAST_WORDS_MS = 1000;

let server: Server | undefined;
let gateway: Gateway | undefined;
let listener: http.Server | undefined;
let stopping = false;
let socketPath: string | undefined;
let grpcServer: InstanceType<GrpcModule['Server']> | undefined;

/** gRPC on a second socket when @grpc/grpc-js is installed (the front's gRPC service needs it). */
async function listenGrpc(path: string, maxBytes: number, token: Buffer): Promise<boolean> {
  let grpc: GrpcModule;
  try {
    [grpc] = (await importPeers(['@grpc/grpc-js', '@grpc/proto-loader'], 'gRPC')) as [GrpcModule];
  } catch {
    return false;
  }
  const server = new grpc.Server({
    'grpc.max_receive_message_length': maxBytes,
    'grpc.max_send_message_length': -1,
  });
  await addTrustedGrpcService(server, token);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${path}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  grpcServer = server;
  return true;
}

/** The path of a request as the gateway reads it ('/' when unreadable: the gateway answers 404). */
function pathOf(url: string): string {
  try {
    return new URL(url, 'http://gateway').pathname;
  } catch {
    return '/';
  }
}

/** A shared memory register or unregister route. */
function isControl(url: string): boolean {
  const path = pathOf(url);
  return path.includes('sharedmemory') && !path.endsWith('/status');
}

/** A shared memory status route (read only: the front's socket alone reaches it). */
function isStatus(url: string): boolean {
  const path = pathOf(url);
  return path.includes('sharedmemory') && path.endsWith('/status');
}

type GrpcHandler = (call: { metadata?: { get(key: string): unknown[] } }, callback?: unknown) => void;

/**
 * The gateway's gRPC service, twice: with shared memory for calls that carry
 * the front's token in their metadata, without it for any other.
 */
async function addTrustedGrpcService(
  target: { addService(service: unknown, impl: object): void },
  token: Buffer,
) {
  let service: unknown;
  const capture = (into: Record<string, GrpcHandler>) => ({
    addService(svc: unknown, impl: object) {
      service = svc;
      Object.assign(into, impl);
    },
  });
  const trusted: Record<string, GrpcHandler> = {};
  const untrusted: Record<string, GrpcHandler> = {};
  await gateway!.addToGrpcServer(capture(trusted));
  await gateway!._withoutSharedMemory.addToGrpcServer(capture(untrusted));
  const impl: Record<string, GrpcHandler> = {};
  for (const rpc of Object.keys(trusted)) {
    impl[rpc] = (call, callback) => {
      const given = call.metadata?.get(CONTROL_HEADER)[0];
      const fromFront = sameToken(typeof given === 'string' ? given : undefined, token);
      (fromFront ? trusted : untrusted)[rpc]!(call, callback);
    };
  }
  target.addService(service, impl);
}

function sameToken(given: string | string[] | undefined, token: Buffer): boolean {
  if (typeof given !== 'string') return false;
  const bytes = Buffer.from(given);
  return bytes.length === token.length && timingSafeEqual(bytes, token);
}

function send(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}

async function start(message: WorkerStart): Promise<void> {
  // As `triton-node serve`: every model of the repository loads at startup unless told otherwise.
  server = await Server.create({ modelControlMode: 'none', ...message.server } as ServerOptions);
  if (stopping) return;
  gateway = createGateway(server, { maxBodyBytes: message.maxBodyBytes });
  socketPath = message.socketPath;
  const token = Buffer.from(message.controlToken);
  // Shared memory is the front's alone: only a request that carries its token
  // (one it moved into its own region, or its registration) is served with
  // it; any other is served as by a gateway without shared memory, so a
  // region named by a client is refused here too, whatever the front let by.
  const trusted = gateway.handler;
  const untrusted = gateway._withoutSharedMemory.handler;
  listener = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const fromFront = sameToken(req.headers[CONTROL_HEADER], token);
    if (isControl(req.url ?? '/') && !fromFront) {
      res.writeHead(403, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'shared memory regions are registered by the isolating front only' }));
      return;
    }
    (fromFront || isStatus(req.url ?? '/') ? trusted : untrusted)(req, res);
  });
  // Sockets left over by a process that was killed: a new one cannot bind over them.
  for (const path of [message.socketPath, `${message.socketPath}.grpc`]) {
    try {
      unlinkSync(path);
    } catch {
      // None left over: the usual case.
    }
  }
  await new Promise<void>((resolve, reject) => {
    listener!.once('error', reject);
    listener!.listen(message.socketPath, () => resolve());
  });
  const grpc = await listenGrpc(`${message.socketPath}.grpc`, message.maxBodyBytes, token);
  const index = await server.modelIndex({ readyOnly: true });
  send({ type: 'ready', models: index.map((m) => m.name), grpc });
}

/**
 * Drains the gateway (for up to `drainMs`, then its open streams are
 * cancelled), stops the server, exits: when the front says so (its own drain
 * is over: `drainMs` 0), on SIGTERM, or when the front is gone. Whatever
 * hangs, the process is gone `STOP_DEADLINE_MS` after the stop began.
 */
async function stop(code: number, drainMs: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  // Not process.exit(): at exit the addon stops a server still running,
  // which waits for a model that ignores cancellation as stop() does.
  setTimeout(() => {
    removeSocket();
    process.kill(process.pid, 'SIGKILL');
  }, STOP_DEADLINE_MS);
  listener?.close();
  listener?.closeIdleConnections();
  const finished = (await gateway?.drain({ timeoutMs: drainMs })) ?? true;
  // The streams just cancelled end with their last event ("the server is shutting down").
  if (!finished) await gateway?.drain({ timeoutMs: LAST_WORDS_MS });
  listener?.closeAllConnections();
  grpcServer?.forceShutdown();
  gateway?.close();
  await server?.stop().catch(() => undefined);
  removeSocket();
  process.exit(code);
}

/** Removes the socket, and its directory once the last group's is gone (the front may be gone too). */
function removeSocket(): void {
  if (socketPath === undefined) return;
  try {
    unlinkSync(socketPath);
    unlinkSync(`${socketPath}.grpc`);
  } catch {
    // Gone already.
  }
  try {
    rmdirSync(dirname(socketPath));
  } catch {
    // Gone already, or other groups' sockets are still there.
  }
}

// SIGTERM from anyone but the front (which says 'stop'): a drain of its own.
process.on('SIGTERM', () => void stop(0, STOP_DEADLINE_MS - LAST_WORDS_MS * 2));
// The front is gone (its IPC channel closed, even by SIGKILL): so are the
// connections of its requests, which cancels them; nothing is left to wait for.
process.on('disconnect', () => void stop(0, 0));
let started = false;
process.on('message', (message: FrontMessage) => {
  if (message.type === 'stop') void stop(0, 0);
  else if (message.type === 'start' && !started && !stopping) {
    started = true;
    begin(message);
  }
});

function begin(message: WorkerStart): void {
  start(message).catch(async (err: Error) => {
    stopping = true;
    listener?.close();
    await server?.stop().catch(() => undefined);
    // Exit once the message is out.
    if (process.connected) process.send?.({ type: 'failed', error: err.message }, () => process.exit(1));
    else process.exit(1);
  });
}
