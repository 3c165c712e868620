// Inference requests (building, validating, submitting, cancelling) and
// inference responses (reading, deleting).
#include <cstring>

#include "internal.h"

namespace fake {
namespace {

const TensorConfig* FindTensor(const std::vector<TensorConfig>& list,
                               const std::string& name) {
  for (const auto& t : list) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// The bracketed name lists of Triton's input-count message.
std::string NameList(const std::vector<std::string>& names) {
  std::string s = "[";
  for (const auto& n : names) s += "'" + n + "',";
  s.back() = ']';
  return s;
}

bool ElementCount(const std::vector<int64_t>& shape, uint64_t* out) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) return false;
    n *= static_cast<uint64_t>(d);
  }
  *out = n;
  return true;
}

TRITONSERVER_Error* ValidateBytes(TRITONSERVER_InferenceRequest* r,
                                  const RequestInput& in, uint64_t expected,
                                  const std::string& model) {
  uint64_t count = 0;
  for (const auto& d : in.data) {
    if (d.type == TRITONSERVER_MEMORY_GPU) return nullptr;  // not host-readable
    const char* p = static_cast<const char*>(d.base);
    size_t left = d.size;
    while (left > 0) {
      if (left < 4) {
        return ErrArg(r->Prefix() +
                      "incomplete string length indicator for inference "
                      "input '" +
                      in.name + "' for model '" + model +
                      "', expecting 4 bytes but only " + std::to_string(left) +
                      " bytes available. Please make sure the string length "
                      "indicator is in one buffer.");
      }
      uint32_t len;
      std::memcpy(&len, p, 4);
      p += 4;
      left -= 4;
      size_t skip = len < left ? len : left;
      p += skip;
      left -= skip;
      ++count;
      if (count > expected) {
        return ErrArg(r->Prefix() + "unexpected number of string elements " +
                      std::to_string(count) + " for inference input '" +
                      in.name + "' for model '" + model + "', expecting " +
                      std::to_string(expected));
      }
    }
  }
  if (count != expected) {
    return ErrArg(r->Prefix() + "expected " + std::to_string(expected) +
                  " string elements for inference input '" + in.name +
                  "' for model '" + model + "', got " + std::to_string(count));
  }
  return nullptr;
}

