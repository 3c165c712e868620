/**
 * The Node side: the same closed-loop workloads through triton-node's public
 * API (`Server`, `model.infer`, `model.stream`) in this process.
 */
import { performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';
import { type BenchCase, byteSize, elementCount } from './cases.js';
import { type RunResult, breakdown } from './results.js';

/** The part of the public API the bench uses (shape agreed in the brief). */
interface BenchTensor {
  data: unknown;
  dispose?(): void;
}

interface BenchModel {
  infer(request: { inputs: Record<string, unknown>; outputs?: Record<string, { into: unknown }> }): Promise<{
    outputs: Record<string, BenchTensor>;
  }>;
  stream(
    request: { inputs: Record<string, unknown> },
    options?: { highWaterMark?: number },
  ): AsyncIterable<unknown>;
  statistics(): Promise<unknown>;
}

interface BenchServer {
  loadModel(name: string): Promise<void>;
  metadata(): Promise<{ name: string; version: string }>;
  model(name: string): BenchModel;
  stop(): Promise<void>;
  share(): unknown;
}

interface PublicApi {
  Server: { create(options: Record<string, unknown>): Promise<BenchServer> };
  libraryInfo?: () => unknown;
  cuda: { deviceCount(): number };
}

/** What the chart's title says about the library: from the library, the server's metadata and CUDA. */
export interface LibraryFacts {
  isFake: boolean;
  server: { name: string; version: string };
  /** CUDA devices visible to the process. */
  gpus: number;
}

export interface NodeSettings {
  library: string;
  repository: string;
  backendDirectory?: string;
  durationS: number;
  warmupS: number;
}

type TypedArrayCtor = new (length: number) => ArrayBufferView & { length: number };

const ARRAYS: Readonly<Record<string, TypedArrayCtor>> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  INT8: Int8Array,
  UINT16: Uint16Array,
  INT16: Int16Array,
  FP16: Uint16Array,
  BF16: Uint16Array,
  UINT32: Uint32Array,
  INT32: Int32Array,
  FP32: Float32Array,
  UINT64: BigUint64Array as unknown as TypedArrayCtor,
  INT64: BigInt64Array as unknown as TypedArrayCtor,
  FP64: Float64Array,
};

export class NodeSide {
  private readonly inputs = new Map<string, ArrayBufferView>();

  private constructor(
    private readonly server: BenchServer,
    readonly libraryInfo: unknown,
    readonly facts: LibraryFacts,
  ) {}

  /** Starts one server for the whole run and loads every model the cases need. */
  static async start(settings: NodeSettings, models: string[]): Promise<NodeSide> {
    const api = (await import('triton-node')) as unknown as PublicApi;
    const options: Record<string, unknown> = {
      modelRepository: settings.repository,
      library: settings.library,
      modelControlMode: 'explicit',
      log: { info: false, warn: false },
      exitTimeoutSeconds: 5,
    };
    if (settings.backendDirectory !== undefined) options.backendDirectory = settings.backendDirectory;
    const server = await api.Server.create(options);
    try {
      for (const m of models) await server.loadModel(m);
    } catch (e) {
      await server.stop();
      throw e;
    }
    const info = api.libraryInfo?.() as { isFake?: boolean } | undefined;
    let gpus = 0;
    try {
      gpus = api.cuda.deviceCount();
    } catch {
      // No CUDA runtime: no GPU.
    }
    const facts = { isFake: info?.isFake === true, server: await server.metadata(), gpus };
    return new NodeSide(server, info, facts);
  }

  async stop(): Promise<void> {
    await this.server.stop();
  }

  /** The server, for worker threads to attach to (bench --threads). */
  get shareable(): { share(): unknown } {
    return this.server;
  }

  /** One input per payload shape, allocated and touched once (page faults
   * are no part of any request, as in the driver). */
  private input(c: BenchCase): ArrayBufferView {
    const key = `${c.datatype}:${c.shape.join(',')}`;
    let data = this.inputs.get(key);
    if (data === undefined) {
      const Ctor = ARRAYS[c.datatype];
      if (Ctor === undefined) throw new TypeError(`the bench cannot send datatype '${c.datatype}'`);
      const array = new Ctor(elementCount(c.shape));
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff;
      data = array;
      this.inputs.set(key, data);
    }
    return data;
  }

