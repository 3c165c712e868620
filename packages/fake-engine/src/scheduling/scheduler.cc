// Per-model scheduling: one execution thread per instance (instance_group
// count), a condition-variable queue, and the dynamic batcher that gathers
// queued requests up to the preferred / max batch within the queue delay.
#include "scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "../core/error.h"
#include "../core/process_state.h"
#include "../core/response.h"
#include "../support/clock.h"
#include "ensemble_scheduler.h"

namespace fake {

namespace {

bool SameShapes(const TRITONSERVER_InferenceRequest* a,
                const TRITONSERVER_InferenceRequest* b) {
  if (a->inputs.size() != b->inputs.size()) return false;
  for (const auto& kv : a->inputs) {
    auto it = b->inputs.find(kv.first);
    if (it == b->inputs.end()) return false;
    const std::vector<int64_t>& x = kv.second.batch_shape;
    const std::vector<int64_t>& y = it->second.batch_shape;
    if (x.size() != y.size()) return false;
    if (x.empty()) continue;
    if (!std::equal(x.begin() + 1, x.end(), y.begin() + 1)) return false;
  }
  return true;
}

// How an instance forms its batches: only identity, onnxruntime and
// fake_text_embedding models with dynamic batching and max_batch_size > 0
// batch; a batch closes at `target` (the largest preferred size that fits,
// else max_batch) or once its oldest request waited `delay`.
struct BatchPolicy {
  bool batching = false;
  uint64_t max_batch = 1;
  uint64_t target = 1;
  std::chrono::microseconds delay{0};
  bool queue_policy = false;  // timeouts and cancellation are checked
};

BatchPolicy BatchPolicyOf(const Model& m) {
  const DynamicBatchingConfig& db = m.config.dynamic_batching;
  BatchPolicy bp;
  bp.batching = db.present && m.config.max_batch_size > 0 &&
                (m.backend == BackendKind::kIdentity ||
                 m.backend == BackendKind::kOnnxRuntime ||
                 m.backend == BackendKind::kTextEmbedding);
  bp.max_batch =
      bp.batching ? static_cast<uint64_t>(m.config.max_batch_size) : 1;
  bp.target = bp.max_batch;
  if (bp.batching && !db.preferred_batch_size.empty()) {
    uint64_t best = 0;
    for (int p : db.preferred_batch_size) {
      if (p > 0 && static_cast<uint64_t>(p) <= bp.max_batch) {
        best = std::max<uint64_t>(best, p);
      }
    }
    if (best > 0) bp.target = best;
  }
  bp.delay = std::chrono::microseconds(db.max_queue_delay_microseconds);
  bp.queue_policy = m.queue_policy_active();
  return bp;
}

using Rejected = std::vector<std::pair<TRITONSERVER_InferenceRequest*, bool>>;

// Moves requests from the front of the queue into the batch while they
// fit; under a queue policy, cancelled and expired ones go to `rejected`
// (with whether they were cancelled). Caller holds m->mu.
void TakeQueued(Model* m, const BatchPolicy& bp,
                std::vector<TRITONSERVER_InferenceRequest*>* batch,
                Rejected* rejected, uint64_t* size,
                std::chrono::steady_clock::time_point* first_arrival) {
  while (!m->queue.empty()) {
    TRITONSERVER_InferenceRequest* r = m->queue.front();
    if (bp.queue_policy) {
      bool cancelled = r->cancelled->load();
      if (cancelled || (r->deadline_ns != 0 && SteadyNs() > r->deadline_ns)) {
        m->queue.pop_front();
        rejected->emplace_back(r, cancelled);
        continue;
      }
    }
    if (!batch->empty() &&
        (*size + r->batch_size > bp.max_batch || !SameShapes((*batch)[0], r))) {
      break;
    }
    if (batch->empty()) {
      *first_arrival = std::chrono::steady_clock::now() -
                       std::chrono::nanoseconds(SteadyNs() - r->queue_start_ns);
    }
    m->queue.pop_front();
    batch->push_back(r);
    ++m->forming;
    *size += r->batch_size;
    if (!bp.batching || *size >= bp.target) break;
  }
}

// Forms the next batch, waiting for more requests (until the oldest one
// has waited the policy's delay) while a batching model's batch is short.
void GatherBatch(Model* m, const BatchPolicy& bp,
                 std::unique_lock<std::mutex>* lock,
                 std::vector<TRITONSERVER_InferenceRequest*>* batch,
                 Rejected* rejected) {
  uint64_t size = 0;
  auto first_arrival = std::chrono::steady_clock::now();
  while (true) {
    TakeQueued(m, bp, batch, rejected, &size, &first_arrival);
    if (!bp.batching || batch->empty() || size >= bp.target ||
        m->stop_threads || (!m->queue.empty())) {
      break;
    }
    auto until = first_arrival + bp.delay;
    if (std::chrono::steady_clock::now() >= until) break;
    if (!m->cv.wait_until(*lock, until, [m] {
          return m->stop_threads || !m->queue.empty();
        })) {
      break;
    }
  }
}

// Fails the requests a queue policy rejected: CANCELLED, or UNAVAILABLE
// for an expired timeout, counted in the model's failure statistics.
void FailRejected(Model* m, const Rejected& rejected) {
  for (auto& rj : rejected) {
    TRITONSERVER_InferenceRequest* r = rj.first;
    uint64_t waited = SteadyNs() - r->queue_start_ns;
    {
      std::lock_guard<std::mutex> slock(m->stats.mu);
      m->stats.fail.Add(waited);
      if (rj.second) {
        ++m->stats.fail_canceled;
      } else {
        ++m->stats.fail_rejected;
      }
    }
    m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
    FailRequest(m, r,
                rj.second ? Err(TRITONSERVER_ERROR_CANCELLED, "")
                          : Err(TRITONSERVER_ERROR_UNAVAILABLE,
                                "Request timeout expired"),
                true);
  }
}

// Hands the batch to the model's backend (Triton's instance thread calls
// the backend's execute function the same way).
void Execute(Model* m, std::vector<TRITONSERVER_InferenceRequest*>& batch,
             bool inline_mode) {
  m->execute(m, batch, inline_mode);
}

// One instance thread: takes batches off the model's queue until it stops.
void InstanceLoop(Model* m) {
  const BatchPolicy bp = BatchPolicyOf(*m);
  std::vector<TRITONSERVER_InferenceRequest*> batch;
  Rejected rejected;
  std::unique_lock<std::mutex> lock(m->mu);
  while (true) {
    m->cv.wait(lock, [m] { return m->stop_threads || !m->queue.empty(); });
    if (m->queue.empty()) break;  // stopping and drained
    batch.clear();
    rejected.clear();
    GatherBatch(m, bp, &lock, &batch, &rejected);
    m->forming -= batch.size();  // leaves the queue as it starts executing
    ++m->busy_instances;
    for (auto* r : batch) r->state.store(RequestState::kExecuting);
    lock.unlock();
    FailRejected(m, rejected);
    if (!batch.empty()) {
      BackendWorkBegin();
      Execute(m, batch, false);
      BackendWorkEnd();
    }
    lock.lock();
    --m->busy_instances;
  }
}

}  // namespace

void StartInstances(Model* m) {
  if (m->backend == BackendKind::kEnsemble) return;  // its steps' models run
  size_t n = 0;
  for (const auto& g : m->config.instance_group) {
    n += g.count > 0 ? g.count : 0;
  }
  if (n == 0) n = 1;
  for (size_t i = 0; i < n; ++i) {
    m->threads.emplace_back([m] { InstanceLoop(m); });
  }
}

TRITONSERVER_Error* Enqueue(Model* m, TRITONSERVER_InferenceRequest* r) {
  if (m->backend == BackendKind::kEnsemble) {
    EnsembleStart(r->model, r);
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(m->mu);
    if (m->stop_threads) {
      // No instance thread would ever take it: the fake's own bug (a
      // request holds its model, so it cannot have been finalized).
      std::fprintf(stderr,
                   "triton fake: internal error: a request for '%s' queued "
                   "after the model's instance threads stopped\n",
                   m->name.c_str());
      std::abort();
    }
    const auto& qp = m->config.dynamic_batching.default_queue_policy;
    // A request waiting in a forming batch is still queued for Triton's
    // dynamic batcher: it leaves the queue only when its batch executes.
    if (m->config.dynamic_batching.present && qp.max_queue_size > 0 &&
        m->queue.size() + m->forming >= qp.max_queue_size) {
      return Err(TRITONSERVER_ERROR_UNAVAILABLE,
                 r->Prefix() + "Exceeds maximum queue size");
    }
    const DynamicBatchingConfig& db = m->config.dynamic_batching;
    if (db.present && db.priority_levels > 0) {
      // Priority queues: level 1 first; 0 or beyond the levels means the
      // default level; FIFO within a level.
      auto level = [&db](const TRITONSERVER_InferenceRequest* q) {
        uint64_t p = q->priority;
        return (p == 0 || p > db.priority_levels) ? db.default_priority_level
                                                  : p;
      };
      const uint64_t mine = level(r);
      auto at = std::find_if(m->queue.begin(), m->queue.end(),
                             [&](const TRITONSERVER_InferenceRequest* q) {
                               return level(q) > mine;
                             });
      m->queue.insert(at, r);
    } else {
      m->queue.push_back(r);
    }
  }
  m->cv.notify_one();
  return nullptr;
}

void ExecuteInline(Model* m, TRITONSERVER_InferenceRequest* r) {
  if (m->backend == BackendKind::kEnsemble) {
    EnsembleStart(r->model, r);
    return;
  }
  r->state.store(RequestState::kExecuting);
  std::vector<TRITONSERVER_InferenceRequest*> batch{r};
  Execute(m, batch, true);
}

}  // namespace fake
