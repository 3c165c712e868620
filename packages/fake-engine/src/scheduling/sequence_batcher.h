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

// One control tensor of a request: name, type and the bytes of its one
// element (the backend adds the shape: [1], or [1, 1] with batching).
struct ControlTensor {
  std::string name;
  TRITONSERVER_DataType datatype;
  std::vector<char> bytes;
};
// The control tensors of r, as Triton's batcher sets them: START and END
// from the request's flags, READY true (the fake runs no empty slot),
// CORRID the correlation id in the configured type.
std::vector<ControlTensor> SequenceControlTensors(
    const ModelConfig& cfg, const TRITONSERVER_InferenceRequest* r);
// At submission (InferenceRequest::ValidateCorrelationId): a correlation
// id of a type the CORRID control cannot take (a string id for a numeric
// CORRID, a number for a TYPE_STRING one) is INVALID_ARG.
TRITONSERVER_Error* CheckCorrelationIdType(
    const ModelConfig& cfg, const TRITONSERVER_InferenceRequest* r);

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
