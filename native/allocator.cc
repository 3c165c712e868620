#include "allocator.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda.h"
#include "errors.h"
#include "request.h"
#include "triton_api.h"

namespace triton_node {

std::atomic<int64_t> BufferPool::live_js_buffers{0};
std::atomic<int64_t> g_pending_requests{0};

namespace {

constexpr int kMinClass = 8;   // 256 bytes
constexpr int kMaxClass = 30;  // 1 GiB; larger buffers are not pooled
constexpr int kClasses = kMaxClass + 1;
constexpr uint8_t kUnpooled = 0xff;
constexpr size_t kAlignment = 256;

int64_t PoolLimitBytes() {
  static const int64_t limit = [] {
    const char* env = std::getenv("TRITON_NODE_POOL_MAX_BYTES");
    if (env != nullptr && *env != '\0') {
      return static_cast<int64_t>(std::atoll(env));
    }
    return static_cast<int64_t>(1) << 30;  // per memory kind and device
  }();
  return limit;
}

std::atomic<int64_t> g_pooled_bytes{0};

// Free lists of one memory kind on one device.
struct Pool {
  std::mutex mu;
  std::vector<OutputBuffer*> free[kClasses];
  int64_t bytes = 0;
};

constexpr int kMaxDevices = 64;
// Never freed: buffers may return during process exit.
Pool* g_cpu_pool = new Pool();
Pool* g_pinned_pool = new Pool();
Pool* g_gpu_pools = new Pool[kMaxDevices];

Pool* PoolFor(int kind, int device) {
  switch (kind) {
    case kMemPinned:
      return g_pinned_pool;
    case kMemGpu:
      return (device >= 0 && device < kMaxDevices) ? &g_gpu_pools[device]
                                                   : nullptr;
    default:
      return g_cpu_pool;
  }
}

int SizeClass(size_t bytes) {
  int cls = kMinClass;
  while (cls <= kMaxClass && (static_cast<size_t>(1) << cls) < bytes) ++cls;
  return cls;
}

uint8_t* AllocRaw(int kind, int device, size_t bytes, std::string* error) {
  switch (kind) {
    case kMemPinned:
      return static_cast<uint8_t*>(CudaAllocHost(bytes, error));
    case kMemGpu:
      return static_cast<uint8_t*>(CudaAllocDevice(bytes, device, error));
    default: {
      void* p = nullptr;
      if (posix_memalign(&p, kAlignment, bytes == 0 ? kAlignment : bytes) !=
          0) {
        *error = "out of memory allocating " + std::to_string(bytes) + " bytes";
        return nullptr;
      }
      return static_cast<uint8_t*>(p);
    }
  }
}

void FreeRaw(OutputBuffer* b) {
  switch (b->kind) {
    case kMemPinned:
      CudaFreeHost(b->ptr);
      break;
    case kMemGpu:
      CudaFreeDevice(b->ptr, b->device);
      break;
    default:
      std::free(b->ptr);
      break;
  }
  delete b;
}

TRITONSERVER_Error* NewError(TRITONSERVER_Error_Code code,
                             const std::string& message) {
  return Api().TRITONSERVER_ErrorNew(code, message.c_str());
}

// ---- Triton allocator callbacks (Triton threads) ---------------------------

TRITONSERVER_Error* AllocFn(TRITONSERVER_ResponseAllocator*,
                            const char* tensor_name, size_t byte_size,
                            TRITONSERVER_MemoryType preferred_type,
                            int64_t preferred_id, void* userp, void** buffer,
                            void** buffer_userp,
                            TRITONSERVER_MemoryType* actual_type,
                            int64_t* actual_id) {
  auto* ctx = static_cast<RequestContext*>(userp);
  const OutputPlacement* placement =
      ctx != nullptr ? ctx->FindPlacement(tensor_name) : nullptr;
  // Placement is the caller's choice, whatever the backend prefers.
  int kind = placement ? placement->kind : (ctx ? ctx->default_kind : kMemCpu);
  int device = placement ? placement->device : (ctx ? ctx->default_device : 0);
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
    *actual_type = static_cast<TRITONSERVER_MemoryType>(into.kind);
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
  (void)preferred_type;
  (void)preferred_id;
  *buffer = b->ptr;
  *buffer_userp = b;
  *actual_type = static_cast<TRITONSERVER_MemoryType>(b->kind);
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
  auto* ctx = static_cast<RequestContext*>(userp);
  if (ctx == nullptr) return nullptr;
  const OutputPlacement* placement =
      tensor_name != nullptr ? ctx->FindPlacement(tensor_name) : nullptr;
  if (placement != nullptr && placement->has_into) {
    *memory_type = static_cast<TRITONSERVER_MemoryType>(placement->into.kind);
    *memory_type_id = placement->into.device;
  } else if (placement != nullptr) {
    *memory_type = static_cast<TRITONSERVER_MemoryType>(placement->kind);
    *memory_type_id = placement->device;
  } else {
    *memory_type = static_cast<TRITONSERVER_MemoryType>(ctx->default_kind);
    *memory_type_id = ctx->default_device;
  }
  return nullptr;
}

TRITONSERVER_Error* BufferAttributesFn(
    TRITONSERVER_ResponseAllocator*, const char*,
    TRITONSERVER_BufferAttributes* attributes, void*, void* buffer_userp) {
  auto* b = static_cast<OutputBuffer*>(buffer_userp);
  if (b == nullptr) return nullptr;
  const TritonApi& api = Api();
  // `into` tags carry the destination's kind and device (set at build).
  int kind = b->kind;
  int device = b->device;
  TRITONSERVER_Error* err = api.TRITONSERVER_BufferAttributesSetMemoryType(
      attributes, static_cast<TRITONSERVER_MemoryType>(kind));
  if (err != nullptr) return err;
  return api.TRITONSERVER_BufferAttributesSetMemoryTypeId(attributes, device);
}

}  // namespace

// ---- BufferPool ------------------------------------------------------------

OutputBuffer* BufferPool::Acquire(int kind, int device, size_t bytes,
                                  std::string* error) {
  Pool* pool = PoolFor(kind, device);
  if (pool == nullptr) {
    *error = "device " + std::to_string(device) + " is out of range";
    return nullptr;
  }
  int cls = SizeClass(bytes);
  if (cls <= kMaxClass) {
    std::lock_guard<std::mutex> lock(pool->mu);
    auto& list = pool->free[cls];
    if (!list.empty()) {
      OutputBuffer* b = list.back();
      list.pop_back();
      pool->bytes -= static_cast<int64_t>(b->capacity);
      g_pooled_bytes.fetch_sub(static_cast<int64_t>(b->capacity),
                               std::memory_order_relaxed);
      b->js_owned.store(false, std::memory_order_relaxed);
      return b;
    }
  }
  size_t capacity = cls <= kMaxClass ? (static_cast<size_t>(1) << cls) : bytes;
  uint8_t* ptr = AllocRaw(kind, device, capacity, error);
  if (ptr == nullptr) return nullptr;
  auto* b = new OutputBuffer();
  b->owner = OutputBuffer::kPooled;
  b->kind = kind;
  b->device = device;
  b->ptr = ptr;
  b->capacity = capacity;
  b->size_class = cls <= kMaxClass ? static_cast<uint8_t>(cls) : kUnpooled;
  return b;
}

void BufferPool::Return(OutputBuffer* b) {
  if (b == nullptr || b->owner != OutputBuffer::kPooled) return;
  if (b->size_class != kUnpooled) {
    Pool* pool = PoolFor(b->kind, b->device);
    std::lock_guard<std::mutex> lock(pool->mu);
    if (pool->bytes + static_cast<int64_t>(b->capacity) <= PoolLimitBytes()) {
      b->js_owned.store(false, std::memory_order_relaxed);
      pool->free[b->size_class].push_back(b);
      pool->bytes += static_cast<int64_t>(b->capacity);
      g_pooled_bytes.fetch_add(static_cast<int64_t>(b->capacity),
                               std::memory_order_relaxed);
      return;
    }
  }
  FreeRaw(b);
}

int64_t BufferPool::PooledBytes() {
  return g_pooled_bytes.load(std::memory_order_relaxed);
}

// ---- ResponseAllocator -----------------------------------------------------

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
