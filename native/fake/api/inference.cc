// Inference requests (building, validating, submitting, cancelling) and
// inference responses (reading, deleting).
#include <cstring>

#include "../internal.h"

namespace fake {

const char* RequestStateName(RequestState s) {
  switch (s) {
    case RequestState::kInitialized:
      return "INITIALIZED";
    case RequestState::kPending:
      return "PENDING";
    case RequestState::kExecuting:
      return "EXECUTING";
    case RequestState::kReleased:
      return "RELEASED";
    case RequestState::kFailedEnqueue:
      return "FAILED_ENQUEUE";
  }
  return "UNKNOWN";
}

namespace {

const TensorConfig* FindTensor(const std::vector<TensorConfig>& list,
                               const std::string& name) {
  for (const auto& t : list) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Triton's element count: 0 for no dimensions, -1 when a dimension is -1
// (variable), else the product (other negative values included).
int64_t ElementCount(const std::vector<int64_t>& dims) {
  if (dims.empty()) return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d == -1) return -1;
    n *= d;
  }
  return n;
}

// Triton's byte size of a shape: -1 when unknown (BYTES or a -1 dimension).
int64_t ByteSize(TRITONSERVER_DataType dt, const std::vector<int64_t>& dims) {
  const int64_t es = DataTypeSize(dt);
  if (es == 0) return -1;
  const int64_t n = ElementCount(dims);
  if (n == -1) return -1;
  return n * es;
}

std::string ModelInputLookupError(const std::string& name,
                                  const std::string& model) {
  return "unexpected inference input '" + name + "' for model '" + model + "'";
}

// Walks a BYTES input's buffers as Triton does: each element is a 4-byte
// length and that many bytes, an element may continue into the next buffer
// but a length may not be split; host memory only (a GPU buffer ends the
// check, Triton leaves those to the backend).
TRITONSERVER_Error* ValidateBytes(TRITONSERVER_InferenceRequest* r,
                                  const std::string& name,
                                  const RequestInput& in,
                                  const std::string& model) {
  const int64_t expected = ElementCount(in.batch_shape);
  int64_t checked = 0;
  size_t element_left = 0;
  size_t next = 0;
  const char* p = nullptr;
  size_t left = 0;
  while (left > 0 || next < in.data.size()) {
    if (left == 0) {
      const InputData& d = in.data[next++];
      if (d.type == TRITONSERVER_MEMORY_GPU) return nullptr;
      p = static_cast<const char*>(d.base);
      left = d.size;
    }
    if (element_left == 0) {
      if (left < 4) {
        return ErrArg(r->Prefix() +
                      "incomplete string length indicator for inference "
                      "input '" +
                      name + "' for model '" + model +
                      "', expecting 4 bytes but only " + std::to_string(left) +
                      " bytes available. Please make sure the string length "
                      "indicator is in one buffer.");
      }
      uint32_t len;
      std::memcpy(&len, p, 4);
      element_left = len;
      ++checked;
      if (checked > expected) {
        return ErrArg(r->Prefix() + "unexpected number of string elements " +
                      std::to_string(checked) + " for inference input '" +
                      name + "' for model '" + model + "', expecting " +
                      std::to_string(expected));
      }
      p += 4;
      left -= 4;
    }
    if (left >= element_left) {
      p += element_left;
      left -= element_left;
      element_left = 0;
    } else {
      element_left -= left;
      left = 0;
    }
  }
  if (checked != expected) {
    return ErrArg(r->Prefix() + "expected " + std::to_string(expected) +
                  " string elements for inference input '" + name +
                  "' for model '" + model + "', got " +
                  std::to_string(checked));
  }
  return nullptr;
}

// The name lists of Triton's input-count message: "['A','B']", and what
// Triton's string handling makes of an empty list ("]").
std::string NameList(const std::vector<std::string>& names) {
  std::string s = "[";
  for (const auto& n : names) s += "'" + n + "',";
  s.pop_back();
  return s + "]";
}

// Fills a raw input's datatype and shape from the model's only input, as
// Triton does at submission.
TRITONSERVER_Error* NormalizeRawInput(TRITONSERVER_InferenceRequest* r,
                                      Model* m) {
  const ModelConfig& c = m->config;
  if (r->inputs.size() != 1 || c.input.size() != 1) {
    return ErrArg(r->Prefix() + "Raw request must only have 1 input (found " +
                  std::to_string(r->inputs.size()) +
                  ") to be deduced but got " + std::to_string(c.input.size()) +
                  " inputs in '" + m->name + "' model configuration");
  }
  auto it = r->inputs.begin();
  if (r->raw_input_name != it->first) {
    return ErrArg(r->Prefix() + "Unexpected reference name for raw input '" +
                  r->raw_input_name + "' got '" + it->first + "'");
  }
  const TensorConfig& t = c.input[0];
  RequestInput& in = it->second;
  std::vector<int64_t> shape;
  if (c.max_batch_size != 0) shape.push_back(1);
  int64_t dynamic_axis = -1;
  uint64_t known = 1;
  for (int64_t d : t.dims) {
    if (d == -1) {
      if (dynamic_axis != -1) {
        return ErrArg(r->Prefix() + "The shape of the raw input '" + t.name +
                      "' can not be deduced because there are more than one "
                      "variable-sized dimension");
      }
      dynamic_axis = static_cast<int64_t>(shape.size());
    } else {
      known *= static_cast<uint64_t>(d);
    }
    shape.push_back(d);
  }
  if (t.datatype == TRITONSERVER_TYPE_BYTES) {
    if (dynamic_axis != -1 || known != 1) {
      return ErrArg(r->Prefix() + "For BYTE datatype raw input '" + t.name +
                    "', the model must have input shape [1]");
    }
    // Triton prepends the element's length; the fake does not support
    // that case.
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "raw BYTES inputs are not supported by the fake engine");
  }
  if (dynamic_axis != -1 && known > 0) {
    shape[dynamic_axis] =
        static_cast<int64_t>(in.total / known / DataTypeSize(t.datatype));
  }
  in.name = t.name;
  in.datatype = t.datatype;
  in.shape = shape;
  return nullptr;
}

