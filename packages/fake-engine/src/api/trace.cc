// Inference trace objects (TIMESTAMPS level): ids in creation order; the
// scheduler and backends report the activities and call the release
// function (core/handles.h, TRITONSERVER_InferenceTrace).
#include <atomic>
#include <cstdint>

#include "../core/handles.h"
#include "../scheduling/submission.h"
#include "export.h"

namespace {
std::atomic<uint64_t> g_next_trace_id{1};
}

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceNew(
    TRITONSERVER_InferenceTrace** trace, TRITONSERVER_InferenceTraceLevel level,
    uint64_t parent_id, TRITONSERVER_InferenceTraceActivityFn_t activity_fn,
    TRITONSERVER_InferenceTraceReleaseFn_t release_fn, void* trace_userp) {
  FAKE_NOT_NULL(trace);
  // As Triton: MIN and MAX are old names for TIMESTAMPS.
  uint32_t l = static_cast<uint32_t>(level);
  if ((l & TRITONSERVER_TRACE_LEVEL_MIN) != 0) {
    l = (l ^ TRITONSERVER_TRACE_LEVEL_MIN) |
        TRITONSERVER_TRACE_LEVEL_TIMESTAMPS;
  }
  if ((l & TRITONSERVER_TRACE_LEVEL_MAX) != 0) {
    l = (l ^ TRITONSERVER_TRACE_LEVEL_MAX) |
        TRITONSERVER_TRACE_LEVEL_TIMESTAMPS;
  }
  auto* t = new TRITONSERVER_InferenceTrace();
  t->id = g_next_trace_id.fetch_add(1);
  t->parent_id = parent_id;
  t->level = static_cast<TRITONSERVER_InferenceTraceLevel>(l);
  t->activity_fn = activity_fn;
  t->release_fn = release_fn;
  t->userp = trace_userp;
  *trace = t;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceDelete(
    TRITONSERVER_InferenceTrace* trace) {
  FAKE_DELETABLE(kTrace, trace);
  FAKE_EXPECT(trace == nullptr || !trace->attached.load(),
              "trace is still used by a request in flight (delete it after "
              "its release function was called); the real library reports "
              "to it later (use after free)");
  delete trace;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceId(
    TRITONSERVER_InferenceTrace* trace, uint64_t* id) {
  FAKE_LIVE(kTrace, trace);
  FAKE_NOT_NULL(id);
  *id = trace->id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceParentId(
    TRITONSERVER_InferenceTrace* trace, uint64_t* parent_id) {
  FAKE_LIVE(kTrace, trace);
  FAKE_NOT_NULL(parent_id);
  *parent_id = trace->parent_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceModelName(
    TRITONSERVER_InferenceTrace* trace, const char** model_name) {
  FAKE_LIVE(kTrace, trace);
  FAKE_NOT_NULL(model_name);
  *model_name = trace->model_name.c_str();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceTraceModelVersion(
    TRITONSERVER_InferenceTrace* trace, int64_t* model_version) {
  FAKE_LIVE(kTrace, trace);
  FAKE_NOT_NULL(model_version);
  *model_version = trace->model_version;
  return nullptr;
}

namespace fake {

// As Triton's InferenceTrace::SpawnChildTrace: a new id, the parent's id,
// level, functions and userp; the step's request releases it.
TRITONSERVER_InferenceTrace* SpawnChildTrace(
    TRITONSERVER_InferenceTrace* parent) {
  auto* t = new TRITONSERVER_InferenceTrace();
  t->id = g_next_trace_id.fetch_add(1);
  t->parent_id = parent->id;
  t->level = parent->level;
  t->activity_fn = parent->activity_fn;
  t->release_fn = parent->release_fn;
  t->userp = parent->userp;
  return t;
}

}  // namespace fake
