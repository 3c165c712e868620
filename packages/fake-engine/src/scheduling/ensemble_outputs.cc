// An ensemble request's responses to the caller (ensemble_context.h): its
// requested outputs through the caller's allocator, its errors prefixed
// "in ensemble 'NAME', ", its FINAL once no step is in flight.
#include "ensemble_context.h"

#include <utility>

#include "../config/data_types.h"
#include "../support/clock.h"
#include "../support/cuda_copy.h"

namespace fake {
namespace ensemble {
namespace {

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

}  // namespace

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

}  // namespace ensemble
}  // namespace fake
