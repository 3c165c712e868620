/**
 * `triton-node revoke (--jti <id> | --key-id <id> | --key-sha256 <hex>)
 * (--config <file> | --redis-url <url>) [--expires <time>]`: puts a
 * credential on the shared deny list that every replica of the gateway reads
 * (`guard.limits.store`); each refuses it within its `revocationPollMs`.
 * Resolves with the exit code: 0 done, 1 Redis did not take it, 2 usage.
 * @internal
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
// The gateway by the package's name, as an application uses it.
import { GatewayGuard, type GuardOptions, type GuardRevocation } from '../index.js';

export const REVOKE_USAGE = `usage: triton-node revoke (--jti <id> | --key-id <id> | --key-sha256 <hex>) (--config <file> | --redis-url <url>)
  --jti <id>             a JWT's id (its "jti" claim)
  --key-id <id>          an API key's "id" in guard.apiKeys
  --key-sha256 <hex>     an API key without an "id", by its hash
  --config <file>        the serve config whose gateway.guard.limits.store names Redis
  --redis-url <url>      or Redis itself (redis://…, rediss://…)
  --key-prefix <text>    with --redis-url: the store's keyPrefix (default triton-node:)
  --expires <time>       when the entry may be forgotten (a token's exp): ISO 8601 or seconds since the epoch
Every gateway replica sharing that store refuses the credential within its revocationPollMs (default 250 ms).
`;

class UsageError extends Error {}

/** The guard options that name the store: from --redis-url, or the --config file's `gateway.guard`. */
function storeFrom(values: Record<string, string | boolean | undefined>): GuardOptions {
  if ((values.config === undefined) === (values['redis-url'] === undefined))
    throw new UsageError('give exactly one of --config and --redis-url');
  if (typeof values['redis-url'] === 'string') {
    const store = {
      redis: { url: values['redis-url'] },
      ...(typeof values['key-prefix'] === 'string' ? { keyPrefix: values['key-prefix'] } : {}),
    };
    return { limits: { store } };
  }
  const file = values.config as string;
  let config: { gateway?: { guard?: GuardOptions } };
  try {
    config = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`--config: cannot read '${file}': ${(err as Error).message}`);
  }
  const guard = config?.gateway?.guard ?? {};
  if ((guard as { limits?: { store?: unknown } }).limits?.store === undefined)
    throw new UsageError(
      `--config: '${file}' has no gateway.guard.limits.store (without one each process keeps its own deny list: call gateway.guard.revoke())`,
    );
  return guard;
}

function revocationFrom(values: Record<string, string | boolean | undefined>): GuardRevocation & {
  expiresAt?: number;
} {
  const given = (['jti', 'key-id', 'key-sha256'] as const).filter((k) => values[k] !== undefined);
  if (given.length !== 1) throw new UsageError('give exactly one of --jti, --key-id and --key-sha256');
  const sha = values['key-sha256'];
  if (typeof sha === 'string' && !/^[0-9a-fA-F]{64}$/.test(sha))
    throw new UsageError('--key-sha256: expected 64 hex digits');
  let expiresAt: number | undefined;
  if (typeof values.expires === 'string') {
    const text = values.expires;
    expiresAt = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text);
    if (!Number.isFinite(expiresAt))
      throw new UsageError(`--expires: expected ISO 8601 or seconds since the epoch, received '${text}'`);
  }
  const id =
    typeof values.jti === 'string'
      ? { jti: values.jti }
      : { keyId: typeof sha === 'string' ? sha.toLowerCase() : (values['key-id'] as string) };
  return { ...id, ...(expiresAt === undefined ? {} : { expiresAt }) };
}

/** Runs `triton-node revoke`; resolves with the exit code. */
export async function revokeCommand(args: string[]): Promise<number> {
  let store: GuardOptions;
  let revocation: GuardRevocation;
  try {
    const { values } = parseArgs({
      args,
      options: {
        jti: { type: 'string' },
        'key-id': { type: 'string' },
        'key-sha256': { type: 'string' },
        config: { type: 'string' },
        'redis-url': { type: 'string' },
        'key-prefix': { type: 'string' },
        expires: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      process.stdout.write(REVOKE_USAGE);
      return 0;
    }
    revocation = revocationFrom(values);
    store = storeFrom(values);
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TypeError)) throw err;
    process.stderr.write(`triton-node revoke: ${(err as Error).message}\n${REVOKE_USAGE}`);
    return 2;
  }
  try {
    await GatewayGuard.revokeInStore(store, revocation);
  } catch (err) {
    // The options' mistakes are found before Redis is asked anything.
    if (err instanceof TypeError) {
      process.stderr.write(`triton-node revoke: ${err.message}\n${REVOKE_USAGE}`);
      return 2;
    }
    process.stderr.write(`triton-node revoke: ${(err as Error).message}\n`);
    return 1;
  }
  const what = revocation.jti !== undefined ? `token ${revocation.jti}` : `API key ${revocation.keyId}`;
  process.stdout.write(`revoked ${what}\n`);
  return 0;
}
