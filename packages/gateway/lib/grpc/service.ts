/**
 * The KServe v2 protocol over gRPC: `inference.GRPCInferenceService` from
 * proto/kserve_v2.proto, served with `@grpc/grpc-js`.
 *
 * `@grpc/grpc-js` and `@grpc/proto-loader` are optional peer dependencies:
 * loaded on first use, with an error naming the install command when they
 * are missing, so the library itself does not carry them.
 *
 * This file loads the service definition and puts the RPCs together: the
 * messages are codec.ts's, a call's exchange call.ts's, the unary RPCs
 * rpcs.ts', ModelStreamInfer stream.ts's.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayContext } from '../context.js';
import type { SharedMemoryRegistry } from '../kserve/shared-memory.js';
import { importGatewayPeers } from '../peers.js';
import type { DuplexCall } from './call.js';
import { unaryRpcs } from './rpcs.js';
import { streamInfer } from './stream.js';

/** The part of a `@grpc/grpc-js` Server the gateway uses. */
export interface GrpcServerLike {
  addService(service: unknown, implementation: Record<string, unknown>): void;
}

/** Where proto/kserve_v2.proto is: beside dist/ in the package, two levels up from lib/grpc/. */
function protoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, '..', 'proto', 'kserve_v2.proto'),
    join(here, '..', '..', 'proto', 'kserve_v2.proto'),
  ];
  const found = candidates.find((p) => existsSync(p));
  if (found === undefined) throw new Error(`kserve_v2.proto not found; looked at ${candidates.join(', ')}`);
  return found;
}

interface ProtoLoader {
  loadSync(file: string, options: object): object;
}
interface GrpcModule {
  loadPackageDefinition(def: object): Record<string, Record<string, { service: unknown }>>;
}

/** The service definition of GRPCInferenceService, loaded once. */
let definition: Promise<unknown> | undefined;
export function serviceDefinition(): Promise<unknown> {
  definition ??= (async () => {
    const peers = await importGatewayPeers(['@grpc/grpc-js', '@grpc/proto-loader'], 'the gRPC gateway');
    const [grpc, loader] = peers as [GrpcModule, ProtoLoader];
    const def = loader.loadSync(protoPath(), {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    return grpc.loadPackageDefinition(def).inference!.GRPCInferenceService!.service;
  })();
  definition.catch(() => {
    definition = undefined;
  });
  return definition;
}

/** The service's implementation over the gateway's context. */
export function grpcImplementation(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
): Record<string, unknown> {
  return {
    ...unaryRpcs(ctx, shm),
    ModelStreamInfer: (call: DuplexCall) => streamInfer(ctx, shm, call),
  };
}

/** Adds GRPCInferenceService to a `@grpc/grpc-js` Server. */
export async function addGrpcService(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
  grpcServer: GrpcServerLike,
): Promise<void> {
  const service = await serviceDefinition();
  grpcServer.addService(service, grpcImplementation(ctx, shm));
}
