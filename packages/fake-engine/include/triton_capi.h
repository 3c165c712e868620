// triton-node's own declarations of the TRITONSERVER C API (API 1.34).
//
// Only the entry points this project uses are declared. Names, signatures
// and enum values are facts of Triton's ABI and must match the real library
// exactly; everything else here is ours. The same list serves two users:
//   * native/fake/ implements every function (as extern "C" exports);
//   * native/triton_api.* resolves them with dlsym into one table.
// Functions are listed once, in TRITON_CAPI_REQUIRED / TRITON_CAPI_OPTIONAL,
// as X(return_type, name, (parameter list)).
#ifndef TRITON_NODE_TRITON_CAPI_H_
#define TRITON_NODE_TRITON_CAPI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRITON_NODE_API_MAJOR 1
// The oldest minor we accept. Entry points newer than this are optional.
#define TRITON_NODE_API_MIN_MINOR 30
// The minor these declarations were written against.
#define TRITON_NODE_API_MINOR 34

// Opaque handles.
struct TRITONSERVER_BufferAttributes;
struct TRITONSERVER_Error;
struct TRITONSERVER_InferenceRequest;
struct TRITONSERVER_InferenceResponse;
struct TRITONSERVER_InferenceTrace;
struct TRITONSERVER_Message;
struct TRITONSERVER_Metrics;
struct TRITONSERVER_Parameter;
struct TRITONSERVER_ResponseAllocator;
struct TRITONSERVER_Server;
struct TRITONSERVER_ServerOptions;
struct TRITONSERVER_Metric;
struct TRITONSERVER_MetricFamily;
struct TRITONSERVER_MetricArgs;

typedef struct TRITONSERVER_BufferAttributes TRITONSERVER_BufferAttributes;
typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_InferenceRequest TRITONSERVER_InferenceRequest;
typedef struct TRITONSERVER_InferenceResponse TRITONSERVER_InferenceResponse;
typedef struct TRITONSERVER_InferenceTrace TRITONSERVER_InferenceTrace;
typedef struct TRITONSERVER_Message TRITONSERVER_Message;
typedef struct TRITONSERVER_Metrics TRITONSERVER_Metrics;
typedef struct TRITONSERVER_Parameter TRITONSERVER_Parameter;
typedef struct TRITONSERVER_ResponseAllocator TRITONSERVER_ResponseAllocator;
typedef struct TRITONSERVER_Server TRITONSERVER_Server;
typedef struct TRITONSERVER_ServerOptions TRITONSERVER_ServerOptions;
typedef struct TRITONSERVER_Metric TRITONSERVER_Metric;
typedef struct TRITONSERVER_MetricFamily TRITONSERVER_MetricFamily;
typedef struct TRITONSERVER_MetricArgs TRITONSERVER_MetricArgs;

// ---- Enumerations (values are ABI) ----------------------------------------

typedef enum TRITONSERVER_datatype_enum {
  TRITONSERVER_TYPE_INVALID = 0,
  TRITONSERVER_TYPE_BOOL = 1,
  TRITONSERVER_TYPE_UINT8 = 2,
  TRITONSERVER_TYPE_UINT16 = 3,
  TRITONSERVER_TYPE_UINT32 = 4,
  TRITONSERVER_TYPE_UINT64 = 5,
  TRITONSERVER_TYPE_INT8 = 6,
  TRITONSERVER_TYPE_INT16 = 7,
  TRITONSERVER_TYPE_INT32 = 8,
  TRITONSERVER_TYPE_INT64 = 9,
  TRITONSERVER_TYPE_FP16 = 10,
  TRITONSERVER_TYPE_FP32 = 11,
  TRITONSERVER_TYPE_FP64 = 12,
  TRITONSERVER_TYPE_BYTES = 13,
  TRITONSERVER_TYPE_BF16 = 14
} TRITONSERVER_DataType;

typedef enum TRITONSERVER_memorytype_enum {
  TRITONSERVER_MEMORY_CPU = 0,
  TRITONSERVER_MEMORY_CPU_PINNED = 1,
  TRITONSERVER_MEMORY_GPU = 2
} TRITONSERVER_MemoryType;

