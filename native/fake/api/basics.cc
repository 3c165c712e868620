// Small C API pieces with no server behind them: versions, datatypes,
// errors, parameters, messages, buffer attributes and response allocators.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string>

#include "../internal.h"

namespace fake {

const char* CodeString(TRITONSERVER_Error_Code code) {
  switch (code) {
    case TRITONSERVER_ERROR_UNKNOWN:
      return "Unknown";
    case TRITONSERVER_ERROR_INTERNAL:
      return "Internal";
    case TRITONSERVER_ERROR_NOT_FOUND:
      return "Not found";
    case TRITONSERVER_ERROR_INVALID_ARG:
      return "Invalid argument";
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return "Unavailable";
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return "Unsupported";
    case TRITONSERVER_ERROR_ALREADY_EXISTS:
      return "Already exists";
    case TRITONSERVER_ERROR_CANCELLED:
      // Triton's table has no phrase for CANCELLED.
      return "<invalid code>";
  }
  return "Unknown";
}

// One table of names for the whole engine (config_schema.cc).
const char* DataTypeName(TRITONSERVER_DataType dt) {
  return ApiNameFromDataType(dt);
}

uint32_t DataTypeSize(TRITONSERVER_DataType dt) {
  switch (dt) {
    case TRITONSERVER_TYPE_BOOL:
    case TRITONSERVER_TYPE_UINT8:
    case TRITONSERVER_TYPE_INT8:
      return 1;
    case TRITONSERVER_TYPE_UINT16:
    case TRITONSERVER_TYPE_INT16:
    case TRITONSERVER_TYPE_FP16:
    case TRITONSERVER_TYPE_BF16:
      return 2;
    case TRITONSERVER_TYPE_UINT32:
    case TRITONSERVER_TYPE_INT32:
    case TRITONSERVER_TYPE_FP32:
      return 4;
    case TRITONSERVER_TYPE_UINT64:
    case TRITONSERVER_TYPE_INT64:
    case TRITONSERVER_TYPE_FP64:
      return 8;
    default:
      return 0;
  }
}

std::string ShapeString(const int64_t* shape, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {
std::mutex g_log_mu;
TRITONSERVER_ServerOptions g_log_options;  // of the last server created
}  // namespace

void SetLogOptions(const TRITONSERVER_ServerOptions& o) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log_options = o;
}

namespace {
// Process-wide, set when the option is set (as Triton's logger is).
std::atomic<int> g_log_format{TRITONSERVER_LOG_DEFAULT};

// "<level> fake-engine] ", or with TRITONSERVER_LOG_ISO8601
// "<yyyy>-<mm>-<dd>T<hh>:<mm>:<ss>Z <level> <pid> fake-engine] ".
std::string LogPrefix(char level) {
  if (g_log_format.load() != TRITONSERVER_LOG_ISO8601) {
    return std::string(1, level) + " fake-engine] ";
  }
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(stamp) + " " + level + " " + std::to_string(getpid()) +
         " fake-engine] ";
}
}  // namespace

void SetLogFormat(int format) { g_log_format.store(format); }

static void WriteLog(char level, const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (level == 'I' && !g_log_options.log_info) return;
  if (level == 'W' && !g_log_options.log_warn) return;
  if (level == 'E' && !g_log_options.log_error) return;
  const std::string text = LogPrefix(level) + line + "\n";
  if (!g_log_options.log_file.empty()) {
    std::ofstream f(g_log_options.log_file, std::ios::app);
    f << text;
    return;
  }
  std::fputs(text.c_str(), stderr);
}
void LogInfo(const std::string& line) { WriteLog('I', line); }
void LogWarning(const std::string& line) { WriteLog('W', line); }
void LogError(const std::string& line) { WriteLog('E', line); }

}  // namespace fake

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ApiVersion(uint32_t* major,
                                                        uint32_t* minor) {
  FAKE_NOT_NULL(major);
  FAKE_NOT_NULL(minor);
  *major = 1;
  *minor = 34;
  return nullptr;
}

FAKE_EXPORT const char* TRITONSERVER_DataTypeString(
    TRITONSERVER_DataType datatype) {
  return DataTypeName(datatype);
}

