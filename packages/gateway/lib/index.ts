/**
 * @triton-node/gateway: the KServe v2 inference protocol over HTTP (and gRPC)
 * in front of an in-process Server, so Triton's own clients, perf tools and
 * KServe can talk to a Node service that embeds Triton.
 *
 * ```ts
 * import http from 'node:http';
 * import { Server } from 'triton-node';
 * import { createGateway } from '@triton-node/gateway';
 * const server = await Server.create({ modelRepository: './models', modelControlMode: 'none' });
 * const gateway = createGateway(server);
 * http.createServer(gateway.handler).listen(8000);
 * ```
 * @packageDocumentation
 */
import type { Server } from 'triton-node';
import { optionError } from 'triton-node/internal';
import { GatewayContext, type GatewayLogger } from './context.js';
import { type GrpcServerLike, addGrpcService } from './grpc/service.js';
import { GatewayGuard, type GuardOptions } from './guard/index.js';
import { type FastifyLike, type FastifyPlugin, fastifyPlugin } from './http/fastify.js';
import { type HttpHandler, createHttpHandler } from './http/server.js';
import { SharedMemoryRegistry } from './kserve/shared-memory.js';
import { GatewayMetrics } from './metrics.js';
import { OpenAIRoutes, resolveOpenAIOptions } from './openai/index.js';
import type {
  ChatTemplate,
  EmbeddingModelOptions,
  OpenAIModelKind,
  OpenAIModelOptions,
} from './openai/index.js';
import { type GatewayStreamOptions, resolveStreamOptions } from './slow-client.js';

export type { FastifyLike, FastifyPlugin, GatewayLogger, GrpcServerLike, HttpHandler };
export type {
  ChatTemplate,
  EmbeddingModelOptions,
  GatewayStreamOptions,
  OpenAIModelKind,
  OpenAIModelOptions,
};
import { type TraceOptions, checkTraceOptions } from './trace/settings.js';
export { GatewayError } from './errors.js';
export type { TraceMode, TraceOptions } from './trace/settings.js';
export { GatewayGuard, hashApiKey } from './guard/index.js';
export type {
  AuditRecord,
  GuardApiKeyOptions,
  GuardAuditOptions,
  GuardJwtOptions,
  GuardLimitOptions,
  GuardLimitsOptions,
  GuardOptions,
  GuardRedisOptions,
  GuardRevocation,
  GuardTenantOptions,
} from './guard/index.js';
export {
  type IsolatedGateway,
  type IsolatedGatewayOptions,
  type IsolatedGroupOptions,
  type IsolationSharedMemoryOptions,
  type RestartPolicy,
  type GroupState,
  type GroupStatus,
  createIsolatedGateway,
} from './isolation/index.js';

/** Options of `createGateway()`. */
export interface GatewayOptions {
  /** Largest request body accepted, in bytes (default 64 MiB, Triton's HTTP default); larger ones get 413. */
  maxBodyBytes?: number;
  /** Serve the model repository extension's load and unload (default true); false answers them 403. */
  repositoryControl?: boolean;
  /** Serve the system shared memory extension (default true). */
  sharedMemory?: boolean;
  /**
   * Keep the gateway's own metrics in Triton's registry, served by `/metrics` (default true):
   * request counts, durations and overhead per protocol and route, requests in flight.
   */
  metrics?: boolean;
  /** Where the gateway logs (pino's shape: `logger.info({ ... }, 'message')`); default: nowhere. */
  logger?: GatewayLogger;
  /** Authentication, tenants, rate limits and audit (docs/security.md); default: none (no auth). */
  guard?: GuardOptions;
  /**
   * OpenAI-compatible routes (`/v1/completions`, `/v1/chat/completions`, `/v1/models`; docs/openai.md):
   * OpenAI model ids mapped to Triton text models; default: none (no `/v1/` routes).
   */
  openai?: Record<string, OpenAIModelOptions>;
  /**
   * What a streamed answer (OpenAI `stream: true`, `generate_stream`; `ModelStreamInfer` when
   * grpc-js reports a call full) may hold for a client that reads slower than its model writes, and
   * how long it waits for one that reads nothing before cutting it (docs/openai.md); default 1,024
   * responses and 16 MiB more while it waits, 30 s.
   */
  streams?: GatewayStreamOptions;
  /**
   * The trace extension's global setting at start, as tritonserver's `--trace-config`
   * (docs/observability.md); default: level OFF, rate 1000, count -1, mode 'triton', no file.
   */
  trace?: TraceOptions;
}

/** What `gateway.drain()` waits for. */
export interface DrainOptions {
  /** How long to wait for requests in flight before cancelling open streams (default 30 s). */
  timeoutMs?: number;
}

