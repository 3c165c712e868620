// An output's memory as the JS value a NativeOutput carries.
#ifndef TRITON_NODE_REQUEST_OUTPUTS_H_
#define TRITON_NODE_REQUEST_OUTPUTS_H_

#include <napi.h>

#include <cstddef>

#include "request/completion_queue.h"

namespace triton_node {

struct RequestContext;

// CPU outputs up to this size are copied into one ArrayBuffer per drain
// rather than handed out as external buffers: an external ArrayBuffer (its
// finalizer and GC bookkeeping) costs far more than copying a small output.
constexpr size_t kSmallOutputBytes = 1024;

// True when `out` is a small output in pooled (or no) CPU memory, which the
// drain copies (the pooled buffer then returns with the response).
bool CopiedSmall(const OutputRecord& out);

// The `data` of a NativeOutput and its byte offset in it: an external
// ArrayBuffer over the pooled buffer (or a copy when external buffers are
// refused or disabled); the caller's own object for an `into` destination;
// a HostBuffer or CudaBuffer for pinned and GPU memory. A JS object that
// takes a pooled buffer over marks it JS-owned.
Napi::Value OutputData(Napi::Env env, const RequestContext* ctx,
                       const OutputRecord& out, size_t* offset);

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_OUTPUTS_H_
