// Tests of the fake's strictness (PRECONDITIONS.md): a call that crashes
// real Triton aborts the fake with a message naming the entry point and the
// argument (checked in a forked child), and where Triton returns an error the
// fake returns the same one. Also the behaviours of real Triton r25.07 that
// the fake once hid (issue 11), driven at the C level.
#include <cstring>

#include "engine_support.h"

using namespace fake_engine_test;

namespace {

// A valid identity_fp32 request of four floats, callbacks set.
struct Submitted {
  Probe probe;
  float in[4] = {1, 2, 3, 4};
  TRITONSERVER_InferenceRequest* request = nullptr;
};

// An allocator whose alloc function waits until the gate opens: the request
// stays EXECUTING (Triton's) for as long as the test needs.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void Open() {
    std::lock_guard<std::mutex> l(mu);
    open = true;
    cv.notify_all();
  }
};
Gate* g_gate = nullptr;

TRITONSERVER_Error* GatedAllocFn(TRITONSERVER_ResponseAllocator* a,
                                 const char* name, size_t size,
                                 TRITONSERVER_MemoryType type, int64_t id,
                                 void* userp, void** buffer,
                                 void** buffer_userp,
                                 TRITONSERVER_MemoryType* actual_type,
                                 int64_t* actual_id) {
  {
    std::unique_lock<std::mutex> l(g_gate->mu);
    g_gate->cv.wait(l, [] { return g_gate->open; });
  }
  return AllocFn(a, name, size, type, id, userp, buffer, buffer_userp,
                 actual_type, actual_id);
}

TRITONSERVER_ResponseAllocator* NewGatedAllocator(Gate* gate) {
  g_gate = gate;
  TRITONSERVER_ResponseAllocator* a = nullptr;
  E(A().TRITONSERVER_ResponseAllocatorNew(&a, GatedAllocFn, ReleaseFn,
                                          StartFn));
  return a;
}

void Finish(Submitted* s) {
  CHECK(s->probe.WaitDone());
  DeleteResponses(&s->probe);
  E(A().TRITONSERVER_InferenceRequestDelete(s->request));
}

std::string OutputShape(TRITONSERVER_InferenceResponse* resp, uint32_t index) {
  const char* name;
  TRITONSERVER_DataType dt;
  const int64_t* shape;
  uint64_t dims;
  const void* base;
  size_t size;
  TRITONSERVER_MemoryType mt;
  int64_t id;
  void* up;
  std::string err = E(A().TRITONSERVER_InferenceResponseOutput(
      resp, index, &name, &dt, &shape, &dims, &base, &size, &mt, &id, &up));
  if (!err.empty()) return err;
  std::string s = std::string(name) + "[";
  for (uint64_t i = 0; i < dims; ++i) {
    s += (i ? "," : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

// Submits identity `model` with INPUT0 of `shape` (FP32 or INT32 by model)
// and `bytes` of data; returns InferAsync's error ("" when accepted, then
// the probe sees the rest).
std::string SubmitShape(TRITONSERVER_Server* s, const char* model,
                        TRITONSERVER_DataType dt, std::vector<int64_t> shape,
                        size_t bytes, TRITONSERVER_ResponseAllocator* a,
                        Probe* p, TRITONSERVER_InferenceRequest** out) {
  static const char zeros[64] = {};
  E(A().TRITONSERVER_InferenceRequestNew(out, s, model, -1));
  E(A().TRITONSERVER_InferenceRequestAddInput(*out, "INPUT0", dt, shape.data(),
                                              shape.size()));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      *out, "INPUT0", zeros, bytes, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(*out, ReleaseCb, p));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(*out, a, p, ResponseFn,
                                                         p));
  return E(A().TRITONSERVER_ServerInferAsync(s, *out, nullptr));
}

}  // namespace

