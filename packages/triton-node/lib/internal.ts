/**
 * What the package's other entry points (triton-node/gateway, the gateway's
 * worker, the CLI) use of the library beyond its public API, in one place:
 * they import the library through lib/index.ts and this file only (a test
 * keeps the gateway so: test/package/structure-gateway.test.ts). Not part of
 * the public API; lib/core.ts re-exports it, so the bundles take it from
 * dist/core.js with the rest of the library (one copy).
 *
 * `importPeers` is here because two entry points load optional peers (the
 * gateway its own, `triton-node serve` pino and the gateway's) and each must
 * say the same thing when one is missing.
 * @internal
 * @packageDocumentation
 */
export { describe, optionError } from './base/errors.js';
export { bfloat16ToNumber, halfToNumber } from './tensor/tensor.js';
export { isTraceparent } from './request/otel.js';

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
      `${feature} needs ${list(missing)} (${what} of triton-node), not installed here. ` +
        `Install: npm install ${missing.join(' ')}${hint(missing)}`,
    );
  }
  return modules;
}
