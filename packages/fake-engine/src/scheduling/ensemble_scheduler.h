// Ensembles, run the way Triton's ensemble scheduler runs them
// (ensemble_scheduler.cc).
#ifndef TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_SCHEDULER_H_
#define TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_SCHEDULER_H_

#include <memory>

#include "../../include/triton_capi.h"
#include "../core/model.h"

namespace fake {

// Starts an ensemble request (PENDING, its model's scheduler took it); runs
// on the submitting thread, as Triton's ensemble scheduler does.
void EnsembleStart(const std::shared_ptr<Model>& m,
                   TRITONSERVER_InferenceRequest* r);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_SCHEDULER_H_