typedef enum TRITONSERVER_parametertype_enum {
  TRITONSERVER_PARAMETER_STRING = 0,
  TRITONSERVER_PARAMETER_INT = 1,
  TRITONSERVER_PARAMETER_BOOL = 2,
  TRITONSERVER_PARAMETER_DOUBLE = 3,
  TRITONSERVER_PARAMETER_BYTES = 4
} TRITONSERVER_ParameterType;

typedef enum TRITONSERVER_instancegroupkind_enum {
  TRITONSERVER_INSTANCEGROUPKIND_AUTO = 0,
  TRITONSERVER_INSTANCEGROUPKIND_CPU = 1,
  TRITONSERVER_INSTANCEGROUPKIND_GPU = 2,
  TRITONSERVER_INSTANCEGROUPKIND_MODEL = 3
} TRITONSERVER_InstanceGroupKind;

typedef enum TRITONSERVER_loglevel_enum {
  TRITONSERVER_LOG_INFO = 0,
  TRITONSERVER_LOG_WARN = 1,
  TRITONSERVER_LOG_ERROR = 2,
  TRITONSERVER_LOG_VERBOSE = 3
} TRITONSERVER_LogLevel;

typedef enum TRITONSERVER_logformat_enum {
  TRITONSERVER_LOG_DEFAULT = 0,
  TRITONSERVER_LOG_ISO8601 = 1
} TRITONSERVER_LogFormat;

typedef enum TRITONSERVER_ratelimitmode_enum {
  TRITONSERVER_RATE_LIMIT_OFF = 0,
  TRITONSERVER_RATE_LIMIT_EXEC_COUNT = 1
} TRITONSERVER_RateLimitMode;

typedef enum TRITONSERVER_errorcode_enum {
  TRITONSERVER_ERROR_UNKNOWN = 0,
  TRITONSERVER_ERROR_INTERNAL = 1,
  TRITONSERVER_ERROR_NOT_FOUND = 2,
  TRITONSERVER_ERROR_INVALID_ARG = 3,
  TRITONSERVER_ERROR_UNAVAILABLE = 4,
  TRITONSERVER_ERROR_UNSUPPORTED = 5,
  TRITONSERVER_ERROR_ALREADY_EXISTS = 6,
  TRITONSERVER_ERROR_CANCELLED = 7
} TRITONSERVER_Error_Code;

typedef enum tritonserver_metricformat_enum {
  TRITONSERVER_METRIC_PROMETHEUS = 0
} TRITONSERVER_MetricFormat;

typedef enum tritonserver_tracelevel_enum {
  TRITONSERVER_TRACE_LEVEL_DISABLED = 0,
  TRITONSERVER_TRACE_LEVEL_MIN = 1,
  TRITONSERVER_TRACE_LEVEL_MAX = 2,
  TRITONSERVER_TRACE_LEVEL_TIMESTAMPS = 0x4,
  TRITONSERVER_TRACE_LEVEL_TENSORS = 0x8
} TRITONSERVER_InferenceTraceLevel;

typedef enum tritonserver_traceactivity_enum {
  TRITONSERVER_TRACE_REQUEST_START = 0,
  TRITONSERVER_TRACE_QUEUE_START = 1,
  TRITONSERVER_TRACE_COMPUTE_START = 2,
  TRITONSERVER_TRACE_COMPUTE_INPUT_END = 3,
  TRITONSERVER_TRACE_COMPUTE_OUTPUT_START = 4,
  TRITONSERVER_TRACE_COMPUTE_END = 5,
  TRITONSERVER_TRACE_REQUEST_END = 6,
  TRITONSERVER_TRACE_TENSOR_QUEUE_INPUT = 7,
  TRITONSERVER_TRACE_TENSOR_BACKEND_INPUT = 8,
  TRITONSERVER_TRACE_TENSOR_BACKEND_OUTPUT = 9,
  TRITONSERVER_TRACE_CUSTOM_ACTIVITY = 10
} TRITONSERVER_InferenceTraceActivity;

typedef enum tritonserver_requestflag_enum {
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1,
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
} TRITONSERVER_RequestFlag;

typedef enum tritonserver_requestreleaseflag_enum {
  TRITONSERVER_REQUEST_RELEASE_ALL = 1,
  TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2
} TRITONSERVER_RequestReleaseFlag;

typedef enum tritonserver_responsecompleteflag_enum {
  TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
} TRITONSERVER_ResponseCompleteFlag;