/** A gateway over one Server. */
export interface Gateway {
  /** The HTTP/REST routes as a `node:http` request listener. */
  readonly handler: HttpHandler;
  /**
   * The same routes as a Fastify plugin (`await app.register(gateway.fastify)`): requests to
   * `/v2/...` and `/metrics` are served before Fastify parses their bodies; other routes are Fastify's.
   */
  readonly fastify: FastifyPlugin;
  /**
   * Adds `inference.GRPCInferenceService` to a `@grpc/grpc-js` Server (loads
   * `@grpc/grpc-js` and `@grpc/proto-loader`, optional peer dependencies;
   * rejects naming the install command when they are missing).
   */
  addToGrpcServer(grpcServer: GrpcServerLike): Promise<void>;
  /** Requests being served now (HTTP requests, gRPC calls, streams). */
  readonly inFlight: number;
  /** True once `drain()` was called: readiness answers false and new inferences get 503. */
  readonly draining: boolean;
  /**
   * Starts a graceful shutdown of the gateway (not of the Server): readiness
   * turns false, new inferences are refused with 503 (UNAVAILABLE), and the
   * promise resolves once the requests in flight are done, or after
   * `timeoutMs`, when open streams are cancelled. Resolves with whether
   * everything finished in time.
   */
  drain(options?: DrainOptions): Promise<boolean>;
  /** Unregisters every shared memory region; writes the audit log's last lines and closes it; ends the trace files. */
  close(): void;
  /** Writes the traces kept for the trace file and ends the files (close() starts it too). */
  closeTraces(): Promise<void>;
  /** The guard when `options.guard` was given: `update(options)` changes keys, tenants and limits at run time. */
  readonly guard: GatewayGuard | undefined;
  /**
   * The same routes over the same server, ledger and guard, served as by a
   * gateway without shared memory (an isolated group's process serves these
   * to any request but the front's own).
   * @internal
   */
  readonly _withoutSharedMemory: {
    readonly handler: HttpHandler;
    addToGrpcServer(grpcServer: GrpcServerLike): Promise<void>;
  };
  /** Cancels every open stream now (a second SIGTERM to `triton-node serve`). @internal */
  _cancelStreams(): void;
  /** @internal */
  readonly _context: GatewayContext;
}

function resolveOptions(options: GatewayOptions) {
  if (typeof options !== 'object' || options === null)
    throw optionError('createGateway options', 'an object', options);
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw optionError('maxBodyBytes', 'a positive whole number of bytes', maxBodyBytes);
  }
  const flag = (name: 'repositoryControl' | 'sharedMemory' | 'metrics') => {
    const v = options[name] ?? true;
    if (typeof v !== 'boolean') throw optionError(name, 'a boolean', v);
    return v;
  };
  const logger = options.logger ?? {};
  if (typeof logger !== 'object' || logger === null)
    throw optionError('logger', 'a pino-like logger', logger);
  return {
    resolved: {
      maxBodyBytes,
      repositoryControl: flag('repositoryControl'),
      sharedMemory: flag('sharedMemory'),
      metrics: flag('metrics'),
      streams: resolveStreamOptions(options.streams),
      ...(options.trace === undefined ? {} : { trace: checkTraceOptions(options.trace) }),
    },
    logger,
  };
}

/**
 * Builds a gateway speaking the KServe v2 protocol for `server`: its
 * `handler` serves the HTTP/REST routes (health, metadata, inference with
 * JSON and binary tensors, streaming over SSE, the model repository,
 * statistics, shared memory, `/metrics`). Option mistakes throw a TypeError.
 */
export function createGateway(server: Server, options: GatewayOptions = {}): Gateway {
  const { resolved, logger } = resolveOptions(options);
  const ctx = new GatewayContext(
    server,
    resolved,
    logger,
    resolved.metrics ? new GatewayMetrics(server) : undefined,
  );
  const guard =
    options.guard === undefined
      ? undefined
      : new GatewayGuard(options.guard, {
          logger,
          onStoreState: (up) => ctx.metrics?.storeUp(up),
          isServing: (socket) => ctx.serving.has(socket),
        });
  ctx.guard = guard;
  const shm = resolved.sharedMemory ? new SharedMemoryRegistry() : undefined;
  if (options.openai !== undefined) ctx.openai = new OpenAIRoutes(ctx, resolveOpenAIOptions(options.openai));
  const handler = createHttpHandler(ctx, shm);
  return {
    handler,
    fastify: fastifyPlugin(handler, ctx.openai !== undefined),
    addToGrpcServer: (grpcServer) => addGrpcService(ctx, shm, grpcServer),
    get inFlight() {
      return ctx.inFlight;
    },
    get draining() {
      return ctx.draining;
    },
    async drain(drainOptions: DrainOptions = {}) {
      const timeoutMs = drainOptions.timeoutMs ?? 30_000;
      if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
        throw optionError('drain timeoutMs', 'a non-negative number of milliseconds', timeoutMs);
      }
      ctx.draining = true;
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const finished = await Promise.race([ctx.ledger.idle().then(() => true as const), expired]);
      clearTimeout(timer);
      if (!finished) for (const cancel of [...ctx.cancels]) cancel();
      guard?.flush();
      return finished;
    },
    closeTraces: () => ctx.trace.close(),
    close() {
      ctx.trace.close().catch((err) => ctx.log('error', { err }, 'writing the trace file failed'));
      shm?.close();
      guard?.close();
    },
    guard,
    _withoutSharedMemory: {
      handler: createHttpHandler(ctx, undefined),
      addToGrpcServer: (grpcServer) => addGrpcService(ctx, undefined, grpcServer),
    },
    _cancelStreams() {
      for (const cancel of [...ctx.cancels]) cancel();
    },
    _context: ctx,
  };
}
