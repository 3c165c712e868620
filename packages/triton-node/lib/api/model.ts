/**
 * A handle on one model (and optionally one version) of a server. Creating it
 * costs nothing and checks nothing; each call asks the server.
 */
import type { DataType } from '../config/datatypes.js';
import type { ModelStatistics } from '../config/statistics.js';
import type { InferResult } from '../request/result.js';
import type { InferStream, StreamOptions } from '../request/stream.js';
import type { ModelSpec, RequestOf, ResultOf } from '../request/typed.js';
import type { InferRequest } from '../request/types.js';

/** A model version's state in the repository index. */
/** The states of a model version in Triton's model index. */
export const MODEL_STATES = ['READY', 'LOADING', 'UNLOADING', 'UNAVAILABLE'] as const;
export type ModelState = (typeof MODEL_STATES)[number];

/** One entry of `server.modelIndex()`. */
export interface ModelIndexEntry {
  name: string;
  /** Absent for a model in the repository that was never loaded. */
  version?: number;
  state?: ModelState;
  /** Why a version is UNAVAILABLE ('unloaded', or the load error). */
  reason?: string;
}

/** One version of a model and its state. */
export interface ModelVersionState {
  version: number;
  state: ModelState;
  reason?: string;
}

export interface TensorMetadata {
  name: string;
  datatype: DataType;
  /** -1 for variable dimensions; batching models have a leading -1 batch dimension. */
  shape: number[];
}

export interface ModelMetadata {
  name: string;
  /** Versions ready (for a Model without a version: every ready version). */
  versions: number[];
  /** The backend ('identity', 'onnxruntime', ...) or 'ensemble'. */
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
  /**
   * Only on the fake engine, for a model its stand-in backend answers
   * (`fakeEngine.standIns()` in `triton-node/testing`): `'<backend>:<mode>'`,
   * e.g. `'onnxruntime:zeros'`. Its outputs are not results of the model.
   */
  standIn?: string;
}

import type { ModelConfig } from '../config/model-config.js';

export type { ModelConfig };

/** @internal What a Model needs from its server. */
export interface ModelHost {
  _modelIsReady(name: string, version: number): Promise<boolean>;
  _modelMetadata(name: string, version: number): Promise<ModelMetadata>;
  _modelConfig(name: string, version: number): Promise<ModelConfig>;
  _modelStatistics(name: string, version: number): Promise<ModelStatistics[]>;
  _modelVersions(name: string): Promise<ModelVersionState[]>;
  _infer(name: string, version: number, request: InferRequest): Promise<InferResult>;
  _stream(name: string, version: number, request: InferRequest, options: StreamOptions): InferStream;
}

/**
 * A model of a server. `Model<Spec>` (from `server.model<Spec>(name)`) types
 * its requests and results by the spec's input and output names and
 * datatypes; a plain `Model` takes any names.
 */
export class Model<S extends ModelSpec = ModelSpec> {
  readonly name: string;
  /** The version this handle is pinned to; -1 follows the highest ready version. */
  readonly version: number;
  readonly #host: ModelHost;

  /** @internal Use `server.model(name, version)`. */
  constructor(host: ModelHost, name: string, version: number) {
    this.#host = host;
    this.name = name;
    this.version = version;
  }

  /** Whether the model (this version, or any version when unpinned) is ready for inference. */
  isReady(): Promise<boolean> {
    return this.#host._modelIsReady(this.name, this.version);
  }

  /** Inputs, outputs, platform and ready versions. */
  metadata(): Promise<ModelMetadata> {
    return this.#host._modelMetadata(this.name, this.version);
  }

  /** The model config as Triton holds it (with the defaults Triton filled in). */
  config(): Promise<ModelConfig> {
    return this.#host._modelConfig(this.name, this.version);
  }

  /** Cumulative statistics of this version (or of every version when unpinned). */
  statistics(): Promise<ModelStatistics[]> {
    return this.#host._modelStatistics(this.name, this.version);
  }

  /** The versions of this model Triton knows and their states, lowest first. */
  versions(): Promise<ModelVersionState[]> {
    return this.#host._modelVersions(this.name);
  }

  /** Runs one inference. See `server.infer()`. */
  infer<R extends RequestOf<S>>(request: R): Promise<ResultOf<S, R>> {
    return this.#host._infer(this.name, this.version, request as InferRequest) as Promise<ResultOf<S, R>>;
  }

  /** Streams the responses of a decoupled model. See `server.stream()`. */
  stream<R extends RequestOf<S>>(request: R, options: StreamOptions = {}): InferStream<ResultOf<S, R>> {
    const stream: InferStream = this.#host._stream(this.name, this.version, request as InferRequest, options);
    return stream as unknown as InferStream<ResultOf<S, R>>;
  }
}