typedef enum tritonserver_modelcontrolmode_enum {
  TRITONSERVER_MODEL_CONTROL_NONE = 0,
  TRITONSERVER_MODEL_CONTROL_POLL = 1,
  TRITONSERVER_MODEL_CONTROL_EXPLICIT = 2
} TRITONSERVER_ModelControlMode;

typedef enum tritonserver_batchflag_enum {
  TRITONSERVER_BATCH_UNKNOWN = 1,
  TRITONSERVER_BATCH_FIRST_DIM = 2
} TRITONSERVER_ModelBatchFlag;

typedef enum tritonserver_modelindexflag_enum {
  TRITONSERVER_INDEX_FLAG_READY = 1
} TRITONSERVER_ModelIndexFlag;

typedef enum tritonserver_txn_property_flag_enum {
  TRITONSERVER_TXN_ONE_TO_ONE = 1,
  TRITONSERVER_TXN_DECOUPLED = 2
} TRITONSERVER_ModelTxnPropertyFlag;

typedef enum TRITONSERVER_metrickind_enum {
  TRITONSERVER_METRIC_KIND_COUNTER = 0,
  TRITONSERVER_METRIC_KIND_GAUGE = 1,
  TRITONSERVER_METRIC_KIND_HISTOGRAM = 2
} TRITONSERVER_MetricKind;

// ---- Callback types --------------------------------------------------------

typedef TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorAllocFn_t)(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id, void* userp, void** buffer, void** buffer_userp,
    TRITONSERVER_MemoryType* actual_memory_type,
    int64_t* actual_memory_type_id);
typedef TRITONSERVER_Error* (
    *TRITONSERVER_ResponseAllocatorBufferAttributesFn_t)(
    TRITONSERVER_ResponseAllocator* allocator, const char* tensor_name,
    TRITONSERVER_BufferAttributes* buffer_attributes, void* userp,
    void* buffer_userp);
typedef TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorQueryFn_t)(
    TRITONSERVER_ResponseAllocator* allocator, void* userp,
    const char* tensor_name, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id);
typedef TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorReleaseFn_t)(
    TRITONSERVER_ResponseAllocator* allocator, void* buffer, void* buffer_userp,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id);
typedef TRITONSERVER_Error* (*TRITONSERVER_ResponseAllocatorStartFn_t)(
    TRITONSERVER_ResponseAllocator* allocator, void* userp);

typedef void (*TRITONSERVER_InferenceTraceActivityFn_t)(
    TRITONSERVER_InferenceTrace* trace,
    TRITONSERVER_InferenceTraceActivity activity, uint64_t timestamp_ns,
    void* userp);
typedef void (*TRITONSERVER_InferenceTraceReleaseFn_t)(
    TRITONSERVER_InferenceTrace* trace, void* userp);

typedef void (*TRITONSERVER_InferenceRequestReleaseFn_t)(
    TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp);
typedef void (*TRITONSERVER_InferenceResponseCompleteFn_t)(
    TRITONSERVER_InferenceResponse* response, const uint32_t flags,
    void* userp);

// ---- Entry points ----------------------------------------------------------
// X(return type, name, (parameters)). Every required entry point exists in
// API 1.30 and later; optional ones may be missing and resolve to null.

