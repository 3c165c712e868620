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

// The `data` of a NativeOutput (as ConvertOutput sets it) and its byte
// offset in it.
Napi::Value OutputData(Napi::Env env, const RequestContext* ctx,
                       const OutputRecord& out, size_t* offset);

// addon.releaseOutput(arrayBuffer): gives the pooled memory under an output
// ArrayBuffer back to the pool now (detaching the ArrayBuffer) instead of
// when it is garbage collected. False (and nothing done) for any other
// ArrayBuffer or one already released.
Napi::Value ReleaseOutput(const Napi::CallbackInfo& info);

// CPU outputs up to this size are copied into one ArrayBuffer per drain
// rather than handed out as external buffers: an external ArrayBuffer (and
// its finalizer and GC bookkeeping) costs far more than copying 1 KiB.
constexpr size_t kSmallOutputBytes = 1024;

// True when `out` is a small output in pooled (or no) CPU memory, which the
// drain copies (the pooled buffer then returns with the response).
bool CopiedSmall(const OutputRecord& out);

}  // namespace triton_node

#endif  // TRITON_NODE_TENSOR_H_
