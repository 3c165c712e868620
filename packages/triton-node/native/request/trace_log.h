// The traces of one traced request. Triton gives the request's trace and
// every child trace it spawns (one per ensemble step, nested for nested
// ensembles) the same activity and release functions and userp, so the
// callbacks tell them apart by trace id. Written on Triton's threads under
// `mu`; read on the JS thread once every trace was released.
#ifndef TRITON_NODE_REQUEST_TRACE_LOG_H_
#define TRITON_NODE_REQUEST_TRACE_LOG_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "triton_capi.h"

namespace triton_node {

// Activities with a timestamp: REQUEST_START .. REQUEST_END.
constexpr int kTraceActivities = 7;

struct TraceSpan {
  uint64_t id = 0;
  uint64_t parent_id = 0;  // 0 for the request's own trace
  std::string model;
  int64_t version = -1;
  uint64_t timestamps[kTraceActivities] = {};
};

class TraceLog {
 public:
  // A new request's trace `root_id` (JS thread, before submission).
  void Start(uint64_t root_id);
  // Records `activity` of `trace` (a Triton thread). Returns whether it is
  // the request's own trace.
  bool Record(TRITONSERVER_InferenceTrace* trace, uint64_t id,
              TRITONSERVER_InferenceTraceActivity activity, uint64_t ns);
  // Counts the release of trace `id` (a Triton thread); true once, when the
  // request's own trace and every child seen were released.
  bool Released(uint64_t id);

  // JS thread, after the last release.
  size_t count() const { return count_; }
  const TraceSpan& at(size_t i) const { return spans_[i]; }

 private:
  TraceSpan* Find(TRITONSERVER_InferenceTrace* trace, uint64_t id);

  std::mutex mu_;
  std::vector<TraceSpan> spans_;  // reused: the first `count_` are this
  size_t count_ = 0;              // request's
  uint64_t root_id_ = 0;
  int open_children_ = 0;
  bool root_released_ = false;
  bool done_ = false;
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_TRACE_LOG_H_
