/**
 * The gateway's optional peer dependencies, declared here, by what needs
 * them: each is imported when that feature is first used, from wherever the
 * application installed it, so that `import 'triton-node'` (and a gateway
 * without the feature) never loads it. package.json lists them (optional) as
 * the package's peerDependencies, npm's only place for them; a test keeps
 * that list equal to the ones the entry points declare (docs/gateway.md,
 * "Package layout").
 */
import { importPeers } from 'triton-node/internal';

export const GATEWAY_PEERS = {
  '@grpc/grpc-js': 'gRPC: gateway.addToGrpcServer(), the isolating front and its group processes',
  '@grpc/proto-loader': "gRPC: reads the service's proto/kserve_v2.proto",
  jose: 'guard.jwt: verifying JWTs',
  ioredis: 'guard.limits.store: limits and revocations shared by replicas on Redis',
} as const;

export type GatewayPeer = keyof typeof GATEWAY_PEERS;

/** Imports the gateway's peers `names` (rejects naming the npm command when any is missing). */
export function importGatewayPeers(names: readonly GatewayPeer[], feature: string): Promise<unknown[]> {
  return importPeers(names, feature);
}
