// The requests an ensemble request sends to its steps' models
// (ensemble_context.h): made once their inputs have values, sent outside
// the context's lock, answered through the ensemble's own allocator and
// callbacks.
#include "ensemble_context.h"

#include <utility>

#include "../core/engine.h"
#include "../core/process_state.h"
#include "../core/request_validation.h"
#include "../support/log.h"
#include "submission.h"

namespace fake {
namespace ensemble {
namespace {

bool SameCorrelation(const Correlation& a, const Correlation& b) {
  return a.is_string == b.is_string && a.id == b.id && a.str == b.str;
}

}  // namespace

// Triton's ReshapeTensorDims: a tensor passed between a batching and a
// non-batching model gains or loses a batch dimension of 1 where the
// config's dims say so.
std::vector<int64_t> ReshapeDims(const std::vector<int64_t>& config_dims,
                                 bool config_batching, size_t tensor_batch,
                                 const std::vector<int64_t>& dims) {
  auto matches = [&config_dims](const std::vector<int64_t>& d) {
    if (d.size() != config_dims.size()) return false;
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] != -1 && config_dims[i] != -1 && d[i] != config_dims[i]) {
        return false;
      }
    }
    return true;
  };
  if (config_batching == (tensor_batch != 0)) return dims;
  if (config_batching) {
    if (!matches(dims)) return dims;
    std::vector<int64_t> out{1};
    out.insert(out.end(), dims.begin(), dims.end());
    return out;
  }
  if (!matches(dims) && tensor_batch == 1 && !dims.empty()) {
    return std::vector<int64_t>(dims.begin() + 1, dims.end());
  }
  return dims;
}

// The steps whose every input now has a value of the same iteration.
Status Context::NextSteps(const Updated& updated, StepList* steps) {
  steps->clear();
  std::set<std::pair<size_t, size_t>> next;
  for (const auto& u : updated) {
    auto readers = tensor_to_step_->find(u.first);
    if (readers == tensor_to_step_->end()) continue;
    for (size_t idx : readers->second) {
      bool ready = true;
      for (const auto& in : plan_.steps[idx].input_to_tensor) {
        const auto& slots = tensors_[in.second].slots;
        if (slots.find(u.second) == slots.end()) {
          ready = false;
          break;
        }
      }
      if (ready) next.emplace(idx, u.second);
    }
  }
  for (const auto& n : next) {
    steps->emplace_back();
    Status status = InitStep(n.first, n.second, &steps->back());
    if (!status.ok) return status;
  }
  inflight_steps_ += steps->size();
  return Status();
}

// Adds the step's inputs (the values of `iteration`, shaped for its model)
// and lets go of the values no other consumer needs. A value a step made
// brings its sequence along.
Status Context::AddStepInputs(Step* step, size_t iteration,
                              TRITONSERVER_InferenceRequest* req,
                              Correlation* correlation, uint32_t* flags) {
  const EnsemblePlan::Step& istep = plan_.steps[step->index];
  const ModelConfig& config = req->model->config;
  std::map<TensorData*, TensorData::Slot*> releasing;
  bool parameter_set = false;
  for (const auto& pair : istep.input_to_tensor) {
    TensorData& data = tensors_[pair.second];
    TensorData::Slot& slot = data.slots[iteration];
    if (slot.value != nullptr) {
      const TensorConfig* input = nullptr;
      for (const auto& t : config.input) {
        if (t.name == pair.first) input = &t;
      }
      RequestInput in;
      in.name = pair.first;
      in.datatype = slot.value->datatype;
      in.shape = ReshapeDims(input->dims, config.max_batch_size > 0,
                             data.batch_size, slot.value->shape);
      for (const InputData& b : slot.value->buffers) {
        if (b.size == 0) continue;  // Triton drops empty buffers
        in.data.push_back(b);
        in.total += b.size;
      }
      req->inputs.emplace(pair.first, std::move(in));
      req->input_owners.push_back(slot.value);
    }
    releasing.emplace(&data, &slot);
    if (!slot.parameter_override) continue;
    if (parameter_set && (!SameCorrelation(*correlation, slot.correlation) ||
                          *flags != slot.flags)) {
      LogError(req->Prefix() +
               "Different set of response parameters are set for '" +
               istep.model_name + "'.");
      continue;
    }
    *correlation = slot.correlation;
    *flags = slot.flags;
    parameter_set = true;
  }
  for (auto& r : releasing) {
    if (--r.second->remaining == 0) r.first->slots.erase(iteration);
  }
  return Status();
}

Status Context::InitStep(size_t index, size_t iteration,
                         std::unique_ptr<Step>* out) {
  const EnsemblePlan::Step& istep = plan_.steps[index];
  std::shared_ptr<Model> model =
      models_[std::make_pair(istep.model_name, istep.model_version)];
  auto* req = new TRITONSERVER_InferenceRequest();
  model->AddRef();  // as TRITONSERVER_InferenceRequestNew does
  req->model = model;
  out->reset(new Step());
  Step* step = out->get();
  step->ctx = shared_from_this();
  step->index = index;
  step->request = req;
  Correlation correlation = correlation_;
  uint32_t flags = flags_;
  AddStepInputs(step, iteration, req, &correlation, &flags);
  for (const auto& o : istep.output_to_tensor) {
    req->requested_outputs.insert(o.first);
  }
  step->correlation = correlation;
  step->flags = flags;
  req->id = id_;
  req->corr_is_string = correlation.is_string;
  req->corr_id = correlation.id;
  req->corr_str = correlation.str;
  req->flags = flags;
  req->priority = priority_;
  req->timeout_us = timeout_us_;
  for (const auto& p : request_->parameters) {
    req->parameters.emplace_back(new TRITONSERVER_Parameter(*p));
  }
  req->release_fn = StepReleased;
  req->release_userp = tracker_;
  req->has_response_callback = true;
  req->target = {allocator_, step, StepResponse, step, id_};
  req->step_totals = tracker_->totals;
  req->has_factory.store(true);
  // Triton checks the step's request here (PrepareForInference).
  Status status = Status::Take(ValidateRequest(req, model.get()));
  if (!status.ok) return status;
  for (const auto& o : istep.output_to_tensor) {
    tensors_[o.second].batch_size = req->request_batch;
  }
  return Status();
}

