// Triton's RequestTracker for ensembles (ensemble_tracker.cc): lives until
// the ensemble request and every step request are released, then reports
// the ensemble's statistics and releases the ensemble request.
#ifndef TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_TRACKER_H_
#define TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_TRACKER_H_

#include <cstdint>
#include <memory>
#include <mutex>

#include "../core/model.h"
#include "../core/request.h"
#include "ensemble_state.h"

namespace fake {
namespace ensemble {

// Lives until the ensemble request and every step request are released
// (Triton's RequestTracker); step requests' release callbacks hold it.
struct Tracker {
  std::mutex mu;
  int pending = 1;  // the ensemble itself, plus each step request
  Status status;
  std::shared_ptr<Model> model;  // the ensemble
  TRITONSERVER_InferenceRequest* request = nullptr;
  uint64_t compute_start_ns = 0;
  std::shared_ptr<StepComputeTotals> totals =
      std::make_shared<StepComputeTotals>();
};

// Drops one hold on the tracker; the last one reports the statistics and
// releases the ensemble request.
void DropTracker(Tracker* t);

}  // namespace ensemble
}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_TRACKER_H_
