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
export { Server, type ServerMetadata, type SharedServer } from './api/server.js';
export { PROVEN_RELEASES, type TritonVersion } from './api/releases.js';
export type { StartupFailure } from './api/startup-causes.js';
export type { HealthHandler, HealthOptions, HealthReport, HealthRequest } from './api/health.js';
export type {
  CanaryOptions,
  CanaryReport,
  DeployOptions,
  Deployment,
  DeploymentStatus,
  DeploymentStep,
  RollbackOptions,
} from './deploy/deploy.js';
export {
  parseModelConfig,
  formatModelConfig,
  type BatchInput,
  type BatchOutput,
  type ConfigDataType,
  type Int64,
  type ModelDynamicBatching,
  type ModelEnsembleStep,
  type ModelEnsembling,
  type ModelInput,
  type ModelInstanceGroup,
  type ModelOptimizationPolicy,
  type ModelOutput,
  type ModelQueuePolicy,
  type ModelRateLimiter,
  type ModelSequenceBatching,
  type ModelSequenceControl,
  type ModelSequenceState,
  type ModelTensorReshape,
  type ModelVersionPolicy,
  type ModelWarmup,
} from './config/model-config.js';
export {
  lint,
  lintModel,
  lintRules,
  formatLintText,
  formatLintSarif,
  type LintFinding,
  type LintOptions,
  type LintReport,
  type LintSeverity,
} from './lint/index.js';
export { tune, type TuneOptions, type TunePoint, type TuneProgress, type TuneResult } from './tune/index.js';
export { tuneReportHtml } from './tune/report.js';
export {
  modelTypes,
  type ModelTypesEntry,
  type ModelTypesOptions,
  type ModelTypesOutput,
} from './codegen/codegen.js';
export type { DataTypeArrays, TensorDataOf } from './tensor/tensor.js';
export type {
  DataTypeInputs,
  InputOf,
  ModelSpec,
  TypedInferRequest,
  TypedInferResult,
  TypedTensorInput,
  RequestOf,
  ResultOf,
} from './request/typed.js';
export type {
  ServerOptions,
  LogOptions,
  LogFormat,
  TritonLogger,
  LogSettings,
  LogSettingsUpdate,
  MetricsOptions,
  LoadModelOptions,
  UnloadModelOptions,
  RateLimiterOptions,
  RateLimiterResource,
  RateLimiterMode,
  HostPolicy,
  ResponseCacheOptions,
  LintMode,
} from './api/options.js';
export {
  Model,
  type ModelConfig,
  type ModelIndexEntry,
  type ModelMetadata,
  type ModelState,
  type ModelVersionState,
  type TensorMetadata,
} from './api/model.js';
export { InferStream, type StreamOptions, type StreamStats } from './request/stream.js';
export type { InferResult, ResultJSON } from './request/result.js';
export {
  Tensor,
  type TensorData,
  type TensorJSON,
  type MemoryType,
  type InferTiming,
  type TimingTrace,
  type TimingTimestamps,
  type OutputDestination,
} from './tensor/tensor.js';
export type {
  InferRequest,
  InputData,
  InputValue,
  OutputMemory,
  OutputOptions,
  ParameterValue,
  TensorInput,
} from './request/types.js';
export {
  TritonError,
  type TritonErrorCode,
  type LoadAttempt,
  type ErrorHint,
  hintText,
} from './base/errors.js';
export {
  DATATYPES,
  type DataType,
  type TypedArray,
  decodeBytes,
  encodeBytes,
  elementSize,
  isDataType,
} from './config/datatypes.js';
export { libraryInfo, loadLibrary, type LibraryInfo } from './addon/load.js';
export {
  doctor,
  formatDoctorReport,
  type DoctorOptions,
  type DoctorReport,
  type DoctorCheck,
  type DoctorStatus,
  type LibraryProbe,
  type CudaDeviceInfo,
} from './doctor/index.js';
export { cuda, CudaBuffer, HostBuffer, IPC_HANDLE_BYTES, type CopySource } from './tensor/cuda.js';
export {
  Metric,
  type MetricKind,
  type MetricSpec,
  type MetricsHandler,
  type MetricsRegistry,
  type MetricsRequest,
  type MetricsResponse,
  PROMETHEUS_CONTENT_TYPE,
} from './metrics/metrics.js';
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
} from './config/statistics.js';
