// Live-object counts for TRITONFAKE_LiveObjects (a fake-only export): tests
// check that every object the API handed out was given back.
#include <atomic>

#include "../internal.h"

namespace fake {
namespace {
std::atomic<int64_t> g_live[kLiveKindCount];
}  // namespace

void LiveAdd(LiveKind kind, int64_t delta) {
  g_live[kind].fetch_add(delta, std::memory_order_relaxed);
}

}  // namespace fake

FAKE_EXPORT uint32_t TRITONFAKE_LiveObjects(uint64_t* counts,
                                            uint32_t capacity) {
  if (counts == nullptr) return 0;
  uint32_t n = capacity < static_cast<uint32_t>(fake::kLiveKindCount)
                   ? capacity
                   : static_cast<uint32_t>(fake::kLiveKindCount);
  for (uint32_t i = 0; i < n; ++i) {
    int64_t v = fake::g_live[i].load(std::memory_order_relaxed);
    counts[i] = v < 0 ? 0 : static_cast<uint64_t>(v);
  }
  return n;
}