#define TRITON_CAPI_REQUIRED(X)                                                \
  X(TRITONSERVER_Error*, TRITONSERVER_ApiVersion,                              \
    (uint32_t * major, uint32_t * minor))                                      \
  X(const char*, TRITONSERVER_DataTypeString,                                  \
    (TRITONSERVER_DataType datatype))                                          \
  X(TRITONSERVER_DataType, TRITONSERVER_StringToDataType, (const char* dtype)) \
  X(uint32_t, TRITONSERVER_DataTypeByteSize, (TRITONSERVER_DataType datatype)) \
  X(const char*, TRITONSERVER_MemoryTypeString,                                \
    (TRITONSERVER_MemoryType memtype))                                         \
  X(TRITONSERVER_Parameter*, TRITONSERVER_ParameterNew,                        \
    (const char* name, const TRITONSERVER_ParameterType type,                  \
     const void* value))                                                       \
  X(TRITONSERVER_Parameter*, TRITONSERVER_ParameterBytesNew,                   \
    (const char* name, const void* byte_ptr, const uint64_t size))             \
  X(void, TRITONSERVER_ParameterDelete, (TRITONSERVER_Parameter * parameter))  \
  X(TRITONSERVER_Error*, TRITONSERVER_ErrorNew,                                \
    (TRITONSERVER_Error_Code code, const char* msg))                           \
  X(void, TRITONSERVER_ErrorDelete, (TRITONSERVER_Error * error))              \
  X(TRITONSERVER_Error_Code, TRITONSERVER_ErrorCode,                           \
    (TRITONSERVER_Error * error))                                              \
  X(const char*, TRITONSERVER_ErrorCodeString, (TRITONSERVER_Error * error))   \
  X(const char*, TRITONSERVER_ErrorMessage, (TRITONSERVER_Error * error))      \
  X(TRITONSERVER_Error*, TRITONSERVER_ResponseAllocatorNew,                    \
    (TRITONSERVER_ResponseAllocator * *allocator,                              \
     TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn,                         \
     TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn,                     \
     TRITONSERVER_ResponseAllocatorStartFn_t start_fn))                        \
  X(TRITONSERVER_Error*,                                                       \
    TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction,                 \
    (TRITONSERVER_ResponseAllocator * allocator,                               \
     TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn)) \
  X(TRITONSERVER_Error*, TRITONSERVER_ResponseAllocatorSetQueryFunction,       \
    (TRITONSERVER_ResponseAllocator * allocator,                               \
     TRITONSERVER_ResponseAllocatorQueryFn_t query_fn))                        \
  X(TRITONSERVER_Error*, TRITONSERVER_ResponseAllocatorDelete,                 \
    (TRITONSERVER_ResponseAllocator * allocator))                              \
  X(TRITONSERVER_Error*, TRITONSERVER_MessageNewFromSerializedJson,            \
    (TRITONSERVER_Message * *message, const char* base, size_t byte_size))     \
  X(TRITONSERVER_Error*, TRITONSERVER_MessageDelete,                           \
    (TRITONSERVER_Message * message))                                          \
  X(TRITONSERVER_Error*, TRITONSERVER_MessageSerializeToJson,                  \
    (TRITONSERVER_Message * message, const char** base, size_t* byte_size))    \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricsDelete,                           \
    (TRITONSERVER_Metrics * metrics))                                          \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricsFormatted,                        \
    (TRITONSERVER_Metrics * metrics, TRITONSERVER_MetricFormat format,         \
     const char** base, size_t* byte_size))                                    \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceTraceNew,                       \
    (TRITONSERVER_InferenceTrace * *trace,                                     \
     TRITONSERVER_InferenceTraceLevel level, uint64_t parent_id,               \
     TRITONSERVER_InferenceTraceActivityFn_t activity_fn,                      \
     TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* trace_userp))    \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceTraceDelete,                    \
    (TRITONSERVER_InferenceTrace * trace))                                     \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceTraceId,                        \
    (TRITONSERVER_InferenceTrace * trace, uint64_t * id))                      \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceTraceParentId,                  \
    (TRITONSERVER_InferenceTrace * trace, uint64_t * parent_id))               \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceTraceModelName,                 \
    (TRITONSERVER_InferenceTrace * trace, const char** model_name))            \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceTraceModelVersion,              \
    (TRITONSERVER_InferenceTrace * trace, int64_t * model_version))            \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestNew,                     \
    (TRITONSERVER_InferenceRequest * *inference_request,                       \
     TRITONSERVER_Server * server, const char* model_name,                     \
     const int64_t model_version))                                             \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestDelete,                  \
    (TRITONSERVER_InferenceRequest * inference_request))                       \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetId,                   \
    (TRITONSERVER_InferenceRequest * inference_request, const char* id))       \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetFlags,                \
    (TRITONSERVER_InferenceRequest * inference_request, uint32_t flags))       \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetCorrelationId,        \
    (TRITONSERVER_InferenceRequest * inference_request,                        \
     uint64_t correlation_id))                                                 \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetCorrelationIdString,  \
    (TRITONSERVER_InferenceRequest * inference_request,                        \
     const char* correlation_id))                                              \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestCancel,                  \
    (TRITONSERVER_InferenceRequest * inference_request))                       \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestIsCancelled,             \
    (TRITONSERVER_InferenceRequest * inference_request, bool* is_cancelled))   \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetPriorityUInt64,       \
    (TRITONSERVER_InferenceRequest * inference_request, uint64_t priority))    \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetTimeoutMicroseconds,  \
    (TRITONSERVER_InferenceRequest * inference_request, uint64_t timeout_us))  \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestAddInput,                \
    (TRITONSERVER_InferenceRequest * inference_request, const char* name,      \
     const TRITONSERVER_DataType datatype, const int64_t* shape,               \
     uint64_t dim_count))                                                      \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestAddRawInput,             \
    (TRITONSERVER_InferenceRequest * inference_request, const char* name))     \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestRemoveAllInputs,         \
    (TRITONSERVER_InferenceRequest * inference_request))                       \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestRemoveAllInputData,      \
    (TRITONSERVER_InferenceRequest * inference_request, const char* name))     \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestAppendInputData,         \
    (TRITONSERVER_InferenceRequest * inference_request, const char* name,      \
     const void* base, size_t byte_size, TRITONSERVER_MemoryType memory_type,  \
     int64_t memory_type_id))                                                  \
  X(TRITONSERVER_Error*,                                                       \
    TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes,          \
    (TRITONSERVER_InferenceRequest * inference_request, const char* name,      \
     const void* base, TRITONSERVER_BufferAttributes* buffer_attributes))      \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestAddRequestedOutput,      \
    (TRITONSERVER_InferenceRequest * inference_request, const char* name))     \
  X(TRITONSERVER_Error*,                                                       \
    TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs,                    \
    (TRITONSERVER_InferenceRequest * inference_request))                       \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetReleaseCallback,      \
    (TRITONSERVER_InferenceRequest * inference_request,                        \
     TRITONSERVER_InferenceRequestReleaseFn_t request_release_fn,              \
     void* request_release_userp))                                             \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetResponseCallback,     \
    (TRITONSERVER_InferenceRequest * inference_request,                        \
     TRITONSERVER_ResponseAllocator * response_allocator,                      \
     void* response_allocator_userp,                                           \
     TRITONSERVER_InferenceResponseCompleteFn_t response_fn,                   \
     void* response_userp))                                                    \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetStringParameter,      \
    (TRITONSERVER_InferenceRequest * request, const char* key,                 \
     const char* value))                                                       \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetIntParameter,         \
    (TRITONSERVER_InferenceRequest * request, const char* key,                 \
     const int64_t value))                                                     \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetBoolParameter,        \
    (TRITONSERVER_InferenceRequest * request, const char* key,                 \
     const bool value))                                                        \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceRequestSetDoubleParameter,      \
    (TRITONSERVER_InferenceRequest * request, const char* key,                 \
     const double value))                                                      \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseDelete,                 \
    (TRITONSERVER_InferenceResponse * inference_response))                     \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseError,                  \
    (TRITONSERVER_InferenceResponse * inference_response))                     \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseModel,                  \
    (TRITONSERVER_InferenceResponse * inference_response,                      \
     const char** model_name, int64_t* model_version))                         \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseId,                     \
    (TRITONSERVER_InferenceResponse * inference_response,                      \
     const char** request_id))                                                 \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseParameterCount,         \
    (TRITONSERVER_InferenceResponse * inference_response, uint32_t * count))   \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseParameter,              \
    (TRITONSERVER_InferenceResponse * inference_response,                      \
     const uint32_t index, const char** name,                                  \
     TRITONSERVER_ParameterType* type, const void** vvalue))                   \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseOutputCount,            \
    (TRITONSERVER_InferenceResponse * inference_response, uint32_t * count))   \
  X(TRITONSERVER_Error*, TRITONSERVER_InferenceResponseOutput,                 \
    (TRITONSERVER_InferenceResponse * inference_response,                      \
     const uint32_t index, const char** name, TRITONSERVER_DataType* datatype, \
     const int64_t** shape, uint64_t* dim_count, const void** base,            \
     size_t* byte_size, TRITONSERVER_MemoryType* memory_type,                  \
     int64_t* memory_type_id, void** userp))                                   \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesNew,                     \
    (TRITONSERVER_BufferAttributes * *buffer_attributes))                      \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesDelete,                  \
    (TRITONSERVER_BufferAttributes * buffer_attributes))                       \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesSetMemoryTypeId,         \
    (TRITONSERVER_BufferAttributes * buffer_attributes,                        \
     int64_t memory_type_id))                                                  \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesSetMemoryType,           \
    (TRITONSERVER_BufferAttributes * buffer_attributes,                        \
     TRITONSERVER_MemoryType memory_type))                                     \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesSetCudaIpcHandle,        \
    (TRITONSERVER_BufferAttributes * buffer_attributes,                        \
     void* cuda_ipc_handle))                                                   \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesSetByteSize,             \
    (TRITONSERVER_BufferAttributes * buffer_attributes, size_t byte_size))     \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesMemoryTypeId,            \
    (TRITONSERVER_BufferAttributes * buffer_attributes,                        \
     int64_t * memory_type_id))                                                \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesMemoryType,              \
    (TRITONSERVER_BufferAttributes * buffer_attributes,                        \
     TRITONSERVER_MemoryType * memory_type))                                   \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesCudaIpcHandle,           \
    (TRITONSERVER_BufferAttributes * buffer_attributes,                        \
     void** cuda_ipc_handle))                                                  \
  X(TRITONSERVER_Error*, TRITONSERVER_BufferAttributesByteSize,                \
    (TRITONSERVER_BufferAttributes * buffer_attributes, size_t * byte_size))   \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsNew,                        \
    (TRITONSERVER_ServerOptions * *options))                                   \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsDelete,                     \
    (TRITONSERVER_ServerOptions * options))                                    \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetServerId,                \
    (TRITONSERVER_ServerOptions * options, const char* server_id))             \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetModelRepositoryPath,     \
    (TRITONSERVER_ServerOptions * options, const char* model_repository_path)) \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetModelControlMode,        \
    (TRITONSERVER_ServerOptions * options,                                     \
     TRITONSERVER_ModelControlMode mode))                                      \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetStartupModel,            \
    (TRITONSERVER_ServerOptions * options, const char* model_name))            \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetStrictModelConfig,       \
    (TRITONSERVER_ServerOptions * options, bool strict))                       \
  X(TRITONSERVER_Error*,                                                       \
    TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize,                     \
    (TRITONSERVER_ServerOptions * options, uint64_t size))                     \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize,  \
    (TRITONSERVER_ServerOptions * options, int gpu_device, uint64_t size))     \
  X(TRITONSERVER_Error*,                                                       \
    TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability,                \
    (TRITONSERVER_ServerOptions * options, double cc))                         \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetExitOnError,             \
    (TRITONSERVER_ServerOptions * options, bool exit))                         \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetStrictReadiness,         \
    (TRITONSERVER_ServerOptions * options, bool strict))                       \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetExitTimeout,             \
    (TRITONSERVER_ServerOptions * options, unsigned int timeout))              \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetModelLoadThreadCount,    \
    (TRITONSERVER_ServerOptions * options, unsigned int thread_count))         \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetModelLoadRetryCount,     \
    (TRITONSERVER_ServerOptions * options, unsigned int retry_count))          \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetLogFile,                 \
    (TRITONSERVER_ServerOptions * options, const char* file))                  \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetLogInfo,                 \
    (TRITONSERVER_ServerOptions * options, bool log))                          \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetLogWarn,                 \
    (TRITONSERVER_ServerOptions * options, bool log))                          \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetLogError,                \
    (TRITONSERVER_ServerOptions * options, bool log))                          \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetLogVerbose,              \
    (TRITONSERVER_ServerOptions * options, int level))                         \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetLogFormat,               \
    (TRITONSERVER_ServerOptions * options, TRITONSERVER_LogFormat format))     \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetMetrics,                 \
    (TRITONSERVER_ServerOptions * options, bool metrics))                      \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetGpuMetrics,              \
    (TRITONSERVER_ServerOptions * options, bool gpu_metrics))                  \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetCpuMetrics,              \
    (TRITONSERVER_ServerOptions * options, bool cpu_metrics))                  \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetMetricsInterval,         \
    (TRITONSERVER_ServerOptions * options, uint64_t metrics_interval_ms))      \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetBackendDirectory,        \
    (TRITONSERVER_ServerOptions * options, const char* backend_dir))           \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetRepoAgentDirectory,      \
    (TRITONSERVER_ServerOptions * options, const char* repoagent_dir))         \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetBackendConfig,           \
    (TRITONSERVER_ServerOptions * options, const char* backend_name,           \
     const char* setting, const char* value))                                  \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetRateLimiterMode,         \
    (TRITONSERVER_ServerOptions * options, TRITONSERVER_RateLimitMode mode))   \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsAddRateLimiterResource,     \
    (TRITONSERVER_ServerOptions * options, const char* resource_name,          \
     size_t resource_count, int device))                                       \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetHostPolicy,              \
    (TRITONSERVER_ServerOptions * options, const char* policy_name,            \
     const char* setting, const char* value))                                  \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetCacheConfig,             \
    (TRITONSERVER_ServerOptions * options, const char* cache_name,             \
     const char* config_json))                                                 \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetCacheDirectory,          \
    (TRITONSERVER_ServerOptions * options, const char* cache_dir))             \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerNew,                               \
    (TRITONSERVER_Server * *server, TRITONSERVER_ServerOptions * options))     \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerDelete,                            \
    (TRITONSERVER_Server * server))                                            \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerStop,                              \
    (TRITONSERVER_Server * server))                                            \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerSetExitTimeout,                    \
    (TRITONSERVER_Server * server, unsigned int timeout))                      \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerIsLive,                            \
    (TRITONSERVER_Server * server, bool* live))                                \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerIsReady,                           \
    (TRITONSERVER_Server * server, bool* ready))                               \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerModelIsReady,                      \
    (TRITONSERVER_Server * server, const char* model_name,                     \
     const int64_t model_version, bool* ready))                                \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerModelBatchProperties,              \
    (TRITONSERVER_Server * server, const char* model_name,                     \
     const int64_t model_version, uint32_t* flags, void** voidp))              \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerModelTransactionProperties,        \
    (TRITONSERVER_Server * server, const char* model_name,                     \
     const int64_t model_version, uint32_t* txn_flags, void** voidp))          \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerMetadata,                          \
    (TRITONSERVER_Server * server, TRITONSERVER_Message * *server_metadata))   \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerModelMetadata,                     \
    (TRITONSERVER_Server * server, const char* model_name,                     \
     const int64_t model_version, TRITONSERVER_Message** model_metadata))      \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerModelStatistics,                   \
    (TRITONSERVER_Server * server, const char* model_name,                     \
     const int64_t model_version, TRITONSERVER_Message** model_stats))         \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerModelConfig,                       \
    (TRITONSERVER_Server * server, const char* model_name,                     \
     const int64_t model_version, const uint32_t config_version,               \
     TRITONSERVER_Message** model_config))                                     \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerModelIndex,                        \
    (TRITONSERVER_Server * server, uint32_t flags,                             \
     TRITONSERVER_Message * *model_index))                                     \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerLoadModel,                         \
    (TRITONSERVER_Server * server, const char* model_name))                    \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerLoadModelWithParameters,           \
    (TRITONSERVER_Server * server, const char* model_name,                     \
     const TRITONSERVER_Parameter** parameters,                                \
     const uint64_t parameter_count))                                          \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerUnloadModel,                       \
    (TRITONSERVER_Server * server, const char* model_name))                    \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerUnloadModelAndDependents,          \
    (TRITONSERVER_Server * server, const char* model_name))                    \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerMetrics,                           \
    (TRITONSERVER_Server * server, TRITONSERVER_Metrics * *metrics))           \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerInferAsync,                        \
    (TRITONSERVER_Server * server,                                             \
     TRITONSERVER_InferenceRequest * inference_request,                        \
     TRITONSERVER_InferenceTrace * trace))                                     \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricFamilyNew,                         \
    (TRITONSERVER_MetricFamily * *family, const TRITONSERVER_MetricKind kind,  \
     const char* name, const char* description))                               \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricFamilyDelete,                      \
    (TRITONSERVER_MetricFamily * family))                                      \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricNew,                               \
    (TRITONSERVER_Metric * *metric, TRITONSERVER_MetricFamily * family,        \
     const TRITONSERVER_Parameter** labels, const uint64_t label_count))       \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricDelete,                            \
    (TRITONSERVER_Metric * metric))                                            \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricValue,                             \
    (TRITONSERVER_Metric * metric, double* value))                             \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricIncrement,                         \
    (TRITONSERVER_Metric * metric, double value))                              \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricSet,                               \
    (TRITONSERVER_Metric * metric, double value))

