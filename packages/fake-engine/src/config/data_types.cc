// Data type names and sizes, one table for the whole engine: the config's
// names ("TYPE_FP32"; "TYPE_STRING" is BYTES), the C API's ("FP32", as
// TRITONSERVER_DataTypeString says them), element sizes, and shapes as
// Triton writes them in its messages ("[1,16]").
#include "data_types.h"

#include "schema.h"

namespace fake {

using config::DataTypeEnum;
using config::EnumName;

TRITONSERVER_DataType DataTypeFromConfigName(const std::string& name) {
  for (const auto& v : DataTypeEnum().values) {
    if (name == v.first) return static_cast<TRITONSERVER_DataType>(v.second);
  }
  return TRITONSERVER_TYPE_INVALID;
}

const char* ConfigNameFromDataType(TRITONSERVER_DataType dt) {
  const char* name = EnumName(DataTypeEnum(), static_cast<int64_t>(dt));
  return name != nullptr ? name : "TYPE_INVALID";
}

const char* ApiNameFromDataType(TRITONSERVER_DataType dt) {
  switch (dt) {
    case TRITONSERVER_TYPE_BOOL:
      return "BOOL";
    case TRITONSERVER_TYPE_UINT8:
      return "UINT8";
    case TRITONSERVER_TYPE_UINT16:
      return "UINT16";
    case TRITONSERVER_TYPE_UINT32:
      return "UINT32";
    case TRITONSERVER_TYPE_UINT64:
      return "UINT64";
    case TRITONSERVER_TYPE_INT8:
      return "INT8";
    case TRITONSERVER_TYPE_INT16:
      return "INT16";
    case TRITONSERVER_TYPE_INT32:
      return "INT32";
    case TRITONSERVER_TYPE_INT64:
      return "INT64";
    case TRITONSERVER_TYPE_FP16:
      return "FP16";
    case TRITONSERVER_TYPE_FP32:
      return "FP32";
    case TRITONSERVER_TYPE_FP64:
      return "FP64";
    case TRITONSERVER_TYPE_BYTES:
      return "BYTES";
    case TRITONSERVER_TYPE_BF16:
      return "BF16";
    default:
      return "<invalid>";
  }
}

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

}  // namespace fake
