#include "memory/response_allocator.h"

#include <string>

#include "memory/buffer_pool.h"
#include "memory/cuda_runtime.h"
#include "memory/mem_kind.h"
#include "memory/placements.h"
#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

TRITONSERVER_Error* NewError(TRITONSERVER_Error_Code code,
                             const std::string& message) {
  return Api().TRITONSERVER_ErrorNew(code, message.c_str());
}

// Triton allocator callbacks (Triton threads). The alloc `userp` is the
// request's OutputPlacements.

// Pinned memory is reported to Triton as CPU memory when the backend asked
// for GPU memory, that is when its output is a device tensor: the Python
// backend (r25.07 infer_response.cc, python_be.cc) then has the stub copy
// the tensor into shared memory and copies that into the buffer only for
// TRITONSERVER_MEMORY_CPU, so a CPU_PINNED buffer was left as it was (stale
// data, and a CUDA error left for the model's next launch). Pinned memory is
// host memory: every copy into it as CPU memory is valid. The caller still
// sees it as pinned (ReadOutputs takes the kind from the buffer).
bool PinnedAsCpu(int kind, TRITONSERVER_MemoryType preferred_type) {
  return kind == kMemPinned && preferred_type == TRITONSERVER_MEMORY_GPU;
}

TRITONSERVER_Error* AllocFn(TRITONSERVER_ResponseAllocator*,
                            const char* tensor_name, size_t byte_size,
                            TRITONSERVER_MemoryType preferred_type,
                            int64_t preferred_id, void* userp, void** buffer,
                            void** buffer_userp,
                            TRITONSERVER_MemoryType* actual_type,
                            int64_t* actual_id) {
  auto* placements = static_cast<const OutputPlacements*>(userp);
  const OutputPlacement* placement =
      placements != nullptr ? placements->Find(tensor_name) : nullptr;
  // Placement is the caller's choice, whatever the backend prefers.
  int kind = placement    ? placement->kind
             : placements ? placements->default_kind
                          : static_cast<int>(kMemCpu);
  int device = placement    ? placement->device
               : placements ? placements->default_device
                            : 0;
  if (placement != nullptr && placement->has_into) {
    const MemView& into = placement->into;
    if (byte_size > into.size) {
      return NewError(TRITONSERVER_ERROR_INVALID_ARG,
                      std::string("output '") + tensor_name + "' needs " +
                          std::to_string(byte_size) +
                          " bytes but its destination holds " +
                          std::to_string(into.size));
    }
    *buffer = into.ptr;
    *buffer_userp = const_cast<OutputBuffer*>(&placement->into_tag);
    *actual_type = PinnedAsCpu(into.kind, preferred_type)
                       ? TRITONSERVER_MEMORY_CPU
                       : static_cast<TRITONSERVER_MemoryType>(into.kind);
    *actual_id = into.device;
    return nullptr;
  }
  if (byte_size == 0) {
    *buffer = nullptr;
    *buffer_userp = nullptr;
    *actual_type = static_cast<TRITONSERVER_MemoryType>(kind);
    *actual_id = device;
    return nullptr;
  }
  std::string error;
  OutputBuffer* b = BufferPool::Acquire(kind, device, byte_size, &error);
  if (b == nullptr) {
    TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_INTERNAL;
    if (kind != kMemCpu && !Cuda().available) {
      code = TRITONSERVER_ERROR_UNSUPPORTED;
    }
    return NewError(code, std::string("output '") + tensor_name +
                              "': cannot allocate " +
                              std::to_string(byte_size) + " bytes of " +
                              (kind == kMemGpu      ? "GPU"
                               : kind == kMemPinned ? "pinned"
                                                    : "CPU") +
                              " memory: " + error);
  }
  (void)preferred_id;
  *buffer = b->ptr;
  *buffer_userp = b;
  b->reported_as_cpu = PinnedAsCpu(b->kind, preferred_type);
  *actual_type = b->reported_as_cpu
                     ? TRITONSERVER_MEMORY_CPU
                     : static_cast<TRITONSERVER_MemoryType>(b->kind);
  *actual_id = b->device;
  return nullptr;
}

TRITONSERVER_Error* ReleaseFn(TRITONSERVER_ResponseAllocator*, void*,
                              void* buffer_userp, size_t,
                              TRITONSERVER_MemoryType, int64_t) {
  auto* b = static_cast<OutputBuffer*>(buffer_userp);
  if (b == nullptr || b->owner == OutputBuffer::kCaller) return nullptr;
  // Handed to JS: its finalizer or dispose() returns it to the pool.
  if (b->js_owned.load(std::memory_order_acquire)) return nullptr;
  BufferPool::Return(b);
  return nullptr;
}

TRITONSERVER_Error* QueryFn(TRITONSERVER_ResponseAllocator*, void* userp,
                            const char* tensor_name, size_t*,
                            TRITONSERVER_MemoryType* memory_type,
                            int64_t* memory_type_id) {
  auto* placements = static_cast<const OutputPlacements*>(userp);
  if (placements == nullptr) return nullptr;
  const OutputPlacement* placement =
      tensor_name != nullptr ? placements->Find(tensor_name) : nullptr;
  if (placement != nullptr && placement->has_into) {
    *memory_type = static_cast<TRITONSERVER_MemoryType>(placement->into.kind);
    *memory_type_id = placement->into.device;
  } else if (placement != nullptr) {
    *memory_type = static_cast<TRITONSERVER_MemoryType>(placement->kind);
    *memory_type_id = placement->device;
  } else {
    *memory_type =
        static_cast<TRITONSERVER_MemoryType>(placements->default_kind);
    *memory_type_id = placements->default_device;
  }
  return nullptr;
}

TRITONSERVER_Error* BufferAttributesFn(
    TRITONSERVER_ResponseAllocator*, const char*,
    TRITONSERVER_BufferAttributes* attributes, void*, void* buffer_userp) {
  auto* b = static_cast<OutputBuffer*>(buffer_userp);
  if (b == nullptr) return nullptr;
  const TritonApi& api = Api();
  // `into` tags carry the destination's kind and device (set at build);
  // a caller's pinned destination keeps its kind here (a tag is shared by
  // the responses of a stream, so it records nothing per allocation).
  int kind = b->reported_as_cpu ? static_cast<int>(kMemCpu) : b->kind;
  int device = b->device;
  TRITONSERVER_Error* err = api.TRITONSERVER_BufferAttributesSetMemoryType(
      attributes, static_cast<TRITONSERVER_MemoryType>(kind));
  if (err != nullptr) return err;
  return api.TRITONSERVER_BufferAttributesSetMemoryTypeId(attributes, device);
}

}  // namespace

TRITONSERVER_Error* ResponseAllocator::Create() {
  const TritonApi& api = Api();
  TRITONSERVER_Error* err = api.TRITONSERVER_ResponseAllocatorNew(
      &handle_, AllocFn, ReleaseFn, nullptr);
  if (err != nullptr) return err;
  err = api.TRITONSERVER_ResponseAllocatorSetQueryFunction(handle_, QueryFn);
  if (err != nullptr) return err;
  return api.TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(
      handle_, BufferAttributesFn);
}

void ResponseAllocator::Delete() {
  if (handle_ != nullptr && LoadedApi() != nullptr) {
    TRITONSERVER_Error* err =
        Api().TRITONSERVER_ResponseAllocatorDelete(handle_);
    DropError(err);
  }
  handle_ = nullptr;
}

ResponseAllocator::~ResponseAllocator() { Delete(); }

}  // namespace triton_node
