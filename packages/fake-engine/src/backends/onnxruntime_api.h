// The part of ONNX Runtime's C API the fake's onnxruntime backend uses, in
// our own declarations. ONNX Runtime is never a build dependency: its
// library (onnxruntime-node's libonnxruntime.so.1, or one named by the
// caller) is opened with dlopen when the first onnxruntime model loads.
//
// How the C API is reached: the library exports one function,
// OrtGetApiBase, returning a struct of two functions, GetApi(version) and
// GetVersionString(). GetApi returns a table of function pointers whose
// positions are fixed for every version (new entry points are only ever
// appended); kSlot below names the positions of those the backend calls,
// all of which exist in kRequestedApiVersion.
#ifndef TRITON_NODE_FAKE_BACKENDS_ONNXRUNTIME_API_H_
#define TRITON_NODE_FAKE_BACKENDS_ONNXRUNTIME_API_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace fake {
namespace ort {

// Opaque ONNX Runtime objects.
struct Status;
struct Env;
struct Session;
struct SessionOptions;
struct Value;
struct TypeInfo;
struct TensorInfo;
struct MemoryInfo;
struct Allocator;
struct RunOptions;

// The API version asked of GetApi: ONNX Runtime 1.8's. Every slot used is
// older, and any newer library serves it.
constexpr uint32_t kRequestedApiVersion = 8;

// Positions in the function table.
enum Slot : size_t {
  kGetErrorCode = 1,
  kGetErrorMessage = 2,
  kCreateEnv = 3,
  kCreateSession = 7,
  kRun = 9,
  kCreateSessionOptions = 10,
  kSetSessionGraphOptimizationLevel = 23,
  kSetIntraOpNumThreads = 24,
  kSetInterOpNumThreads = 25,
  kSessionGetInputCount = 30,
  kSessionGetOutputCount = 31,
  kSessionGetOverridableInitializerCount = 32,
  kSessionGetInputTypeInfo = 33,
  kSessionGetOutputTypeInfo = 34,
  kSessionGetOverridableInitializerTypeInfo = 35,
  kSessionGetInputName = 36,
  kSessionGetOutputName = 37,
  kSessionGetOverridableInitializerName = 38,
  kCreateTensorAsOrtValue = 48,
  kCreateTensorWithDataAsOrtValue = 49,
  kGetTensorMutableData = 51,
  kFillStringTensor = 52,
  kGetStringTensorDataLength = 53,
  kGetStringTensorContent = 54,
  kCastTypeInfoToTensorInfo = 55,
  kGetOnnxTypeFromTypeInfo = 56,
  kGetTensorElementType = 60,
  kGetDimensionsCount = 61,
  kGetDimensions = 62,
  kGetTensorTypeAndShape = 65,
  kCreateCpuMemoryInfo = 69,
  kAllocatorFree = 76,
  kGetAllocatorWithDefaultOptions = 78,
  kReleaseEnv = 92,
  kReleaseStatus = 93,
  kReleaseMemoryInfo = 94,
  kReleaseSession = 95,
  kReleaseValue = 96,
  kReleaseTypeInfo = 98,
  kReleaseTensorTypeAndShapeInfo = 99,
  kReleaseSessionOptions = 100,
};

// Enum values of the C API the backend passes or reads.
enum ElementType : int {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};
constexpr int kOnnxTypeTensor = 1;         // ONNXType
constexpr int kLoggingLevelWarning = 2;    // OrtLoggingLevel
constexpr int kLoggingLevelError = 3;      // OrtLoggingLevel
constexpr int kArenaAllocator = 1;         // OrtAllocatorType
constexpr int kMemTypeDefault = 0;         // OrtMemType
constexpr int kGraphOptimizationAll = 99;  // GraphOptimizationLevel

// The entry points used, typed.
struct Api {
  int (*GetErrorCode)(const Status*);
  const char* (*GetErrorMessage)(const Status*);
  Status* (*CreateEnv)(int level, const char* log_id, Env** out);
  Status* (*CreateSession)(const Env*, const char* path, const SessionOptions*,
                           Session** out);
  Status* (*Run)(Session*, const RunOptions*, const char* const* input_names,
                 const Value* const* inputs, size_t input_count,
                 const char* const* output_names, size_t output_count,
                 Value** outputs);
  Status* (*CreateSessionOptions)(SessionOptions** out);
  Status* (*SetSessionGraphOptimizationLevel)(SessionOptions*, int level);
  Status* (*SetIntraOpNumThreads)(SessionOptions*, int threads);
  Status* (*SetInterOpNumThreads)(SessionOptions*, int threads);
  Status* (*SessionGetInputCount)(const Session*, size_t* out);
  Status* (*SessionGetOutputCount)(const Session*, size_t* out);
  // Overridable initializers: graph inputs with a default value (an
  // initializer), which a run may give or leave out.
  Status* (*SessionGetOverridableInitializerCount)(const Session*, size_t* out);
  Status* (*SessionGetInputTypeInfo)(const Session*, size_t index,
                                     TypeInfo** out);
  Status* (*SessionGetOutputTypeInfo)(const Session*, size_t index,
                                      TypeInfo** out);
  Status* (*SessionGetOverridableInitializerTypeInfo)(const Session*,
                                                      size_t index,
                                                      TypeInfo** out);
  Status* (*SessionGetInputName)(const Session*, size_t index, Allocator*,
                                 char** out);
  Status* (*SessionGetOutputName)(const Session*, size_t index, Allocator*,
                                  char** out);
  Status* (*SessionGetOverridableInitializerName)(const Session*, size_t index,
                                                  Allocator*, char** out);
  // A tensor whose memory ONNX Runtime owns (string tensors: the only way to
  // make one).
  Status* (*CreateTensorAsOrtValue)(Allocator*, const int64_t* shape,
                                    size_t rank, int element_type, Value** out);
  Status* (*CreateTensorWithDataAsOrtValue)(const MemoryInfo*, void* data,
                                            size_t bytes, const int64_t* shape,
                                            size_t rank, int element_type,
                                            Value** out);
  Status* (*GetTensorMutableData)(Value*, void** out);
  // String tensors: filled from C strings (each ends at its first NUL), read
  // back as one buffer of all the bytes and each element's start offset.
  Status* (*FillStringTensor)(Value*, const char* const* s, size_t count);
  Status* (*GetStringTensorDataLength)(const Value*, size_t* bytes);
  Status* (*GetStringTensorContent)(const Value*, void* s, size_t bytes,
                                    size_t* offsets, size_t count);
  Status* (*CastTypeInfoToTensorInfo)(const TypeInfo*, const TensorInfo** out);
  Status* (*GetOnnxTypeFromTypeInfo)(const TypeInfo*, int* out);
  Status* (*GetTensorElementType)(const TensorInfo*, int* out);
  Status* (*GetDimensionsCount)(const TensorInfo*, size_t* out);
  Status* (*GetDimensions)(const TensorInfo*, int64_t* dims, size_t count);
  Status* (*GetTensorTypeAndShape)(const Value*, TensorInfo** out);
  Status* (*CreateCpuMemoryInfo)(int allocator_type, int mem_type,
                                 MemoryInfo** out);
  Status* (*AllocatorFree)(Allocator*, void* p);
  Status* (*GetAllocatorWithDefaultOptions)(Allocator** out);
  void (*ReleaseEnv)(Env*);
  void (*ReleaseStatus)(Status*);
  void (*ReleaseMemoryInfo)(MemoryInfo*);
  void (*ReleaseSession)(Session*);
  void (*ReleaseValue)(Value*);
  void (*ReleaseTypeInfo)(TypeInfo*);
  void (*ReleaseTensorInfo)(TensorInfo*);
  void (*ReleaseSessionOptions)(SessionOptions*);
};

// ONNX Runtime once opened: its API, version, process-wide environment, CPU
// memory description and default allocator. Never closed (its threads and
// static objects must outlive every session, and onnxruntime-node in the
// same process shares the library by its SONAME).
struct Library {
  Api api{};
  std::string path;
  std::string version;
  Env* env = nullptr;
  MemoryInfo* cpu = nullptr;
  Allocator* allocator = nullptr;

  // The status's message as the real backend words it ("onnx runtime error
  // <code>: <message>"), releasing the status; "" for success.
  std::string Take(Status* status) const;
};

// Opens ONNX Runtime at `path` (the first library opened is the process's
// from then on: a different path later is an error). Null with *error
// saying what failed.
const Library* OpenOnnxRuntime(const std::string& path, std::string* error);

}  // namespace ort
}  // namespace fake

#endif  // TRITON_NODE_FAKE_BACKENDS_ONNXRUNTIME_API_H_
