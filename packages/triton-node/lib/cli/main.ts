/**
 * The `triton-node` command (demo, serve, doctor, lint, types, tune, revoke): `triton-node doctor` checks this
 * machine for what triton-node needs and prints a table (or `--json`), with exit code 1 when something
 * fails (3 when only Triton is missing and the fake engine works). The benchmarks are not in the package: they are the
 * triton-node-bench workspace of the repository (`npm run bench`).
 * It imports the package by its own name so that the library is not bundled
 * into this file a second time.
 * @internal
 * @packageDocumentation
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { onlyTritonMissing } from '../doctor/report.js';
import { type DoctorOptions, Server, doctor, formatDoctorReport, tune } from '../index.js';
import { fakeEngine } from '../testing.js';
import { repositoryArgs } from './args.js';
import { demoCommand, exampleModels, packageRoot } from './commands/demo.js';
import { lintCommand } from './commands/lint.js';
import { tuneCommand } from './commands/tune.js';
import { typesCommand } from './commands/types.js';

const USAGE = `Usage: triton-node <command> [options]

Commands:
  demo      run the example models on triton-node's fake engine: no Triton, no GPU (triton-node demo --help)
  serve     serve models over the KServe v2 protocol, HTTP and gRPC (triton-node serve --help)
  doctor    check this machine for what triton-node needs (triton-node doctor --help)
  lint      check model configs against Triton's guidance (triton-node lint --help)
  types     write TypeScript model specs from config.pbtxt files (triton-node types --help)
  tune      tune a model's batching and instances against a latency SLA (triton-node tune --help)
  revoke    refuse a token or API key on every gateway replica sharing a Redis store (triton-node revoke --help)

Every command that reads a model repository takes it as an argument or with --repository (-r):
  triton-node lint ./models   is   triton-node lint --repository ./models

  -v, --version   the version of triton-node
  -h, --help      this text
`;

const DOCTOR_USAGE = `usage: triton-node doctor [<repository>] [options]

Checks what triton-node needs on this machine: the addon, each Triton library
candidate, the backends, CUDA and the GPUs, process limits and, given a
repository, each model's config.

Exit code: 0 when nothing fails; 3 when the only failure is that no Triton
library was found (none asked for) while the addon and the fake engine work:
a laptop, where \`triton-node demo\` and \`triton-node serve --fake-engine\`
run without Triton; 1 when anything else fails; 2 for a usage error.

Options:
  <repository>, --repository DIR  check each model's config.pbtxt in this model repository
  --library PATH                libtritonserver.so to check (default: TRITON_SERVER_LIB,
                                then /opt/tritonserver/lib/libtritonserver.so)
  --backend-dir DIR             where the backends are (default: as Server.create() decides)
  --min-compute-capability X    the server's minimum (default 6.0)
  --json                        print the whole report as JSON
  -h, --help                    this text
`;

/** Exit code of \`doctor\` when only the Triton library is missing (a laptop with the fake engine). */
const NO_TRITON = 3;

const MOVED = `The benchmarks moved out of the package: in the triton-node repository,
run \`npm run bench\` or \`npm run soak\` (the triton-node-bench workspace).`;

interface GatewayCommands {
  serveCommand(argv: string[]): Promise<number>;
  revokeCommand(argv: string[]): Promise<number>;
}

/**
 * `serve` and `revoke` are the gateway's: @triton-node/gateway, imported by
 * name where the application installed it. Without it the command exits 2
 * saying which package to install.
 */
async function gatewayCommands(command: string): Promise<GatewayCommands> {
  const name = '@triton-node/gateway/cli';
  try {
    return (await import(name)) as GatewayCommands;
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    const missing =
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
      /@triton-node\/gateway/.test(String(message));
    if (!missing) throw err;
    process.stderr.write(
      `triton-node: \`${command}\` is in the package @triton-node/gateway, not installed here.\n` +
        'Install it beside triton-node: npm install @triton-node/gateway\n',
    );
    process.exit(2);
  }
}

function usageError(message: string, usage = USAGE): never {
  process.stderr.write(`triton-node: ${message}\n\n${usage}`);
  process.exit(2);
}

/** This package's version, from its package.json. */
function version(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string })
    .version;
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
    process.stdout.write(DOCTOR_USAGE);
    process.exit(0);
  }
  if (positionals.length > 0) usageError(`unexpected argument '${positionals[0]}'`, DOCTOR_USAGE);
  const options: DoctorOptions = {};
  if (values.library !== undefined) options.library = values.library;
  if (values['backend-dir'] !== undefined) options.backendDirectory = values['backend-dir'];
  if (values.repository !== undefined) options.repository = values.repository;
  const cc = values['min-compute-capability'];
  if (cc !== undefined) {
    const n = Number(cc);
    if (cc.trim() === '' || !Number.isFinite(n) || n < 0) {
      usageError(
        `expected a number like 7.5 for --min-compute-capability but received '${cc}'`,
        DOCTOR_USAGE,
      );
    }
    options.minComputeCapability = n;
  }
  return { options, json: values.json === true };
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '-v' || command === '--version' || command === 'version') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command === 'bench' || command === 'soak') {
    process.stderr.write(`${MOVED}\n`);
    return 2;
  }
  if (command === 'demo') return demoCommand(rest);
  if (command === 'types') return typesCommand(repositoryArgs(command, rest));
  if (command === 'lint') return lintCommand(repositoryArgs(command, rest));
  if (command === 'tune')
    return tuneCommand(repositoryArgs(command, rest), {
      createServer: (o) => Server.create(o),
      tune,
      fakeEngine: {
        // Read when --fake-engine asks for it: it throws where the fake engine is not installed.
        get libraryPath() {
          return fakeEngine.libraryPath;
        },
        available: () => fakeEngine.available(),
        exampleModels,
      },
    });
  if (command === 'serve') return (await gatewayCommands(command)).serveCommand(rest);
  if (command === 'revoke') return (await gatewayCommands(command)).revokeCommand(rest);
  if (command !== 'doctor') usageError(`unknown command '${command}'`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(repositoryArgs(command, rest));
  } catch (err) {
    usageError((err as Error).message, DOCTOR_USAGE);
  }
  const report = await doctor(parsed.options);
  process.stdout.write(parsed.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctorReport(report));
  if (report.ok) return 0;
  return onlyTritonMissing(report) ? NO_TRITON : 1;
}

process.exitCode = await main(process.argv.slice(2));