TEST(PreconditionNullCudaIpcHandleAborts) {
  if (!A().ok) return;
  TRITONSERVER_BufferAttributes* attrs = nullptr;
  E(A().TRITONSERVER_BufferAttributesNew(&attrs));
  // Real Triton copies 64 bytes from the pointer, null or not.
  CHECK_DEATH(A().TRITONSERVER_BufferAttributesSetCudaIpcHandle(attrs, nullptr),
              "triton fake: TRITONSERVER_BufferAttributesSetCudaIpcHandle: "
              "cuda_ipc_handle is null; the real library copies 64 bytes "
              "from it (crash)");
  // No handle set: the getter answers null.
  void* got = reinterpret_cast<void*>(1);
  E(A().TRITONSERVER_BufferAttributesCudaIpcHandle(attrs, &got));
  CHECK(got == nullptr);
  // A handle is copied: the caller's bytes may change afterwards.
  unsigned char handle[64];
  for (int i = 0; i < 64; ++i) handle[i] = static_cast<unsigned char>(i);
  CHECK_EQ(E(A().TRITONSERVER_BufferAttributesSetCudaIpcHandle(attrs, handle)),
           std::string());
  std::memset(handle, 0xff, sizeof(handle));
  E(A().TRITONSERVER_BufferAttributesCudaIpcHandle(attrs, &got));
  CHECK(got != nullptr && got != handle);
  CHECK(got != nullptr && static_cast<unsigned char*>(got)[63] == 63);
  E(A().TRITONSERVER_BufferAttributesDelete(attrs));
  CHECK_DEATH(A().TRITONSERVER_BufferAttributesDelete(attrs),
              "TRITONSERVER_BufferAttributesDelete: buffer_attributes is not a "
              "live TRITONSERVER_BufferAttributes");
}

TEST(PreconditionNullArgumentsAbort) {
  if (!A().ok) return;
  CHECK_DEATH(A().TRITONSERVER_ServerOptionsSetServerId(nullptr, "x"),
              "TRITONSERVER_ServerOptionsSetServerId: options is null");
  TRITONSERVER_ServerOptions* o = nullptr;
  E(A().TRITONSERVER_ServerOptionsNew(&o));
  CHECK_DEATH(
      A().TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, nullptr),
      "TRITONSERVER_ServerOptionsSetModelRepositoryPath: value is null");
  // Triton's logging setters never read the options: null is fine.
  CHECK_EQ(E(A().TRITONSERVER_ServerOptionsSetLogInfo(nullptr, false)),
           std::string());
  CHECK_EQ(E(A().TRITONSERVER_ServerOptionsSetModelControlMode(
               o, static_cast<TRITONSERVER_ModelControlMode>(7))),
           std::string("3: unknown control mode '7'"));
  E(A().TRITONSERVER_ServerOptionsDelete(o));
  CHECK_DEATH(A().TRITONSERVER_ErrorMessage(nullptr),
              "TRITONSERVER_ErrorMessage: error is null");
  CHECK_DEATH(A().TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, nullptr),
              "TRITONSERVER_ErrorNew: msg is null");
  TRITONSERVER_Error* e =
      A().TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, "once");
  A().TRITONSERVER_ErrorDelete(e);
  CHECK_DEATH(A().TRITONSERVER_ErrorDelete(e),
              "TRITONSERVER_ErrorDelete: error is not a live "
              "TRITONSERVER_Error");
  CHECK_DEATH(A().TRITONSERVER_StringToDataType(nullptr),
              "TRITONSERVER_StringToDataType: dtype is null");
  // Deletes of null, and stop of a null server, are fine in Triton.
  const struct {
    const char* call;
    TRITONSERVER_Error* (*fn)();
  } null_ok[] = {
      {"ServerDelete", [] { return A().TRITONSERVER_ServerDelete(nullptr); }},
      {"ServerStop", [] { return A().TRITONSERVER_ServerStop(nullptr); }},
      {"ResponseAllocatorDelete",
       [] { return A().TRITONSERVER_ResponseAllocatorDelete(nullptr); }},
      {"InferenceRequestDelete",
       [] { return A().TRITONSERVER_InferenceRequestDelete(nullptr); }},
  };
  for (const auto& c : null_ok) CHECK_EQ_CASE(c.call, E(c.fn()), std::string());
  // Errors Triton itself returns for bad arguments.
  CHECK_EQ(E(A().TRITONSERVER_ServerLoadModelWithParameters(nullptr, "m",
                                                            nullptr, 2)),
           std::string("3: load parameters are not provided while parameter "
                       "count is non-zero"));
  CHECK(AllZero());
}

