// The memory behind a JS value: a TypedArray, Buffer or DataView, a
// HostBuffer or a CudaBuffer.
#ifndef TRITON_NODE_MEMORY_MEM_VIEW_H_
#define TRITON_NODE_MEMORY_MEM_VIEW_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "memory/buffer_use.h"
#include "memory/cuda_runtime.h"
#include "memory/mem_kind.h"
#include "triton/errors.h"

namespace triton_node {

struct MemView {
  uint8_t* ptr = nullptr;
  size_t size = 0;
  int kind = kMemCpu;
  int device = 0;
  const CudaIpcHandle* ipc = nullptr;  // CudaBuffers that have one
  // HostBuffer/CudaBuffer owners: their in-flight use count.
  BufferUse* use = nullptr;
  // The JS object that owns the memory (keep it referenced while borrowed).
  napi_value owner = nullptr;
  // For TypedArray and DataView owners: the ArrayBuffer and the view's
  // offset in it.
  napi_value array_buffer = nullptr;
  size_t byte_offset = 0;
};

// Fills `view` from `value`. Returns false when `value` is none of the
// supported kinds. Throws a TypeError naming `what` when the memory is
// unusable (detached ArrayBuffer, disposed buffer).
bool ResolveMemView(Napi::Env env, napi_value value, const Subject& what,
                    MemView* view);

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_MEM_VIEW_H_
