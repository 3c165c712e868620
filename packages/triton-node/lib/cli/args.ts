/**
 * The repository argument of the CLI's commands, in one shape: see
 * repositoryArgs. Kept apart from lib/cli/main.ts (which imports the package by
 * its name) so that a test can import it from the sources.
 * @internal
 */

/** The options of the commands that take no value: what follows any other option is its value, not a repository. */
const BOOLEAN_OPTIONS = new Set([
  '--help',
  '-h',
  '--json',
  '--force',
  '--no-grpc',
  '--fake-engine',
  '--exit-on-error',
  '--strict-readiness',
]);

/**
 * One shape for the repository: \`lint\` reads repositories as arguments, and
 * \`types\` and \`tune\` with --repository; each gets the other form turned
 * into its own, so every command takes both.
 */
export function repositoryArgs(command: string, args: string[]): string[] {
  const out: string[] = [];
  const positionals: string[] = [];
  const flagged: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg === '--repository' || arg === '-r') {
      const value = args[i + 1];
      if (value === undefined) return args; // the command says what is missing
      flagged.push(value);
      i++;
    } else if (arg.startsWith('--repository=')) flagged.push(arg.slice('--repository='.length));
    else if (!arg.startsWith('-') || arg === '-') positionals.push(arg);
    else {
      out.push(arg);
      const takesValue = !arg.includes('=') && !BOOLEAN_OPTIONS.has(arg);
      if (takesValue && i + 1 < args.length) out.push(args[++i]!);
    }
  }
  const repositories = [...positionals, ...flagged];
  if (command === 'lint') return [...out, ...repositories];
  return [...out, ...repositories.flatMap((r) => ['--repository', r])];
}
