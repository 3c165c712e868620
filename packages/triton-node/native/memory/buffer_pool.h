// Process-wide pools of reusable output buffers per memory kind and device.
#ifndef TRITON_NODE_MEMORY_BUFFER_POOL_H_
#define TRITON_NODE_MEMORY_BUFFER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace triton_node {

// One output buffer as Triton sees it (its `buffer_userp`). Pooled blocks
// come from BufferPool; caller-owned ones describe an `into` destination and
// live inside the request context.
struct OutputBuffer {
  enum Owner : uint8_t { kPooled = 0, kCaller = 1 };
  Owner owner = kPooled;
  int kind = 0;  // MemKind
  int device = 0;
  uint8_t* ptr = nullptr;
  size_t capacity = 0;
  uint8_t size_class = 0;  // 0xff: not pooled (too large), freed on return
  // Set on the JS thread when a JS object took the buffer over (external
  // ArrayBuffer, HostBuffer, CudaBuffer): the allocator's release function
  // then leaves it alone and the JS side returns it to the pool.
  std::atomic<bool> js_owned{false};
  // kCaller only: index of the placement in the request context.
  int placement = -1;
  // Pooled pinned memory that this allocation reported to Triton as CPU
  // (see PinnedAsCpu in response_allocator.cc); set at each allocation.
  bool reported_as_cpu = false;
};

// Process-wide: buffers outlive servers (a JS ArrayBuffer may be collected
// long after its server stopped) and environments share them. Thread-safe.
class BufferPool {
 public:
  // A buffer of at least `bytes`; null with `error` set on failure.
  static OutputBuffer* Acquire(int kind, int device, size_t bytes,
                               std::string* error);
  // Back to the free list (or freed when over the pool limit).
  static void Return(OutputBuffer* buffer);
  static int64_t PooledBytes();
  // Buffers currently owned by JS objects.
  static std::atomic<int64_t> live_js_buffers;
};

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_BUFFER_POOL_H_