// Newer than TRITON_NODE_API_MIN_MINOR: resolved if present, else null, and
// the features that need them report UNSUPPORTED.
#define TRITON_CAPI_OPTIONAL(X)                                            \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetModelConfigName,     \
    (TRITONSERVER_ServerOptions * options, const char* model_config_name)) \
  X(TRITONSERVER_Error*, TRITONSERVER_ServerOptionsSetEnablePeerAccess,    \
    (TRITONSERVER_ServerOptions * options, bool enable_peer_access))       \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricArgsNew,                       \
    (TRITONSERVER_MetricArgs * *args))                                     \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricArgsSetHistogram,              \
    (TRITONSERVER_MetricArgs * args, const double* buckets,                \
     const uint64_t buckets_count))                                        \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricArgsDelete,                    \
    (TRITONSERVER_MetricArgs * args))                                      \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricNewWithArgs,                   \
    (TRITONSERVER_Metric * *metric, TRITONSERVER_MetricFamily * family,    \
     const TRITONSERVER_Parameter** labels, const uint64_t label_count,    \
     const TRITONSERVER_MetricArgs* args))                                 \
  X(TRITONSERVER_Error*, TRITONSERVER_MetricObserve,                       \
    (TRITONSERVER_Metric * metric, double value))

