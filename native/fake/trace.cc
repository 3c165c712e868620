// Inference trace objects (TIMESTAMPS level): ids in creation order; the
// scheduler and backends report the activities and call the release
// function (see backends.cc).
#include "internal.h"

namespace {
std::atomic<uint64_t> g_next_trace_id{1};
}

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceNew(
    TRITONSERVER_InferenceTrace** trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* trace_userp) {
  FAKE_REQUIRE(trace, "trace");
  if ((level & TRITONSERVER_TRACE_LEVEL_TENSORS) != 0) {
    return ErrArg(
        "TRITONSERVER_TRACE_LEVEL_TENSORS needs "
        "TRITONSERVER_InferenceTraceTensorNew");
  }
  auto* t = new TRITONSERVER_InferenceTrace();
  t->id = g_next_trace_id.fetch_add(1);
  t->parent_id = parent_id;
  t->level = level;
  t->activity_fn = activity_fn;
  t->release_fn = release_fn;
  t->userp = trace_userp;
  *trace = t;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceDelete(
    TRITONSERVER_InferenceTrace* trace) {
  FAKE_REQUIRE(trace, "trace");
  delete trace;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceId(
    TRITONSERVER_InferenceTrace* trace, uint64_t* id) {
  FAKE_REQUIRE(trace, "trace");
  FAKE_REQUIRE(id, "id");
  *id = trace->id;
  return nullptr;
}