// The outputs to send: those the request names, or every output of the
// model when it names none.
TRITONSERVER_Error* SelectOutputs(TRITONSERVER_InferenceRequest* r, Model* m) {
  const ModelConfig& c = m->config;
  r->outputs_to_send.clear();
  if (r->requested_outputs.empty()) {
    std::set<std::string> all;
    for (const auto& o : c.output) all.insert(o.name);
    for (const auto& n : all) {
      r->outputs_to_send.push_back(FindTensor(c.output, n));
    }
    return nullptr;
  }
  for (const auto& n : r->requested_outputs) {
    const TensorConfig* o = FindTensor(c.output, n);
    if (o == nullptr) {
      return ErrArg("unexpected inference output '" + n + "' for model '" +
                    m->name + "'");
    }
    r->outputs_to_send.push_back(o);
  }
  return nullptr;
}

// Only the number of inputs is checked here (names and shapes later).
TRITONSERVER_Error* CheckInputCount(TRITONSERVER_InferenceRequest* r,
                                    Model* m) {
  const ModelConfig& c = m->config;
  size_t required = 0;
  for (const auto& t : c.input) required += t.optional ? 0 : 1;
  if (r->inputs.size() <= c.input.size() && r->inputs.size() >= required) {
    return nullptr;
  }
  std::vector<std::string> missing, got;
  for (const auto& t : c.input) {
    if (!t.optional && r->FindInput(t.name) == nullptr) {
      missing.push_back(t.name);
    }
  }
  for (const auto& kv : r->inputs) got.push_back(kv.first);
  std::string got_list = got.empty() ? "[]" : NameList(got);
  std::string tail = " but got " + std::to_string(r->inputs.size()) +
                     " inputs for model '" + m->name + "'. Got input(s) " +
                     got_list + ", but missing required input(s) " +
                     NameList(missing) +
                     ". Please provide all required input(s).";
  if (c.input.size() == required) {
    return ErrArg(r->Prefix() + "expected " + std::to_string(c.input.size()) +
                  " inputs" + tail);
  }
  return ErrArg(r->Prefix() + "expected number of inputs between " +
                std::to_string(required) + " and " +
                std::to_string(c.input.size()) + tail);
}