// Sends each step's request (outside the context's lock: a step may answer
// on this thread). A step not sent (the request failed meanwhile, or its
// model refused it) is counted off, and may finish the request.
void Context::ScheduleSteps(const std::shared_ptr<Context>& ctx,
                            StepList* steps) {
  for (auto& step : *steps) {
    bool send = false;
    {
      std::lock_guard<std::mutex> lock(ctx->mu_);
      if (ctx->status_.ok) {
        std::lock_guard<std::mutex> tracker_lock(ctx->tracker_->mu);
        ++ctx->tracker_->pending;  // until the step's request is released
        send = true;
      }
    }
    if (send) {
      // Triton passes a cancellation of the ensemble on to the step before
      // sending it, which resets it: the fake does not pass it on.
      TRITONSERVER_InferenceRequest* req = step->request;
      step->request = nullptr;
      Status status;
      if (ctx->model_->engine->stopping.load()) {
        status = {false, TRITONSERVER_ERROR_UNAVAILABLE,
                  req->Prefix() +
                      "Server is stopping, scheduler for model has stopped "
                      "accepting new inference requests"};
      } else {
        // As Triton's ensemble scheduler: a traced ensemble gives each
        // step a child trace (released with the step's request), and one
        // the step never took is released at once.
        TRITONSERVER_InferenceTrace* parent = ctx->request_->trace;
        TRITONSERVER_InferenceTrace* child =
            parent == nullptr ? nullptr : SpawnChildTrace(parent);
        status = Status::Take(RunRequest(req, child));
        if (!status.ok && child != nullptr) child->Release();
      }
      if (status.ok) {
        step.release();  // its response callback frees it after FINAL
        continue;
      }
      step->request = req;  // refused: still ours, deleted with the step
      std::lock_guard<std::mutex> lock(ctx->mu_);
      ctx->status_ = status;
      DropTracker(ctx->tracker_);  // its request will not be released
    }
    // Triton also counts off a step it did not send from the tracker, which
    // it never counted: the tracker can then go before a step request's
    // release uses it. The fake counts off only what it counted.
    std::lock_guard<std::mutex> lock(ctx->mu_);
    --ctx->inflight_steps_;
    if (ctx->inflight_steps_ == 0) ctx->status_ = ctx->Finish();
  }
}

// The ensemble's own allocator, for its steps' outputs (Triton allocates
// them from its host memory manager; without one, every buffer is null).
TRITONSERVER_Error* Context::Allocate(TRITONSERVER_ResponseAllocator*,
                                      const char*, size_t bytes,
                                      TRITONSERVER_MemoryType preferred_type,
                                      int64_t preferred_id, void* userp,
                                      void** buffer, void** buffer_userp,
                                      TRITONSERVER_MemoryType* type,
                                      int64_t* type_id) {
  *buffer = nullptr;
  *buffer_userp = nullptr;
  *type = preferred_type;
  *type_id = preferred_id;
  if (bytes == 0 || !HostMemoryManagerExists()) return nullptr;
  auto memory = std::make_shared<std::vector<char>>(bytes);
  *buffer = memory->data();
  *type = TRITONSERVER_MEMORY_CPU;
  *type_id = 0;
  Step* step = static_cast<Step*>(userp);
  std::lock_guard<std::mutex> lock(step->outputs_mu);
  step->outputs[*buffer] = std::move(memory);
  return nullptr;
}

// The buffers become the ensemble's tensors: nothing to release here.
TRITONSERVER_Error* Context::Release(TRITONSERVER_ResponseAllocator*, void*,
                                     void*, size_t, TRITONSERVER_MemoryType,
                                     int64_t) {
  return nullptr;
}

TRITONSERVER_Error* Context::Query(TRITONSERVER_ResponseAllocator*, void*,
                                   const char*, size_t*,
                                   TRITONSERVER_MemoryType*, int64_t*) {
  return nullptr;
}

// Runs on the step model's thread (Triton may use a pool of its own).
void Context::StepResponse(TRITONSERVER_InferenceResponse* response,
                           uint32_t flags, void* userp) {
  Step* step = static_cast<Step*>(userp);
  std::shared_ptr<Context> ctx = step->ctx;
  step->response_flags = flags;
  step->response = response;
  Proceed(ctx, step);
  if ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) delete step;
}

void Context::StepReleased(TRITONSERVER_InferenceRequest* request,
                           uint32_t flags, void* userp) {
  if ((flags & TRITONSERVER_REQUEST_RELEASE_ALL) == 0) return;
  delete TRITONSERVER_InferenceRequestDelete(request);
  DropTracker(static_cast<Tracker*>(userp));
}

}  // namespace ensemble
}  // namespace fake
