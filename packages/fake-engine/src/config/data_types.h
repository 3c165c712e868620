// Data type names and sizes, one table for the whole engine (data_types.cc).
#ifndef TRITON_NODE_FAKE_CONFIG_DATA_TYPES_H_
#define TRITON_NODE_FAKE_CONFIG_DATA_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../../include/triton_capi.h"

namespace fake {

// "TYPE_FP32" <-> TRITONSERVER_DataType; "TYPE_STRING" is BYTES.
TRITONSERVER_DataType DataTypeFromConfigName(const std::string& name);
const char* ConfigNameFromDataType(TRITONSERVER_DataType dt);
// "FP32" as the C API names it (TRITONSERVER_DataTypeString).
const char* ApiNameFromDataType(TRITONSERVER_DataType dt);
// The same, under the name the engine's messages use it by.
const char* DataTypeName(TRITONSERVER_DataType dt);
// Bytes of one element; 0 for BYTES and invalid types.
uint32_t DataTypeSize(TRITONSERVER_DataType dt);

// A shape as Triton writes it in its messages: "[1,16]".
std::string ShapeString(const int64_t* shape, size_t n);
inline std::string ShapeString(const std::vector<int64_t>& s) {
  return ShapeString(s.data(), s.size());
}

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CONFIG_DATA_TYPES_H_
