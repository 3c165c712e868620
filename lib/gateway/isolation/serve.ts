/**
 * `triton-node serve --config file` with an `"isolation"` section: the
 * isolating front on HTTP and gRPC (no Triton in this process), each group's server
 * in a supervised process of its own, and a graceful shutdown on SIGTERM and
 * SIGINT that stops the group processes too.
 * @internal
 */
import type { Server as HttpServer, RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
// By the package's name: in the CLI bundle the front is the gateway entry's own
// code, so its errors are the classes the guard throws (one copy of each).
import {
  type IsolatedGateway,
  type IsolatedGatewayOptions,
  createIsolatedGateway,
} from 'triton-node/gateway';
import type { GatewayLogger } from '../context.js';
import type { GrpcServerLike } from '../grpc.js';
import type { Guard } from '../guard/types.js';
import type { GrpcShutdownLike } from '../shutdown.js';

export interface IsolatedServeConfig {
  isolation: IsolatedGatewayOptions;
  host: string;
  httpPort: number;
  grpcPort: number | null;
  drainTimeoutMs: number;
}

type Listen = (handler: RequestListener, host: string, port: number) => Promise<HttpServer>;
/** Serves what `add` adds on the configured gRPC port. */
type ListenGrpc = (
  add: (server: GrpcServerLike) => Promise<void>,
) => Promise<{ server: GrpcShutdownLike; port: number }>;

/** Runs the isolating front until a signal; resolves with the exit code. */
export async function serveIsolated(
  config: IsolatedServeConfig,
  logger: GatewayLogger,
  listen: Listen,
  listenGrpc?: ListenGrpc,
  guard?: Guard,
): Promise<number> {
  let front: IsolatedGateway;
  try {
    front = createIsolatedGateway({
      ...config.isolation,
      logger: config.isolation.logger ?? logger,
      ...(guard === undefined ? {} : { guard }),
    });
    await front.start();
  } catch (err) {
    logger.error?.({ err: (err as Error).message }, 'the isolated groups did not start');
    return 1;
  }
  let http: HttpServer | undefined;
  let grpc: { server: GrpcShutdownLike; port: number } | undefined;
  try {
    http = await listen(front.handler, config.host, config.httpPort);
    grpc = await listenGrpc?.((s) => front.addToGrpcServer(s));
  } catch (err) {
    logger.error?.({ err: (err as Error).message }, 'could not listen');
    http?.close();
    await front.drain({ timeoutMs: 0 });
    return 1;
  }
  const groups = front.groups().map((g) => ({ name: g.name, pid: g.pid, models: g.models }));
  const httpPort = (http.address() as AddressInfo).port;
  logger.info?.({ httpPort, grpcPort: grpc?.port, host: config.host, groups }, 'serving');
  return untilSignal(front, http, grpc?.server, logger, config.drainTimeoutMs);
}

/** Drains on SIGTERM or SIGINT; resolves with the exit code. */
function untilSignal(
  front: IsolatedGateway,
  http: HttpServer,
  grpc: GrpcShutdownLike | undefined,
  logger: GatewayLogger,
  drainTimeoutMs: number,
): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info?.({ reason: signal, inFlight: front.inFlight }, 'shutting down: draining');
      http.close();
      http.closeIdleConnections();
      grpc?.tryShutdown(() => {});
      front.drain({ timeoutMs: drainTimeoutMs }).then(
        (finished) => {
          http.closeAllConnections();
          grpc?.forceShutdown();
          logger.info?.({ finished }, 'stopped');
          resolve(0);
        },
        (err) => {
          logger.error?.({ err: (err as Error).message }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
