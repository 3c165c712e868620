// The state of one ensemble request (Triton's EnsembleContext) and the
// requests it sends to its steps' models. Its code is in three files:
//   ensemble_context.cc  the request starts; steps' responses come in
//   ensemble_steps.cc    step requests made and sent; their callbacks and
//                        the ensemble's own allocator for their outputs
//   ensemble_outputs.cc  the ensemble's responses to the caller
// As Triton's ensemble scheduler does, it deletes its step requests and
// responses and makes its allocator through the C API (triton_capi.h), as
// any caller of the library would.
#ifndef TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_CONTEXT_H_
#define TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../../include/triton_capi.h"
#include "../core/model.h"
#include "../core/request.h"
#include "../core/response.h"
#include "ensemble_plan.h"
#include "ensemble_state.h"
#include "ensemble_tracker.h"

namespace fake {
namespace ensemble {

class Context;

// One request for one step's model (Triton's Step): the userp of the
// context's allocator and of the step's response callback.
struct Step {
  std::shared_ptr<Context> ctx;
  size_t index = 0;
  TRITONSERVER_InferenceRequest* request = nullptr;  // until it is sent
  Correlation correlation;
  uint32_t flags = 0;
  std::mutex outputs_mu;
  std::unordered_map<const void*, std::shared_ptr<std::vector<char>>> outputs;
  Updated updated;
  uint32_t response_flags = 0;
  TRITONSERVER_InferenceResponse* response = nullptr;
  ~Step() {
    if (request != nullptr) delete TRITONSERVER_InferenceRequestDelete(request);
  }
};

using StepList = std::vector<std::unique_ptr<Step>>;

// The state of one ensemble request (Triton's EnsembleContext). Its fields
// change under mu_; requests go to the steps' models outside it (a step may
// answer on the sending thread).
class Context : public std::enable_shared_from_this<Context> {
 public:
  Context(std::shared_ptr<Model> ensemble, TRITONSERVER_InferenceRequest* r);
  ~Context();
  void Init();
  // A step answered (null: the request starts); sends what became ready.
  static void Proceed(const std::shared_ptr<Context>& ctx, Step* completed);

 private:
  static TRITONSERVER_Error* Allocate(
      TRITONSERVER_ResponseAllocator*, const char*, size_t,
      TRITONSERVER_MemoryType, int64_t, void* userp, void** buffer,
      void** buffer_userp, TRITONSERVER_MemoryType* type, int64_t* type_id);
  static TRITONSERVER_Error* Release(TRITONSERVER_ResponseAllocator*, void*,
                                     void*, size_t, TRITONSERVER_MemoryType,
                                     int64_t);
  static TRITONSERVER_Error* Query(TRITONSERVER_ResponseAllocator*, void*,
                                   const char*, size_t*,
                                   TRITONSERVER_MemoryType*, int64_t*);
  static void StepResponse(TRITONSERVER_InferenceResponse* response,
                           uint32_t flags, void* userp);
  static void StepReleased(TRITONSERVER_InferenceRequest* request,
                           uint32_t flags, void* userp);

  void FindModels();
  void PruneUnrequested();
  void AddRequestInputs();
  Status PrepareSteps(Step* completed, StepList* ready);
  static void ScheduleSteps(const std::shared_ptr<Context>& ctx,
                            StepList* steps);
  Status UpdateState(Step* completed, Updated* updated);
  Status ConsumeResponse(Step* step);
  Status NextSteps(const Updated& updated, StepList* steps);
  Status InitStep(size_t index, size_t iteration, std::unique_ptr<Step>* out);
  Status AddStepInputs(Step* step, size_t iteration,
                       TRITONSERVER_InferenceRequest* req, Correlation* corr,
                       uint32_t* flags);
  Status SetOutputs(const Updated& updated,
                    TRITONSERVER_InferenceResponse** response);
  bool OutputsReady(const Updated& updated, size_t* iteration);
  Status CopyOutput(const TensorConfig* config, const TensorData& data,
                    const TensorData::Slot& slot,
                    TRITONSERVER_InferenceResponse* response, bool* copied);
  Status Finish(TRITONSERVER_InferenceResponse* response = nullptr);
  void Send(TRITONSERVER_InferenceResponse* response, uint32_t flags);
  void RespondWithError();

  std::shared_ptr<Model> model_;  // the ensemble
  const EnsemblePlan& plan_;
  TRITONSERVER_InferenceRequest* request_;  // the ensemble request
  Tracker* tracker_;  // null once this context has let go of it
  TRITONSERVER_ResponseAllocator* allocator_ = nullptr;
  std::mutex mu_;
  Status status_;
  size_t inflight_steps_ = 0;
  bool response_sent_ = false;
  bool final_sent_ = false;
  const std::unordered_map<std::string, std::set<size_t>>* tensor_to_step_;
  std::unordered_map<std::string, std::set<size_t>> pruned_;
  std::unordered_map<std::string, TensorData> tensors_;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<Model>> models_;
  // Copied from the ensemble request into every step's.
  std::string id_;
  Correlation correlation_;
  uint32_t flags_ = 0;
  uint64_t priority_ = 0;
  uint64_t timeout_us_ = 0;
  std::set<std::string> requested_;
};

// Triton's ReshapeTensorDims (ensemble_steps.cc): a tensor passed between
// a batching and a non-batching model gains or loses a batch dimension of 1
// where the config's dims say so.
std::vector<int64_t> ReshapeDims(const std::vector<int64_t>& config_dims,
                                 bool config_batching, size_t tensor_batch,
                                 const std::vector<int64_t>& dims);

}  // namespace ensemble
}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_CONTEXT_H_
