// Small C API pieces with no server behind them: versions, datatypes,
// errors, parameters, messages, buffer attributes and response allocators.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>

#include "internal.h"

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

// One table of names for the whole engine (model_config.cc).
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

static void WriteLog(char level, const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (level == 'I' && !g_log_options.log_info) return;
  if (level == 'E' && !g_log_options.log_error) return;
  if (!g_log_options.log_file.empty()) {
    std::ofstream f(g_log_options.log_file, std::ios::app);
    f << level << " fake-engine] " << line << "\n";
    return;
  }
  std::fprintf(stderr, "%c fake-engine] %s\n", level, line.c_str());
}
void LogInfo(const std::string& line) { WriteLog('I', line); }
void LogError(const std::string& line) { WriteLog('E', line); }

}  // namespace fake

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ApiVersion(uint32_t* major,
                                                        uint32_t* minor) {
  FAKE_REQUIRE(major, "major");
  FAKE_REQUIRE(minor, "minor");
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
  if (dtype == nullptr) return TRITONSERVER_TYPE_INVALID;
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
  if (name == nullptr || value == nullptr) return nullptr;
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
    case TRITONSERVER_PARAMETER_DOUBLE:
      p->d = *static_cast<const double*>(value);
      break;
    default:
      // Triton answers nullptr for BYTES (use ParameterBytesNew) and for
      // unknown types.
      delete p;
      return nullptr;
  }
  return p;
}

FAKE_EXPORT TRITONSERVER_Parameter* TRITONSERVER_ParameterBytesNew(
    const char* name, const void* byte_ptr, const uint64_t size) {
  if (name == nullptr || (byte_ptr == nullptr && size > 0)) return nullptr;
  auto* p = new TRITONSERVER_Parameter();
  p->name = name;
  p->type = TRITONSERVER_PARAMETER_BYTES;
  if (size > 0) p->str.assign(static_cast<const char*>(byte_ptr), size);
  return p;
}

FAKE_EXPORT void TRITONSERVER_ParameterDelete(
    TRITONSERVER_Parameter* parameter) {
  delete parameter;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ErrorNew(
    TRITONSERVER_Error_Code code, const char* msg) {
  return new TRITONSERVER_Error(code, msg == nullptr ? "" : msg);
}

FAKE_EXPORT void TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error) {
  delete error;
}

FAKE_EXPORT TRITONSERVER_Error_Code
TRITONSERVER_ErrorCode(TRITONSERVER_Error* error) {
  return error == nullptr ? TRITONSERVER_ERROR_UNKNOWN : error->code;
}

FAKE_EXPORT const char* TRITONSERVER_ErrorCodeString(
    TRITONSERVER_Error* error) {
  return error == nullptr ? "Unknown" : CodeString(error->code);
}

FAKE_EXPORT const char* TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error) {
  return error == nullptr ? "" : error->msg.c_str();
}

// ---- response allocator -----------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorNew(
    TRITONSERVER_ResponseAllocator** allocator,
    TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn,
    TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn,
    TRITONSERVER_ResponseAllocatorStartFn_t start_fn) {
  FAKE_REQUIRE(allocator, "allocator");
  FAKE_REQUIRE(alloc_fn, "alloc_fn");
  FAKE_REQUIRE(release_fn, "release_fn");
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
  FAKE_REQUIRE(allocator, "allocator");
  allocator->buffer_attributes_fn = buffer_attributes_fn;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorSetQueryFunction(
    TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorQueryFn_t query_fn) {
  FAKE_REQUIRE(allocator, "allocator");
  allocator->query_fn = query_fn;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorDelete(
    TRITONSERVER_ResponseAllocator* allocator) {
  FAKE_REQUIRE(allocator, "allocator");
  delete allocator;
  return nullptr;
}

// ---- messages -------------------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message** message, const char* base, size_t byte_size) {
  FAKE_REQUIRE(message, "message");
  if (base == nullptr && byte_size > 0) return ErrArg("base must not be null");
  std::string text(base == nullptr ? "" : base, byte_size);
  Json parsed;
  std::string error;
  if (!Json::Parse(text, &parsed, &error)) {
    return ErrArg("failed to parse the request JSON buffer: " + error);
  }
  auto* m = new TRITONSERVER_Message();
  m->json = std::move(text);
  *message = m;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MessageDelete(
    TRITONSERVER_Message* message) {
  FAKE_REQUIRE(message, "message");
  delete message;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MessageSerializeToJson(
    TRITONSERVER_Message* message, const char** base, size_t* byte_size) {
  FAKE_REQUIRE(message, "message");
  FAKE_REQUIRE(base, "base");
  FAKE_REQUIRE(byte_size, "byte_size");
  *base = message->json.c_str();
  *byte_size = message->json.size();
  return nullptr;
}

// ---- buffer attributes ------------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesNew(
    TRITONSERVER_BufferAttributes** buffer_attributes) {
  FAKE_REQUIRE(buffer_attributes, "buffer_attributes");
  *buffer_attributes = new TRITONSERVER_BufferAttributes();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesDelete(
    TRITONSERVER_BufferAttributes* buffer_attributes) {
  FAKE_REQUIRE(buffer_attributes, "buffer_attributes");
  delete buffer_attributes;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes* a, int64_t memory_type_id) {
  FAKE_REQUIRE(a, "buffer_attributes");
  a->memory_type_id = memory_type_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes* a, TRITONSERVER_MemoryType memory_type) {
  FAKE_REQUIRE(a, "buffer_attributes");
  a->memory_type = memory_type;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes* a, void* cuda_ipc_handle) {
  FAKE_REQUIRE(a, "buffer_attributes");
  a->cuda_ipc_handle = cuda_ipc_handle;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes* a, size_t byte_size) {
  FAKE_REQUIRE(a, "buffer_attributes");
  a->byte_size = byte_size;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes* a, int64_t* memory_type_id) {
  FAKE_REQUIRE(a, "buffer_attributes");
  FAKE_REQUIRE(memory_type_id, "memory_type_id");
  *memory_type_id = a->memory_type_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes* a, TRITONSERVER_MemoryType* memory_type) {
  FAKE_REQUIRE(a, "buffer_attributes");
  FAKE_REQUIRE(memory_type, "memory_type");
  *memory_type = a->memory_type;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes* a, void** cuda_ipc_handle) {
  FAKE_REQUIRE(a, "buffer_attributes");
  FAKE_REQUIRE(cuda_ipc_handle, "cuda_ipc_handle");
  *cuda_ipc_handle = a->cuda_ipc_handle;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes* a, size_t* byte_size) {
  FAKE_REQUIRE(a, "buffer_attributes");
  FAKE_REQUIRE(byte_size, "byte_size");
  *byte_size = a->byte_size;
  return nullptr;
}
