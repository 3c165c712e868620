#include "request/trace_log.h"

#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {

void TraceLog::Start(uint64_t root_id) {
  std::lock_guard<std::mutex> lock(mu_);
  count_ = 0;
  root_id_ = root_id;
  open_children_ = 0;
  root_released_ = false;
  done_ = false;
}

TraceSpan* TraceLog::Find(TRITONSERVER_InferenceTrace* trace, uint64_t id) {
  for (size_t i = 0; i < count_; ++i) {
    if (spans_[i].id == id) return &spans_[i];
  }
  if (count_ == spans_.size()) spans_.emplace_back();
  TraceSpan* s = &spans_[count_++];
  const TritonApi& api = Api();
  s->id = id;
  s->parent_id = 0;
  DropError(api.TRITONSERVER_InferenceTraceParentId(trace, &s->parent_id));
  // Triton names the trace's model before its first activity.
  const char* model = nullptr;
  DropError(api.TRITONSERVER_InferenceTraceModelName(trace, &model));
  s->model = model == nullptr ? "" : model;
  s->version = -1;
  DropError(api.TRITONSERVER_InferenceTraceModelVersion(trace, &s->version));
  for (uint64_t& t : s->timestamps) t = 0;
  if (id != root_id_) ++open_children_;
  return s;
}

bool TraceLog::Record(TRITONSERVER_InferenceTrace* trace, uint64_t id,
                      TRITONSERVER_InferenceTraceActivity activity,
                      uint64_t ns) {
  std::lock_guard<std::mutex> lock(mu_);
  TraceSpan* s = Find(trace, id);
  const int a = static_cast<int>(activity);
  if (a >= 0 && a < kTraceActivities) s->timestamps[a] = ns;
  return id == root_id_;
}

bool TraceLog::Released(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id == root_id_) {
    root_released_ = true;
  } else {
    // A child that reported nothing (its step never started) was never
    // counted.
    for (size_t i = 0; i < count_; ++i) {
      if (spans_[i].id == id) {
        --open_children_;
        break;
      }
    }
  }
  if (done_ || !root_released_ || open_children_ > 0) return false;
  done_ = true;
  return true;
}

}  // namespace triton_node
