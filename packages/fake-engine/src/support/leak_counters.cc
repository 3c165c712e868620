// Live-object counts for TRITONFAKE_LiveObjects (a fake-only export): tests
// check that every object the API handed out was given back.
#include "leak_counters.h"

#include <atomic>

namespace fake {
namespace {
std::atomic<int64_t> g_live[kLiveKindCount];
}  // namespace

void LiveAdd(LiveKind kind, int64_t delta) {
  g_live[kind].fetch_add(delta, std::memory_order_relaxed);
}

uint64_t LiveCount(LiveKind kind) {
  int64_t v = g_live[kind].load(std::memory_order_relaxed);
  return v < 0 ? 0 : static_cast<uint64_t>(v);
}

}  // namespace fake
