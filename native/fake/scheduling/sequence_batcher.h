// Triton's sequence batcher as far as the fake models it
// (sequence_batcher.cc): sequences by correlation id, one request of a
// sequence at a time, START/END, the idle timeout, and implicit state.
#ifndef TRITON_NODE_FAKE_SCHEDULING_SEQUENCE_BATCHER_H_
#define TRITON_NODE_FAKE_SCHEDULING_SEQUENCE_BATCHER_H_

#include <string>
#include <vector>

#include "../../include/triton_capi.h"
#include "../config/model_config.h"
#include "../core/model.h"

namespace fake {

// A request's sequence: "u:<id>" or "s:<id>".
std::string SequenceKey(const TRITONSERVER_InferenceRequest* r);
// What the fake cannot do (UNSUPPORTED) or Triton refuses (INVALID_ARG,
// its initial-state checks) in a sequence_batching config, and a state or
// initial state larger than the machine's memory (INVALID_ARG, naming it);
// "" when fine.
std::string SequenceConfigProblem(const ModelConfig& cfg,
                                  TRITONSERVER_Error_Code* code);
// At submission: Triton's checks (START on a new sequence; an idle one was
// released), then whether r runs now or waits behind its sequence's
// running request (*run_now false: SequenceStepDone queues it later).
TRITONSERVER_Error* SequenceAdmit(Model* m, TRITONSERVER_InferenceRequest* r,
                                  bool* run_now);
// The running request's implicit state; `reading` (its inputs are being
// made): reset to the initial values when the request starts a sequence.
// Null when the memory for them cannot be had now (the request fails).
std::vector<std::vector<char>>* SequenceStates(
    Model* m, const TRITONSERVER_InferenceRequest* r, bool reading);
// After a request of sequence `key` executed: forgets the sequence on END
// and queues its next request.
void SequenceStepDone(Model* m, const std::string& key, bool end);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_SEQUENCE_BATCHER_H_