// The batch size: the first dimension of the inputs of a batching model
// (Triton keeps it in a uint32_t; the first input with a non-zero one sets
// it). *shapes gets each input's shape without the batch dimension.
TRITONSERVER_Error* FindBatchSize(
    TRITONSERVER_InferenceRequest* r, Model* m, uint32_t* batch,
    std::map<std::string, std::vector<int64_t>>* shapes) {
  const ModelConfig& c = m->config;
  const std::string& model = m->name;
  for (auto& kv : r->inputs) {
    RequestInput& in = kv.second;
    if (FindTensor(c.input, in.name) == nullptr) {
      return ErrArg(ModelInputLookupError(in.name, model));
    }
    std::vector<int64_t>& shape = (*shapes)[kv.first];
    shape = in.shape;
    if (c.max_batch_size == 0) continue;
    if (in.shape.empty()) {
      return ErrArg(r->Prefix() + "input '" + in.name +
                    "' has no shape but model requires batch dimension for '" +
                    model + "'");
    }
    if (*batch == 0) {
      *batch = static_cast<uint32_t>(in.shape[0]);
    } else if (in.shape[0] != static_cast<int64_t>(*batch)) {
      return ErrArg(r->Prefix() + "input '" + in.name +
                    "' batch size does not match other inputs for '" + model +
                    "'");
    }
    shape.erase(shape.begin());
  }
  if (static_cast<int64_t>(*batch) > c.max_batch_size) {
    return ErrArg(r->Prefix() + "inference request batch-size must be <= " +
                  std::to_string(c.max_batch_size) + " for '" + model + "'");
  }
  return nullptr;
}

// An input's shape (without the batch dimension) against the model's dims:
// every dimension given, and equal where the model fixes it.
TRITONSERVER_Error* CheckInputShape(TRITONSERVER_InferenceRequest* r, Model* m,
                                    const std::string& name,
                                    const RequestInput& in,
                                    const TensorConfig& t,
                                    const std::vector<int64_t>& shape) {
  const ModelConfig& c = m->config;
  bool match = shape.size() == t.dims.size();
  for (size_t i = 0; match && i < shape.size(); ++i) {
    if (shape[i] == -1) {
      return ErrArg(
          r->Prefix() + "All input dimensions should be specified for input '" +
          name + "' for model '" + m->name + "', got " + ShapeString(in.shape));
    }
    if (t.dims[i] != -1 && t.dims[i] != shape[i]) match = false;
  }
  if (match) return nullptr;
  std::vector<int64_t> full;
  if (c.max_batch_size > 0) full.push_back(-1);
  full.insert(full.end(), t.dims.begin(), t.dims.end());
  std::string note =
      c.max_batch_size > 0
          ? "NOTE: Setting a non-zero max_batch_size in the model config "
            "requires a batch dimension to be prepended to each input "
            "shape. If you want to specify the full shape including the "
            "batch dim in your input dims config, try setting "
            "max_batch_size to zero. See the model configuration docs for "
            "more info on max_batch_size."
          : "";
  return ErrArg(r->Prefix() + "unexpected shape for input '" + name +
                "' for model '" + m->name + "'. Expected " + ShapeString(full) +
                ", got " + ShapeString(in.shape) + ". " + note);
}

// The shape a reshaped input has for the backend: the model's reshape, its
// variable dimensions taken from the request's in order.
void ApplyReshape(const TensorConfig& t, std::vector<int64_t>* shape) {
  std::vector<int64_t> variable;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] == -1) variable.push_back((*shape)[i]);
  }
  size_t next = 0;
  shape->clear();
  for (int64_t d : t.reshape) {
    shape->push_back(d == -1 && next < variable.size() ? variable[next++] : d);
  }
}

// One input: data type, shape, then its data's size (or, for BYTES, its
// elements). Sets the input's batch_shape.
TRITONSERVER_Error* CheckInput(TRITONSERVER_InferenceRequest* r, Model* m,
                               const std::string& name, RequestInput* in,
                               uint32_t batch, std::vector<int64_t> shape) {
  const std::string& model = m->name;
  const TensorConfig* t = FindTensor(m->config.input, in->name);
  if (in->datatype != t->datatype) {
    return ErrArg(r->Prefix() + "inference input '" + name +
                  "' data-type is '" + DataTypeName(in->datatype) +
                  "', but model '" + model + "' expects '" +
                  DataTypeName(t->datatype) + "'");
  }
  if (auto* e = CheckInputShape(r, m, name, *in, *t, shape)) return e;
  if (t->has_reshape) ApplyReshape(*t, &shape);
  in->batch_shape.clear();
  if (batch != 0) in->batch_shape.push_back(batch);
  in->batch_shape.insert(in->batch_shape.end(), shape.begin(), shape.end());
  if (in->datatype == TRITONSERVER_TYPE_BYTES) {
    return ValidateBytes(r, name, *in, model);
  }
  const int64_t expected = ByteSize(in->datatype, in->batch_shape);
  if (in->total > static_cast<size_t>(INT64_MAX) ||
      static_cast<int64_t>(in->total) != expected) {
    return ErrArg(r->Prefix() + "input byte size mismatch for input '" + name +
                  "' for model '" + model + "'. Expected " +
                  std::to_string(expected) + ", got " +
                  std::to_string(in->total));
  }
  return nullptr;
}