  /**
   * Large payloads: Triton writes every response into the same warm
   * destinations (`into`), as the driver's allocator hands out the same
   * pooled buffers; a fresh 64 MiB ArrayBuffer per response would also
   * cost V8 a full GC each (its external-memory accounting). Allocated and
   * touched once from a first response, outside the measurement.
   */
  private async warmOutputs(
    model: ReturnType<BenchServer['model']>,
    c: BenchCase,
    inputs: Record<string, unknown>,
  ): Promise<Record<string, { into: unknown }> | undefined> {
    if (c.kind !== 'infer' || byteSize(c) < 1024 * 1024) return undefined;
    const first = await model.infer({ inputs });
    const outputs: Record<string, { into: unknown }> = {};
    for (const name in first.outputs) {
      const data = first.outputs[name]!.data;
      if (!ArrayBuffer.isView(data) || data instanceof DataView) continue;
      const view = data as ArrayBufferView & { length: number };
      const Ctor = view.constructor as TypedArrayCtor;
      const into = new Ctor(view.length);
      new Uint8Array(into.buffer).fill(1);
      outputs[name] = { into };
    }
    for (const name in first.outputs) first.outputs[name]!.dispose?.();
    return outputs;
  }

  async run(c: BenchCase, settings: NodeSettings): Promise<RunResult> {
    const model = this.server.model(c.model);
    const inputs: Record<string, unknown> =
      c.kind === 'stream'
        ? { [c.input]: { data: Int32Array.of(c.responses ?? 0), shape: [1] } }
        : { [c.input]: { data: this.input(c), shape: c.shape, datatype: c.datatype } };
    // Latencies in nanoseconds, 3 significant digits, up to 10 minutes.
    const histogram = hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 600e9,
      numberOfSignificantValueDigits: 3,
    });
    let completed = 0;
    let responsesInWindow = 0;
    let errors = 0;
    let firstError: string | undefined;

    const outputs = await this.warmOutputs(model, c, inputs);
    const request = outputs === undefined ? { inputs } : { inputs, outputs };

    const before = await model.statistics();
    const start = performance.now();
    const windowStart = start + settings.warmupS * 1000;
    const windowEnd = windowStart + settings.durationS * 1000;

    const once = async (): Promise<number> => {
      if (c.kind === 'stream') {
        let responses = 0;
        // Default marks: a consumer that keeps up never trips them, even
        // with thousands of responses arriving per wake-up.
        for await (const _ of model.stream({ inputs })) responses++;
        return responses;
      }
      const result = await model.infer(request);
      // Done with the outputs: give their memory back to the pool now, as
      // the driver reuses its buffers, instead of whenever V8 collects them
      // (a no-op for small, copied outputs and for `into` destinations).
      for (const name in result.outputs) result.outputs[name]!.dispose?.();
      return 1;
    };

    // A slot resubmits as soon as its request has fully completed, until the
    // window ends: the same closed loop as the driver's.
    const slot = async (): Promise<void> => {
      for (;;) {
        const t0 = performance.now();
        let responses = 0;
        try {
          responses = await once();
        } catch (e) {
          errors++;
          firstError ??=
            e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e);
        }
        const t1 = performance.now();
        if (t1 >= windowStart && t1 < windowEnd) {
          histogram.recordValue(Math.max(1, Math.round((t1 - t0) * 1e6)));
          completed++;
          responsesInWindow += responses;
        }
        if (t1 >= windowEnd) return;
      }
    };
    await Promise.all(Array.from({ length: c.concurrency }, slot));
    const after = await model.statistics();

    const us = (ns: number) => ns / 1000;
    const result: RunResult = {
      side: 'node',
      caseName: c.name,
      concurrency: c.concurrency,
      requests: completed,
      durationS: settings.durationS,
      throughput: completed / settings.durationS,
      latencyUs: {
        p50: us(histogram.getValueAtPercentile(50)),
        p90: us(histogram.getValueAtPercentile(90)),
        p99: us(histogram.getValueAtPercentile(99)),
        max: us(histogram.maxValue),
        mean: us(histogram.mean),
      },
      server: breakdown(before, after),
      errors,
    };
    if (c.kind === 'stream') result.responsesPerSec = responsesInWindow / settings.durationS;
    if (firstError !== undefined) result.firstError = firstError;
    histogram.destroy();
    return result;
  }
}
