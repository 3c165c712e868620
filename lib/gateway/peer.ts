/**
 * The gateway's optional peer dependencies (`@grpc/grpc-js`,
 * `@grpc/proto-loader`, `pino`): imported when a feature first needs them,
 * from wherever the application installed them, so that triton-node itself
 * carries none of them and `import 'triton-node'` never loads them.
 */

/** Whether `err` says that the package `name` itself is not installed (not one of its own imports). */
function isMissing(err: unknown, name: string): boolean {
  const { code, message } = err as NodeJS.ErrnoException;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(`'${name}'`)
  );
}

function list(names: string[]): string {
  const quoted = names.map((n) => `'${n}'`);
  return quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}

/**
 * Imports the packages `names`, in order; when any is missing, rejects with
 * one error naming every missing one and the npm command that installs them.
 * `feature` says what needs them ("the gRPC gateway"); `hint`, given the
 * missing names, what else may be done.
 */
export async function importPeers(
  names: string[],
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
