// A validated request's way into its model's scheduler (submission.h).
#include "submission.h"

#include <atomic>
#include <cstdint>

#include "../core/engine.h"
#include "../core/model.h"
#include "../support/clock.h"
#include "scheduler.h"
#include "sequence_batcher.h"

namespace fake {

namespace {

std::atomic<bool> g_sync_callbacks{false};

// Makes a validated request PENDING: its trace attached, its start time
// and queue deadline set, and the counters of what is in flight raised.
void StartRequest(TRITONSERVER_InferenceRequest* r, Model* m,
                  TRITONSERVER_InferenceTrace* trace) {
  r->target.id = r->id;
  r->trace = trace;
  if (trace != nullptr) {
    trace->attached.store(true);
    trace->model_name = m->name;
    trace->model_version = m->version;
  }
  r->request_start_ns = SteadyNs();
  r->queue_start_ns = r->request_start_ns;
  r->deadline_ns = 0;
  if (m->queue_policy_active()) {
    const auto& qp = m->config.dynamic_batching.default_queue_policy;
    uint64_t t = (qp.allow_timeout_override && r->timeout_us > 0)
                     ? r->timeout_us
                     : qp.default_timeout_microseconds;
    if (t > 0) r->deadline_ns = r->request_start_ns + t * 1000;
  }
  r->cancelled->store(false);
  r->state.store(RequestState::kPending);
  r->target.allocator->users.fetch_add(1);
  m->engine->active_inferences.fetch_add(1);
  m->stats.pending.fetch_add(1, std::memory_order_relaxed);
  if (trace != nullptr) {
    trace->Report(TRITONSERVER_TRACE_REQUEST_START, r->request_start_ns);
    trace->Report(TRITONSERVER_TRACE_QUEUE_START, SteadyNs());
  }
}

// Undoes StartRequest for a request the model's queue refused.
void UndoStart(TRITONSERVER_InferenceRequest* r, Model* m,
               TRITONSERVER_InferenceTrace* trace) {
  m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
  m->engine->active_inferences.fetch_sub(1);
  r->target.allocator->users.fetch_sub(1);
  if (trace != nullptr) trace->attached.store(false);
  r->trace = nullptr;
  r->state.store(RequestState::kFailedEnqueue);
}

}  // namespace

void SetSyncCallbacks(bool enabled) { g_sync_callbacks.store(enabled); }

TRITONSERVER_Error* RunRequest(TRITONSERVER_InferenceRequest* r,
                               TRITONSERVER_InferenceTrace* trace) {
  Model* m = r->model.get();
  if (m->config.has_sequence_batching) {
    // Part of Triton's request checks: nothing was counted yet.
    if (auto* e = CheckCorrelationIdType(m->config, r)) return e;
  }
  StartRequest(r, m, trace);
  if (m->config.has_sequence_batching) {
    bool run_now = true;
    if (auto* e = SequenceAdmit(m, r, &run_now)) {
      UndoStart(r, m, trace);
      return e;
    }
    if (!run_now) return nullptr;  // queued behind its sequence
  }
  if (g_sync_callbacks.load(std::memory_order_relaxed)) {
    ExecuteInline(m, r);
    return nullptr;
  }
  if (auto* e = Enqueue(m, r)) {
    UndoStart(r, m, trace);
    return e;
  }
  return nullptr;
}

}  // namespace fake