// Triton's checks at submission, in Triton's order and words.
TRITONSERVER_Error* Validate(TRITONSERVER_InferenceRequest* r, Model* m) {
  const ModelConfig& c = m->config;
  const std::string& model = m->name;
  r->outputs_to_send.clear();
  if (r->requested_outputs.empty()) {
    for (const auto& o : c.output) r->outputs_to_send.push_back(&o);
  } else {
    for (const auto& n : r->requested_outputs) {
      const TensorConfig* o = FindTensor(c.output, n);
      if (o == nullptr) {
        return ErrArg("unexpected inference output '" + n + "' for model '" +
                      model + "'");
      }
      bool dup = false;
      for (auto* x : r->outputs_to_send) dup |= x == o;
      if (!dup) r->outputs_to_send.push_back(o);
    }
  }

  size_t required = 0;
  std::vector<std::string> missing;
  for (const auto& t : c.input) {
    if (t.optional) continue;
    ++required;
    if (r->FindInput(t.name.c_str()) == nullptr) missing.push_back(t.name);
  }
  bool unknown = false;
  for (const auto& in : r->inputs) {
    unknown |= FindTensor(c.input, in.name) == nullptr;
  }
  if (unknown || !missing.empty()) {
    std::vector<std::string> got;
    for (auto it = r->inputs.rbegin(); it != r->inputs.rend(); ++it) {
      got.push_back(it->name);
    }
    return ErrArg(r->Prefix() + "expected " + std::to_string(required) +
                  " inputs but got " + std::to_string(r->inputs.size()) +
                  " inputs for model '" + model + "'. Got input(s) " +
                  NameList(got) + ", but missing required input(s) " +
                  NameList(missing) +
                  ". Please provide all required input(s).");
  }

  int64_t batch = -1;
  for (auto& in : r->inputs) {
    const TensorConfig* t = FindTensor(c.input, in.name);
    if (in.raw) {
      in.datatype = t->datatype;
      uint32_t es = DataTypeSize(t->datatype);
      int64_t known = 1;
      for (int64_t d : t->dims) known *= d > 0 ? d : 1;
      in.shape.clear();
      if (c.max_batch_size > 0) in.shape.push_back(1);
      for (int64_t d : t->dims) {
        in.shape.push_back(d >= 0 ? d
                           : (es == 0 || known == 0)
                               ? 1
                               : static_cast<int64_t>(in.total / es / known));
      }
    }
    if (in.datatype != t->datatype) {
      return ErrArg(r->Prefix() + "inference input '" + in.name +
                    "' data-type is '" + DataTypeName(in.datatype) +
                    "', but model '" + model + "' expects '" +
                    DataTypeName(t->datatype) + "'");
    }
    std::vector<int64_t> dims = in.shape;
    if (c.max_batch_size > 0 && !in.shape.empty()) {
      int64_t b = in.shape[0];
      if (batch == -1) {
        batch = b;
      } else if (b != batch) {
        return ErrArg(r->Prefix() + "input '" + in.name +
                      "' batch size does not match other inputs for '" + model +
                      "'");
      }
      if (b > c.max_batch_size) {
        return ErrArg(r->Prefix() + "inference request batch-size must be <= " +
                      std::to_string(c.max_batch_size) + " for '" + model +
                      "'");
      }
      dims.erase(dims.begin());
    }
    bool ok = c.max_batch_size == 0 || !in.shape.empty();
    ok = ok && dims.size() == t->dims.size();
    for (size_t i = 0; ok && i < dims.size(); ++i) {
      ok = dims[i] >= 0 && (t->dims[i] == -1 || t->dims[i] == dims[i]);
    }
    if (!ok) {
      std::vector<int64_t> full;
      if (c.max_batch_size > 0) full.push_back(-1);
      full.insert(full.end(), t->dims.begin(), t->dims.end());
      std::string note =
          c.max_batch_size > 0
              ? "NOTE: Setting a non-zero max_batch_size in the model config "
                "requires a batch dimension to be prepended to each input "
                "shape. If you want to specify the full shape including the "
                "batch dim in your input dims config, try setting "
                "max_batch_size to zero. See the model configuration docs for "
                "more info on max_batch_size."
              : "";
      return ErrArg(r->Prefix() + "unexpected shape for input '" + in.name +
                    "' for model '" + model + "'. Expected " +
                    ShapeString(full) + ", got " + ShapeString(in.shape) +
                    ". " + note);
    }
  }
  r->batch_size = c.max_batch_size > 0 ? static_cast<uint64_t>(batch) : 1;

  for (auto& in : r->inputs) {
    uint64_t elements = 0;
    if (!ElementCount(in.shape, &elements)) {
      return ErrArg(
          r->Prefix() + "input '" + in.name + "' for model '" + model +
          "' has a shape whose size overflows: " + ShapeString(in.shape));
    }
    if (in.datatype == TRITONSERVER_TYPE_BYTES) {
      if (auto* e = ValidateBytes(r, in, elements, model)) return e;
      continue;
    }
    uint64_t es = DataTypeSize(in.datatype);
    if (elements > UINT64_MAX / (es == 0 ? 1 : es) ||
        elements * es != in.total) {
      return ErrArg(r->Prefix() + "input byte size mismatch for input '" +
                    in.name + "' for model '" + model + "'. Expected " +
                    std::to_string(elements * es) + ", got " +
                    std::to_string(in.total));
    }
  }
  return nullptr;
}

const char* kParamString = "an example string parameter";
const int64_t kParamInt = 42;
const bool kParamBool = false;
const double kParamDouble = 123.123;

}  // namespace
}  // namespace fake

using namespace fake;

