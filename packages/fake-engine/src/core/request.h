// An inference request as the engine keeps it: its inputs, requested
// outputs, parameters and callbacks as the caller set them, and what the
// engine fills in at submission (batch size, shapes, trace, deadlines).
// A request in PENDING or EXECUTING belongs to the engine (Triton).
#ifndef TRITON_NODE_FAKE_CORE_REQUEST_H_
#define TRITON_NODE_FAKE_CORE_REQUEST_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../include/triton_capi.h"
#include "../config/model_config.h"
#include "../support/leak_counters.h"
#include "../support/precondition.h"
#include "handles.h"

namespace fake {

struct Model;  // model.h: a request holds its model

struct InputData {
  const void* base;
  size_t size;
  TRITONSERVER_MemoryType type;
  int64_t type_id;
};

struct RequestInput {
  std::string name;
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> shape;  // as given (Triton's original shape)
  // Filled at submission: the shape the backend sees (Triton's shape with
  // the batch dimension; without it when the request's batch size is 0).
  std::vector<int64_t> batch_shape;
  std::vector<InputData> data;  // zero-byte appends are dropped, as Triton
  size_t total = 0;
};

// Triton's request states (InferenceRequest::State), named as Triton logs
// them; a request in PENDING or EXECUTING belongs to Triton.
enum class RequestState {
  kInitialized,
  kPending,
  kExecuting,
  kReleased,
  kFailedEnqueue
};
const char* RequestStateName(RequestState s);  // request.cc

// Compute durations of the steps of one ensemble request, summed (Triton's
// secondary statistics aggregator): the ensemble reports them as its own.
struct StepComputeTotals {
  std::mutex mu;
  uint64_t input_ns = 0, infer_ns = 0, output_ns = 0;
};

// What a response needs to reach the caller, copied out of the request so
// decoupled backends can keep answering after the request was released.
struct ResponseTarget {
  TRITONSERVER_ResponseAllocator* allocator = nullptr;
  void* alloc_userp = nullptr;
  TRITONSERVER_InferenceResponseCompleteFn_t response_fn = nullptr;
  void* response_userp = nullptr;
  std::string id;
};

}  // namespace fake

struct TRITONSERVER_InferenceRequest : fake::Counted<fake::kLiveRequest>,
                                       fake::Tracked<fake::Handle::kRequest> {
  std::shared_ptr<fake::Model> model;
  std::string id;
  uint32_t flags = 0;
  bool corr_is_string = false;
  uint64_t corr_id = 0;
  std::string corr_str;
  uint64_t priority = 0;
  uint64_t timeout_us = 0;
  // Triton keeps the inputs in a std::unordered_map and validates them in
  // its iteration order, which shows in which error a request with several
  // bad inputs gets: the same container with the same operations gives the
  // same order.
  std::unordered_map<std::string, fake::RequestInput> inputs;
  std::string raw_input_name;  // set by AddRawInput
  // Triton normalizes (and so checks) a request at ServerInferAsync only
  // when its inputs or requested outputs changed since it last passed:
  // appending or removing input data alone does not count.
  bool needs_normalization = true;
  std::set<std::string> requested_outputs;  // a set in Triton too (sorted)
  std::vector<std::unique_ptr<TRITONSERVER_Parameter>> parameters;
  TRITONSERVER_InferenceRequestReleaseFn_t release_fn = nullptr;
  void* release_userp = nullptr;
  bool has_response_callback = false;
  fake::ResponseTarget target;
  // Set between ServerInferAsync and RELEASE_ALL; shared with stream jobs so
  // a cancel after the release still reaches a running decoupled backend.
  std::shared_ptr<std::atomic<bool>> cancelled =
      std::make_shared<std::atomic<bool>>(false);
  std::atomic<fake::RequestState> state{fake::RequestState::kInitialized};
  // Triton makes the request's response factory at the start of every
  // ServerInferAsync (even one that then fails): from then on Cancel and
  // IsCancelled work.
  std::atomic<bool> has_factory{false};
  // Filled at submission.
  TRITONSERVER_InferenceTrace* trace = nullptr;
  uint64_t request_start_ns = 0;
  uint64_t queue_start_ns = 0;
  uint64_t batch_size = 1;     // batch elements (1 for non-batching models)
  uint64_t request_batch = 0;  // Triton's BatchSize(): 0 without a batch dim
  uint64_t deadline_ns = 0;    // 0 = none (queue policy timeout)
  // The outputs the backend is asked for, in Triton's (sorted) order.
  std::vector<const fake::TensorConfig*> outputs_to_send;
  // A step of an ensemble: what its inputs' data lives in (kept until the
  // request is deleted), and where its compute durations are summed too.
  std::vector<std::shared_ptr<const void>> input_owners;
  std::shared_ptr<fake::StepComputeTotals> step_totals;

  fake::RequestInput* FindInput(const std::string& n) {
    auto it = inputs.find(n);
    return it == inputs.end() ? nullptr : &it->second;
  }
  bool InFlight() const {
    fake::RequestState s = state.load();
    return s == fake::RequestState::kPending ||
           s == fake::RequestState::kExecuting;
  }
  std::string Prefix() const {
    return "[request id: " + (id.empty() ? std::string("<id_unknown>") : id) +
           "] ";
  }
};

#endif  // TRITON_NODE_FAKE_CORE_REQUEST_H_