namespace {

// Inputs and ids: null shapes and data abort, unknown inputs and long
// string ids are errors. Leaves INPUT0 [1, 4] added with `in` as its data.
void CheckRequestInputRules(TRITONSERVER_InferenceRequest* r,
                            const float (&in)[4]) {
  CHECK_DEATH(A().TRITONSERVER_InferenceRequestAddInput(
                  r, "INPUT0", TRITONSERVER_TYPE_FP32, nullptr, 2),
              "TRITONSERVER_InferenceRequestAddInput: shape is null with "
              "dim_count 2");
  int64_t shape[2] = {1, 4};
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "INPUT0", TRITONSERVER_TYPE_FP32, shape, 2));
  CHECK_DEATH(A().TRITONSERVER_InferenceRequestAppendInputData(
                  r, "INPUT0", nullptr, 16, TRITONSERVER_MEMORY_CPU, 0),
              "TRITONSERVER_InferenceRequestAppendInputData: base is null for "
              "input 'INPUT0' with byte size 16");
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestAppendInputData(
               r, "INPUT9", nullptr, 0, TRITONSERVER_MEMORY_CPU, 0)),
           std::string("3: [request id: <id_unknown>] input 'INPUT9' does not "
                       "exist in request"));
  const std::string long_id(129, 'x');
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestSetCorrelationIdString(
               r, long_id.c_str())),
           std::string("5: string correlation ID cannot be longer than 128 "
                       "characters"));
  CHECK_DEATH(
      A().TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
          r, "INPUT0", shape, nullptr),
      "buffer_attributes is null");
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "INPUT0", in, sizeof(in), TRITONSERVER_MEMORY_CPU, 0));
}

// A valid request without callbacks: Triton would call null functions.
// Leaves the request with its callbacks and allocator `a` set.
void CheckSubmitNeedsCallbacks(TRITONSERVER_Server* s,
                               TRITONSERVER_InferenceRequest* r,
                               TRITONSERVER_ResponseAllocator* a, Probe* p) {
  CHECK_DEATH(A().TRITONSERVER_ServerInferAsync(s, r, nullptr),
              "TRITONSERVER_ServerInferAsync: inference_request has no release "
              "callback");
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, ReleaseCb, p));
  CHECK_DEATH(
      A().TRITONSERVER_ServerInferAsync(s, r, nullptr),
      "TRITONSERVER_ServerInferAsync: inference_request has no response "
      "callback");
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, nullptr, p,
                                                         ResponseFn, p));
  CHECK_DEATH(A().TRITONSERVER_ServerInferAsync(s, r, nullptr),
              "response allocator is null");
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, p, ResponseFn,
                                                         p));
}

// Not deleted twice, not used after delete.
void CheckDeletedRequest(TRITONSERVER_Server* s) {
  TRITONSERVER_InferenceRequest* gone = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&gone, s, "identity_fp32", -1));
  E(A().TRITONSERVER_InferenceRequestDelete(gone));
  CHECK_DEATH(A().TRITONSERVER_InferenceRequestDelete(gone),
              "TRITONSERVER_InferenceRequestDelete: inference_request is not a "
              "live TRITONSERVER_InferenceRequest");
  CHECK_DEATH(A().TRITONSERVER_InferenceRequestSetId(gone, "x"),
              "is not a live TRITONSERVER_InferenceRequest");
}

}  // namespace