TRITONSERVER_InferenceResponse::~TRITONSERVER_InferenceResponse() {
  // The allocator's release runs here, on the deleting thread, once per
  // buffer it handed out (never for a null buffer).
  for (auto& o : outputs) {
    if (!o.owned) continue;
    TRITONSERVER_Error* e =
        allocator->release_fn(allocator, o.buffer, o.buffer_userp, o.byte_size,
                              o.memory_type, o.memory_type_id);
    delete e;
    LiveAdd(kLiveOutputBuffer, -1);
  }
  if (trace != nullptr) trace->Release();
  delete error;
  // Last: the response no longer holds its model up (it may finish
  // unloading, and a waiting ServerStop may return).
  if (model != nullptr) model->Release();
}

#define REQ_CHECK(r) FAKE_REQUIRE(r, "inference_request");

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestNew(
    TRITONSERVER_InferenceRequest** inference_request,
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version) {
  FAKE_REQUIRE(inference_request, "inference_request");
  FAKE_REQUIRE(server, "server");
  FAKE_REQUIRE(model_name, "model_name");
  std::shared_ptr<Model> m;
  if (auto* e = server->core->FindReady(model_name, model_version, &m)) {
    return e;
  }
  auto* r = new TRITONSERVER_InferenceRequest();
  m->AddRef();
  r->model = std::move(m);
  *inference_request = r;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestDelete(
    TRITONSERVER_InferenceRequest* r) {
  REQ_CHECK(r);
  if (r->in_flight.load()) {
    return Err(TRITONSERVER_ERROR_INTERNAL,
               r->Prefix() +
                   "cannot delete an inference request before its release "
                   "callback with TRITONSERVER_REQUEST_RELEASE_ALL");
  }
  std::shared_ptr<Model> m = std::move(r->model);
  delete r;
  if (m != nullptr) m->Release();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetId(
    TRITONSERVER_InferenceRequest* r, const char* id) {
  REQ_CHECK(r);
  FAKE_REQUIRE(id, "id");
  r->id = id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetFlags(
    TRITONSERVER_InferenceRequest* r, uint32_t flags) {
  REQ_CHECK(r);
  r->flags = flags;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetCorrelationId(
    TRITONSERVER_InferenceRequest* r, uint64_t correlation_id) {
  REQ_CHECK(r);
  r->corr_is_string = false;
  r->corr_id = correlation_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetCorrelationIdString(
    TRITONSERVER_InferenceRequest* r, const char* correlation_id) {
  REQ_CHECK(r);
  FAKE_REQUIRE(correlation_id, "correlation_id");
  r->corr_is_string = true;
  r->corr_str = correlation_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestCancel(
    TRITONSERVER_InferenceRequest* r) {
  REQ_CHECK(r);
  if (!r->submitted.load()) {
    return Err(TRITONSERVER_ERROR_INTERNAL,
               "It is not possible to cancel an inference request before "
               "calling TRITONSERVER_InferAsync.");
  }
  r->cancelled->store(true);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestIsCancelled(
    TRITONSERVER_InferenceRequest* r, bool* is_cancelled) {
  REQ_CHECK(r);
  FAKE_REQUIRE(is_cancelled, "is_cancelled");
  if (!r->submitted.load()) {
    return Err(TRITONSERVER_ERROR_INTERNAL,
               "It is not possible to query cancellation status before "
               "calling TRITONSERVER_InferAsync.");
  }
  *is_cancelled = r->cancelled->load();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetPriorityUInt64(
    TRITONSERVER_InferenceRequest* r, uint64_t priority) {
  REQ_CHECK(r);
  r->priority = priority;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest* r, uint64_t timeout_us) {
  REQ_CHECK(r);
  r->timeout_us = timeout_us;
  return nullptr;
}

static TRITONSERVER_Error* AddInputCommon(TRITONSERVER_InferenceRequest* r,
                                          const char* name, RequestInput in) {
  if (r->FindInput(name) != nullptr) {
    return ErrArg(r->Prefix() + "input '" + name +
                  "' already exists in request");
  }
  in.name = name;
  r->inputs.push_back(std::move(in));
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAddInput(
    TRITONSERVER_InferenceRequest* r, const char* name,
    const TRITONSERVER_DataType datatype, const int64_t* shape,
    uint64_t dim_count) {
  REQ_CHECK(r);
  FAKE_REQUIRE(name, "name");
  if (shape == nullptr && dim_count > 0)
    return ErrArg("shape must not be null");
  if (dim_count > 64) {
    return ErrArg(r->Prefix() + "input '" + name + "' has " +
                  std::to_string(dim_count) + " dimensions (at most 64)");
  }
  RequestInput in;
  in.datatype = datatype;
  if (dim_count > 0) in.shape.assign(shape, shape + dim_count);
  return AddInputCommon(r, name, std::move(in));
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAddRawInput(
    TRITONSERVER_InferenceRequest* r, const char* name) {
  REQ_CHECK(r);
  FAKE_REQUIRE(name, "name");
  if (r->model->config.input.size() != 1) {
    return ErrArg(r->Prefix() + "raw input '" + std::string(name) +
                  "' requires a model with exactly one input; model '" +
                  r->model->name + "' has " +
                  std::to_string(r->model->config.input.size()));
  }
  RequestInput in;
  in.raw = true;
  return AddInputCommon(r, name, std::move(in));
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestRemoveAllInputs(
    TRITONSERVER_InferenceRequest* r) {
  REQ_CHECK(r);
  r->inputs.clear();
  return nullptr;
}

static TRITONSERVER_Error* AppendData(TRITONSERVER_InferenceRequest* r,
                                      const char* name, const void* base,
                                      size_t size, TRITONSERVER_MemoryType type,
                                      int64_t id) {
  RequestInput* in = r->FindInput(name);
  if (in == nullptr) {
    return ErrArg(r->Prefix() + "input '" + name +
                  "' does not exist in request");
  }
  if (base == nullptr && size > 0) {
    return ErrArg(r->Prefix() + "input '" + name + "': base must not be null");
  }
  if (type != TRITONSERVER_MEMORY_CPU &&
      type != TRITONSERVER_MEMORY_CPU_PINNED &&
      type != TRITONSERVER_MEMORY_GPU) {
    return ErrArg(r->Prefix() + "input '" + name + "': unknown memory type " +
                  std::to_string(static_cast<int>(type)));
  }
  in->data.push_back(InputData{base, size, type, id});
  in->total += size;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAppendInputData(
    TRITONSERVER_InferenceRequest* r, const char* name, const void* base,
    size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id) {
  REQ_CHECK(r);
  FAKE_REQUIRE(name, "name");
  return AppendData(r, name, base, byte_size, memory_type, memory_type_id);
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    TRITONSERVER_InferenceRequest* r, const char* name, const void* base,
    TRITONSERVER_BufferAttributes* a) {
  REQ_CHECK(r);
  FAKE_REQUIRE(name, "name");
  FAKE_REQUIRE(a, "buffer_attributes");
  return AppendData(r, name, base, a->byte_size, a->memory_type,
                    a->memory_type_id);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAddRequestedOutput(
    TRITONSERVER_InferenceRequest* r, const char* name) {
  REQ_CHECK(r);
  FAKE_REQUIRE(name, "name");
  r->requested_outputs.push_back(name);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    TRITONSERVER_InferenceRequest* r) {
  REQ_CHECK(r);
  r->requested_outputs.clear();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetReleaseCallback(
    TRITONSERVER_InferenceRequest* r,
    TRITONSERVER_InferenceRequestReleaseFn_t request_release_fn,
    void* request_release_userp) {
  REQ_CHECK(r);
  r->release_fn = request_release_fn;
  r->release_userp = request_release_userp;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetResponseCallback(
    TRITONSERVER_InferenceRequest* r,
    TRITONSERVER_ResponseAllocator* response_allocator,
    void* response_allocator_userp,
    TRITONSERVER_InferenceResponseCompleteFn_t response_fn,
    void* response_userp) {
  REQ_CHECK(r);
  FAKE_REQUIRE(response_allocator, "response_allocator");
  FAKE_REQUIRE(response_fn, "response_fn");
  r->has_response_callback = true;
  r->target.allocator = response_allocator;
  r->target.alloc_userp = response_allocator_userp;
  r->target.response_fn = response_fn;
  r->target.response_userp = response_userp;
  return nullptr;
}

static TRITONSERVER_Error* AddParam(TRITONSERVER_InferenceRequest* r,
                                    const char* key,
                                    TRITONSERVER_Parameter* p) {
  FAKE_REQUIRE(key, "key");
  p->name = key;
  r->parameters.emplace_back(p);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetStringParameter(
    TRITONSERVER_InferenceRequest* r, const char* key, const char* value) {
  REQ_CHECK(r);
  FAKE_REQUIRE(key, "key");
  FAKE_REQUIRE(value, "value");
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_STRING;
  p->str = value;
  return AddParam(r, key, p);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetIntParameter(
    TRITONSERVER_InferenceRequest* r, const char* key, const int64_t value) {
  REQ_CHECK(r);
  FAKE_REQUIRE(key, "key");
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_INT;
  p->i = value;
  return AddParam(r, key, p);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetBoolParameter(
    TRITONSERVER_InferenceRequest* r, const char* key, const bool value) {
  REQ_CHECK(r);
  FAKE_REQUIRE(key, "key");
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_BOOL;
  p->b = value;
  return AddParam(r, key, p);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetDoubleParameter(
    TRITONSERVER_InferenceRequest* r, const char* key, const double value) {
  REQ_CHECK(r);
  FAKE_REQUIRE(key, "key");
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_DOUBLE;
  p->d = value;
  return AddParam(r, key, p);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerInferAsync(
    TRITONSERVER_Server* server, TRITONSERVER_InferenceRequest* r,
    TRITONSERVER_InferenceTrace* trace) {
  FAKE_REQUIRE(server, "server");
  REQ_CHECK(r);
  Model* m = r->model.get();
  if (server->core->stopping.load()) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE,
               r->Prefix() +
                   "Server is stopping, scheduler for model has stopped "
                   "accepting new inference requests");
  }
  // Real Triton crashes on these two; the fake refuses them instead.
  if (r->release_fn == nullptr) {
    return ErrArg(r->Prefix() + "inference request for model '" + m->name +
                  "' has no release callback: set one with "
                  "TRITONSERVER_InferenceRequestSetReleaseCallback");
  }
  if (!r->has_response_callback) {
    return ErrArg(r->Prefix() + "inference request for model '" + m->name +
                  "' has no response callback: set one with "
                  "TRITONSERVER_InferenceRequestSetResponseCallback");
  }
  if (r->in_flight.load()) {
    return ErrArg(r->Prefix() +
                  "inference request is already in flight (wait for its "
                  "RELEASE_ALL before submitting it again)");
  }
  if (m->core != server->core) {
    return ErrArg(r->Prefix() +
                  "inference request was created for another server");
  }
  if (auto* e = Validate(r, m)) return e;

  r->target.id = r->id;
  r->trace = trace;
  r->request_start_ns = SteadyNs();
  r->queue_start_ns = r->request_start_ns;
  r->deadline_ns = 0;
  if (m->queue_policy_active()) {
    const auto& qp = m->config.dynamic_batching.default_queue_policy;
    uint64_t t = (qp.allow_timeout_override && r->timeout_us > 0)
                     ? r->timeout_us
                     : qp.default_timeout_microseconds;
    if (t > 0) r->deadline_ns = r->request_start_ns + t * 1000;
  }
  r->cancelled->store(false);
  r->in_flight.store(true);
  r->submitted.store(true);
  m->stats.pending.fetch_add(1, std::memory_order_relaxed);
  if (trace != nullptr) {
    trace->Report(TRITONSERVER_TRACE_REQUEST_START, r->request_start_ns);
    trace->Report(TRITONSERVER_TRACE_QUEUE_START, SteadyNs());
  }
  if (g_sync_callbacks.load(std::memory_order_relaxed)) {
    m->ExecuteInline(r);
    return nullptr;
  }
  if (auto* e = m->Enqueue(r)) {
    m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
    r->in_flight.store(false);
    return e;
  }
  return nullptr;
}

// ---- responses --------------------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseDelete(
    TRITONSERVER_InferenceResponse* inference_response) {
  FAKE_REQUIRE(inference_response, "inference_response");
  delete inference_response;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseError(
    TRITONSERVER_InferenceResponse* inference_response) {
  if (inference_response == nullptr) {
    return ErrArg("inference_response must not be null");
  }
  return inference_response->error;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseModel(
    TRITONSERVER_InferenceResponse* resp, const char** model_name,
    int64_t* model_version) {
  FAKE_REQUIRE(resp, "inference_response");
  FAKE_REQUIRE(model_name, "model_name");
  FAKE_REQUIRE(model_version, "model_version");
  *model_name = resp->model->name.c_str();
  *model_version = resp->model->version;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseId(
    TRITONSERVER_InferenceResponse* resp, const char** request_id) {
  FAKE_REQUIRE(resp, "inference_response");
  FAKE_REQUIRE(request_id, "request_id");
  *request_id = resp->id.c_str();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseParameterCount(
    TRITONSERVER_InferenceResponse* resp, uint32_t* count) {
  FAKE_REQUIRE(resp, "inference_response");
  FAKE_REQUIRE(count, "count");
  *count = (resp->identity_params ? 4 : 0) +
           static_cast<uint32_t>(resp->echoed.size());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseParameter(
    TRITONSERVER_InferenceResponse* resp, const uint32_t index,
    const char** name, TRITONSERVER_ParameterType* type, const void** vvalue) {
  FAKE_REQUIRE(resp, "inference_response");
  FAKE_REQUIRE(name, "name");
  FAKE_REQUIRE(type, "type");
  FAKE_REQUIRE(vvalue, "vvalue");
  const uint32_t fixed = resp->identity_params ? 4 : 0;
  if (index >= fixed) {
    if (index - fixed >= resp->echoed.size()) {
      return ErrArg(
          "out of bounds index " + std::to_string(index) + ": response has " +
          std::to_string(fixed + resp->echoed.size()) + " parameters");
    }
    const TRITONSERVER_Parameter& p = *resp->echoed[index - fixed];
    *name = p.name.c_str();
    *type = p.type;
    *vvalue = p.ValuePtr();
    return nullptr;
  }
  switch (index) {
    case 0:
      *name = "param0";
      *type = TRITONSERVER_PARAMETER_STRING;
      *vvalue = kParamString;
      break;
    case 1:
      *name = "param1";
      *type = TRITONSERVER_PARAMETER_INT;
      *vvalue = &kParamInt;
      break;
    case 2:
      *name = "param2";
      *type = TRITONSERVER_PARAMETER_BOOL;
      *vvalue = &kParamBool;
      break;
    default:
      *name = "param3";
      *type = TRITONSERVER_PARAMETER_DOUBLE;
      *vvalue = &kParamDouble;
      break;
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseOutputCount(
    TRITONSERVER_InferenceResponse* resp, uint32_t* count) {
  FAKE_REQUIRE(resp, "inference_response");
  FAKE_REQUIRE(count, "count");
  *count = static_cast<uint32_t>(resp->outputs.size());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseOutput(
    TRITONSERVER_InferenceResponse* resp, const uint32_t index,
    const char** name, TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint64_t* dim_count, const void** base, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id,
    void** userp) {
  FAKE_REQUIRE(resp, "inference_response");
  if (index >= resp->outputs.size()) {
    return ErrArg("out of bounds index " + std::to_string(index) +
                  ": response has " + std::to_string(resp->outputs.size()) +
                  " outputs");
  }
  const ResponseOutput& o = resp->outputs[index];
  if (name) *name = o.config->name.c_str();
  if (datatype) *datatype = o.config->datatype;
  if (shape) *shape = o.shape.data();
  if (dim_count) *dim_count = o.shape.size();
  if (base) *base = o.buffer;
  if (byte_size) *byte_size = o.byte_size;
  if (memory_type) *memory_type = o.memory_type;
  if (memory_type_id) *memory_type_id = o.memory_type_id;
  if (userp) *userp = o.buffer_userp;
  return nullptr;
}
