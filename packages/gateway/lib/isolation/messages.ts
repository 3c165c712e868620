/**
 * The contract between the front's supervisor (group.ts) and a group's
 * server process (worker.ts): the messages on the IPC channel, and the
 * header of the front's own requests. The worker is an entry point of its
 * own that reaches the gateway by its package name; this file is all it
 * shares with the front's code.
 */
import type { ServerOptions } from 'triton-node';

/**
 * The header that carries a process's control token (`WorkerStart.controlToken`)
 * on the front's own shared memory register request; the front never forwards
 * a client's.
 */
export const CONTROL_HEADER = 'x-triton-node-isolation-control';

/** The front's first message: what to serve and where. */
export interface WorkerStart {
  type: 'start';
  group: string;
  socketPath: string;
  server: Partial<ServerOptions>;
  maxBodyBytes: number;
  /** The front's secret for the shared memory control routes (register, unregister) of this process. */
  controlToken: string;
}

/**
 * The front's word to stop: its drain is over (its requests finished, or its
 * deadline passed), so the process cancels what still runs at once, stops
 * its server and exits.
 */
export interface WorkerStop {
  type: 'stop';
}

/** What the front tells the worker. */
export type FrontMessage = WorkerStart | WorkerStop;

/** What the worker tells the front (`grpc`: whether it serves gRPC on `<socketPath>.grpc`). */
export type WorkerMessage =
  | { type: 'ready'; models: string[]; grpc: boolean }
  | { type: 'failed'; error: string };