FAKE_EXPORT TRITONSERVER_DataType
TRITONSERVER_StringToDataType(const char* dtype) {
  // Triton takes strlen() of it first.
  FAKE_NOT_NULL(dtype);
  for (int t = 1; t <= 14; ++t) {
    if (std::strcmp(dtype,
                    DataTypeName(static_cast<TRITONSERVER_DataType>(t))) == 0) {
      return static_cast<TRITONSERVER_DataType>(t);
    }
  }
  return TRITONSERVER_TYPE_INVALID;
}

FAKE_EXPORT uint32_t
TRITONSERVER_DataTypeByteSize(TRITONSERVER_DataType datatype) {
  return DataTypeSize(datatype);
}

FAKE_EXPORT const char* TRITONSERVER_MemoryTypeString(
    TRITONSERVER_MemoryType memtype) {
  switch (memtype) {
    case TRITONSERVER_MEMORY_CPU:
      return "CPU";
    case TRITONSERVER_MEMORY_CPU_PINNED:
      return "CPU_PINNED";
    case TRITONSERVER_MEMORY_GPU:
      return "GPU";
  }
  return "<invalid>";
}

FAKE_EXPORT TRITONSERVER_Parameter* TRITONSERVER_ParameterNew(
    const char* name, const TRITONSERVER_ParameterType type,
    const void* value) {
  // Triton answers nullptr for BYTES (use ParameterBytesNew) and for
  // unknown types, before looking at the arguments; for the other types it
  // copies the name and reads the value.
  if (type != TRITONSERVER_PARAMETER_STRING &&
      type != TRITONSERVER_PARAMETER_INT &&
      type != TRITONSERVER_PARAMETER_BOOL &&
      type != TRITONSERVER_PARAMETER_DOUBLE) {
    return nullptr;
  }
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(value);
  auto* p = new TRITONSERVER_Parameter();
  p->name = name;
  p->type = type;
  switch (type) {
    case TRITONSERVER_PARAMETER_STRING:
      p->str = static_cast<const char*>(value);
      break;
    case TRITONSERVER_PARAMETER_INT:
      p->i = *static_cast<const int64_t*>(value);
      break;
    case TRITONSERVER_PARAMETER_BOOL:
      p->b = *static_cast<const bool*>(value);
      break;
    default:
      p->d = *static_cast<const double*>(value);
      break;
  }
  return p;
}

FAKE_EXPORT TRITONSERVER_Parameter* TRITONSERVER_ParameterBytesNew(
    const char* name, const void* byte_ptr, const uint64_t size) {
  FAKE_NOT_NULL(name);
  // Triton keeps the pointer (no copy) and reads `size` bytes from it
  // wherever the parameter is used; the fake copies, but a null pointer
  // with a size is a crash either way.
  FAKE_EXPECT(byte_ptr != nullptr || size == 0,
              "byte_ptr is null with size " + std::to_string(size) +
                  "; the real library reads that many bytes from it (crash)");
  auto* p = new TRITONSERVER_Parameter();
  p->name = name;
  p->type = TRITONSERVER_PARAMETER_BYTES;
  if (size > 0) p->str.assign(static_cast<const char*>(byte_ptr), size);
  return p;
}

FAKE_EXPORT void TRITONSERVER_ParameterDelete(
    TRITONSERVER_Parameter* parameter) {
  FAKE_DELETABLE(kParameter, parameter);
  delete parameter;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ErrorNew(
    TRITONSERVER_Error_Code code, const char* msg) {
  // The message is copied into a std::string.
  FAKE_NOT_NULL(msg);
  return new TRITONSERVER_Error(code, msg);
}

FAKE_EXPORT void TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error) {
  FAKE_DELETABLE(kError, error);
  delete error;
}

FAKE_EXPORT TRITONSERVER_Error_Code
TRITONSERVER_ErrorCode(TRITONSERVER_Error* error) {
  FAKE_LIVE(kError, error);
  return error->code;
}

FAKE_EXPORT const char* TRITONSERVER_ErrorCodeString(
    TRITONSERVER_Error* error) {
  FAKE_LIVE(kError, error);
  return CodeString(error->code);
}

FAKE_EXPORT const char* TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error) {
  FAKE_LIVE(kError, error);
  return error->msg.c_str();
}

