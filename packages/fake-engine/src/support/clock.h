// The engine's two clocks: steady nanoseconds for durations and deadlines,
// wall-clock milliseconds for the times Triton reports (last_inference).
#ifndef TRITON_NODE_FAKE_SUPPORT_CLOCK_H_
#define TRITON_NODE_FAKE_SUPPORT_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace fake {

inline uint64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline uint64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_CLOCK_H_
