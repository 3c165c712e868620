// The in-flight uses of a HostBuffer's or CudaBuffer's memory.
#ifndef TRITON_NODE_MEMORY_BUFFER_USE_H_
#define TRITON_NODE_MEMORY_BUFFER_USE_H_

#include <vector>

namespace triton_node {

// Counts the in-flight requests that borrow a buffer's memory (as an input
// or an `into` destination), so that dispose() during a request marks the
// buffer disposed at once but frees its memory only when the last such
// request is released. JS thread only: requests acquire a use when they are
// built and release it where they drop their references.
class BufferUse {
 public:
  void Acquire() { ++users_; }
  void Release();

 protected:
  virtual ~BufferUse() = default;
  // Frees the memory (once); called when disposed with no users left.
  virtual void ReleaseMemory() = 0;
  virtual bool IsDisposed() const = 0;
  int users() const { return users_; }

 private:
  int users_ = 0;
};

// Releases (and clears) the uses a request acquired. JS thread; call it
// before dropping the references that keep the buffers' objects alive.
void ReleaseBufferUses(std::vector<BufferUse*>* uses);

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_BUFFER_USE_H_
