// The response allocator: output memory where the caller asked for it.
#ifndef TRITON_NODE_MEMORY_RESPONSE_ALLOCATOR_H_
#define TRITON_NODE_MEMORY_RESPONSE_ALLOCATOR_H_

#include "triton_capi.h"

namespace triton_node {

// Wraps one TRITONSERVER_ResponseAllocator (one per server). Its callbacks
// run on Triton threads (or inside ServerInferAsync); the alloc `userp` is
// the request's OutputPlacements (memory/placements.h).
class ResponseAllocator {
 public:
  ResponseAllocator() = default;
  ~ResponseAllocator();
  // Returns an error (caller deletes) when Triton refuses.
  TRITONSERVER_Error* Create();
  TRITONSERVER_ResponseAllocator* handle() const { return handle_; }
  // Deletes it now (the server is deleted and no request is out).
  void Delete();
  // Forget the handle without deleting it (Triton may still use it).
  void Leak() { handle_ = nullptr; }

 private:
  TRITONSERVER_ResponseAllocator* handle_ = nullptr;
};

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_RESPONSE_ALLOCATOR_H_
