/**
 * The unary RPCs of `inference.GRPCInferenceService` over the gateway's
 * server: health, metadata, readiness, config, statistics, the model
 * repository, shared memory and ModelInfer, each wrapped by `unary()`
 * (call.ts) into an Exchange of its own.
 */
import type { InferResult } from 'triton-node';
import type { GatewayContext } from '../context.js';
import { GatewayError, badRequest } from '../errors.js';
import {
  indexDocument,
  load,
  modelMetadata,
  modelStatistics,
  serverMetadata,
  statisticsDocument,
  unload,
} from '../kserve/protocol.js';
import type { SharedMemoryRegistry } from '../kserve/shared-memory.js';
import {
  type GrpcLogValue,
  grpcLogSettings,
  updateFromGrpc as updateLogFromGrpc,
} from '../logging/protocol.js';
import { parseVersion } from '../routes.js';
import { grpcSettings, traceSetting, updateFromGrpc } from '../trace/protocol.js';
import { unary } from './call.js';
import { type Json, type Params, decodeGrpcRequest, encodeGrpcResponse } from './codec.js';

function version(req: Record<string, Json>): number {
  return parseVersion(req.version as string | undefined);
}

function repositoryParameters(map: Json): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries((map ?? {}) as Params)) {
    const choice = v.parameter_choice as string | undefined;
    out[k] = choice === undefined ? undefined : v[choice];
  }
  return out;
}

/** RepositoryIndex, RepositoryModelLoad and RepositoryModelUnload. */
function repositoryRpcs(ctx: GatewayContext): Record<string, unknown> {
  const server = ctx.server;
  return {
    RepositoryIndex: unary(ctx, 'RepositoryIndex', async (req, _call, ex) => ({
      models: indexDocument(
        (await server.modelIndex({ readyOnly: req.ready === true })).filter((e) => ex.canSee(e.name)),
      ),
    })),
    RepositoryModelLoad: unary(ctx, 'RepositoryModelLoad', async (req) => {
      if (!ctx.options.repositoryControl)
        throw new GatewayError(403, 'model repository control is disabled on this gateway', 'UNAVAILABLE');
      const params = repositoryParameters(req.parameters);
      const files: Record<string, Uint8Array> = {};
      let config: string | undefined;
      for (const [k, v] of Object.entries(params)) {
        if (k === 'config' && typeof v === 'string') config = v;
        else if (k.startsWith('file:') && v instanceof Uint8Array) files[k.slice(5)] = v;
        else
          throw badRequest(
            `unexpected parameter '${k}' of the load request (expected 'config' as a string or 'file:<path>' as bytes)`,
          );
      }
      await load(server, req.model_name as string, config, files);
      return {};
    }),
    RepositoryModelUnload: unary(ctx, 'RepositoryModelUnload', async (req) => {
      if (!ctx.options.repositoryControl)
        throw new GatewayError(403, 'model repository control is disabled on this gateway', 'UNAVAILABLE');
      const params = repositoryParameters(req.parameters);
      await unload(server, req.model_name as string, params.unload_dependents === true);
      return {};
    }),
  };
}

/** The CudaSharedMemory calls. */
function cudaSharedMemoryRpcs(
  shm: SharedMemoryRegistry | undefined,
  ctx: GatewayContext,
): Record<string, unknown> {
  return {
    CudaSharedMemoryStatus: unary(ctx, 'CudaSharedMemoryStatus', async (req) => {
      const list = requireShm(shm).cudaStatus(req.name === '' ? undefined : (req.name as string));
      return { regions: Object.fromEntries(list.map((r) => [r.name, r])) };
    }),
    CudaSharedMemoryRegister: unary(ctx, 'CudaSharedMemoryRegister', async (req) => {
      const handle = req.raw_handle as Uint8Array;
      requireShm(shm).registerCuda(
        req.name as string,
        new Uint8Array(handle),
        Number(req.device_id),
        Number(req.byte_size),
      );
      return {};
    }),
    CudaSharedMemoryUnregister: unary(ctx, 'CudaSharedMemoryUnregister', async (req) => {
      requireShm(shm).unregisterCuda(req.name === '' ? undefined : (req.name as string));
      return {};
    }),
  };
}