// ---- response allocator -----------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorNew(
    TRITONSERVER_ResponseAllocator** allocator,
    TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn,
    TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn,
    TRITONSERVER_ResponseAllocatorStartFn_t start_fn) {
  FAKE_NOT_NULL(allocator);
  // Null alloc_fn / release_fn are stored as they are: Triton calls them
  // without a check when an output is allocated or released, which is where
  // the fake checks them (backends.cc, inference.cc).
  auto* a = new TRITONSERVER_ResponseAllocator();
  a->alloc_fn = alloc_fn;
  a->release_fn = release_fn;
  a->start_fn = start_fn;
  *allocator = a;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(
    TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn) {
  FAKE_LIVE(kAllocator, allocator);
  allocator->buffer_attributes_fn = buffer_attributes_fn;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorSetQueryFunction(
    TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorQueryFn_t query_fn) {
  FAKE_LIVE(kAllocator, allocator);
  allocator->query_fn = query_fn;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorDelete(
    TRITONSERVER_ResponseAllocator* allocator) {
  FAKE_DELETABLE(kAllocator, allocator);
  if (allocator != nullptr) {
    const int64_t users = allocator->users.load();
    FAKE_EXPECT(users == 0,
                "allocator is still used by " + std::to_string(users) +
                    " in-flight request(s) or allocated output buffer(s) "
                    "of undeleted responses; the real library calls its "
                    "functions later (use after free)");
  }
  delete allocator;
  return nullptr;
}

// ---- messages -------------------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message** message, const char* base, size_t byte_size) {
  FAKE_NOT_NULL(message);
  FAKE_EXPECT(base != nullptr || byte_size == 0,
              "base is null with byte_size " + std::to_string(byte_size) +
                  "; the real library copies that many bytes from it "
                  "(crash)");
  // Triton keeps the bytes as they are: it does not parse them here.
  auto* m = new TRITONSERVER_Message();
  if (byte_size > 0) m->json.assign(base, byte_size);
  *message = m;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MessageDelete(
    TRITONSERVER_Message* message) {
  FAKE_DELETABLE(kMessage, message);
  delete message;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message* message, const char** base, size_t* byte_size) {
  FAKE_LIVE(kMessage, message);
  FAKE_NOT_NULL(base);
  FAKE_NOT_NULL(byte_size);
  *base = message->json.c_str();
  *byte_size = message->json.size();
  return nullptr;
}

// ---- buffer attributes ------------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesNew(
    TRITONSERVER_BufferAttributes** buffer_attributes) {
  FAKE_NOT_NULL(buffer_attributes);
  *buffer_attributes = new TRITONSERVER_BufferAttributes();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesDelete(
    TRITONSERVER_BufferAttributes* buffer_attributes) {
  FAKE_DELETABLE(kBufferAttributes, buffer_attributes);
  delete buffer_attributes;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t memory_type_id) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  buffer_attributes->memory_type_id = memory_type_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType memory_type) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  buffer_attributes->memory_type = memory_type;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void* cuda_ipc_handle) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  // Triton copies a CUDA IPC handle (64 bytes) from the pointer with no
  // null check; there is no way to clear a handle once set.
  FAKE_EXPECT(cuda_ipc_handle != nullptr,
              "cuda_ipc_handle is null; the real library copies 64 bytes "
              "from it (crash)");
  std::memcpy(buffer_attributes->cuda_ipc_handle, cuda_ipc_handle,
              sizeof(buffer_attributes->cuda_ipc_handle));
  buffer_attributes->has_cuda_ipc_handle = true;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t byte_size) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  buffer_attributes->byte_size = byte_size;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t* memory_type_id) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(memory_type_id);
  *memory_type_id = buffer_attributes->memory_type_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType* memory_type) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(memory_type);
  *memory_type = buffer_attributes->memory_type;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void** cuda_ipc_handle) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(cuda_ipc_handle);
  // The attributes' own copy, or null when none was set.
  *cuda_ipc_handle = buffer_attributes->has_cuda_ipc_handle
                         ? buffer_attributes->cuda_ipc_handle
                         : nullptr;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t* byte_size) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(byte_size);
  *byte_size = buffer_attributes->byte_size;
  return nullptr;
}
