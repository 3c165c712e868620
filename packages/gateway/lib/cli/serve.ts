/**
 * `triton-node serve [R...] [--repository R] [--fake-engine] [--http-port 8000]
 * [--grpc-port 8001] [--exit-on-error=false] [--strict-readiness=false]
 * [--strict-model-config=true]
 * [--config file]`: an in-process Triton behind the KServe v2 protocol over
 * HTTP and gRPC, with structured logs (pino) and a graceful shutdown on
 * SIGTERM and SIGINT, and on the exit of the npm that started it. Resolves with the exit code once the process should
 * exit: 0 after a shutdown, 1 when it could not start, 2 for a usage error.
 * @internal
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { Server, type ServerOptions } from 'triton-node';
import { fakeEngine } from 'triton-node/testing';
// The gateway by the package's name, as an application uses it: in the CLI
// bundle it stays the package's dist/gateway.js (one copy of its classes).
import {
  type Gateway,
  GatewayGuard,
  type GatewayLogger,
  type GatewayOptions,
  type GrpcServerLike,
  type IsolatedGateway,
  type IsolatedGatewayOptions,
  createGateway,
  createIsolatedGateway,
} from '../index.js';
import { importPeers } from '../peers.js';
import { traceOptionsOf } from './trace-config.js';

/** triton-node's example models (examples/models of the installed package): what `--fake-engine` serves. */
function exampleModels(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('triton-node/package.json')), 'examples', 'models');
}

export const SERVE_USAGE = `usage: triton-node serve [<dir>...] [--repository <dir>...] [options]
  <dir>, --repository <dir>, -r <dir>   a model repository (repeatable)
  --fake-engine          run on triton-node's fake engine (no Triton, no GPU), with the example models
                         the package ships unless repositories are given
  --http-port <n>        HTTP/REST port (default 8000; 0 picks a free one)
  --grpc-port <n>        gRPC port (default 8001; 0 picks a free one)
  --no-grpc              serve HTTP only (no @grpc/grpc-js needed)
  --host <addr>          address to listen on (default 0.0.0.0)
  --config <file>        JSON: { "server": ServerOptions, "gateway": GatewayOptions, "httpPort", "grpcPort",
                         "host", "drainTimeoutMs", "maxHeaderBytes", "isolation": { "groups": ... } };
                         flags override it (with "isolation": each tenant group's server in a process of its own)
  --library <path>       libtritonserver.so (default: TRITON_SERVER_LIB, then /opt/tritonserver)
  --backend-dir <dir>    Triton backends
  --model-control-mode <none|explicit|poll>   (default none: every model loads at startup)
  --load-model <name>    with explicit mode: load at startup (repeatable, '*' for all)
  --drain-timeout <ms>   how long a shutdown waits for requests in flight (default 30000)
  --max-body-bytes <n>   largest request body (default 64 MiB)
  --max-header-bytes <n> largest request head (default 16384, Node's); larger ones get 431
  --exit-on-error[=true|false]     a model that fails to load stops the start (default true, as tritonserver);
                                   false: serve the models that loaded, each failure logged with its cause
  --strict-readiness[=true|false]  /v2/health/ready only when every model is ready (default true);
                                   false: ready once serving, and each loaded model's own ready route says so
  --strict-model-config[=true|false]  require complete config.pbtxt files (default false, as tritonserver:
                                   Triton's backends complete a missing config, inputs or outputs)
  --log-level <level>    pino level (default info)
  --trace-config <setting>=<value>, --trace-config triton,<setting>=<value>   the trace extension's global
                         setting at start, as tritonserver's flag (repeatable): level=OFF|TIMESTAMPS|TENSORS,
                         rate=<n>, count=<n>, mode=triton|opentelemetry; triton,file=<path>, triton,log-frequency=<n>
Serves the KServe v2 protocol; SIGTERM or SIGINT drains and stops, and so does the exit of the
npm or npx that started it (npm does not pass signals on). In a container, run node directly:
  exec node node_modules/triton-node/dist/cli.js serve ...
`;

