/**
 * triton-node: NVIDIA Triton Inference Server in-process for Node.js.
 *
 * ```ts
 * import { Server } from 'triton-node';
 * const server = await Server.create({ modelRepository: './models' });
 * await server.loadModel('identity_fp32');
 * const { outputs } = await server.model('identity_fp32').infer({ inputs: { INPUT0: new Float32Array([1, 2]) } });
 * await server.stop();
 * ```
 * @packageDocumentation
 */
export { Server, type ServerMetadata } from './server.js';
export type { HealthHandler, HealthOptions, HealthReport, HealthRequest } from './health.js';
export type {
  ServerOptions,
  LogOptions,
  LogFormat,
  MetricsOptions,
  LoadModelOptions,
  UnloadModelOptions,
} from './options.js';
export {
  Model,
  type ModelConfig,
  type ModelIndexEntry,
  type ModelMetadata,
  type ModelState,
  type ModelVersionState,
  type TensorMetadata,
} from './model.js';
export {
  InferStream,
  type InferResult,
  type ResultJSON,
  type StreamOptions,
  type StreamStats,
} from './stream.js';
export {
  Tensor,
  type TensorData,
  type TensorJSON,
  type MemoryType,
  type InferTiming,
  type TimingTimestamps,
  type OutputDestination,
} from './tensor.js';
export type {
  InferRequest,
  InputData,
  InputValue,
  OutputMemory,
  OutputOptions,
  ParameterValue,
  TensorInput,
} from './validate.js';
export { TritonError, type TritonErrorCode, type LoadAttempt } from './errors.js';
export {
  DATATYPES,
  type DataType,
  type TypedArray,
  decodeBytes,
  encodeBytes,
  elementSize,
  isDataType,
} from './datatypes.js';
export { libraryInfo, loadLibrary, type LibraryInfo } from './native.js';
export {
  doctor,
  formatDoctorReport,
  type DoctorOptions,
  type DoctorReport,
  type DoctorCheck,
  type DoctorStatus,
  type LibraryProbe,
} from './doctor/index.js';
export { cuda, CudaBuffer, HostBuffer, IPC_HANDLE_BYTES, type CopySource } from './cuda.js';
export {
  Metric,
  type MetricKind,
  type MetricSpec,
  type MetricsHandler,
  type MetricsRegistry,
  type MetricsRequest,
  type MetricsResponse,
  PROMETHEUS_CONTENT_TYPE,
} from './metrics.js';
export {
  parseModelStatistics,
  statisticsDelta,
  type ModelStatistics,
  type StatisticsDelta,
  type StatisticsDuration,
  type InferenceStatistics,
  type ResponseStatistics,
  type BatchStatistics,
  type MemoryUsage,
} from './statistics.js';
