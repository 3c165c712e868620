// One ensemble request's context (ensemble_context.h): it starts, and its
// steps' responses become values of the ensemble's tensors.
#include "ensemble_context.h"

#include <utility>

#include "../core/engine.h"
#include "../support/clock.h"

namespace fake {
namespace ensemble {
namespace {

// The sequence a step's response says its outputs belong to, when it says
// so (a composing ensemble does). False with the error for a malformed one.
Status ReadSequenceParameters(const TRITONSERVER_InferenceResponse& response,
                              Correlation* correlation, uint32_t* flags,
                              bool* override) {
  for (const auto& p : response.extra_params) {
    if (p->name == "sequence_id") {
      if (p->type == TRITONSERVER_PARAMETER_INT) {
        *correlation = {false, static_cast<uint64_t>(p->i), ""};
      } else if (p->type == TRITONSERVER_PARAMETER_STRING) {
        *correlation = {true, 0, p->str};
      } else {
        return {false, TRITONSERVER_ERROR_INVALID_ARG,
                "expected parameter 'sequence_id' to be "
                "TRITONSERVER_PARAMETER_INT or TRITONSERVER_PARAMETER_STRING"};
      }
      *override = true;
    } else if (p->name == "sequence_start" || p->name == "sequence_end") {
      if (p->type != TRITONSERVER_PARAMETER_BOOL) {
        return {false, TRITONSERVER_ERROR_INVALID_ARG,
                "expect parameter '" + p->name +
                    "' to be TRITONSERVER_PARAMETER_BOOL"};
      }
      if (p->b) {
        *flags |= p->name == "sequence_start"
                      ? TRITONSERVER_REQUEST_FLAG_SEQUENCE_START
                      : TRITONSERVER_REQUEST_FLAG_SEQUENCE_END;
      }
      *override = true;
    }
  }
  return Status();
}

}  // namespace

Context::Context(std::shared_ptr<Model> ensemble,
                 TRITONSERVER_InferenceRequest* r)
    : model_(std::move(ensemble)),
      plan_(*model_->ensemble),
      request_(r),
      tracker_(new Tracker()),
      tensor_to_step_(&plan_.tensor_to_step) {
  tracker_->model = model_;
  tracker_->request = r;
  tracker_->compute_start_ns = SteadyNs();
  id_ = r->id;
  correlation_ = {r->corr_is_string, r->corr_id, r->corr_str};
  flags_ = r->flags;
  priority_ = r->priority;
  timeout_us_ = r->timeout_us;
  for (const TensorConfig* t : r->outputs_to_send) requested_.insert(t->name);
}

Context::~Context() {
  for (auto& m : models_) m.second->Release();
  delete TRITONSERVER_ResponseAllocatorDelete(allocator_);
}

void Context::Init() {
  FindModels();
  PruneUnrequested();
  for (const auto& kv : *tensor_to_step_) {
    tensors_[kv.first].outgoing =
        kv.second.size() + (requested_.count(kv.first) != 0 ? 1 : 0);
  }
  if (status_.ok) AddRequestInputs();
  delete TRITONSERVER_ResponseAllocatorNew(&allocator_, Allocate, Release,
                                           nullptr);
  delete TRITONSERVER_ResponseAllocatorSetQueryFunction(allocator_, Query);
}

// The steps' models, held (as Triton holds them) until the request ends.
void Context::FindModels() {
  for (const auto& step : plan_.steps) {
    const auto key = std::make_pair(step.model_name, step.model_version);
    if (models_.count(key) != 0) continue;
    std::shared_ptr<Model> m;
    status_ = Status::Take(model_->engine->FindReadyAndHold(
        step.model_name, step.model_version, &m));
    if (!status_.ok) return;
    models_[key] = std::move(m);
  }
}

// Leaves out the steps only unrequested outputs need, walking back from
// those outputs. As in Triton, a tensor no step writes (an ensemble input)
// counts as written by step 0.
void Context::PruneUnrequested() {
  std::set<std::string> ignored;
  for (const auto& o : plan_.outputs) {
    if (requested_.count(o.first) == 0) ignored.insert(o.first);
  }
  if (ignored.empty()) return;
  pruned_ = plan_.tensor_to_step;
  tensor_to_step_ = &pruned_;
  std::unordered_map<size_t, size_t> outputs_left;
  while (!ignored.empty()) {
    std::set<std::string> next;
    for (const auto& name : ignored) {
      auto prev = plan_.tensor_to_prev_step.find(name);
      const size_t idx =
          prev == plan_.tensor_to_prev_step.end() ? 0 : prev->second;
      const EnsemblePlan::Step& step = plan_.steps[idx];
      auto it = outputs_left.find(idx);
      if (it == outputs_left.end()) {
        it = outputs_left.emplace(idx, step.output_to_tensor.size()).first;
      }
      if (--it->second != 0) continue;
      for (const auto& in : step.input_to_tensor) {
        std::set<size_t>& readers = pruned_[in.second];
        readers.erase(idx);
        if (readers.empty()) next.insert(in.second);
      }
    }
    ignored.swap(next);
  }
}

void Context::AddRequestInputs() {
  const uint64_t batch = request_->request_batch;
  for (const auto& kv : request_->inputs) {
    const RequestInput& in = kv.second;
    auto it = tensors_.find(in.name);
    if (it == tensors_.end()) {
      status_ = {false, TRITONSERVER_ERROR_INVALID_ARG,
                 request_->Prefix() + "unexpected input '" + in.name +
                     "' in request header that does not map to any "
                     "ensemble inputs"};
      continue;
    }
    auto value = std::make_shared<TensorValue>();
    value->datatype = in.datatype;
    value->shape = in.batch_shape;
    value->buffers = in.data;
    it->second.Add(std::move(value));
    it->second.batch_size = batch;
  }
  for (const auto& name : plan_.optional_inputs) {
    auto it = tensors_.find(name);
    if (it != tensors_.end() && it->second.slots.empty()) {
      it->second.Add(nullptr);
      it->second.batch_size = batch;
    }
  }
}

void Context::Proceed(const std::shared_ptr<Context>& ctx, Step* completed) {
  StepList ready;
  Status status = ctx->PrepareSteps(completed, &ready);
  // A step that answers after the request failed is not looked at: Triton
  // leaves its response undeleted (a leak, which keeps its model loaded);
  // the fake deletes it.
  if (completed != nullptr && completed->response != nullptr) {
    delete TRITONSERVER_InferenceResponseDelete(completed->response);
    completed->response = nullptr;
  }
  if (status.ok) ScheduleSteps(ctx, &ready);
}

Status Context::PrepareSteps(Step* completed, StepList* ready) {
  std::lock_guard<std::mutex> lock(mu_);
  if (completed == nullptr && !status_.ok) status_ = Finish();
  if (!status_.ok) return status_;
  Updated updated;
  status_ = UpdateState(completed, &updated);
  if (status_.ok) status_ = NextSteps(updated, ready);
  if (!status_.ok) {
    status_ = Finish();
    return status_;
  }
  TRITONSERVER_InferenceResponse* response = nullptr;
  if (!updated.empty()) status_ = SetOutputs(updated, &response);
  status_ = Finish(response);
  return status_;
}

Status Context::UpdateState(Step* completed, Updated* updated) {
  updated->clear();
  if (completed == nullptr) {
    for (const auto& kv : tensors_) {
      if (!kv.second.slots.empty()) updated->emplace(kv.first, 0);
    }
    return Status();
  }
  if ((completed->response_flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) {
    --inflight_steps_;
  }
  Status status = ConsumeResponse(completed);
  if (!status.ok) return status;
  updated->swap(completed->updated);
  return Status();
}

// Turns a step's response into values of the ensemble tensors its output
// map names; an output it did not make becomes an empty value (it may be
// an optional input of the next step). The response is deleted.
Status Context::ConsumeResponse(Step* step) {
  TRITONSERVER_InferenceResponse* response = step->response;
  step->response = nullptr;
  if (response == nullptr) return Status();
  struct Deleter {
    TRITONSERVER_InferenceResponse* r;
    ~Deleter() { delete TRITONSERVER_InferenceResponseDelete(r); }
  } deleter{response};
  if (response->error != nullptr) {
    return {false, response->error->code, response->error->msg};
  }
  Correlation correlation = step->correlation;
  uint32_t flags = 0;
  bool override = false;
  Status status =
      ReadSequenceParameters(*response, &correlation, &flags, &override);
  if (!status.ok) return status;
  std::unordered_map<std::string, std::string> left =
      plan_.steps[step->index].output_to_tensor;
  for (uint32_t i = 0; i < response->outputs.size(); ++i) {
    const ResponseOutput& o = response->outputs[i];
    auto it = left.find(o.config->name);
    if (it == left.end()) continue;  // not one the ensemble maps
    auto value = std::make_shared<TensorValue>();
    value->datatype = o.config->datatype;
    value->shape = o.shape;
    if (o.byte_size != 0) {
      std::lock_guard<std::mutex> lock(step->outputs_mu);
      auto memory = step->outputs.find(o.buffer);
      if (memory != step->outputs.end()) {
        value->memory = std::move(memory->second);
        step->outputs.erase(memory);
      }
      value->buffers.push_back(
          {o.buffer, o.byte_size, o.memory_type, o.memory_type_id});
    }
    TensorData& data = tensors_[it->second];
    const size_t iteration =
        override ? data.Add(std::move(value), correlation, flags)
                 : data.Add(std::move(value), step->correlation, step->flags);
    step->updated.emplace(it->second, iteration);
    left.erase(it);
  }
  for (const auto& missing : left) {
    const size_t iteration =
        tensors_[missing.second].Add(nullptr, correlation, flags);
    step->updated.emplace(missing.second, iteration);
  }
  return Status();
}

}  // namespace ensemble
}  // namespace fake
