// Where memory lives.
#ifndef TRITON_NODE_MEMORY_MEM_KIND_H_
#define TRITON_NODE_MEMORY_MEM_KIND_H_

#include "triton_capi.h"

namespace triton_node {

// Values equal TRITONSERVER_MemoryType (checked below).
enum MemKind : int { kMemCpu = 0, kMemPinned = 1, kMemGpu = 2 };
constexpr int kMemKindCount = 3;
static_assert(static_cast<int>(kMemCpu) == TRITONSERVER_MEMORY_CPU &&
                  static_cast<int>(kMemPinned) ==
                      TRITONSERVER_MEMORY_CPU_PINNED &&
                  static_cast<int>(kMemGpu) == TRITONSERVER_MEMORY_GPU,
              "MemKind must equal TRITONSERVER_MemoryType");

// "cpu" | "pinned" | "gpu" (the names lib/abi/binding.ts uses).
inline const char* MemKindName(int kind) {
  switch (kind) {
    case kMemPinned:
      return "pinned";
    case kMemGpu:
      return "gpu";
    default:
      return "cpu";
  }
}

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_MEM_KIND_H_
