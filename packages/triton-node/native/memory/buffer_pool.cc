#include "memory/buffer_pool.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "memory/cuda_runtime.h"
#include "memory/mem_kind.h"

namespace triton_node {

std::atomic<int64_t> BufferPool::live_js_buffers{0};

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

}  // namespace

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

}  // namespace triton_node
