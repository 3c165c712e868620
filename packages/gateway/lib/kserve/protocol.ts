/**
 * The protocol's documents other than inference, in the shapes KServe v2 and
 * Triton's extensions give them (snake_case keys, versions as strings), built
 * from the library's typed results, and what the protocol does where the
 * library answers otherwise (an unload of a model that is not loaded).
 * Shared by the HTTP routes and the gRPC service.
 */
import {
  type ModelIndexEntry,
  type ModelMetadata,
  type ModelStatistics,
  type Server,
  type StatisticsDuration,
  cuda,
} from 'triton-node';
import { GatewayError } from '../errors.js';

/** The protocol extensions this gateway serves (server metadata lists them). */
export const EXTENSIONS = [
  'binary_tensor_data',
  'model_repository',
  'model_repository(unload_dependents)',
  'model_configuration',
  'statistics',
  'schedule_policy',
  'sequence',
  'system_shared_memory',
  'generate',
  'trace',
  'logging',
] as const;

export interface ServerMetadataDocument {
  name: string;
  version: string;
  extensions: string[];
}

export async function serverMetadata(server: Server): Promise<ServerMetadataDocument> {
  const m = await server.metadata();
  const extensions: string[] = [...EXTENSIONS];
  if (cuda.isAvailable()) extensions.push('cuda_shared_memory');
  return { name: m.name, version: m.version, extensions };
}

export interface TensorMetadataDocument {
  name: string;
  datatype: string;
  shape: number[];
}

export interface ModelMetadataDocument {
  name: string;
  versions: string[];
  platform: string;
  inputs: TensorMetadataDocument[];
  outputs: TensorMetadataDocument[];
}

export async function modelMetadata(
  server: Server,
  name: string,
  version: number,
): Promise<ModelMetadataDocument> {
  const m: ModelMetadata = await server.model(name, version).metadata();
  const tensors = (list: ModelMetadata['inputs']) =>
    list.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape }));
  return {
    name: m.name,
    versions: m.versions.map(String),
    platform: m.platform,
    inputs: tensors(m.inputs),
    outputs: tensors(m.outputs),
  };
}

export interface IndexEntryDocument {
  name: string;
  version?: string;
  state?: string;
  reason?: string;
}

export function indexDocument(entries: ModelIndexEntry[]): IndexEntryDocument[] {
  return entries.map((e) => {
    const d: IndexEntryDocument = { name: e.name };
    if (e.version !== undefined) d.version = String(e.version);
    if (e.state !== undefined) d.state = e.state;
    if (e.reason !== undefined) d.reason = e.reason;
    return d;
  });
}

const duration = (d: StatisticsDuration) => ({ count: d.count, ns: d.ns });

/** One model version's statistics in Triton's JSON form. */
export function statisticsDocument(s: ModelStatistics): Record<string, unknown> {
  const i = s.inferenceStats;
  return {
    name: s.name,
    version: String(s.version),
    last_inference: s.lastInference,
    inference_count: s.inferenceCount,
    execution_count: s.executionCount,
    inference_stats: {
      success: duration(i.success),
      fail: duration(i.fail),
      queue: duration(i.queue),
      compute_input: duration(i.computeInput),
      compute_infer: duration(i.computeInfer),
      compute_output: duration(i.computeOutput),
      cache_hit: duration(i.cacheHit),
      cache_miss: duration(i.cacheMiss),
    },
    response_stats: Object.fromEntries(
      Object.entries(s.responseStats).map(([k, r]) => [
        k,
        {
          compute_infer: duration(r.computeInfer),
          compute_output: duration(r.computeOutput),
          success: duration(r.success),
          fail: duration(r.fail),
          empty_response: duration(r.emptyResponse),
          cancel: duration(r.cancel),
        },
      ]),
    ),
    batch_stats: s.batchStats.map((b) => ({
      batch_size: b.batchSize,
      compute_input: duration(b.computeInput),
      compute_infer: duration(b.computeInfer),
      compute_output: duration(b.computeOutput),
    })),
    memory_usage: s.memoryUsage.map((m) => ({ type: m.type, id: m.id, byte_size: m.byteSize })),
  };
}

/**
 * Statistics of one model (`name`, at `version` or every version), or of
 * every loaded model when `name` is empty, as Triton's HTTP and gRPC
 * statistics endpoints answer.
 */
export async function modelStatistics(
  server: Server,
  name: string,
  version: number,
): Promise<ModelStatistics[]> {
  if (name !== '') return server.model(name, version).statistics();
  const ready = await server.modelIndex({ readyOnly: true });
  const names = [...new Set(ready.map((e) => e.name))];
  const all = await Promise.all(
    names.map((n) =>
      server
        .model(n)
        .statistics()
        .catch(() => []),
    ),
  );
  return all.flat();
}

/**
 * Unloads a model. Triton answers success for a model of its repository that
 * is not loaded; the library's NOT_FOUND for that case becomes success here
 * too, while a name no repository has stays an error.
 */
export async function unload(server: Server, name: string, dependents: boolean): Promise<void> {
  try {
    await server.unloadModel(name, { unloadDependents: dependents });
  } catch (err) {
    if ((err as { code?: string }).code !== 'NOT_FOUND') throw err;
    const index = await server.modelIndex();
    if (!index.some((e) => e.name === name)) throw err;
  }
}

/**
 * A load of the repository routes (HTTP load, gRPC RepositoryModelLoad). A
 * `config` that is not JSON fails as Triton fails it (its core cannot poll
 * the model: INTERNAL, "failed to load"; recorded in
 * test/fixtures/real-triton-r25.07/wire-answers.json) without reaching the
 * library, whose loadModel takes JSON only.
 */
export async function load(
  server: Server,
  name: string,
  config: string | undefined,
  files: Record<string, Uint8Array>,
): Promise<void> {
  if (config !== undefined) {
    try {
      JSON.parse(config);
    } catch {
      throw new GatewayError(
        500,
        `failed to load '${name}', failed to poll from model repository`,
        'INTERNAL',
      );
    }
  }
  await server.loadModel(name, {
    ...(config === undefined ? {} : { config }),
    ...(Object.keys(files).length === 0 ? {} : { files }),
  });
}
