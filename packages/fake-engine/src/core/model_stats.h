// The counters a model version keeps for TRITONSERVER_ServerModelStatistics
// and the Prometheus metrics: the scheduler and the backends add to them
// under `mu`.
#ifndef TRITON_NODE_FAKE_CORE_MODEL_STATS_H_
#define TRITON_NODE_FAKE_CORE_MODEL_STATS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

namespace fake {

struct Duration {
  uint64_t count = 0, ns = 0;
  void Add(uint64_t d) {
    ++count;
    ns += d;
  }
};
struct BatchStat {
  Duration input, infer, output;
};
struct ResponseStat {
  Duration compute_infer, compute_output, success, fail, empty_response, cancel;
};
struct ModelStats {
  std::mutex mu;
  uint64_t last_inference_ms = 0;
  uint64_t inference_count = 0;
  uint64_t execution_count = 0;
  Duration success, fail, queue, compute_input, compute_infer, compute_output;
  std::map<uint64_t, BatchStat> batch;
  std::map<uint64_t, ResponseStat> response;
  // Prometheus-only.
  uint64_t fail_backend = 0, fail_rejected = 0, fail_canceled = 0,
           fail_other = 0;
  uint64_t input_bytes = 0;
  std::atomic<int64_t> pending{0};
};

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CORE_MODEL_STATS_H_
