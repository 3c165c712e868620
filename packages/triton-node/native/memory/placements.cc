#include "memory/placements.h"

#include <cstring>

namespace triton_node {

const OutputPlacement* OutputPlacements::Find(const char* name) const {
  if (name == nullptr) return nullptr;
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(items[i].name.c_str(), name) == 0) return &items[i];
  }
  return nullptr;
}

void OutputPlacements::ClearDestinations() {
  for (size_t i = 0; i < count; ++i) {
    items[i].has_into = false;
    items[i].into_ref = nullptr;
  }
}

}  // namespace triton_node
