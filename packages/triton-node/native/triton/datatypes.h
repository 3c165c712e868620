// Triton's datatype names by code.
#ifndef TRITON_NODE_TRITON_DATATYPES_H_
#define TRITON_NODE_TRITON_DATATYPES_H_

#include "triton_capi.h"

namespace triton_node {

// "INVALID" for codes outside the table.
const char* DataTypeName(TRITONSERVER_DataType type);
// The highest datatype code the table knows.
constexpr int kLastDataType = TRITONSERVER_TYPE_BF16;

}  // namespace triton_node

#endif  // TRITON_NODE_TRITON_DATATYPES_H_