// Not part of Triton: exported by the fake engine only, looked up with dlsym
// (absent on a real Triton). Fills `counts` with the number of live objects
// of each kind, in this order: requests, responses, errors, messages,
// allocators, output buffers, metrics objects, parameters, traces, servers.
// Returns how many counts it wrote (at most `capacity`).
#define TRITONFAKE_LIVE_OBJECT_KINDS 10
typedef uint32_t (*TRITONFAKE_LiveObjectsFn_t)(uint64_t* counts,
                                               uint32_t capacity);
// Also fake-only: when set to true, the fake runs the whole inference of the
// next requests synchronously inside TRITONSERVER_ServerInferAsync, as
// Triton does on a response-cache hit. Also settable with the environment
// variable TRITONFAKE_SYNC_CALLBACKS=1 at ServerNew time.
typedef void (*TRITONFAKE_SetSyncCallbacksFn_t)(bool enabled);
// Also fake-only: stand-in backends for models whose backend the fake does
// not have, opt-in. `spec` is "<backend>=<mode>[,...]" with mode "zeros" or
// "echo" and backend a backend name or "*" (any other); "" turns them off.
// Models loaded afterwards use them (process-wide). Returns an error (the
// caller's to delete) for a malformed spec, which then changes nothing.
// Also settable with the environment variable TRITONFAKE_STAND_INS at
// ServerNew time.
typedef TRITONSERVER_Error* (*TRITONFAKE_SetStandInsFn_t)(const char* spec);
// Also fake-only, for tests of what happens while a model changes: with
// `mode` 1, explicit model loads (ServerLoadModel and
// ServerLoadModelWithParameters) wait before they start, until a call with
// `mode` 0 lets them go; -1 changes nothing. Returns how many loads wait now.
typedef uint32_t (*TRITONFAKE_HoldModelLoadsFn_t)(int32_t mode);
// Also fake-only: the Triton release whose differences the fake imitates
// from now on ("r25.07", "r26.06"; native/fake/PRECONDITIONS.md lists
// them), process-wide; null or an unknown name changes nothing. Returns the
// release imitated now (a static string). Also settable with the
// environment variable TRITONFAKE_RELEASE (read once, at the first ServerNew).
typedef const char* (*TRITONFAKE_SetReleaseFn_t)(const char* name);

// Prototypes for code that links against the library (the fake itself).
#define TRITON_CAPI_DECLARE_PROTOTYPE(ret, name, params) ret name params;
TRITON_CAPI_REQUIRED(TRITON_CAPI_DECLARE_PROTOTYPE)
TRITON_CAPI_OPTIONAL(TRITON_CAPI_DECLARE_PROTOTYPE)
#undef TRITON_CAPI_DECLARE_PROTOTYPE

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // TRITON_NODE_TRITON_CAPI_H_
