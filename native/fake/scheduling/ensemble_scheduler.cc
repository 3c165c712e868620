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
#include <cstring>
#include <set>
#include <unordered_map>

#include "../internal.h"

namespace fake {

struct EnsemblePlan {
  struct Step {
    std::string model_name;
    int64_t model_version = 0;
    // model input -> ensemble tensor; model output -> ensemble tensor.
    std::unordered_map<std::string, std::string> input_to_tensor;
    std::unordered_map<std::string, std::string> output_to_tensor;
  };
  std::string name;
  bool decoupled = false;
  // Triton keeps the outputs in this container and answers in its order.
  std::unordered_map<std::string, const TensorConfig*> outputs;
  std::set<std::string> optional_inputs;
  std::vector<Step> steps;
  // Which steps read each tensor; which step writes each.
  std::unordered_map<std::string, std::set<size_t>> tensor_to_step;
  std::unordered_map<std::string, size_t> tensor_to_prev_step;
};

std::shared_ptr<const EnsemblePlan> MakeEnsemblePlan(const ModelConfig& cfg) {
  auto plan = std::make_shared<EnsemblePlan>();
  plan->name = cfg.name;
  plan->decoupled = cfg.decoupled;
  for (const auto& in : cfg.input) {
    plan->tensor_to_step.emplace(in.name, std::set<size_t>());
    if (in.optional) plan->optional_inputs.insert(in.name);
  }
  for (const auto& out : cfg.output) {
    plan->tensor_to_step.emplace(out.name, std::set<size_t>());
    plan->outputs[out.name] = &out;
  }
  for (const auto& s : cfg.ensemble_steps) {
    const size_t idx = plan->steps.size();
    EnsemblePlan::Step step;
    step.model_name = s.model_name;
    step.model_version = s.model_version;
    for (const auto& m : s.input_map) {
      plan->tensor_to_step[m.second].insert(idx);
      step.input_to_tensor.emplace(m.first, m.second);
    }
    for (const auto& m : s.output_map) {
      plan->tensor_to_step.emplace(m.second, std::set<size_t>());
      step.output_to_tensor.emplace(m.first, m.second);
      plan->tensor_to_prev_step.emplace(m.second, idx);
    }
    plan->steps.push_back(std::move(step));
  }
  return plan;
}

namespace {

// A failure, kept as plain data (an error object would count as live).
struct Status {
  bool ok = true;
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_INTERNAL;
  std::string message;
  static Status Take(TRITONSERVER_Error* e) {
    Status s;
    if (e == nullptr) return s;
    s.ok = false;
    s.code = e->code;
    s.message = e->msg;
    delete e;
    return s;
  }
};

struct Correlation {
  bool is_string = false;
  uint64_t id = 0;
  std::string str;
};

// One value of an ensemble tensor, as the next step's request input.
struct TensorValue {
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> shape;
  std::vector<InputData> buffers;
  // The memory behind `buffers` when the ensemble allocated it (null: the
  // ensemble request's own inputs, valid until it is released).
  std::shared_ptr<std::vector<char>> memory;
};

// Triton's TensorData: the values of one ensemble tensor by iteration, and
// how many consumers each still has.
struct TensorData {
  struct Slot {
    std::shared_ptr<const TensorValue> value;  // null: not provided
    size_t remaining = 0;
    bool parameter_override = false;  // a step made it
    Correlation correlation;
    uint32_t flags = 0;
  };
  size_t current_iteration = 0;
  size_t outgoing = 0;
  size_t batch_size = 0;
  std::unordered_map<size_t, Slot> slots;

