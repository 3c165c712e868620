// Inference requests: building them (inputs, outputs, parameters,
// callbacks), cancelling them, and submitting them (ServerInferAsync).
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "../core/engine.h"
#include "../core/error.h"
#include "../core/request.h"
#include "../core/request_validation.h"
#include "../scheduling/submission.h"
#include "../support/release.h"
#include "export.h"

namespace fake {
namespace {

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

}  // namespace
}  // namespace fake

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestNew(
    TRITONSERVER_InferenceRequest** inference_request,
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e =
          server->engine->FindReadyAndHold(model_name, model_version, &m)) {
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
  r->needs_normalization = true;
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
  r->needs_normalization = true;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestRemoveAllInputs(
    TRITONSERVER_InferenceRequest* inference_request) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->inputs.clear();
  inference_request->raw_input_name.clear();
  inference_request->needs_normalization = true;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceRequestRemoveAllInputData(
    TRITONSERVER_InferenceRequest* inference_request, const char* name) {
  REQUEST_SETTER_CHECKS(inference_request);
  FAKE_NOT_NULL(name);
  RequestInput* in = inference_request->FindInput(name);
  if (in == nullptr) {
    return ErrArg(inference_request->Prefix() + "input '" + name +
                  "' does not exist in request");
  }
  in->data.clear();
  in->total = 0;
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
  // r26.06 refuses a second request for the same output (core PR #493,
  // AddOriginalRequestedOutput); r25.07 kept a set and took it in silence.
  if (!inference_request->requested_outputs.insert(name).second &&
      AtLeast(Release::kR26_06)) {
    return ErrArg(inference_request->Prefix() + "output '" + name +
                  "' already exists in request");
  }
  inference_request->needs_normalization = true;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    TRITONSERVER_InferenceRequest* inference_request) {
  REQUEST_SETTER_CHECKS(inference_request);
  inference_request->requested_outputs.clear();
  inference_request->needs_normalization = true;
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
  if (auto* e = ValidateRequest(r, m)) {
    // A request that passed once and since changed only its input data is
    // not checked again by Triton: it would run as it is.
    if (!r->needs_normalization) {
      Violation(__func__,
                "inference_request passed Triton's checks before and since "
                "then only its input data changed, so the real library does "
                "not check it again and runs it as it is (a backend reads "
                "past the data); the fake's check says: " +
                    e->msg);
    }
    return e;
  }
  r->needs_normalization = false;
  r->state.store(RequestState::kInitialized);
  if (trace != nullptr) {
    FAKE_LIVE(kTrace, trace);
    FAKE_EXPECT(!trace->attached.load(),
                "trace is already used by a request in flight; the real "
                "library releases it once per request (use after free)");
  }
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (server->engine->stopping.load()) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE,
               r->Prefix() +
                   "Server is stopping, scheduler for model has stopped "
                   "accepting new inference requests");
  }
  // From here the request runs: everything Triton will call must exist.
  CheckRunnable(__func__, r, trace);
  return RunRequest(r, trace);
}
