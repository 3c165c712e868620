/**
 * The gateway's optional peer dependencies, declared here, by what needs
 * them: each is imported when that feature is first used, from wherever the
 * application installed it, so that `import 'triton-node'` (and a gateway
 * without the feature) never loads it. package.json lists them (optional) as
 * the package's peerDependencies, npm's only place for them; a test keeps
 * that list equal to the ones the entry points declare (docs/gateway.md,
 * "Package layout").
 */

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

/** Whether `err` says that the package `name` itself is not installed (not one of its own imports). */
function isMissing(err: unknown, name: string): boolean {
  const { code, message } = err as NodeJS.ErrnoException;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(`'${name}'`)
  );
}

function list(names: readonly string[]): string {
  const quoted = names.map((n) => `'${n}'`);
  return quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}

/**
 * Imports the optional peer dependencies `names`, in order, from wherever
 * the application installed them (triton-node carries none of them); when
 * any is missing, rejects with one error naming every missing one and the
 * npm command that installs them. `feature` says what needs them ("the gRPC
 * gateway"); `hint`, given the missing names, what else may be done.
 */
export async function importPeers(
  names: readonly string[],
  feature: string,
  hint: (missing: string[]) => string = () => '',
): Promise<unknown[]> {
  const missing: string[] = [];
  const modules: unknown[] = [];
  for (const name of names) {
    try {
      modules.push(await import(name));
    } catch (err) {
      if (!isMissing(err, name)) throw err;
      missing.push(name);
    }
  }
  if (missing.length > 0) {
    const what = missing.length === 1 ? 'an optional peer dependency' : 'optional peer dependencies';
    throw new Error(
      `${feature} needs ${list(missing)} (${what} of @triton-node/gateway), not installed here. ` +
        `Install: npm install ${missing.join(' ')}${hint(missing)}`,
    );
  }
  return modules;
}