// Triton's checks at submission (InferenceRequest::Normalize), in its order
// and words.
TRITONSERVER_Error* Validate(TRITONSERVER_InferenceRequest* r, Model* m) {
  if (!r->raw_input_name.empty()) {
    if (auto* e = NormalizeRawInput(r, m)) return e;
  }
  if (auto* e = SelectOutputs(r, m)) return e;
  if (auto* e = CheckInputCount(r, m)) return e;
  uint32_t batch = 0;
  std::map<std::string, std::vector<int64_t>> shapes;  // without batch dim
  if (auto* e = FindBatchSize(r, m, &batch, &shapes)) return e;
  for (auto& kv : r->inputs) {
    if (auto* e =
            CheckInput(r, m, kv.first, &kv.second, batch, shapes[kv.first])) {
      return e;
    }
  }
  r->batch_size = batch == 0 ? 1 : batch;
  r->request_batch = batch;
  return nullptr;
}

// A request Triton owns (between a successful ServerInferAsync and its
// RELEASE_ALL) must not be changed or deleted: Triton's threads read it.
void ExpectNotInFlight(const char* entry_point,
                       const TRITONSERVER_InferenceRequest* r) {
  if (r->InFlight()) {
    Violation(entry_point,
              "inference_request belongs to Triton (state " +
                  std::string(RequestStateName(r->state.load())) +
                  ") from a successful TRITONSERVER_ServerInferAsync until "
                  "its release callback with TRITONSERVER_REQUEST_RELEASE_ALL; "
                  "the real library's threads use it meanwhile (use after "
                  "free or a data race)");
  }
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
    if (allocator->release_fn == nullptr) {
      Violation("TRITONSERVER_InferenceResponseDelete",
                "the response allocator's release_fn is null; the real "
                "library calls it for output '" +
                    o.config->name + "' (crash)");
    }
    TRITONSERVER_Error* e =
        allocator->release_fn(allocator, o.buffer, o.buffer_userp, o.byte_size,
                              o.memory_type, o.memory_type_id);
    delete e;
    allocator->users.fetch_sub(1);
    LiveAdd(kLiveOutputBuffer, -1);
  }
  if (trace != nullptr) trace->Release();
  delete error;
  // Last: the response no longer holds its model up (it may finish
  // unloading, and a waiting ServerStop may return).
  if (model != nullptr) model->Release();
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestNew(
    TRITONSERVER_InferenceRequest** inference_request,
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->core->FindReadyAndHold(model_name, model_version, &m)) {
    return e;
  }
  // Triton stores the new request only after finding the model.
  FAKE_NOT_NULL(inference_request);
  auto* r = new TRITONSERVER_InferenceRequest();
  r->model = std::move(m);
  *inference_request = r;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestDelete(
    TRITONSERVER_InferenceRequest* inference_request) {
  FAKE_DELETABLE(kRequest, inference_request);
  if (inference_request == nullptr) return nullptr;
  ExpectNotInFlight(__func__, inference_request);
  std::shared_ptr<Model> m = std::move(inference_request->model);
  delete inference_request;
  if (m != nullptr) m->Release();
  return nullptr;
}