interface ServeConfig {
  server: Partial<ServerOptions>;
  /** --fake-engine: the library is the fake engine's. */
  fake: boolean;
  gateway: GatewayOptions;
  httpPort: number;
  grpcPort: number | null;
  host: string;
  drainTimeoutMs: number;
  logLevel: string;
  maxHeaderBytes: number;
  /** Tenant groups in processes of their own (docs/isolation.md); no Server in this process then. */
  isolation?: IsolatedGatewayOptions;
}

class UsageError extends Error {}

/**
 * Takes `--name`, `--name=true|false` (and `--name true|false`) out of
 * `args`, as tritonserver spells its boolean flags; undefined when absent.
 */
function takeBoolean(args: string[], name: string): boolean | undefined {
  let value: boolean | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    let text: string | undefined;
    if (arg === `--${name}`) {
      const next = args[i + 1];
      if (next === 'true' || next === 'false') {
        text = next;
        args.splice(i + 1, 1);
      } else text = 'true';
    } else if (arg.startsWith(`--${name}=`)) text = arg.slice(name.length + 3);
    else continue;
    if (text !== 'true' && text !== 'false' && text !== '1' && text !== '0')
      throw new UsageError(`Expected true or false for --${name} but received '${text}'`);
    value = text === 'true' || text === '1';
    args.splice(i, 1);
    i--;
  }
  return value;
}

function port(text: unknown, option: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new UsageError(`Expected a port (0-65535) for ${option} but received '${text}'`);
  }
  return n;
}

function whole(text: unknown, option: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new UsageError(`Expected a whole number for ${option} but received '${text}'`);
  return n;
}

/** The JSON object of `--config`; a UsageError saying why when it cannot be read or is not one. */
function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--config: cannot read '${path}': ${(err as NodeJS.ErrnoException).code}`);
  }
  let file: unknown;
  try {
    file = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--config: '${path}' is not JSON: ${(err as Error).message}`);
  }
  if (typeof file !== 'object' || file === null || Array.isArray(file)) {
    throw new UsageError(`--config: '${path}' must hold a JSON object`);
  }
  return file as Record<string, unknown>;
}

