// Response allocators and buffer attributes: the memory side of the C API.
#include <cstring>
#include <string>

#include "../core/error.h"
#include "../core/handles.h"
#include "export.h"

using namespace fake;

// ---- response allocator -----------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorNew(
    TRITONSERVER_ResponseAllocator** allocator,
    TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn,
    TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn,
    TRITONSERVER_ResponseAllocatorStartFn_t start_fn) {
  FAKE_NOT_NULL(allocator);
  // Null alloc_fn / release_fn are stored as they are: Triton calls them
  // without a check when an output is allocated or released, which is where
  // the fake checks them (core/response.cc).
  auto* a = new TRITONSERVER_ResponseAllocator();
  a->alloc_fn = alloc_fn;
  a->release_fn = release_fn;
  a->start_fn = start_fn;
  *allocator = a;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(
    TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn) {
  FAKE_LIVE(kAllocator, allocator);
  allocator->buffer_attributes_fn = buffer_attributes_fn;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorSetQueryFunction(
    TRITONSERVER_ResponseAllocator* allocator,
    TRITONSERVER_ResponseAllocatorQueryFn_t query_fn) {
  FAKE_LIVE(kAllocator, allocator);
  allocator->query_fn = query_fn;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ResponseAllocatorDelete(
    TRITONSERVER_ResponseAllocator* allocator) {
  FAKE_DELETABLE(kAllocator, allocator);
  if (allocator != nullptr) {
    const int64_t users = allocator->users.load();
    FAKE_EXPECT(users == 0,
                "allocator is still used by " + std::to_string(users) +
                    " in-flight request(s) or allocated output buffer(s) "
                    "of undeleted responses; the real library calls its "
                    "functions later (use after free)");
  }
  delete allocator;
  return nullptr;
}

// ---- buffer attributes ------------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesNew(
    TRITONSERVER_BufferAttributes** buffer_attributes) {
  FAKE_NOT_NULL(buffer_attributes);
  *buffer_attributes = new TRITONSERVER_BufferAttributes();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesDelete(
    TRITONSERVER_BufferAttributes* buffer_attributes) {
  FAKE_DELETABLE(kBufferAttributes, buffer_attributes);
  delete buffer_attributes;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t memory_type_id) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  buffer_attributes->memory_type_id = memory_type_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType memory_type) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  buffer_attributes->memory_type = memory_type;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void* cuda_ipc_handle) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  // Triton copies a CUDA IPC handle (64 bytes) from the pointer with no
  // null check; there is no way to clear a handle once set.
  FAKE_EXPECT(cuda_ipc_handle != nullptr,
              "cuda_ipc_handle is null; the real library copies 64 bytes "
              "from it (crash)");
  std::memcpy(buffer_attributes->cuda_ipc_handle, cuda_ipc_handle,
              sizeof(buffer_attributes->cuda_ipc_handle));
  buffer_attributes->has_cuda_ipc_handle = true;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesSetByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t byte_size) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  buffer_attributes->byte_size = byte_size;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryTypeId(
    TRITONSERVER_BufferAttributes* buffer_attributes, int64_t* memory_type_id) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(memory_type_id);
  *memory_type_id = buffer_attributes->memory_type_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesMemoryType(
    TRITONSERVER_BufferAttributes* buffer_attributes,
    TRITONSERVER_MemoryType* memory_type) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(memory_type);
  *memory_type = buffer_attributes->memory_type;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesCudaIpcHandle(
    TRITONSERVER_BufferAttributes* buffer_attributes, void** cuda_ipc_handle) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(cuda_ipc_handle);
  // The attributes' own copy, or null when none was set.
  *cuda_ipc_handle = buffer_attributes->has_cuda_ipc_handle
                         ? buffer_attributes->cuda_ipc_handle
                         : nullptr;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_BufferAttributesByteSize(
    TRITONSERVER_BufferAttributes* buffer_attributes, size_t* byte_size) {
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  FAKE_NOT_NULL(byte_size);
  *byte_size = buffer_attributes->byte_size;
  return nullptr;
}