// The request setters: a live request that Triton does not own right now.
#define REQUEST_SETTER_CHECKS(r) \
  FAKE_LIVE(kRequest, r);        \
  ExpectNotInFlight(__func__, r)

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetId(
    TRITONSERVER_InferenceRequest* inference_request, const char* id) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(id);
  inference_request->id = id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetFlags(
    TRITONSERVER_InferenceRequest* inference_request, uint32_t flags) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->flags = flags;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetCorrelationId(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t correlation_id) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->corr_is_string = false;
  inference_request->corr_id = correlation_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetCorrelationIdString(
    TRITONSERVER_InferenceRequest* inference_request,
    const char* correlation_id) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(correlation_id);
  if (std::strlen(correlation_id) > 128) {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "string correlation ID cannot be longer than 128 characters");
  }
  inference_request->corr_is_string = true;
  inference_request->corr_str = correlation_id;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestCancel(
    TRITONSERVER_InferenceRequest* inference_request) {
  FAKE_LIVE(kRequest, inference_request);
  if (!inference_request->has_factory.load()) {
    return Err(TRITONSERVER_ERROR_INTERNAL,
               "It is not possible to cancel an inference request before "
               "calling TRITONSERVER_InferAsync.");
  }
  inference_request->cancelled->store(true);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestIsCancelled(
    TRITONSERVER_InferenceRequest* inference_request, bool* is_cancelled) {
  FAKE_LIVE(kRequest, inference_request);
  if (!inference_request->has_factory.load()) {
    return Err(TRITONSERVER_ERROR_INTERNAL,
               "It is not possible to query cancellation status before "
               "calling TRITONSERVER_InferAsync.");
  }
  FAKE_NOT_NULL(is_cancelled);
  *is_cancelled = inference_request->cancelled->load();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetPriorityUInt64(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t priority) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->priority = priority;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    TRITONSERVER_InferenceRequest* inference_request, uint64_t timeout_us) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->timeout_us = timeout_us;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAddInput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const TRITONSERVER_DataType datatype, const int64_t* shape,
    uint64_t dim_count) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(name);
  // Triton copies dim_count dimensions from `shape`.
  FAKE_EXPECT(shape != nullptr || dim_count == 0,
              "shape is null with dim_count " + std::to_string(dim_count) +
                  "; the real library copies that many dimensions from it "
                  "(crash)");
  TRITONSERVER_InferenceRequest* r = inference_request;
  RequestInput in;
  in.name = name;
  in.datatype = datatype;
  if (dim_count > 0) in.shape.assign(shape, shape + dim_count);
  if (!r->inputs.emplace(name, std::move(in)).second) {
    return ErrArg(r->Prefix() + "input '" + name +
                  "' already exists in request");
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAddRawInput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(name);
  TRITONSERVER_InferenceRequest* r = inference_request;
  if (!r->inputs.empty()) {
    return ErrArg(r->Prefix() + "raw input '" + name +
                  "' can't be added to request with other inputs");
  }
  RequestInput in;
  in.name = name;
  r->inputs.emplace(name, std::move(in));
  r->raw_input_name = name;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestRemoveAllInputs(
    TRITONSERVER_InferenceRequest* inference_request) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->inputs.clear();
  inference_request->raw_input_name.clear();
  return nullptr;
}