/** The SystemSharedMemory calls. */
function sharedMemoryRpcs(
  shm: SharedMemoryRegistry | undefined,
  ctx: GatewayContext,
): Record<string, unknown> {
  return {
    SystemSharedMemoryStatus: unary(ctx, 'SystemSharedMemoryStatus', async (req) => {
      const registry = requireShm(shm);
      const list = registry.status(req.name === '' ? undefined : (req.name as string));
      return { regions: Object.fromEntries(list.map((r) => [r.name, r])) };
    }),
    SystemSharedMemoryRegister: unary(ctx, 'SystemSharedMemoryRegister', async (req) => {
      requireShm(shm).register(
        req.name as string,
        req.key as string,
        Number(req.offset),
        Number(req.byte_size),
      );
      return {};
    }),
    SystemSharedMemoryUnregister: unary(ctx, 'SystemSharedMemoryUnregister', async (req) => {
      requireShm(shm).unregister(req.name === '' ? undefined : (req.name as string));
      return {};
    }),
  };
}

/** The unary RPCs over the gateway's context (ModelStreamInfer is stream.ts's). */
export function unaryRpcs(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
): Record<string, unknown> {
  const server = ctx.server;
  const modelName = (req: Record<string, Json>) => {
    if (typeof req.name !== 'string' || req.name === '') throw badRequest('the request names no model');
    return req.name;
  };
  return {
    ServerLive: unary(ctx, 'ServerLive', async () => ({ live: await server.isLive() })),
    ServerReady: unary(ctx, 'ServerReady', async () => ({
      ready: !ctx.draining && (await server.isReady()),
    })),
    ModelReady: unary(ctx, 'ModelReady', async (req) => ({
      ready: await server.model(modelName(req), version(req)).isReady(),
    })),
    ServerMetadata: unary(ctx, 'ServerMetadata', () => serverMetadata(server)),
    ModelMetadata: unary(ctx, 'ModelMetadata', (req) => modelMetadata(server, modelName(req), version(req))),
    ModelConfig: unary(ctx, 'ModelConfig', async (req) => ({
      config: await server.model(modelName(req), version(req)).config(),
    })),
    ModelStatistics: unary(ctx, 'ModelStatistics', async (req, _call, ex) => {
      const stats = (await modelStatistics(server, (req.name as string) ?? '', version(req))).filter((s) =>
        ex.canSee(s.name),
      );
      return { model_stats: stats.map(statisticsDocument) };
    }),
    TraceSetting: unary(ctx, 'TraceSetting', async (req) => {
      const settings = (req.settings ?? {}) as Record<string, { value?: string[] }>;
      const model = typeof req.model_name === 'string' ? req.model_name : '';
      const update = Object.keys(settings).length === 0 ? undefined : () => updateFromGrpc(settings);
      return grpcSettings(await traceSetting(server, ctx.trace, model, update));
    }),
    LogSettings: unary(ctx, 'LogSettings', async (req) => {
      updateLogFromGrpc(server, (req.settings ?? {}) as Record<string, GrpcLogValue>);
      return grpcLogSettings(server.logSettings());
    }),
    ...repositoryRpcs(ctx),
    ...sharedMemoryRpcs(shm, ctx),
    ...cudaSharedMemoryRpcs(shm, ctx),
    ModelInfer: unary(ctx, 'ModelInfer', async (req, call, ex) => {
      if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
      const decoded = decodeGrpcRequest(req, shm);
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort(new Error('the client cancelled the call')));
      decoded.request.signal = abort.signal;
      const result: InferResult = await ex.infer(decoded.request, (r) =>
        server.model(decoded.name, decoded.version).infer(r),
      );
      try {
        return encodeGrpcResponse(result, decoded.outputs, shm);
      } finally {
        // grpc-js serializes the message within the callback: the views may go after.
        setImmediate(() => result.dispose());
      }
    }),
  };
}

function requireShm(shm: SharedMemoryRegistry | undefined): SharedMemoryRegistry {
  if (shm === undefined)
    throw new GatewayError(501, 'shared memory is not enabled on this gateway', 'UNSUPPORTED');
  return shm;
}
