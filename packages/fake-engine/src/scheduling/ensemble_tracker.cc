// The ensemble request tracker (ensemble_tracker.h).
#include "ensemble_tracker.h"

#include <utility>

#include "../core/response.h"
#include "../support/clock.h"

namespace fake {
namespace ensemble {
namespace {

void ReportEnsembleStatistics(Tracker* t) {
  TRITONSERVER_InferenceRequest* r = t->request;
  ModelStats& s = t->model->stats;
  uint64_t input, infer, output;
  {
    std::lock_guard<std::mutex> lock(t->totals->mu);
    input = t->totals->input_ns;
    infer = t->totals->infer_ns;
    output = t->totals->output_ns;
  }
  std::lock_guard<std::mutex> lock(s.mu);
  const uint64_t end = SteadyNs();
  if (!t->status.ok) {
    s.fail.Add(end - r->request_start_ns);
    ++s.fail_other;
    return;
  }
  const uint64_t batch = r->request_batch == 0 ? 1 : r->request_batch;
  s.success.Add(end - r->request_start_ns);
  s.queue.Add(t->compute_start_ns - r->queue_start_ns);
  s.compute_input.Add(input);
  s.compute_infer.Add(infer);
  s.compute_output.Add(output);
  s.inference_count += batch;
  s.last_inference_ms = WallMs();
  ++s.execution_count;
  BatchStat& b = s.batch[batch];
  b.input.Add(input);
  b.infer.Add(infer);
  b.output.Add(output);
}

}  // namespace

void DropTracker(Tracker* t) {
  {
    std::lock_guard<std::mutex> lock(t->mu);
    if (--t->pending > 0) return;
  }
  ReportEnsembleStatistics(t);
  TRITONSERVER_InferenceRequest* r = t->request;
  if (r->trace != nullptr) {
    TRITONSERVER_InferenceTrace* trace = r->trace;
    r->trace = nullptr;
    trace->Report(TRITONSERVER_TRACE_REQUEST_END, SteadyNs());
    trace->Release();
  }
  {
    std::lock_guard<std::mutex> lock(t->model->mu);
    --t->model->busy_instances;
  }
  std::shared_ptr<Model> keep = std::move(t->model);
  delete t;
  ReleaseRequest(r);
}

}  // namespace ensemble
}  // namespace fake