  size_t Add(std::shared_ptr<const TensorValue> v) {
    Slot& s = slots[current_iteration];
    s.value = std::move(v);
    s.remaining = outgoing;
    return current_iteration++;
  }
  size_t Add(std::shared_ptr<const TensorValue> v, const Correlation& c,
             uint32_t flags) {
    Slot& s = slots[current_iteration];
    s.value = std::move(v);
    s.remaining = outgoing;
    s.parameter_override = true;
    s.correlation = c;
    s.flags = flags;
    return current_iteration++;
  }
};

using Updated = std::set<std::pair<std::string, size_t>>;

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

// Drops one hold on the tracker; the last one reports the statistics and
// releases the ensemble request.
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

bool SameCorrelation(const Correlation& a, const Correlation& b) {
  return a.is_string == b.is_string && a.id == b.id && a.str == b.str;
}

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

void AddParameter(TRITONSERVER_InferenceResponse* response, const char* name,
                  TRITONSERVER_Parameter* p) {
  p->name = name;
  response->extra_params.emplace_back(p);
}

// An ensemble response's parameters: the sequence its tensor belongs to.
void AddSequenceParameters(TRITONSERVER_InferenceResponse* response,
                           const Correlation& c, uint32_t flags) {
  auto* id = new TRITONSERVER_Parameter();
  if (c.is_string) {
    id->type = TRITONSERVER_PARAMETER_STRING;
    id->str = c.str;
  } else {
    id->type = TRITONSERVER_PARAMETER_INT;
    id->i = static_cast<int64_t>(c.id);
  }
  AddParameter(response, "sequence_id", id);
  auto* start = new TRITONSERVER_Parameter();
  start->type = TRITONSERVER_PARAMETER_BOOL;
  start->b = (flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  AddParameter(response, "sequence_start", start);
  auto* end = new TRITONSERVER_Parameter();
  end->type = TRITONSERVER_PARAMETER_BOOL;
  end->b = (flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0;
  AddParameter(response, "sequence_end", end);
}

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
    status_ = Status::Take(model_->core->FindReadyAndHold(
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
      if (ctx->model_->core->stopping.load()) {
        status = {false, TRITONSERVER_ERROR_UNAVAILABLE,
                  req->Prefix() +
                      "Server is stopping, scheduler for model has stopped "
                      "accepting new inference requests"};
      } else {
        status = Status::Take(RunRequest(req, nullptr));
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

// Whether every requested output has a value of the iteration of the last
// updated requested output (Triton decides on that one).
bool Context::OutputsReady(const Updated& updated, size_t* iteration) {
  bool ready = false;
  for (const auto& u : updated) {
    if (requested_.count(u.first) == 0) continue;
    ready = true;
    *iteration = u.second;
    for (const auto& name : requested_) {
      const auto& slots = tensors_[name].slots;
      if (slots.find(u.second) == slots.end()) {
        ready = false;
        break;
      }
    }
  }
  return ready;
}

// Builds the ensemble's response once all its requested outputs are there:
// each output through the caller's allocator, as any model's outputs.
Status Context::SetOutputs(const Updated& updated,
                           TRITONSERVER_InferenceResponse** response) {
  size_t iteration = 0;
  if (!OutputsReady(updated, &iteration)) return Status();
  *response = NewResponse(model_, request_->target);
  std::vector<TensorData*> releasing;
  for (const auto& o : plan_.outputs) {
    if (requested_.count(o.first) == 0) continue;
    TensorData& data = tensors_[o.first];
    const TensorData::Slot& slot = data.slots[iteration];
    if (slot.value == nullptr) continue;  // the step did not make it
    bool copied = false;
    Status status = CopyOutput(o.second, data, slot, *response, &copied);
    if (!status.ok) return status;
    if (!copied) continue;
    releasing.push_back(&data);
    if (slot.parameter_override) {
      AddSequenceParameters(*response, slot.correlation, slot.flags);
    }
  }
  for (TensorData* data : releasing) {
    if (--data->slots[iteration].remaining == 0) data->slots.erase(iteration);
  }
  return Status();
}

// One output of the ensemble's response. *copied: it had data (an empty
// one is allocated and left, as Triton does).
Status Context::CopyOutput(const TensorConfig* config, const TensorData& data,
                           const TensorData::Slot& slot,
                           TRITONSERVER_InferenceResponse* response,
                           bool* copied) {
  const TensorValue& value = *slot.value;
  const std::vector<int64_t>& dims =
      config->has_reshape ? config->reshape : config->dims;
  std::vector<int64_t> shape = ReshapeDims(dims, request_->request_batch != 0,
                                           data.batch_size, value.shape);
  const size_t bytes = value.buffers.empty() ? 0 : value.buffers[0].size;
  ResponseOutput* o = nullptr;
  Status status = Status::Take(AllocateOutput(
      response, request_->target, config, std::move(shape), bytes, &o));
  if (!status.ok || bytes == 0) return status;
  if (o->buffer == nullptr) {
    return {false, TRITONSERVER_ERROR_INTERNAL,
            "failed to allocate buffer for output '" + config->name + "'"};
  }
  size_t offset = 0;
  for (const InputData& b : value.buffers) {
    std::string e = CopyBuffer(static_cast<char*>(o->buffer) + offset,
                               o->memory_type, o->memory_type_id, b.base,
                               b.type, b.type_id, b.size, config->name);
    if (!e.empty()) return {false, TRITONSERVER_ERROR_INTERNAL, e};
    offset += b.size;
  }
  *copied = true;
  return Status();
}

void Context::Send(TRITONSERVER_InferenceResponse* response, uint32_t flags) {
  const bool final = (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
  if (final && final_sent_) {
    // Triton may end a failed ensemble twice (a step that was not sent
    // finishes it again): the caller gets a second FINAL.
    request_->target.response_fn(response, flags,
                                 request_->target.response_userp);
    return;
  }
  final_sent_ = final_sent_ || final;
  DeliverResponse(request_->target, response, flags);
}

// Triton's RespondIfError: an error response (FINAL), counted as a failure
// of the ensemble.
void Context::RespondWithError() {
  TRITONSERVER_InferenceResponse* response =
      NewResponse(model_, request_->target);
  response->error = Err(status_.code, status_.message);
  Send(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  std::lock_guard<std::mutex> lock(model_->stats.mu);
  model_->stats.fail.Add(SteadyNs() - request_->request_start_ns);
  ++model_->stats.fail_other;
}

// Sends what the request has to send now; once no step is in flight, the
// request is done (its tracker reports and releases it).
Status Context::Finish(TRITONSERVER_InferenceResponse* response) {
  if (tracker_ == nullptr) {
    if (response != nullptr)
      delete TRITONSERVER_InferenceResponseDelete(response);
    return status_;
  }
  if (!status_.ok) {
    status_.message = "in ensemble '" + plan_.name + "', " + status_.message;
  }
  if (status_.ok) {
    const uint32_t flags =
        inflight_steps_ == 0 ? TRITONSERVER_RESPONSE_COMPLETE_FINAL : 0;
    if (response != nullptr) {
      Send(response, flags);
      response_sent_ = true;
    } else if (flags != 0) {
      if (!plan_.decoupled && !response_sent_) {
        status_ = {false, TRITONSERVER_ERROR_INVALID_ARG,
                   "in ensemble '" + plan_.name + "', " + request_->Prefix() +
                       "unexpected deadlock, at least one output is not set "
                       "while no more ensemble steps can be made"};
        RespondWithError();
      } else {
        Send(nullptr, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
      }
    }
  } else if (response != nullptr) {
    response->error = Err(status_.code, status_.message);
    Send(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  } else {
    RespondWithError();
  }
  if (inflight_steps_ == 0) {
    {
      std::lock_guard<std::mutex> lock(tracker_->mu);
      tracker_->status = status_;
    }
    Tracker* t = tracker_;
    tracker_ = nullptr;
    DropTracker(t);
  }
  return status_;
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

}  // namespace

void EnsembleStart(const std::shared_ptr<Model>& m,
                   TRITONSERVER_InferenceRequest* r) {
  m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(m->mu);
    ++m->busy_instances;  // until the request is released
  }
  r->state.store(RequestState::kExecuting);
  auto ctx = std::make_shared<Context>(m, r);
  ctx->Init();
  Context::Proceed(ctx, nullptr);
}

}  // namespace fake
