#include "memory/buffer_use.h"

namespace triton_node {

void BufferUse::Release() {
  if (--users_ == 0 && IsDisposed()) ReleaseMemory();
}

void ReleaseBufferUses(std::vector<BufferUse*>* uses) {
  for (BufferUse* use : *uses) use->Release();
  uses->clear();
}

}  // namespace triton_node