TEST(PreconditionRequestRules) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  TRITONSERVER_InferenceRequest* r = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&r, s, "identity_fp32", -1));
  const float in[4] = {1, 2, 3, 4};
  CheckRequestInputRules(r, in);
  Probe p;
  CheckSubmitNeedsCallbacks(s, r, a, &p);
  CheckDeletedRequest(s);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

namespace {

// While a request executes it is Triton's: deleting or changing it, its
// allocator or its trace aborts; submitting it again is the error Triton
// returns (not a crash); cancelling it is allowed.
void CheckInFlightRules(TRITONSERVER_Server* s, Submitted* sub,
                        TRITONSERVER_ResponseAllocator* gated,
                        TRITONSERVER_InferenceTrace* trace) {
  CHECK_DEATH(A().TRITONSERVER_InferenceRequestDelete(sub->request),
              "TRITONSERVER_InferenceRequestDelete: inference_request belongs "
              "to Triton");
  CHECK_DEATH(A().TRITONSERVER_InferenceRequestSetId(sub->request, "late"),
              "TRITONSERVER_InferenceRequestSetId: inference_request belongs "
              "to Triton");
  CHECK_DEATH(A().TRITONSERVER_ResponseAllocatorDelete(gated),
              "TRITONSERVER_ResponseAllocatorDelete: allocator is still used");
  CHECK_DEATH(A().TRITONSERVER_InferenceTraceDelete(trace),
              "TRITONSERVER_InferenceTraceDelete: trace is still used by a "
              "request in flight");
  const std::string again =
      E(A().TRITONSERVER_ServerInferAsync(s, sub->request, nullptr));
  CHECK(again.rfind("1: [request id: <id_unknown>] Invalid request state "
                    "transition from ",
                    0) == 0);
  CHECK(again.find(" to INITIALIZED") != std::string::npos);
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestCancel(sub->request)),
           std::string());
}

// After the request: its response holds its buffer (the allocator stays in
// use) until deleted, and is not deleted twice.
void CheckResponseRules(Submitted* sub, TRITONSERVER_ResponseAllocator* gated) {
  CHECK_DEATH(A().TRITONSERVER_ResponseAllocatorDelete(gated),
              "TRITONSERVER_ResponseAllocatorDelete: allocator is still used");
  TRITONSERVER_InferenceResponse* resp = sub->probe.kept.at(0);
  CHECK_DEATH(A().TRITONSERVER_InferenceResponseOutput(
                  resp, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                  nullptr, nullptr, nullptr),
              "TRITONSERVER_InferenceResponseOutput: name is null");
  // The response's error comes back as a new object on every call.
  DeleteResponses(&sub->probe);
  CHECK_DEATH(A().TRITONSERVER_InferenceResponseDelete(resp),
              "TRITONSERVER_InferenceResponseDelete: inference_response is not "
              "a live TRITONSERVER_InferenceResponse");
}

}  // namespace

