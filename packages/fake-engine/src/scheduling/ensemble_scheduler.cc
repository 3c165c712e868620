// Ensembles, run the way Triton's ensemble scheduler runs them (r25.07,
// src/ensemble_scheduler/): an ensemble request becomes requests for its
// steps' models, each sent as soon as the tensors its input map names
// exist; a step's outputs become the ensemble tensors its output map names
// (allocated by an allocator of the ensemble's own, from Triton's host
// memory manager); the ensemble's outputs reach the caller through the
// caller's allocator, in responses of the ensemble model. A decoupled step
// makes a new value of its output tensors per response (Triton counts them
// as iterations), each flowing on separately. A failure ends the request
// with an error response prefixed "in ensemble 'NAME', ".
//
// Lifetimes: the context (one per ensemble request) lives as long as a
// step may still answer; the tracker lives until the ensemble request and
// every step request are released, then reports the ensemble's statistics
// and releases the ensemble request.
#include "ensemble_scheduler.h"

#include <memory>
#include <mutex>

#include "ensemble_context.h"

namespace fake {

void EnsembleStart(const std::shared_ptr<Model>& m,
                   TRITONSERVER_InferenceRequest* r) {
  m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(m->mu);
    ++m->busy_instances;  // until the request is released
  }
  r->state.store(RequestState::kExecuting);
  auto ctx = std::make_shared<ensemble::Context>(m, r);
  ctx->Init();
  ensemble::Context::Proceed(ctx, nullptr);
}

}  // namespace fake
