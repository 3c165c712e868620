// Datatype tables and output → JS conversion.
#ifndef TRITON_NODE_TENSOR_H_
#define TRITON_NODE_TENSOR_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>

#include "completion.h"
#include "triton_capi.h"

namespace triton_node {

struct RequestContext;

// "FP32" → TRITONSERVER_TYPE_FP32; INVALID for unknown names.
TRITONSERVER_DataType DataTypeFromName(const char* name, size_t length);
const char* DataTypeName(TRITONSERVER_DataType type);
// Element size in bytes; 0 for BYTES and INVALID.
size_t DataTypeSize(TRITONSERVER_DataType type);
const char* MemKindName(int kind);  // "cpu" | "pinned" | "gpu"

// Builds a NativeOutput for `out`. CPU memory becomes an external
// ArrayBuffer over the pooled buffer (finalizer returns it) or a copy when
// external buffers are refused/disabled; `into` destinations come back as
// the caller's own object; pinned and GPU buffers become HostBuffer /
// CudaBuffer wrappers. Marks the buffer JS-owned when a JS object takes it.
Napi::Object ConvertOutput(Napi::Env env, const RequestContext* ctx,
                           const OutputRecord& out);

}  // namespace triton_node

#endif  // TRITON_NODE_TENSOR_H_
