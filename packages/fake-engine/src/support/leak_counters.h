// Live-object counts, process-wide: every C API object the library hands
// out counts itself while it lives (Counted<K> as a base), and
// TRITONFAKE_LiveObjects reports them so that tests can check that every
// object was given back.
#ifndef TRITON_NODE_FAKE_SUPPORT_LEAK_COUNTERS_H_
#define TRITON_NODE_FAKE_SUPPORT_LEAK_COUNTERS_H_

#include <cstdint>

namespace fake {

// The order is TRITONFAKE_LiveObjects' order.
enum LiveKind {
  kLiveRequest = 0,
  kLiveResponse,
  kLiveError,
  kLiveMessage,
  kLiveAllocator,
  kLiveOutputBuffer,
  kLiveMetrics,
  kLiveParameter,
  kLiveTrace,
  kLiveServer,
  kLiveKindCount
};
void LiveAdd(LiveKind kind, int64_t delta);
// How many objects of `kind` live now (never negative).
uint64_t LiveCount(LiveKind kind);

template <LiveKind K>
struct Counted {
  Counted() { LiveAdd(K, 1); }
  Counted(const Counted&) { LiveAdd(K, 1); }
  Counted& operator=(const Counted&) = default;
  ~Counted() { LiveAdd(K, -1); }
};

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_LEAK_COUNTERS_H_