TEST(PreconditionOwnershipWhileInFlight) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  TRITONSERVER_InferenceTrace* trace = nullptr;
  E(A().TRITONSERVER_InferenceTraceNew(
      &trace, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0,
      [](TRITONSERVER_InferenceTrace*, TRITONSERVER_InferenceTraceActivity,
         uint64_t, void*) {},
      [](TRITONSERVER_InferenceTrace*, void*) {}, nullptr));
  Gate gate;
  TRITONSERVER_ResponseAllocator* gated = NewGatedAllocator(&gate);
  Submitted sub;
  // The request executes until the gate opens: it is Triton's meanwhile.
  sub.request =
      IdentityRequest(s, "identity_fp32", sub.in, 4, gated, &sub.probe);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, sub.request, trace)),
           std::string());
  CheckInFlightRules(s, &sub, gated, trace);
  gate.Open();
  CHECK(sub.probe.WaitDone());
  CheckResponseRules(&sub, gated);
  E(A().TRITONSERVER_InferenceRequestDelete(sub.request));
  E(A().TRITONSERVER_InferenceTraceDelete(trace));
  E(A().TRITONSERVER_ResponseAllocatorDelete(gated));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(PreconditionAllocatorFunctionsAreCalledUnchecked) {
  if (!A().ok || A().set_sync == nullptr) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = nullptr;
  E(A().TRITONSERVER_ResponseAllocatorNew(&a, nullptr, ReleaseFn, nullptr));
  Submitted sub;
  sub.request = IdentityRequest(s, "identity_fp32", sub.in, 4, a, &sub.probe);
  // In the child the whole inference runs inside ServerInferAsync.
  CHECK_DEATH(
      {
        A().set_sync(true);
        A().TRITONSERVER_ServerInferAsync(s, sub.request, nullptr);
      },
      "the response allocator's alloc_fn is null; the real library calls it "
      "for output 'OUTPUT0' (crash)");
  E(A().TRITONSERVER_InferenceRequestDelete(sub.request));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

namespace {

// A request runs past a stop that times out (exit timeout 0); the server is
// then deleted while it runs, or after it settled (`settle`). Runs in the
// child of a death test: such a server can never be deleted.
void DeleteAfterTimedOutStop(const std::string& repo, bool settle) {
  TRITONSERVER_Server* s = NewServer(repo, 0);
  Gate gate;
  TRITONSERVER_ResponseAllocator* a = NewGatedAllocator(&gate);
  Submitted sub;
  sub.request = IdentityRequest(s, "identity_fp32", sub.in, 4, a, &sub.probe);
  E(A().TRITONSERVER_ServerInferAsync(s, sub.request, nullptr));
  // Exit timeout 0: the stop gives up at once with the request running.
  if (E(A().TRITONSERVER_ServerStop(s)) !=
      "1: Exit timeout expired. Exiting immediately.") {
    return;  // no abort: the death test fails
  }
  if (settle) {
    gate.Open();
    Finish(&sub);
  }
  A().TRITONSERVER_ServerDelete(s);
}

}  // namespace

TEST(PreconditionServerDeleteWhileInferenceRuns) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  CHECK_DEATH(DeleteAfterTimedOutStop(repo, false),
              "TRITONSERVER_ServerDelete: 1 inference request(s) or decoupled "
              "stream(s) of this server are still running");
  // Settled, but Triton's stop gave up before it unloaded any model: the
  // delete would destroy them on threads that use the deleted server.
  CHECK_DEATH(DeleteAfterTimedOutStop(repo, true),
              "TRITONSERVER_ServerDelete: the stop timed out and model(s) "
              "'identity_dyn' version 1, 'identity_fp32' version 1");
}

TEST(PreconditionResponseErrorIsAFreshCopy) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  Probe p;
  TRITONSERVER_InferenceRequest* r = nullptr;
  // A successful response has no error.
  CHECK_EQ(SubmitShape(s, "identity_fp32", TRITONSERVER_TYPE_FP32, {1, 1}, 4, a,
                       &p, &r),
           std::string());
  CHECK(p.WaitDone());
  TRITONSERVER_InferenceResponse* resp = p.kept.at(0);
  CHECK(A().TRITONSERVER_InferenceResponseError(resp) == nullptr);
  DeleteResponses(&p);
  E(A().TRITONSERVER_InferenceRequestDelete(r));

  Probe q;
  E(A().TRITONSERVER_InferenceRequestNew(&r, s, "identity_fp32", -1));
  int64_t shape[2] = {1, 1};
  float one = 1;
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "INPUT0", TRITONSERVER_TYPE_FP32, shape, 2));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "INPUT0", &one, 4, TRITONSERVER_MEMORY_CPU, 0));
  // A string correlation ID: identity reads it as an integer and answers
  // with an error response.
  E(A().TRITONSERVER_InferenceRequestSetCorrelationIdString(r, "abc"));
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, ReleaseCb, &q));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, &q, ResponseFn,
                                                         &q));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(q.WaitDone());
  resp = q.kept.at(0);
  TRITONSERVER_Error* e1 = A().TRITONSERVER_InferenceResponseError(resp);
  TRITONSERVER_Error* e2 = A().TRITONSERVER_InferenceResponseError(resp);
  CHECK(e1 != nullptr && e2 != nullptr && e1 != e2);
  CHECK_EQ(E(e1), std::string("3: [request id: <id_unknown>] correlation ID in "
                              "request is not an unsigned int"));
  CHECK_EQ(E(e2), std::string("3: [request id: <id_unknown>] correlation ID in "
                              "request is not an unsigned int"));
  DeleteResponses(&q);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