/** The configuration: the config file's, with the flags on top. */
export function parseServeArgs(argv: string[]): ServeConfig | 'help' {
  const args = [...argv];
  const exitOnError = takeBoolean(args, 'exit-on-error');
  const strictReadiness = takeBoolean(args, 'strict-readiness');
  const strictModelConfig = takeBoolean(args, 'strict-model-config');
  let values: Record<string, string | string[] | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: {
        repository: { type: 'string', multiple: true, short: 'r' },
        'http-port': { type: 'string' },
        'grpc-port': { type: 'string' },
        'no-grpc': { type: 'boolean' },
        host: { type: 'string' },
        config: { type: 'string' },
        library: { type: 'string' },
        'backend-dir': { type: 'string' },
        'model-control-mode': { type: 'string' },
        'load-model': { type: 'string', multiple: true },
        'drain-timeout': { type: 'string' },
        'max-body-bytes': { type: 'string' },
        'max-header-bytes': { type: 'string' },
        'log-level': { type: 'string' },
        'trace-config': { type: 'string', multiple: true },
        'fake-engine': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return 'help';
  const file = typeof values.config === 'string' ? readConfigFile(values.config) : {};
  const server = { ...((file.server as Partial<ServerOptions>) ?? {}) };
  const gateway = { ...((file.gateway as GatewayOptions) ?? {}) };
  const repositories = [...positionals, ...((values.repository as string[] | undefined) ?? [])];
  if (repositories.length > 0) server.modelRepository = repositories;
  const fake = values['fake-engine'] === true;
  if (fake) {
    if (typeof values.library === 'string')
      throw new UsageError('--fake-engine and --library name two libraries: give one of them');
    server.library = fakeEngine.libraryPath;
    server.modelRepository ??= exampleModels();
  }
  if (exitOnError !== undefined) server.exitOnError = exitOnError;
  if (strictReadiness !== undefined) server.strictReadiness = strictReadiness;
  // tritonserver's default (--strict-model-config=false: auto-complete on),
  // not the library's (true): serve answers as tritonserver does.
  if (strictModelConfig !== undefined) server.strictModelConfig = strictModelConfig;
  server.strictModelConfig ??= false;
  const isolation = file.isolation as IsolatedGatewayOptions | undefined;
  if (isolation !== undefined && (typeof isolation !== 'object' || isolation === null))
    throw new UsageError('--config: "isolation" must be an object { "groups": { ... } }');
  if (server.modelRepository === undefined && isolation === undefined)
    throw new UsageError(
      'a model repository is required: serve <dir>, --repository <dir>, "server.modelRepository" in --config, or --fake-engine for the example models',
    );
  if (typeof values.library === 'string') server.library = values.library;
  if (typeof values['backend-dir'] === 'string') server.backendDirectory = values['backend-dir'];
  if (typeof values['model-control-mode'] === 'string') {
    server.modelControlMode = values['model-control-mode'] as ServerOptions['modelControlMode'];
  }
  server.modelControlMode ??= 'none';
  if (values['load-model']) server.startupModels = values['load-model'] as string[];
  if (typeof values['max-body-bytes'] === 'string')
    gateway.maxBodyBytes = whole(values['max-body-bytes'], '--max-body-bytes');
  const traceFlags = values['trace-config'] as string[] | undefined;
  if (traceFlags !== undefined) {
    try {
      gateway.trace = traceOptionsOf(traceFlags, gateway.trace);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  let grpcPort: number | null = 8001;
  if (file.grpcPort === null) grpcPort = null;
  else if (file.grpcPort !== undefined) grpcPort = port(file.grpcPort, '"grpcPort" in --config');
  if (values['grpc-port'] !== undefined) grpcPort = port(values['grpc-port'], '--grpc-port');
  if (values['no-grpc']) grpcPort = null;
  return {
    server,
    gateway,
    fake,
    httpPort: port(values['http-port'] ?? file.httpPort ?? 8000, '--http-port'),
    grpcPort,
    host: (values.host as string | undefined) ?? (file.host as string | undefined) ?? '0.0.0.0',
    drainTimeoutMs: whole(values['drain-timeout'] ?? file.drainTimeoutMs ?? 30_000, '--drain-timeout'),
    logLevel: (values['log-level'] as string | undefined) ?? (file.logLevel as string | undefined) ?? 'info',
    maxHeaderBytes: whole(values['max-header-bytes'] ?? file.maxHeaderBytes ?? 16_384, '--max-header-bytes'),
    ...(isolation === undefined ? {} : { isolation }),
  };
}

interface PinoModule {
  default: (options: object) => GatewayLogger & { flush?(): void };
}

interface GrpcModule {
  Server: new (
    options?: object,
  ) => GrpcShutdownLike & {
    addService(service: unknown, impl: object): void;
    bindAsync(
      address: string,
      credentials: unknown,
      callback: (err: Error | null, port: number) => void,
    ): void;
  };
  ServerCredentials: { createInsecure(): unknown };
}

/** Listens with keep-alive and timeouts set for sitting behind a load balancer. */
function listenHttp(
  handler: http.RequestListener,
  host: string,
  portNumber: number,
  maxHeaderSize: number,
): Promise<http.Server> {
  const server = http.createServer(
    {
      maxHeaderSize,
      // Longer than the usual 60 s idle timeout of load balancers, so they close first.
      keepAliveTimeout: 65_000,
      headersTimeout: 66_000,
      requestTimeout: 300_000,
    },
    handler,
  );
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(portNumber, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

async function listenGrpc(
  grpc: GrpcModule,
  add: (s: { addService(service: unknown, impl: object): void }) => Promise<void>,
  host: string,
  portNumber: number,
  maxBytes: number,
) {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': maxBytes,
    'grpc.max_send_message_length': -1,
  });
  await add(server);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${portNumber}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { server, port: bound };
}

/**
 * The optional peer dependencies this command loads for itself; it also
 * loads the gateway's (lib/gateway/peers.ts) up front, so that a missing one
 * stops the start with the npm command rather than failing a request later.
 */
export const SERVE_PEERS = { pino: 'the structured logs of triton-node serve' } as const;

/**
 * pino, unless --no-grpc @grpc/grpc-js and @grpc/proto-loader, and jose when
 * the guard verifies tokens; undefined, said on stderr with the npm command,
 * when any is missing.
 */
async function loadPeers(
  config: ServeConfig,
): Promise<{ logger: GatewayLogger; grpc?: GrpcModule } | undefined> {
  const grpcNames = config.grpcPort === null ? [] : ['@grpc/grpc-js', '@grpc/proto-loader'];
  const hint = (missing: string[]) =>
    missing.some((n) => grpcNames.includes(n)) ? ' (or pass --no-grpc to serve HTTP only, without gRPC)' : '';
  try {
    const jose = config.gateway.guard?.jwt === undefined ? [] : ['jose'];
    const redis = config.gateway.guard?.limits?.store === undefined ? [] : ['ioredis'];
    const modules = await importPeers(['pino', ...grpcNames, ...jose, ...redis], 'triton-node serve', hint);
    const [pino, grpc] = modules as [PinoModule, GrpcModule | undefined];
    const logger = pino.default({ level: config.logLevel, base: { service: 'triton-node' } });
    return grpc === undefined ? { logger } : { logger, grpc };
  } catch (err) {
    // The message starts with "triton-node serve needs" when a package is missing.
    const message = (err as Error).message;
    process.stderr.write(
      message.startsWith('triton-node serve') ? `${message}\n` : `triton-node serve: ${message}\n`,
    );
    return undefined;
  }
}

/** Runs `triton-node serve`; resolves with the exit code. */
/** `serve` with `isolation` in --config: a front that admits and audits, over group processes. */
async function serveIsolatedFront(
  config: ServeConfig,
  isolation: IsolatedGatewayOptions,
  peers: NonNullable<Awaited<ReturnType<typeof loadPeers>>>,
): Promise<number> {
  const { logger, grpc } = peers;
  const grpcPort = config.grpcPort;
  const maxBytes = isolation.maxBodyBytes ?? 64 * 1024 * 1024;
  const onGrpc =
    grpc === undefined || grpcPort === null
      ? undefined
      : (add: (s: GrpcServerLike) => Promise<void>) => listenGrpc(grpc, add, config.host, grpcPort, maxBytes);
  // The front admits each request (its tenant picks the group) and audits it.
  const guard =
    config.gateway.guard === undefined ? undefined : new GatewayGuard(config.gateway.guard, { logger });
  const listen = async (handler: http.RequestListener, host: string, httpPort: number) => {
    const s = await listenHttp(handler, host, httpPort, config.maxHeaderBytes);
    if (guard !== undefined) s.on('clientError', guard.clientError);
    return s;
  };
  try {
    return await serveIsolated({ ...config, isolation }, { logger, listen, listenGrpc: onGrpc, guard });
  } finally {
    guard?.close();
  }
}

export async function serveCommand(args: string[]): Promise<number> {
  let config: ServeConfig | 'help';
  try {
    config = parseServeArgs(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`triton-node serve: ${err.message}\n${SERVE_USAGE}`);
    return 2;
  }
  if (config === 'help') {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const peers = await loadPeers(config);
  if (peers === undefined) return 1;
  const { logger, grpc } = peers;
  if (config.isolation !== undefined) return serveIsolatedFront(config, config.isolation, peers);
  const server = await startServer(config, logger);
  if (server === undefined) return 1;
  let gateway: Gateway;
  try {
    gateway = createGateway(server, { ...config.gateway, logger: config.gateway.logger ?? logger });
  } catch (err) {
    // A "gateway" section of --config the gateway refuses (a TypeError naming the option).
    logger.error?.({ err: (err as Error).message }, 'the gateway options are invalid');
    await server.stop();
    return 2;
  }
  let httpServer: http.Server | undefined;
  let grpcServer: (GrpcShutdownLike & object) | undefined;
  try {
    httpServer = await listenHttp(gateway.handler, config.host, config.httpPort, config.maxHeaderBytes);
    // With a guard, requests Node refuses before the gateway sees them (431...) are audited too.
    if (gateway.guard !== undefined) httpServer.on('clientError', gateway.guard.clientError);
    const httpPort = (httpServer.address() as AddressInfo).port;
    let grpcPort: number | undefined;
    if (grpc !== undefined && config.grpcPort !== null) {
      const maxBytes = config.gateway.maxBodyBytes ?? 64 * 1024 * 1024;
      const g = await listenGrpc(
        grpc,
        (s) => gateway.addToGrpcServer(s),
        config.host,
        config.grpcPort,
        maxBytes,
      );
      grpcServer = g.server;
      grpcPort = g.port;
    }
    const engine = server.library.isFake ? 'fake' : 'triton';
    const models = config.server.modelRepository;
    logger.info?.(
      { httpPort, grpcPort, host: config.host, engine, triton: server.library.path, models },
      'serving',
    );
  } catch (err) {
    logger.error?.({ err: (err as Error).message }, 'could not listen');
    httpServer?.close();
    grpcServer?.forceShutdown();
    await server.stop();
    return 1;
  }
  return untilSignal({
    gateway,
    server,
    http: httpServer,
    grpc: grpcServer,
    logger,
    timeoutMs: config.drainTimeoutMs,
  });
}

/** The server, its start logged; undefined (after logging why) when it did not start. */
async function startServer(config: ServeConfig, logger: GatewayLogger): Promise<Server | undefined> {
  if (config.fake && !fakeEngine.available()) {
    logger.error?.(
      { library: fakeEngine.libraryPath },
      'the fake engine is not here: run npx triton-node doctor',
    );
    return undefined;
  }
  let server: Server;
  try {
    server = await Server.create(config.server as ServerOptions);
  } catch (err) {
    logger.error?.({ err: (err as Error).message }, 'the server did not start');
    return undefined;
  }
  await logStartup(server, config, logger);
  return server;
}

/** A model serve serves: its ready versions and the backend that answers it. */
interface ServedModel {
  model: string;
  versions: number[];
  /** Metadata's platform: the backend, or 'ensemble'; a fake stand-in's '<backend>:<mode>'. */
  backend: string;
}

/** The ready models and their backends, from the server (never a fixed list); [] when it cannot say. */
async function servedModels(server: Server): Promise<ServedModel[]> {
  let names: string[];
  try {
    names = [...new Set((await server.modelIndex({ readyOnly: true })).map((e) => e.name))];
  } catch {
    return [];
  }
  const out: ServedModel[] = [];
  for (const name of names) {
    try {
      const m = await server.model(name).metadata();
      out.push({ model: name, versions: m.versions, backend: m.standIn ?? m.platform });
    } catch {
      // Unloaded since the index was read: not served.
    }
  }
  return out;
}

/**
 * Logs what the start left to know: the models ready and the backends that
 * answer them (asked of the server); the fake engine, when it is the
 * library; each startup model that did not load, with its cause; and that
 * strict readiness keeps the server not ready while one of them is missing.
 */
async function logStartup(server: Server, config: ServeConfig, logger: GatewayLogger): Promise<void> {
  const served = await servedModels(server);
  const backends = [...new Set(served.map((m) => m.backend))].sort();
  const models = served.map((m) => m.model);
  logger.info?.(
    { models, backends, versions: Object.fromEntries(served.map((m) => [m.model, m.versions])) },
    served.length === 0
      ? 'no model is ready'
      : `${served.length} model(s) ready: ${served
          .slice(0, 20)
          .map((m) => `${m.model} (${m.backend})`)
          .join(', ')}${served.length > 20 ? `, and ${served.length - 20} more` : ''}`,
  );
  if (server.library.isFake)
    logger.warn?.(
      { triton: server.library.path, backends },
      `on triton-node's fake engine (not Triton): ${backends.length === 0 ? 'no model ready' : `the fake's own ${backends.join(', ')} backend(s) answer`}, not a real model`,
    );
  for (const f of server.startupFailures) {
    logger.error?.(
      { model: f.model, version: f.version, reason: f.reason },
      `model '${f.model}' did not load`,
    );
  }
  if (server.startupFailures.length > 0 && config.server.strictReadiness !== false) {
    logger.warn?.(
      { failed: server.startupFailures.map((f) => f.model) },
      'strict readiness: /v2/health/ready stays false while these models are not ready (--strict-readiness=false: ready with the models that loaded)',
    );
  }
}

/**
 * Resolves with the exit code once a SIGTERM or SIGINT has run the shutdown;
 * a second signal cancels what is left at once.
 */
function untilSignal(targets: ShutdownTargets): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        targets.logger.warn?.({ signal }, 'second signal: cancelling what is left now');
        targets.gateway._cancelStreams();
        return;
      }
      stopping = true;
      shutdown(targets, signal).then(
        () => resolve(0),
        (err) => {
          targets.logger.error?.({ err: (err as Error).message }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    watchParent(() => onSignal('SIGTERM'), targets.logger);
  });
}

/** The parent pid of `pid` (from /proc), or undefined when it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ...: comm may hold spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Started by npm or npx (npm_command in the environment), stops the server
 * when npm goes away: npm does not pass SIGTERM or SIGINT on to the command
 * it runs, so a signal to npx would otherwise leave the server running with
 * no parent. Watched: the parent, and the one above it when the parent is
 * the shell npm ran the command in. A server started otherwise (node
 * directly, exec in a container) is not watched.
 */
function watchParent(stop: () => void, logger: GatewayLogger): void {
  if (process.env.npm_command === undefined && process.env.npm_lifecycle_event === undefined) return;
  const watched: Array<{ pid: number; parent: number }> = [];
  const parent = process.ppid;
  const grandparent = parentOf(parent);
  if (parent <= 1 || grandparent === undefined) return;
  watched.push({ pid: process.pid, parent });
  if (/^(sh|dash|bash|ash|zsh)$/.test(commandOf(parent)) && grandparent > 1)
    watched.push({ pid: parent, parent: grandparent });
  const timer = setInterval(() => {
    const gone = watched.find((w) => parentOf(w.pid) !== w.parent);
    if (gone === undefined) return;
    clearInterval(timer);
    logger.warn?.({ parent: gone.parent }, 'the npm process that started serve exited: shutting down');
    stop();
  }, 500);
  timer.unref();
}

// ---- shutdown ------------------------------------------------------------------

/**
 * Graceful shutdown of a serving process: stop accepting connections, turn
 * readiness false, let the requests in flight finish (up to a deadline, then
 * cancel what still streams), stop Triton. Every request that was accepted
 * gets a response; the caller exits 0 afterwards.
 */
/** The part of a `@grpc/grpc-js` Server a shutdown uses. */
interface GrpcShutdownLike {
  tryShutdown(callback: (err?: Error) => void): void;
  forceShutdown(): void;
}

interface ShutdownTargets {
  gateway: Gateway;
  server: Server;
  http?: http.Server;
  grpc?: GrpcShutdownLike;
  logger: GatewayLogger;
  /** How long in-flight requests may take before they are cancelled. */
  timeoutMs: number;
}

/** Runs the shutdown; resolves once Triton has stopped. */
async function shutdown(targets: ShutdownTargets, reason: string): Promise<void> {
  const { gateway, server, http: web, grpc, logger, timeoutMs } = targets;
  logger.info?.({ reason, inFlight: gateway.inFlight, timeoutMs }, 'shutting down: draining');
  // No new connections; idle keep-alive connections go now, busy ones after
  // their response (the gateway answers with Connection: close meanwhile).
  web?.close();
  web?.closeIdleConnections();
  const grpcDone = new Promise<void>((resolve) => {
    if (grpc === undefined) return resolve();
    grpc.tryShutdown(() => resolve());
  });
  const finished = await gateway.drain({ timeoutMs });
  if (!finished) {
    logger.warn?.({ inFlight: gateway.inFlight }, 'shutdown deadline passed: open streams were cancelled');
    grpc?.forceShutdown();
  }
  web?.closeIdleConnections();
  await Promise.race([grpcDone, new Promise((r) => setTimeout(r, 1000).unref())]);
  grpc?.forceShutdown();
  web?.closeAllConnections();
  gateway.close();
  await server.stop();
  logger.info?.({ finished }, 'stopped');
}

// ---- an isolating front ----------------------------------------------------------

/**
 * With an "isolation" section in --config: the isolating front on HTTP and
 * gRPC (no Triton in this process), each group's server in a supervised
 * process of its own, and a graceful shutdown on SIGTERM and SIGINT that
 * stops the group processes too.
 */
interface IsolatedServeConfig {
  isolation: IsolatedGatewayOptions;
  host: string;
  httpPort: number;
  grpcPort: number | null;
  drainTimeoutMs: number;
}

/** How the front listens: HTTP, gRPC when served, and the guard that admits its requests. */
interface FrontListeners {
  logger: GatewayLogger;
  listen: (handler: http.RequestListener, host: string, port: number) => Promise<http.Server>;
  /** Serves what `add` adds on the configured gRPC port. */
  listenGrpc:
    | ((
        add: (server: GrpcServerLike) => Promise<void>,
      ) => Promise<{ server: GrpcShutdownLike; port: number }>)
    | undefined;
  guard: GatewayGuard | undefined;
}

/** Runs the isolating front until a signal; resolves with the exit code. */
async function serveIsolated(config: IsolatedServeConfig, how: FrontListeners): Promise<number> {
  const { logger, listen, listenGrpc, guard } = how;
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
  let web: http.Server | undefined;
  let grpc: { server: GrpcShutdownLike; port: number } | undefined;
  try {
    web = await listen(front.handler, config.host, config.httpPort);
    grpc = await listenGrpc?.((s) => front.addToGrpcServer(s));
  } catch (err) {
    logger.error?.({ err: (err as Error).message }, 'could not listen');
    web?.close();
    await front.drain({ timeoutMs: 0 });
    return 1;
  }
  const groups = front.groups().map((g) => ({ name: g.name, pid: g.pid, models: g.models }));
  const httpPort = (web.address() as AddressInfo).port;
  logger.info?.({ httpPort, grpcPort: grpc?.port, host: config.host, groups }, 'serving');
  return frontUntilSignal(front, web, grpc?.server, logger, config.drainTimeoutMs);
}

/** Drains the front on SIGTERM or SIGINT; resolves with the exit code. */
function frontUntilSignal(
  front: IsolatedGateway,
  web: http.Server,
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
      web.close();
      web.closeIdleConnections();
      grpc?.tryShutdown(() => {});
      front.drain({ timeoutMs: drainTimeoutMs }).then(
        (finished) => {
          web.closeAllConnections();
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
