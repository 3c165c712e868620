// Where a request's outputs go: read by the response allocator on Triton
// threads, written on the JS thread while the request is built.
#ifndef TRITON_NODE_MEMORY_PLACEMENTS_H_
#define TRITON_NODE_MEMORY_PLACEMENTS_H_

#include <node_api.h>

#include <cstddef>
#include <deque>
#include <string>

#include "memory/buffer_pool.h"
#include "memory/mem_kind.h"
#include "memory/mem_view.h"

namespace triton_node {

// Where one requested output goes.
struct OutputPlacement {
  std::string name;
  int kind = kMemCpu;
  int device = 0;
  bool has_into = false;
  MemView into;  // valid while `into_ref` holds its owner
  napi_ref into_ref = nullptr;
  OutputBuffer into_tag;  // the buffer_userp for this destination
};

// The placements of one request. Reused from request to request; the first
// `count` are valid. A deque: elements never move, so Triton may keep
// `into_tag` pointers.
struct OutputPlacements {
  int default_kind = kMemCpu;
  int default_device = 0;
  std::deque<OutputPlacement> items;
  size_t count = 0;

  const OutputPlacement* Find(const char* name) const;
  // Forgets the destinations (their references are dropped elsewhere).
  void ClearDestinations();
};

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_PLACEMENTS_H_