static TRITONSERVER_Error* AppendData(const char* entry_point,
                                      TRITONSERVER_InferenceRequest* r,
                                      const char* name, const void* base,
                                      size_t size, TRITONSERVER_MemoryType type,
                                      int64_t id) {
  RequestInput* in = r->FindInput(name);
  if (in == nullptr) {
    return ErrArg(r->Prefix() + "input '" + name +
                  "' does not exist in request");
  }
  // Triton keeps the pointer and reads `size` bytes from it when the
  // request runs (BYTES inputs already at submission).
  if (base == nullptr && size > 0) {
    Violation(entry_point, "base is null for input '" + std::string(name) +
                               "' with byte size " + std::to_string(size) +
                               "; the real library reads that many bytes "
                               "from it when the request runs (crash)");
  }
  if (type != TRITONSERVER_MEMORY_CPU &&
      type != TRITONSERVER_MEMORY_CPU_PINNED &&
      type != TRITONSERVER_MEMORY_GPU) {
    Violation(entry_point,
              "memory_type " + std::to_string(static_cast<int>(type)) +
                  " for input '" + name +
                  "' is not a TRITONSERVER_MemoryType; the real library "
                  "stores it and its copies then treat the memory "
                  "as whatever type they guess");
  }
  if (size == 0) return nullptr;  // Triton drops empty buffers
  in->data.push_back(InputData{base, size, type, id});
  in->total += size;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAppendInputData(
    TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, size_t byte_size, TRITONSERVER_MemoryType memory_type,
    int64_t memory_type_id) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(name);
  return AppendData(__func__, inference_request, name, base, byte_size,
                    memory_type, memory_type_id);
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    TRITONSERVER_InferenceRequest* inference_request, const char* name,
    const void* base, TRITONSERVER_BufferAttributes* buffer_attributes) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(name);
  FAKE_LIVE(kBufferAttributes, buffer_attributes);
  // Triton copies the attributes (IPC handle included) into the request:
  // the attributes object may be changed or deleted afterwards.
  return AppendData(
      __func__, inference_request, name, base, buffer_attributes->byte_size,
      buffer_attributes->memory_type, buffer_attributes->memory_type_id);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestAddRequestedOutput(
    TRITONSERVER_InferenceRequest* inference_request, const char* name) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(name);
  inference_request->requested_outputs.insert(name);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    TRITONSERVER_InferenceRequest* inference_request) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->requested_outputs.clear();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetReleaseCallback(
    TRITONSERVER_InferenceRequest* inference_request,
    TRITONSERVER_InferenceRequestReleaseFn_t request_release_fn,
    void* request_release_userp) {
  REQUEST_SETTER_CHECKS(inference_request);
  // A null function is stored as is; ServerInferAsync checks it.
  inference_request->release_fn = request_release_fn;
  inference_request->release_userp = request_release_userp;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestSetResponseCallback(
    TRITONSERVER_InferenceRequest* inference_request,
    TRITONSERVER_ResponseAllocator* response_allocator,
    void* response_allocator_userp,
    TRITONSERVER_InferenceResponseCompleteFn_t response_fn,
    void* response_userp) {
  REQUEST_SETTER_CHECKS(inference_request);
  // Stored as they are; ServerInferAsync checks them.
  TRITONSERVER_InferenceRequest* r = inference_request;
  r->has_response_callback = true;
  r->target.allocator = response_allocator;
  r->target.alloc_userp = response_allocator_userp;
  r->target.response_fn = response_fn;
  r->target.response_userp = response_userp;
  return nullptr;
}

static void AddParam(TRITONSERVER_InferenceRequest* r, const char* key,
                     TRITONSERVER_Parameter* p) {
  p->name = key;
  r->parameters.emplace_back(p);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetStringParameter(
    TRITONSERVER_InferenceRequest* request, const char* key,
    const char* value) {
  REQUEST_SETTER_CHECKS(request);
  FAKE_NOT_NULL(key);
  FAKE_NOT_NULL(value);
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_STRING;
  p->str = value;
  AddParam(request, key, p);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetIntParameter(
    TRITONSERVER_InferenceRequest* request, const char* key,
    const int64_t value) {
  REQUEST_SETTER_CHECKS(request);
  FAKE_NOT_NULL(key);
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_INT;
  p->i = value;
  AddParam(request, key, p);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetBoolParameter(
    TRITONSERVER_InferenceRequest* request, const char* key, const bool value) {
  REQUEST_SETTER_CHECKS(request);
  FAKE_NOT_NULL(key);
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_BOOL;
  p->b = value;
  AddParam(request, key, p);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestSetDoubleParameter(
    TRITONSERVER_InferenceRequest* request, const char* key,
    const double value) {
  REQUEST_SETTER_CHECKS(request);
  FAKE_NOT_NULL(key);
  auto* p = new TRITONSERVER_Parameter();
  p->type = TRITONSERVER_PARAMETER_DOUBLE;
  p->d = value;
  AddParam(request, key, p);
  return nullptr;
}

namespace {

// Everything Triton calls once a request runs must exist: the request's
// release and response callbacks, its live allocator, and what the trace's
// level makes Triton call. Aborts naming `entry_point` otherwise.
void CheckRunnable(const char* entry_point, TRITONSERVER_InferenceRequest* r,
                   TRITONSERVER_InferenceTrace* trace) {
  auto expect = [entry_point](bool cond, const char* what) {
    if (!cond) Violation(entry_point, what);
  };
  expect(r->release_fn != nullptr,
         "inference_request has no release callback "
         "(TRITONSERVER_InferenceRequestSetReleaseCallback); the real "
         "library calls it without a check when it releases the "
         "request (crash)");
  expect(r->has_response_callback && r->target.response_fn != nullptr,
         "inference_request has no response callback "
         "(TRITONSERVER_InferenceRequestSetResponseCallback); the real "
         "library calls it without a check for every response (crash)");
  expect(r->target.allocator != nullptr,
         "inference_request's response allocator is null; the real "
         "library calls its functions for every response (crash)");
  expect(HandleLive(Handle::kAllocator,
                    Tracked<Handle::kAllocator>::Of(r->target.allocator)),
         "inference_request's response allocator was deleted; the real "
         "library calls its functions for every response (use after "
         "free)");
  if (trace == nullptr) return;
  expect(trace->release_fn != nullptr,
         "trace has no release function; the real library calls it "
         "without a check when the request is done (crash)");
  expect((trace->level & TRITONSERVER_TRACE_LEVEL_TIMESTAMPS) == 0 ||
             trace->activity_fn != nullptr,
         "trace has the TIMESTAMPS level but no activity function; "
         "the real library calls it without a check (crash)");
  expect((trace->level & TRITONSERVER_TRACE_LEVEL_TENSORS) == 0,
         "trace has the TENSORS level but no tensor activity function "
         "(TRITONSERVER_InferenceTraceNew sets none); the real "
         "library calls it for the request's tensors (crash)");
}

// Makes a validated request PENDING: its trace attached, its start time
// and queue deadline set, and the counters of what is in flight raised.
void StartRequest(TRITONSERVER_InferenceRequest* r, Model* m,
                  TRITONSERVER_InferenceTrace* trace) {
  r->target.id = r->id;
  r->trace = trace;
  if (trace != nullptr) trace->attached.store(true);
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
  r->state.store(RequestState::kPending);
  r->target.allocator->users.fetch_add(1);
  m->core->active_inferences.fetch_add(1);
  m->stats.pending.fetch_add(1, std::memory_order_relaxed);
  if (trace != nullptr) {
    trace->Report(TRITONSERVER_TRACE_REQUEST_START, r->request_start_ns);
    trace->Report(TRITONSERVER_TRACE_QUEUE_START, SteadyNs());
  }
}

// Undoes StartRequest for a request the model's queue refused.
void UndoStart(TRITONSERVER_InferenceRequest* r, Model* m,
               TRITONSERVER_InferenceTrace* trace) {
  m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
  m->core->active_inferences.fetch_sub(1);
  r->target.allocator->users.fetch_sub(1);
  if (trace != nullptr) trace->attached.store(false);
  r->trace = nullptr;
  r->state.store(RequestState::kFailedEnqueue);
}

}  // namespace

TRITONSERVER_Error* fake::ValidateRequest(TRITONSERVER_InferenceRequest* r,
                                          Model* m) {
  return Validate(r, m);
}

TRITONSERVER_Error* fake::RunRequest(TRITONSERVER_InferenceRequest* r,
                                     TRITONSERVER_InferenceTrace* trace) {
  Model* m = r->model.get();
  StartRequest(r, m, trace);
  if (m->config.has_sequence_batching) {
    bool run_now = true;
    if (auto* e = SequenceAdmit(m, r, &run_now)) {
      UndoStart(r, m, trace);
      return e;
    }
    if (!run_now) return nullptr;  // queued behind its sequence
  }
  if (g_sync_callbacks.load(std::memory_order_relaxed)) {
    m->ExecuteInline(r);
    return nullptr;
  }
  if (auto* e = m->Enqueue(r)) {
    UndoStart(r, m, trace);
    return e;
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerInferAsync(
    TRITONSERVER_Server* server,
    TRITONSERVER_InferenceRequest* inference_request,
    TRITONSERVER_InferenceTrace* trace) {
  FAKE_LIVE(kRequest, inference_request);
  TRITONSERVER_InferenceRequest* r = inference_request;
  Model* m = r->model.get();
  // Triton (re)makes the response factory first, then validates the
  // request unless it is unchanged since it last passed, then moves it to
  // INITIALIZED, which fails for a request it still owns.
  // (A request Triton owns cannot have changed, the setters check that,
  // so Triton skips the validation; so does the fake, which must not touch
  // a request its backends are reading.)
  r->has_factory.store(true);
  const RequestState state = r->state.load();
  if (state == RequestState::kPending || state == RequestState::kExecuting) {
    return Err(TRITONSERVER_ERROR_INTERNAL,
               r->Prefix() + "Invalid request state transition from " +
                   RequestStateName(state) + " to INITIALIZED");
  }
  if (auto* e = Validate(r, m)) return e;
  r->state.store(RequestState::kInitialized);
  if (trace != nullptr) {
    FAKE_LIVE(kTrace, trace);
    FAKE_EXPECT(!trace->attached.load(),
                "trace is already used by a request in flight; the real "
                "library releases it once per request (use after free)");
  }
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (server->core->stopping.load()) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE,
               r->Prefix() +
                   "Server is stopping, scheduler for model has stopped "
                   "accepting new inference requests");
  }
  // From here the request runs: everything Triton will call must exist.
  CheckRunnable(__func__, r, trace);
  return RunRequest(r, trace);
}

// ---- responses --------------------------------------------------------------

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseDelete(
    TRITONSERVER_InferenceResponse* inference_response) {
  FAKE_DELETABLE(kResponse, inference_response);
  delete inference_response;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseError(
    TRITONSERVER_InferenceResponse* inference_response) {
  FAKE_LIVE(kResponse, inference_response);
  // Triton returns a new error object on every call (its header says the
  // response owns it, but the implementation makes a fresh copy): the
  // caller must delete it, or it leaks.
  const TRITONSERVER_Error* e = inference_response->error;
  return e == nullptr ? nullptr : Err(e->code, e->msg);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseModel(
    TRITONSERVER_InferenceResponse* inference_response, const char** model_name,
    int64_t* model_version) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(model_name);
  FAKE_NOT_NULL(model_version);
  *model_name = inference_response->model->name.c_str();
  *model_version = inference_response->model->version;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseId(
    TRITONSERVER_InferenceResponse* inference_response,
    const char** request_id) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(request_id);
  *request_id = inference_response->id.c_str();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseParameterCount(
    TRITONSERVER_InferenceResponse* inference_response, uint32_t* count) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(count);
  *count = (inference_response->identity_params ? 4 : 0) +
           static_cast<uint32_t>(inference_response->extra_params.size());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseParameter(
    TRITONSERVER_InferenceResponse* inference_response, const uint32_t index,
    const char** name, TRITONSERVER_ParameterType* type, const void** vvalue) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(type);
  FAKE_NOT_NULL(vvalue);
  TRITONSERVER_InferenceResponse* resp = inference_response;
  const uint32_t fixed = resp->identity_params ? 4 : 0;
  if (index >= fixed) {
    if (index - fixed >= resp->extra_params.size()) {
      return ErrArg(
          "out of bounds index " + std::to_string(index) + ": response has " +
          std::to_string(fixed + resp->extra_params.size()) + " parameters");
    }
    const TRITONSERVER_Parameter& p = *resp->extra_params[index - fixed];
    *name = p.name.c_str();
    *type = p.type;
    *vvalue = p.ValuePtr();
    return nullptr;
  }
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(type);
  FAKE_NOT_NULL(vvalue);
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
    TRITONSERVER_InferenceResponse* inference_response, uint32_t* count) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(count);
  *count = static_cast<uint32_t>(inference_response->outputs.size());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseOutput(
    TRITONSERVER_InferenceResponse* inference_response, const uint32_t index,
    const char** name, TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint64_t* dim_count, const void** base, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id,
    void** userp) {
  FAKE_LIVE(kResponse, inference_response);
  TRITONSERVER_InferenceResponse* resp = inference_response;
  if (index >= resp->outputs.size()) {
    return ErrArg("out of bounds index " + std::to_string(index) +
                  ": response has " + std::to_string(resp->outputs.size()) +
                  " outputs");
  }
  // Triton writes every one of them.
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(datatype);
  FAKE_NOT_NULL(shape);
  FAKE_NOT_NULL(dim_count);
  FAKE_NOT_NULL(base);
  FAKE_NOT_NULL(byte_size);
  FAKE_NOT_NULL(memory_type);
  FAKE_NOT_NULL(memory_type_id);
  FAKE_NOT_NULL(userp);
  const ResponseOutput& o = resp->outputs[index];
  *name = o.config->name.c_str();
  *datatype = o.config->datatype;
  *shape = o.shape.data();
  *dim_count = o.shape.size();
  *base = o.buffer;
  *byte_size = o.byte_size;
  *memory_type = o.memory_type;
  *memory_type_id = o.memory_type_id;
  *userp = o.buffer_userp;
  return nullptr;
}
