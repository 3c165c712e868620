/**
 * The entry of a group's server process (forked by the front's supervisor):
 * it creates the group's own Server (its own Triton, models and GPUs) and a
 * KServe gateway over it, listening on a Unix domain socket only the front
 * can reach. It tells the front over the IPC channel when it is ready or why
 * it could not start, stops cleanly on SIGTERM, and exits when the IPC
 * channel closes (the front is gone): no orphan server processes.
 * @internal
 */
import { rmdirSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import { dirname } from 'node:path';
import type { ServerOptions } from '../../options.js';
import { Server } from '../../server.js';
import { type Gateway, createGateway } from '../index.js';

/** The front's first message: what to serve and where. */
export interface WorkerStart {
  type: 'start';
  group: string;
  socketPath: string;
  server: Partial<ServerOptions>;
  maxBodyBytes: number;
}

/** What the worker tells the front. */
export type WorkerMessage = { type: 'ready'; models: string[] } | { type: 'failed'; error: string };

/** How long a stop may take once the front is gone (the process exits regardless). */
const ORPHAN_DEADLINE_MS = 5000;

let server: Server | undefined;
let gateway: Gateway | undefined;
let listener: http.Server | undefined;
let stopping = false;
let socketPath: string | undefined;

function send(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}

async function start(message: WorkerStart): Promise<void> {
  // As `triton-node serve`: every model of the repository loads at startup unless told otherwise.
  server = await Server.create({ modelControlMode: 'none', ...message.server } as ServerOptions);
  if (stopping) return;
  gateway = createGateway(server, { maxBodyBytes: message.maxBodyBytes });
  socketPath = message.socketPath;
  listener = http.createServer({ keepAliveTimeout: 65_000 }, gateway.handler);
  try {
    unlinkSync(message.socketPath);
  } catch {
    // No socket left over from a previous process: the usual case.
  }
  await new Promise<void>((resolve, reject) => {
    listener!.once('error', reject);
    listener!.listen(message.socketPath, () => resolve());
  });
  const index = await server.modelIndex({ readyOnly: true });
  send({ type: 'ready', models: index.map((m) => m.name) });
}

/** Drains the gateway, stops the server, exits: on SIGTERM, or when the front is gone. */
async function stop(code: number, deadlineMs: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(code), deadlineMs + 1000);
  listener?.close();
  listener?.closeIdleConnections();
  await gateway?.drain({ timeoutMs: deadlineMs });
  listener?.closeAllConnections();
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
    rmdirSync(dirname(socketPath));
  } catch {
    // Gone already, or other groups' sockets are still there.
  }
}

process.on('SIGTERM', () => void stop(0, ORPHAN_DEADLINE_MS));
process.on('disconnect', () => void stop(0, ORPHAN_DEADLINE_MS));
process.once('message', (message: WorkerStart) => {
  start(message).catch(async (err: Error) => {
    stopping = true;
    listener?.close();
    await server?.stop().catch(() => undefined);
    // Exit once the message is out.
    if (process.connected) process.send?.({ type: 'failed', error: err.message }, () => process.exit(1));
    else process.exit(1);
  });
});
