#include "triton/datatypes.h"

#include <cstddef>

namespace triton_node {
namespace {

struct DataTypeInfo {
  TRITONSERVER_DataType type;
  const char* name;
};

// Indexed by code: kDataTypes[c].type == c (checked below).
constexpr DataTypeInfo kDataTypes[] = {
    {TRITONSERVER_TYPE_INVALID, "INVALID"},
    {TRITONSERVER_TYPE_BOOL, "BOOL"},
    {TRITONSERVER_TYPE_UINT8, "UINT8"},
    {TRITONSERVER_TYPE_UINT16, "UINT16"},
    {TRITONSERVER_TYPE_UINT32, "UINT32"},
    {TRITONSERVER_TYPE_UINT64, "UINT64"},
    {TRITONSERVER_TYPE_INT8, "INT8"},
    {TRITONSERVER_TYPE_INT16, "INT16"},
    {TRITONSERVER_TYPE_INT32, "INT32"},
    {TRITONSERVER_TYPE_INT64, "INT64"},
    {TRITONSERVER_TYPE_FP16, "FP16"},
    {TRITONSERVER_TYPE_FP32, "FP32"},
    {TRITONSERVER_TYPE_FP64, "FP64"},
    {TRITONSERVER_TYPE_BYTES, "BYTES"},
    {TRITONSERVER_TYPE_BF16, "BF16"},
};
constexpr size_t kCount = sizeof(kDataTypes) / sizeof(kDataTypes[0]);

constexpr bool IndexedByCode() {
  for (size_t i = 0; i < kCount; ++i) {
    if (static_cast<size_t>(kDataTypes[i].type) != i) return false;
  }
  return true;
}
static_assert(IndexedByCode(), "kDataTypes must be in code order");
static_assert(kCount == static_cast<size_t>(kLastDataType) + 1,
              "kDataTypes must cover every code up to kLastDataType");

bool Known(TRITONSERVER_DataType type) {
  return static_cast<int>(type) >= 0 && static_cast<size_t>(type) < kCount;
}

}  // namespace

const char* DataTypeName(TRITONSERVER_DataType type) {
  return Known(type) ? kDataTypes[type].name : "INVALID";
}

}  // namespace triton_node
