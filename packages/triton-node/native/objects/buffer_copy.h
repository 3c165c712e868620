// copyFrom / copyTo of HostBuffer and CudaBuffer.
#ifndef TRITON_NODE_OBJECTS_BUFFER_COPY_H_
#define TRITON_NODE_OBJECTS_BUFFER_COPY_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>

#include "memory/mem_kind.h"
#include "memory/mem_view.h"

namespace triton_node {

// copyFrom(src, offset?) (into_buffer) or copyTo(dst, offset?) of a buffer
// whose memory is [ptr, ptr + size) of `kind`: the whole source goes to
// `offset` bytes into the destination.
void CopyWithBuffer(const Napi::CallbackInfo& info, uint8_t* ptr, size_t size,
                    MemKind kind, bool into_buffer);

// Reads argument `index` as memory (TypedArray, DataView, HostBuffer or
// CudaBuffer); throws a TypeError naming `what` otherwise.
MemView RequireView(const Napi::CallbackInfo& info, size_t index,
                    const char* what);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_BUFFER_COPY_H_