// Real Triton takes batch size 0 as "no batch dimension": [0, 5] is five
// elements with no data, [0, 0] is a valid empty tensor of shape [0].
TEST(RealBehaviourBatchSizeZero) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  CHECK_EQ(E(A().TRITONSERVER_ServerLoadModel(s, "identity_fixed")),
           std::string());
  WaitLoadTail();
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  // A batch of 0 with other dimensions fixed: the data must still be the
  // size of one batch entry.
  const struct {
    const char* model;
    TRITONSERVER_DataType dt;
    std::vector<int64_t> shape;
    const char* expected;
  } refused[] = {
      {"identity_fp32",
       TRITONSERVER_TYPE_FP32,
       {0, 5},
       "3: [request id: <id_unknown>] input byte size mismatch for input "
       "'INPUT0' for model 'identity_fp32'. Expected 20, got 0"},
      {"identity_fixed",
       TRITONSERVER_TYPE_INT32,
       {0, 2, 3},
       "3: [request id: <id_unknown>] input byte size mismatch for input "
       "'INPUT0' for model 'identity_fixed'. Expected 24, got 0"},
  };
  TRITONSERVER_InferenceRequest* r = nullptr;
  for (const auto& c : refused) {
    Probe p;
    CHECK_EQ_CASE(c.model, SubmitShape(s, c.model, c.dt, c.shape, 0, a, &p, &r),
                  std::string(c.expected));
    E(A().TRITONSERVER_InferenceRequestDelete(r));
  }
  Probe p3;
  CHECK_EQ(SubmitShape(s, "identity_fp32", TRITONSERVER_TYPE_FP32, {0, 0}, 0, a,
                       &p3, &r),
           std::string());
  CHECK(p3.WaitDone());
  CHECK_EQ(p3.errors.at(0), std::string());
  CHECK_EQ(OutputShape(p3.kept.at(0), 0), std::string("OUTPUT0[0]"));
  DeleteResponses(&p3);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(RealBehaviourOptionalInputLeftOut) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  CHECK_EQ(E(A().TRITONSERVER_ServerLoadModel(s, "identity_optional")),
           std::string());
  WaitLoadTail();
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  Probe p;
  TRITONSERVER_InferenceRequest* r = nullptr;
  CHECK_EQ(SubmitShape(s, "identity_optional", TRITONSERVER_TYPE_FP32, {2}, 8,
                       a, &p, &r),
           std::string());
  CHECK(p.WaitDone());
  CHECK_EQ(p.errors.at(0), std::string());
  // Outputs in Triton's (sorted) order; OUTPUT1 is a zero of the optional
  // input's config shape with -1 read as 1.
  CHECK_EQ(OutputShape(p.kept.at(0), 0), std::string("OUTPUT0[2]"));
  CHECK_EQ(OutputShape(p.kept.at(0), 1), std::string("OUTPUT1[1]"));
  CHECK(p.outputs.at(0) == std::vector<float>{0});  // the last output read
  DeleteResponses(&p);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(RealBehaviourFailedReloadKeepsServing) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  // identity_fp32 v1 is READY; reload it with a version set naming a
  // missing version, then with an unknown backend.
  const char* missing_version =
      "{\"name\":\"identity_fp32\",\"backend\":\"identity\","
      "\"max_batch_size\":8,\"version_policy\":{\"specific\":{\"versions\":"
      "[7]}},\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\","
      "\"dims\":[-1]}],\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":"
      "\"TYPE_FP32\",\"dims\":[-1]}]}";
  const char* unknown_backend =
      "{\"name\":\"identity_fp32\",\"backend\":\"no_such_backend\","
      "\"max_batch_size\":8,\"input\":[{\"name\":\"INPUT0\",\"data_type\":"
      "\"TYPE_FP32\",\"dims\":[-1]}],\"output\":[{\"name\":\"OUTPUT0\","
      "\"data_type\":\"TYPE_FP32\",\"dims\":[-1]}]}";
  for (const char* config : {missing_version, unknown_backend}) {
    TRITONSERVER_Parameter* param = A().TRITONSERVER_ParameterNew(
        "config", TRITONSERVER_PARAMETER_STRING, config);
    const TRITONSERVER_Parameter* params[1] = {param};
    const std::string err = E(A().TRITONSERVER_ServerLoadModelWithParameters(
        s, "identity_fp32", params, 1));
    CHECK(err.rfind("3: load failed for model 'identity_fp32': ", 0) == 0);
    A().TRITONSERVER_ParameterDelete(param);
    bool ready = false;
    E(A().TRITONSERVER_ServerModelIsReady(s, "identity_fp32", 1, &ready));
    CHECK(ready);
    TRITONSERVER_ResponseAllocator* a = NewAllocator();
    Submitted sub;
    sub.request = IdentityRequest(s, "identity_fp32", sub.in, 4, a, &sub.probe);
    CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, sub.request, nullptr)),
             std::string());
    CHECK(sub.probe.WaitDone());
    CHECK(sub.probe.outputs.at(0) == std::vector<float>(sub.in, sub.in + 4));
    Finish(&sub);
    E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  }
  TRITONSERVER_Message* m = nullptr;
  E(A().TRITONSERVER_ServerModelIndex(s, 0, &m));
  const char* base;
  size_t size;
  E(A().TRITONSERVER_MessageSerializeToJson(m, &base, &size));
  CHECK(std::string(base, size)
            .find("{\"name\":\"identity_fp32\",\"version\":\"1\",\"state\":"
                  "\"READY\"}") != std::string::npos);
  E(A().TRITONSERVER_MessageDelete(m));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(RealBehaviourInputOrderOfTritonsMap) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_InferenceRequest* r = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&r, s, "identity_fp32", -1));
  int64_t shape[2] = {1, 1};
  for (const char* n : {"INPUT0", "INPUT9"}) {
    E(A().TRITONSERVER_InferenceRequestAddInput(r, n, TRITONSERVER_TYPE_FP32,
                                                shape, 2));
  }
  Probe p;
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, ReleaseCb, &p));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, &p, ResponseFn,
                                                         &p));
  E(A().TRITONSERVER_InferenceRequestSetId(r, "identity_batch8-req"));
  // Word for word what real r25.07 said for an unknown extra input, the
  // input order included.
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)),
           std::string("3: [request id: identity_batch8-req] expected 1 inputs "
                       "but got 2 inputs for model 'identity_fp32'. Got "
                       "input(s) ['INPUT9','INPUT0'], but missing required "
                       "input(s) ]. Please provide all required input(s)."));
  // One unknown input in place of the required one passes the count check
  // and fails the lookup (no request id in that message).
  E(A().TRITONSERVER_InferenceRequestRemoveAllInputs(r));
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "INPUT9", TRITONSERVER_TYPE_FP32, shape, 2));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)),
           std::string("3: unexpected inference input 'INPUT9' for model "
                       "'identity_fp32'"));
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}
