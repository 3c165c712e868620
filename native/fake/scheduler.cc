// Per-model scheduling: one execution thread per instance (instance_group
// count), a condition-variable queue, and the dynamic batcher that gathers
// queued requests up to the preferred / max batch within the queue delay.
#include <algorithm>

#include "internal.h"

namespace fake {

Model::~Model() {
  // Normally joined by the reaper; this is the fallback for a model that
  // never reached it (its last owner is never one of its own threads).
  JoinThreads();
}

void Model::Start() {
  size_t n = 0;
  for (const auto& g : config.instance_group) n += g.count > 0 ? g.count : 0;
  if (n == 0) n = 1;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([this, i] { InstanceLoop(i); });
  }
}

void Model::JoinThreads() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stop_threads = true;
  }
  cv.notify_all();
  for (auto& t : threads) {
    if (!t.joinable()) continue;
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();
    } else {
      t.join();
    }
  }
  threads.clear();
}

void Model::Release() {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1 && unloading.load()) {
    if (auto me = self.lock()) QueueFinalize(std::move(me));
  }
}

TRITONSERVER_Error* Model::Enqueue(TRITONSERVER_InferenceRequest* r) {
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto& qp = config.dynamic_batching.default_queue_policy;
    if (config.dynamic_batching.present && qp.max_queue_size > 0 &&
        queue.size() >= qp.max_queue_size) {
      return Err(TRITONSERVER_ERROR_UNAVAILABLE,
                 r->Prefix() + "Exceeds maximum queue size");
    }
    const DynamicBatchingConfig& db = config.dynamic_batching;
    if (db.present && db.priority_levels > 0) {
      // Priority queues: level 1 first; 0 or beyond the levels means the
      // default level; FIFO within a level.
      auto level = [&db](const TRITONSERVER_InferenceRequest* q) {
        uint64_t p = q->priority;
        return (p == 0 || p > db.priority_levels) ? db.default_priority_level
                                                  : p;
      };
      const uint64_t mine = level(r);
      auto at = std::find_if(queue.begin(), queue.end(),
                             [&](const TRITONSERVER_InferenceRequest* q) {
                               return level(q) > mine;
                             });
      queue.insert(at, r);
    } else {
      queue.push_back(r);
    }
  }
  cv.notify_one();
  return nullptr;
}

void Model::ExecuteInline(TRITONSERVER_InferenceRequest* r) {
  r->state.store(RequestState::kExecuting);
  std::vector<TRITONSERVER_InferenceRequest*> batch{r};
  Execute(batch, 0, true);
}

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

}  // namespace

void Model::InstanceLoop(size_t instance) {
  const bool batching = config.dynamic_batching.present &&
                        config.max_batch_size > 0 &&
                        backend == BackendKind::kIdentity;
  const uint64_t max_batch =
      batching ? static_cast<uint64_t>(config.max_batch_size) : 1;
  uint64_t target = max_batch;
  if (batching && !config.dynamic_batching.preferred_batch_size.empty()) {
    uint64_t best = 0;
    for (int p : config.dynamic_batching.preferred_batch_size) {
      if (p > 0 && static_cast<uint64_t>(p) <= max_batch) {
        best = std::max<uint64_t>(best, p);
      }
    }
    if (best > 0) target = best;
  }
  const auto delay = std::chrono::microseconds(
      config.dynamic_batching.max_queue_delay_microseconds);
  const bool policy = queue_policy_active();

  std::vector<TRITONSERVER_InferenceRequest*> batch;
  std::vector<std::pair<TRITONSERVER_InferenceRequest*, bool>> rejected;
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    cv.wait(lock, [this] { return stop_threads || !queue.empty(); });
    if (queue.empty()) break;  // stopping and drained
    batch.clear();
    rejected.clear();
    uint64_t size = 0;
    auto first_arrival = std::chrono::steady_clock::now();
    while (true) {
      while (!queue.empty()) {
        TRITONSERVER_InferenceRequest* r = queue.front();
        if (policy) {
          bool cancelled = r->cancelled->load();
          if (cancelled ||
              (r->deadline_ns != 0 && SteadyNs() > r->deadline_ns)) {
            queue.pop_front();
            rejected.emplace_back(r, cancelled);
            continue;
          }
        }
        if (!batch.empty() &&
            (size + r->batch_size > max_batch || !SameShapes(batch[0], r))) {
          break;
        }
        if (batch.empty()) {
          first_arrival =
              std::chrono::steady_clock::now() -
              std::chrono::nanoseconds(SteadyNs() - r->queue_start_ns);
        }
        queue.pop_front();
        batch.push_back(r);
        size += r->batch_size;
        if (!batching || size >= target) break;
      }
      if (!batching || batch.empty() || size >= target || stop_threads ||
          (!queue.empty())) {
        break;
      }
      // Wait for more requests until the oldest one has waited `delay`.
      auto until = first_arrival + delay;
      if (std::chrono::steady_clock::now() >= until) break;
      if (!cv.wait_until(lock, until,
                         [this] { return stop_threads || !queue.empty(); })) {
        break;
      }
    }
    ++busy_instances;
    for (auto* r : batch) r->state.store(RequestState::kExecuting);
    lock.unlock();
    for (auto& rj : rejected) {
      TRITONSERVER_InferenceRequest* r = rj.first;
      uint64_t waited = SteadyNs() - r->queue_start_ns;
      {
        std::lock_guard<std::mutex> slock(stats.mu);
        stats.fail.Add(waited);
        if (rj.second) {
          ++stats.fail_canceled;
        } else {
          ++stats.fail_rejected;
        }
      }
      stats.pending.fetch_sub(1, std::memory_order_relaxed);
      FailRequest(this, r,
                  rj.second ? Err(TRITONSERVER_ERROR_CANCELLED, "")
                            : Err(TRITONSERVER_ERROR_UNAVAILABLE,
                                  "Request timeout expired"),
                  true);
    }
    if (!batch.empty()) {
      BackendWorkBegin();
      Execute(batch, instance, false);
      BackendWorkEnd();
    }
    lock.lock();
    --busy_instances;
  }
}

void Model::Execute(std::vector<TRITONSERVER_InferenceRequest*>& batch,
                    size_t instance, bool inline_mode) {
  switch (backend) {
    case BackendKind::kIdentity:
      IdentityExecute(this, batch, inline_mode);
      break;
    case BackendKind::kRepeat:
      for (auto* r : batch) RepeatExecute(this, r, inline_mode);
      break;
    case BackendKind::kSquare:
      for (auto* r : batch) SquareExecute(this, r, inline_mode);
      break;
  }
}

}  // namespace fake
