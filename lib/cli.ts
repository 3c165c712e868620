/**
 * The `triton-node` command (doctor, types, lint, tune, serve, revoke): `triton-node doctor` checks this machine for
 * what triton-node needs and prints a table (or `--json`), with exit code 1
 * when something fails. The benchmarks are not in the package: they are the
 * triton-node-bench workspace of the repository (`npm run bench`).
 * It imports the package by its own name so that the library is not bundled
 * into this file a second time.
 * @internal
 * @packageDocumentation
 */
import { parseArgs } from 'node:util';
import { type DoctorOptions, Server, doctor, formatDoctorReport, tune } from 'triton-node';
import { lintCommand } from './lint/command.js';
import { tuneCommand } from './tune/command.js';
import { typesCommand } from './types-command.js';

const USAGE = `Usage: triton-node <command> [options]

Commands:
  doctor    check this machine for what triton-node needs (below)
  types     write TypeScript model specs from config.pbtxt files (triton-node types --help)
  lint      check model configs against Triton's guidance (triton-node lint --help)
  tune      tune a model's batching and instances against a latency SLA (triton-node tune --help)
  serve     serve models over the KServe v2 protocol, HTTP and gRPC (triton-node serve --help)
  revoke    refuse a token or API key on every gateway replica sharing a Redis store (triton-node revoke --help)

triton-node doctor [options]

Checks what triton-node needs on this machine: the addon, each Triton library
candidate, the backends, CUDA and the GPUs, process limits and, given a
repository, each model's config. Exit code 0 when nothing fails, 1 otherwise.

Options:
  --library PATH                libtritonserver.so to check (default: TRITON_SERVER_LIB,
                                then /opt/tritonserver/lib/libtritonserver.so)
  --backend-dir DIR             where the backends are (default: as Server.create() decides)
  --repository DIR              check each model's config.pbtxt in this model repository
  --min-compute-capability X    the server's minimum (default 6.0)
  --json                        print the whole report as JSON
  -h, --help                    this text
`;

const MOVED = `The benchmarks moved out of the package: in the triton-node repository,
run \`npm run bench\` or \`npm run soak\` (the triton-node-bench workspace).`;

function usageError(message: string): never {
  process.stderr.write(`triton-node: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parse(argv: string[]): { options: DoctorOptions; json: boolean } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      library: { type: 'string' },
      'backend-dir': { type: 'string' },
      repository: { type: 'string' },
      'min-compute-capability': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (positionals.length > 0) usageError(`unexpected argument '${positionals[0]}'`);
  const options: DoctorOptions = {};
  if (values.library !== undefined) options.library = values.library;
  if (values['backend-dir'] !== undefined) options.backendDirectory = values['backend-dir'];
  if (values.repository !== undefined) options.repository = values.repository;
  const cc = values['min-compute-capability'];
  if (cc !== undefined) {
    const n = Number(cc);
    if (cc.trim() === '' || !Number.isFinite(n) || n < 0) {
      usageError(`expected a number like 7.5 for --min-compute-capability but received '${cc}'`);
    }
    options.minComputeCapability = n;
  }
  return { options, json: values.json === true };
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === 'bench' || command === 'soak') {
    process.stderr.write(`${MOVED}\n`);
    return 2;
  }
  if (command === 'types') return typesCommand(rest);
  if (command === 'lint') return lintCommand(rest);
  if (command === 'tune') return tuneCommand(rest, { createServer: (o) => Server.create(o), tune });
  if (command === 'serve') return (await import('./gateway/serve-command.js')).serveCommand(rest);
  if (command === 'revoke') return (await import('./gateway/guard/revoke-command.js')).revokeCommand(rest);
  if (command !== 'doctor') usageError(`unknown command '${command}'`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(rest);
  } catch (err) {
    usageError((err as Error).message);
  }
  const report = await doctor(parsed.options);
  process.stdout.write(parsed.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctorReport(report));
  return report.ok ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
