/**
 * Graceful shutdown of a serving process: stop accepting connections, turn
 * readiness false, let the requests in flight finish (up to a deadline, then
 * cancel what still streams), stop Triton. Every request that was accepted
 * gets a response; the caller exits 0 afterwards.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server } from 'triton-node';
import type { GatewayLogger } from './context.js';
import type { Gateway } from './index.js';

/** The part of a `@grpc/grpc-js` Server a shutdown uses. */
export interface GrpcShutdownLike {
  tryShutdown(callback: (err?: Error) => void): void;
  forceShutdown(): void;
}

export interface ShutdownTargets {
  gateway: Gateway;
  server: Server;
  http?: HttpServer;
  grpc?: GrpcShutdownLike;
  logger: GatewayLogger;
  /** How long in-flight requests may take before they are cancelled. */
  timeoutMs: number;
}

/** Runs the shutdown; resolves once Triton has stopped. */
export async function shutdown(targets: ShutdownTargets, reason: string): Promise<void> {
  const { gateway, server, http, grpc, logger, timeoutMs } = targets;
  logger.info?.({ reason, inFlight: gateway.inFlight, timeoutMs }, 'shutting down: draining');
  // No new connections; idle keep-alive connections go now, busy ones after
  // their response (the gateway answers with Connection: close meanwhile).
  http?.close();
  http?.closeIdleConnections();
  const grpcDone = new Promise<void>((resolve) => {
    if (grpc === undefined) return resolve();
    grpc.tryShutdown(() => resolve());
  });
  const finished = await gateway.drain({ timeoutMs });
  if (!finished) {
    logger.warn?.({ inFlight: gateway.inFlight }, 'shutdown deadline passed: open streams were cancelled');
    grpc?.forceShutdown();
  }
  http?.closeIdleConnections();
  await Promise.race([grpcDone, new Promise((r) => setTimeout(r, 1000).unref())]);
  grpc?.forceShutdown();
  http?.closeAllConnections();
  gateway.close();
  await server.stop();
  logger.info?.({ finished }, 'stopped');
}
