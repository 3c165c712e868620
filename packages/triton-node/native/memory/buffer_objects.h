// Making HostBuffer and CudaBuffer objects from native memory. The classes
// themselves are JS-visible objects (objects/host_buffer.h,
// objects/cuda_buffer.h); their constructors and view functions are kept in
// the environment's data, so that code below them can make and read them.
#ifndef TRITON_NODE_MEMORY_BUFFER_OBJECTS_H_
#define TRITON_NODE_MEMORY_BUFFER_OBJECTS_H_

#include <napi.h>

#include <cstddef>
#include <functional>

#include "memory/cuda_runtime.h"

namespace triton_node {

// What a HostBuffer or CudaBuffer constructor receives (as an External).
struct BufferInit {
  void* ptr = nullptr;
  size_t size = 0;
  int device = 0;
  bool imported = false;                  // CudaBuffer opened from a handle
  const CudaIpcHandle* handle = nullptr;  // CudaBuffer's IPC handle, if any
  std::function<void()> release;          // frees the memory, exactly once
};

Napi::Object NewHostBufferObject(Napi::Env env, BufferInit init);
Napi::Object NewCudaBufferObject(Napi::Env env, BufferInit init);

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_BUFFER_OBJECTS_H_
