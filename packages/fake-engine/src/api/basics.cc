// Small C API pieces with no server behind them: versions, datatypes,
// errors, parameters and messages.
#include <cstring>
#include <string>

#include "../config/data_types.h"
#include "../core/error.h"
#include "../core/handles.h"
#include "export.h"

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
