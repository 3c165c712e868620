// The fake engine's own tests of its scheduler and ownership rules: they
// dlopen the built library (TRITON_FAKE_LIB, default
// build/fake/libtritonserver.so), write a temporary model repository and
// drive the C API the way the addon does.
#include "engine_support.h"

using namespace fake_engine_test;

TEST(EngineIdentityCallbackOrder) {
  if (!A().ok) {
    CHECK(A().ok);
    return;
  }
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  Probe p;
  float in[4] = {1, 1.5f, 2, 2.5f};
  auto* r = IdentityRequest(s, "identity_fp32", in, 4, a, &p);
  E(A().TRITONSERVER_InferenceRequestSetId(r, "req-1"));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(p.WaitDone());
  {
    std::lock_guard<std::mutex> l(p.mu);
    std::vector<std::string> want = {"start", "alloc:OUTPUT0", "response:FINAL",
                                     "release:ALL"};
    CHECK(p.events == want);
    CHECK_EQ(p.finals, 1);
    CHECK_EQ(p.releases, 1);
    CHECK(p.outputs.size() == 1 &&
          p.outputs[0] == std::vector<float>(in, in + 4));
  }
  const char* id = nullptr;
  E(A().TRITONSERVER_InferenceResponseId(p.kept[0], &id));
  CHECK_EQ(std::string(id), std::string("req-1"));
  DeleteResponses(&p);
  CHECK_EQ(p.events.back(), std::string("buffer-release"));
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  CHECK_EQ(E(A().TRITONSERVER_ServerDelete(s)), std::string());
  CHECK(AllZero());
}

TEST(EngineValidationErrorsInTritonWords) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  Probe p;
  float in[4] = {1, 2, 3, 4};
  auto* r =
      IdentityRequest(s, "identity_fp32", in, 3, a, &p);  // 12 of 16 bytes
  E(A().TRITONSERVER_InferenceRequestSetId(r, "v"));
  A().TRITONSERVER_InferenceRequestRemoveAllInputs(r);
  int64_t shape[2] = {1, 4};
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "INPUT0", TRITONSERVER_TYPE_FP32, shape, 2));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "INPUT0", in, 12, TRITONSERVER_MEMORY_CPU, 0));
  CHECK_EQ(
      E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)),
      std::string("3: [request id: v] input byte size mismatch for input "
                  "'INPUT0' for model 'identity_fp32'. Expected 16, got 12"));
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestAddInput(
               r, "INPUT0", TRITONSERVER_TYPE_FP32, shape, 2)),
           std::string(
               "3: [request id: v] input 'INPUT0' already exists in request"));
  int64_t big[2] = {9, 4};
  A().TRITONSERVER_InferenceRequestRemoveAllInputs(r);
  E(A().TRITONSERVER_InferenceRequestAddInput(r, "INPUT0",
                                              TRITONSERVER_TYPE_FP32, big, 2));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)),
           std::string("3: [request id: v] inference request batch-size must "
                       "be <= 8 for 'identity_fp32'"));
  E(A().TRITONSERVER_InferenceRequestAddRequestedOutput(r, "OUTPUT9"));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)),
           std::string("3: unexpected inference output 'OUTPUT9' for model "
                       "'identity_fp32'"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(p.events.empty());  // no callback after a refused submission
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  TRITONSERVER_InferenceRequest* none = nullptr;
  CHECK_EQ(
      E(A().TRITONSERVER_InferenceRequestNew(&none, s, "no_such_model", -1)),
      std::string(
          "2: Request for unknown model: 'no_such_model' is not found"));
  // Real Triton stores the new request through the pointer: null crashes.
  CHECK_DEATH(
      A().TRITONSERVER_InferenceRequestNew(nullptr, s, "identity_fp32", -1),
      "TRITONSERVER_InferenceRequestNew: inference_request is null");
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

namespace {

// The server's model index (all models, ServerModelIndex) as JSON.
std::string IndexJson(TRITONSERVER_Server* s) {
  TRITONSERVER_Message* m = nullptr;
  E(A().TRITONSERVER_ServerModelIndex(s, 0, &m));
  const char* base;
  size_t size;
  E(A().TRITONSERVER_MessageSerializeToJson(m, &base, &size));
  std::string idx(base, size);
  E(A().TRITONSERVER_MessageDelete(m));
  return idx;
}

bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Loads that fail, each with Triton's error, and what the index then says.
void CheckLoadFailures(TRITONSERVER_Server* s) {
  const struct {
    const char* model;
    const char* expected;
  } cases[] = {
      {"unknown_backend",
       "3: load failed for model 'unknown_backend': version 1 is at "
       "UNAVAILABLE state: Invalid argument: unable to find backend library "
       "for backend 'no_such_backend', try specifying runtime on the model "
       "configuration.;\n"},
      {"no_version",
       "3: load failed for model 'no_version': at least one version must be "
       "available under the version policy of model 'no_version'\n"},
      {"nope",
       "1: failed to load 'nope', failed to poll from model repository"},
  };
  for (const auto& c : cases) {
    CHECK_EQ_CASE(c.model, E(A().TRITONSERVER_ServerLoadModel(s, c.model)),
                  std::string(c.expected));
  }
  CHECK_EQ(E(A().TRITONSERVER_ServerUnloadModel(s, "nope")), std::string());
  const std::string idx = IndexJson(s);
  CHECK(Has(idx,
            "{\"name\":\"identity_fp32\",\"version\":\"1\",\"state\":"
            "\"READY\"}"));
  CHECK(!Has(idx, "no_version"));
  CHECK(Has(idx, "\"reason\":\"Invalid argument: unable to find backend"));
}

// Unload: UNLOADING while a request object exists, UNAVAILABLE
// ("unloaded") once it is deleted.
void CheckUnloadWaitsForRequests(TRITONSERVER_Server* s) {
  TRITONSERVER_InferenceRequest* r = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&r, s, "identity_fp32", -1));
  CHECK_EQ(E(A().TRITONSERVER_ServerUnloadModel(s, "identity_fp32")),
           std::string());
  bool ready = true;
  E(A().TRITONSERVER_ServerModelIsReady(s, "identity_fp32", -1, &ready));
  CHECK(!ready);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(Has(IndexJson(s),
            "{\"name\":\"identity_fp32\",\"version\":\"1\",\"state\":"
            "\"UNLOADING\"}"));
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  std::string last;
  for (int i = 0; i < 100; ++i) {
    last = IndexJson(s);
    if (Has(last, "\"state\":\"UNAVAILABLE\",\"reason\":\"unloaded\"")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(Has(last,
            "{\"name\":\"identity_fp32\",\"version\":\"1\",\"state\":"
            "\"UNAVAILABLE\",\"reason\":\"unloaded\"}"));
}

}  // namespace

TEST(EngineLoadFailuresAndIndex) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  CheckLoadFailures(s);
  CheckUnloadWaitsForRequests(s);
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

namespace {

// The model's statistics show one compute_infer of at least `min_ns`.
void CheckComputeInferAtLeast(TRITONSERVER_Server* s, const char* model,
                              long long min_ns) {
  TRITONSERVER_Message* m = nullptr;
  E(A().TRITONSERVER_ServerModelStatistics(s, model, -1, &m));
  const char* base;
  size_t size;
  E(A().TRITONSERVER_MessageSerializeToJson(m, &base, &size));
  std::string js(base, size);
  const std::string key = "\"compute_infer\":{\"count\":1,\"ns\":";
  size_t at = js.find(key);
  CHECK(at != std::string::npos);
  if (at != std::string::npos) {
    CHECK(std::atoll(js.c_str() + at + key.size()) >= min_ns);
  }
  E(A().TRITONSERVER_MessageDelete(m));
}

// repeat: IN [7, 8, 9] gives three responses, then the FINAL flag.
void RunRepeat(TRITONSERVER_Server* s, TRITONSERVER_ResponseAllocator* a) {
  Probe p;
  TRITONSERVER_InferenceRequest* r = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&r, s, "repeat_int32", -1));
  int32_t in[3] = {7, 8, 9};
  uint32_t delay[3] = {1, 1, 1}, wait = 30;
  int64_t n3 = 3, n1 = 1;
  E(A().TRITONSERVER_InferenceRequestAddInput(r, "IN", TRITONSERVER_TYPE_INT32,
                                              &n3, 1));
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "DELAY", TRITONSERVER_TYPE_UINT32, &n3, 1));
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "WAIT", TRITONSERVER_TYPE_UINT32, &n1, 1));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "IN", in, 12, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "DELAY", delay, 12, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "WAIT", &wait, 4, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, ReleaseCb, &p));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, &p, ResponseFn,
                                                         &p));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(p.WaitDone());
  std::unique_lock<std::mutex> l(p.mu);
  CHECK_EQ(p.responses, 3);
  CHECK_EQ(p.finals, 1);
  CHECK_EQ(p.events.back() == "response(null):FINAL" ||
               p.events.back() == "release:ALL",
           true);
  CHECK(p.outputs.size() == 3 && p.outputs[2].size() == 1 &&
        p.outputs[2][0] == 9.0f);
  l.unlock();
  DeleteResponses(&p);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  // repeat's compute time is the WAIT its execute function sleeps.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CheckComputeInferAtLeast(s, "repeat_int32", 30000000LL);
}

// square: IN 4 gives four responses, then the FINAL flag.
void RunSquare(TRITONSERVER_Server* s, TRITONSERVER_ResponseAllocator* a) {
  Probe p;
  TRITONSERVER_InferenceRequest* r = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&r, s, "square_int32", -1));
  int32_t in = 4;
  int64_t n1 = 1;
  E(A().TRITONSERVER_InferenceRequestAddInput(r, "IN", TRITONSERVER_TYPE_INT32,
                                              &n1, 1));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "IN", &in, 4, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, ReleaseCb, &p));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, &p, ResponseFn,
                                                         &p));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(p.WaitDone());
  std::unique_lock<std::mutex> l(p.mu);
  CHECK_EQ(p.responses, 4);
  CHECK_EQ(p.finals, 1);
  l.unlock();
  DeleteResponses(&p);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
}

}  // namespace

TEST(EngineDecoupledRepeatAndSquare) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  RunRepeat(s, a);
  RunSquare(s, a);
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(EngineDynamicBatchingFormsBatches) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  const int kN = 40;
  std::vector<Probe> probes(kN);
  std::vector<TRITONSERVER_InferenceRequest*> reqs(kN);
  float in[4] = {1, 2, 3, 4};
  for (int i = 0; i < kN; ++i) {
    reqs[i] = IdentityRequest(s, "identity_dyn", in, 4, a, &probes[i]);
    CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, reqs[i], nullptr)),
             std::string());
  }
  for (int i = 0; i < kN; ++i) {
    CHECK(probes[i].WaitDone());
    DeleteResponses(&probes[i]);
    E(A().TRITONSERVER_InferenceRequestDelete(reqs[i]));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  TRITONSERVER_Message* m = nullptr;
  CHECK_EQ(E(A().TRITONSERVER_ServerModelStatistics(s, "identity_dyn", -1, &m)),
           std::string());
  const char* base;
  size_t size;
  E(A().TRITONSERVER_MessageSerializeToJson(m, &base, &size));
  std::string js(base, size);
  CHECK(js.find("\"inference_count\":40,") != std::string::npos);
  size_t pos = js.find("\"execution_count\":");
  long exec = pos == std::string::npos ? -1 : std::atol(js.c_str() + pos + 18);
  CHECK(exec > 0 && exec < kN);
  E(A().TRITONSERVER_MessageDelete(m));
  TRITONSERVER_Metrics* metrics = nullptr;
  E(A().TRITONSERVER_ServerMetrics(s, &metrics));
  E(A().TRITONSERVER_MetricsFormatted(metrics, TRITONSERVER_METRIC_PROMETHEUS,
                                      &base, &size));
  CHECK(std::string(base, size)
            .find("nv_inference_count{model=\"identity_dyn\",version=\"1\"} "
                  "40\n") != std::string::npos);
  E(A().TRITONSERVER_MetricsDelete(metrics));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(EngineStopWithRequestsInFlight) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo, 2);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  Probe p;
  float in[4] = {1, 2, 3, 4};
  auto* r = IdentityRequest(s, "identity_slow", in, 4, a, &p, false);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  // The request completes while stop waits; the caller deletes it on release.
  std::thread deleter([&] {
    CHECK(p.WaitDone());
    DeleteResponses(&p);
    E(A().TRITONSERVER_InferenceRequestDelete(r));
  });
  CHECK_EQ(E(A().TRITONSERVER_ServerStop(s)), std::string());
  deleter.join();
  bool live = true;
  CHECK_EQ(E(A().TRITONSERVER_ServerIsLive(s, &live)),
           std::string("4: Server exiting"));
  // A request object that is never deleted makes stop wait the exit timeout.
  TRITONSERVER_Server* s2 = NewServer(repo, 1);
  TRITONSERVER_InferenceRequest* held = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&held, s2, "identity_fp32", -1));
  CHECK_EQ(E(A().TRITONSERVER_ServerStop(s2)),
           std::string("1: Exit timeout expired. Exiting immediately."));
  // A valid request reaches the stopped scheduler (an invalid one would
  // fail validation first, as in Triton).
  int64_t shape[2] = {1, 4};
  E(A().TRITONSERVER_InferenceRequestAddInput(
      held, "INPUT0", TRITONSERVER_TYPE_FP32, shape, 2));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      held, "INPUT0", in, sizeof(in), TRITONSERVER_MEMORY_CPU, 0));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s2, held, nullptr)),
           std::string("4: [request id: <id_unknown>] Server is stopping, "
                       "scheduler for model has stopped accepting new "
                       "inference requests"));
  E(A().TRITONSERVER_InferenceRequestDelete(held));
  WaitModelsDestroyed();
  E(A().TRITONSERVER_ServerDelete(s2));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(EngineSyncCallbackMode) {
  if (!A().ok || A().set_sync == nullptr) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  A().set_sync(true);
  Probe p;
  float in[4] = {1, 2, 3, 4};
  auto* r = IdentityRequest(s, "identity_fp32", in, 4, a, &p);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  {
    // Everything already happened inside ServerInferAsync.
    std::lock_guard<std::mutex> l(p.mu);
    CHECK_EQ(p.finals, 1);
    CHECK_EQ(p.releases, 1);
  }
  A().set_sync(false);
  DeleteResponses(&p);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(EngineCancelBeforeSubmitIsInternal) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_InferenceRequest* r = nullptr;
  E(A().TRITONSERVER_InferenceRequestNew(&r, s, "identity_fp32", -1));
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestCancel(r)),
           std::string("1: It is not possible to cancel an inference request "
                       "before calling TRITONSERVER_InferAsync."));
  // Triton validates before anything calls back: a request without inputs
  // (and without callbacks) is refused, no crash.
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)).substr(0, 2),
           std::string("3:"));
  // That submission made the request's response factory: cancelling now
  // succeeds (and has no effect, the next submission starts afresh).
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestCancel(r)), std::string());
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

namespace {

// The temporary model directories the engine made under `tmp`.
std::vector<std::string> TempModelDirs(const std::string& tmp) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tmp, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("triton-fake-model-", 0) == 0) out.push_back(e.path());
  }
  return out;
}

std::string LoadWith(TRITONSERVER_Server* s, const char* model,
                     const std::vector<TRITONSERVER_Parameter*>& params) {
  std::string err = E(A().TRITONSERVER_ServerLoadModelWithParameters(
      s, model, const_cast<const TRITONSERVER_Parameter**>(params.data()),
      params.size()));
  for (auto* p : params) A().TRITONSERVER_ParameterDelete(p);
  return err;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The model "in_memory" loaded from "file:" parameters on server `s`, the
// engine's directories going under `tmp`.
struct InMemoryModel {
  TRITONSERVER_Server* s;
  std::string tmp;
  const std::string config =
      "{\"name\":\"in_memory\",\"backend\":\"identity\",\"max_batch_size\":0,"
      "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\","
      "\"dims\":[-1]}],\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":"
      "\"TYPE_FP32\",\"dims\":[-1]}]}";
  const std::string poll_failure =
      "1: failed to load 'in_memory', failed to poll from model repository";

  TRITONSERVER_Parameter* Cfg() const {
    return A().TRITONSERVER_ParameterNew(
        "config", TRITONSERVER_PARAMETER_STRING, config.c_str());
  }
  static TRITONSERVER_Parameter* File(const char* key,
                                      const std::string& bytes) {
    return A().TRITONSERVER_ParameterBytesNew(key, bytes.data(), bytes.size());
  }
  bool Ready(int64_t version) const {
    bool r = false;
    E(A().TRITONSERVER_ServerModelIsReady(s, "in_memory", version, &r));
    return r;
  }
  std::string Load(const std::vector<TRITONSERVER_Parameter*>& params) const {
    return LoadWith(s, "in_memory", params);
  }
};

// Not in the repository: the files alone make the model directory; then a
// reload with other files replaces it.
void CheckFilesMakeTheDirectory(const InMemoryModel& f) {
  CHECK_EQ(f.Load({f.Cfg(), f.File("file:1/placeholder.txt", "one"),
                   f.File("file:/2/sub/weights.bin", std::string("\0\1", 2))}),
           std::string());
  // Default policy: the latest version. A leading '/' is relative to the
  // model directory.
  CHECK(f.Ready(2));
  CHECK(!f.Ready(1));
  std::vector<std::string> dirs = TempModelDirs(f.tmp);
  CHECK_EQ(dirs.size(), size_t{1});
  if (dirs.size() == 1) {
    CHECK_EQ(ReadWhole(dirs[0] + "/1/placeholder.txt"), std::string("one"));
    CHECK_EQ(ReadWhole(dirs[0] + "/2/sub/weights.bin"), std::string("\0\1", 2));
  }
  // A reload with other files replaces the directory.
  CHECK_EQ(f.Load({f.File("file:3/x", "three"), f.Cfg()}), std::string());
  CHECK(f.Ready(3));
  CHECK(!f.Ready(2));
  std::vector<std::string> dirs2 = TempModelDirs(f.tmp);
  CHECK_EQ(dirs2.size(), size_t{1});
  if (dirs.size() == 1 && dirs2.size() == 1) {
    CHECK(dirs2[0] != dirs[0]);
    CHECK_EQ(ReadWhole(dirs2[0] + "/3/x"), std::string("three"));
  }
}

// Failures, each a poll failure as in Triton, leave no directory behind
// and no file outside one; the loaded model keeps serving.
void CheckFailedLoadsLeaveNothing(const InMemoryModel& f) {
  const struct {
    const char* what;
    std::vector<TRITONSERVER_Parameter*> params;
  } cases[] = {
      {"no config", {f.File("file:1/a", "x")}},
      {"path above the model", {f.Cfg(), f.File("file:../escaped", "x")}},
      {"path above the model after a folder",
       {f.Cfg(), f.File("file:1/../../up", "x")}},
      {"file not bytes",
       {f.Cfg(), A().TRITONSERVER_ParameterNew(
                     "file:1/a", TRITONSERVER_PARAMETER_STRING, "not bytes")}},
      {"file where a folder goes",
       {f.Cfg(), f.File("file:1", "a file"), f.File("file:1/b", "x")}},
  };
  for (const auto& c : cases) {
    CHECK_EQ_CASE(c.what, f.Load(c.params), f.poll_failure);
  }
  CHECK(!std::filesystem::exists(f.tmp + "/escaped"));
  CHECK_EQ(TempModelDirs(f.tmp).size(), size_t{1});
  CHECK(f.Ready(3));
}

}  // namespace

TEST(EngineInMemoryModelFiles) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  // The engine makes its directories under TMPDIR: use a fresh one.
  char tmpl[] = "/tmp/fake-engine-tmpdir-XXXXXX";
  std::string tmp = ::mkdtemp(tmpl);
  const char* old_tmpdir = std::getenv("TMPDIR");
  std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const InMemoryModel f{s, tmp};
  CheckFilesMakeTheDirectory(f);
  CheckFailedLoadsLeaveNothing(f);
  // Unloading removes the directory; so does deleting the server.
  WaitLoadTail();
  CHECK_EQ(E(A().TRITONSERVER_ServerUnloadModel(s, "in_memory")),
           std::string());
  CHECK(TempModelDirs(tmp).empty());
  CHECK_EQ(f.Load({f.Cfg(), f.File("file:1/p", "p")}), std::string());
  CHECK_EQ(TempModelDirs(tmp).size(), size_t{1});
  WaitLoadTail();
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(TempModelDirs(tmp).empty());
  CHECK(AllZero());

  if (old_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  std::filesystem::remove_all(tmp);
}

// ---- fidelity with real Triton r25.07 (probes run against a real core):
// decoupled streams, release timing,
// live responses holding their model.

namespace {

// One log shared by several requests, so the order across streams shows.
struct StreamLog {
  struct Event {
    int req;
    std::string what;
    std::thread::id thread;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Event> events;
  void Add(int req, const std::string& what) {
    std::lock_guard<std::mutex> l(mu);
    events.push_back({req, what, std::this_thread::get_id()});
    cv.notify_all();
  }
  int Count(const std::string& what) {
    int n = 0;
    for (auto& e : events) n += e.what == what;
    return n;
  }
  bool WaitFor(const std::string& what, int n, int ms = 5000) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::milliseconds(ms),
                       [&] { return Count(what) >= n; });
  }
  // Index of the first event `what` of request `req` (-1 if none).
  int First(int req, const std::string& what) {
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].req == req && events[i].what == what) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }
};

struct StreamCtx {
  StreamLog* log;
  int req;
  std::mutex mu;
  std::vector<TRITONSERVER_InferenceResponse*> kept;
  std::string error;
};

// Allocator for StreamCtx requests (the Probe allocator expects a Probe).
TRITONSERVER_Error* StreamAllocFn(TRITONSERVER_ResponseAllocator*, const char*,
                                  size_t size, TRITONSERVER_MemoryType, int64_t,
                                  void*, void** buffer, void** buffer_userp,
                                  TRITONSERVER_MemoryType* type, int64_t* id) {
  *buffer = size == 0 ? nullptr : std::malloc(size);
  *buffer_userp = nullptr;
  *type = TRITONSERVER_MEMORY_CPU;
  *id = 0;
  return nullptr;
}
TRITONSERVER_Error* StreamBufferReleaseFn(TRITONSERVER_ResponseAllocator*,
                                          void* buffer, void*, size_t,
                                          TRITONSERVER_MemoryType, int64_t) {
  std::free(buffer);
  return nullptr;
}
TRITONSERVER_ResponseAllocator* NewStreamAllocator() {
  TRITONSERVER_ResponseAllocator* a = nullptr;
  E(A().TRITONSERVER_ResponseAllocatorNew(&a, StreamAllocFn,
                                          StreamBufferReleaseFn, nullptr));
  return a;
}

void StreamResponseFn(TRITONSERVER_InferenceResponse* resp,
                      const uint32_t flags, void* userp) {
  auto* c = static_cast<StreamCtx*>(userp);
  if (resp != nullptr) {
    std::lock_guard<std::mutex> l(c->mu);
    TRITONSERVER_Error* err = A().TRITONSERVER_InferenceResponseError(resp);
    if (err != nullptr) {
      c->error = A().TRITONSERVER_ErrorMessage(err);
      A().TRITONSERVER_ErrorDelete(err);
    }
    c->kept.push_back(resp);
  }
  c->log->Add(
      c->req,
      resp == nullptr
          ? ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) ? "final" : "null")
          : ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) ? "response-final"
                                                            : "response"));
}

void StreamReleaseFn(TRITONSERVER_InferenceRequest*, const uint32_t flags,
                     void* userp) {
  auto* c = static_cast<StreamCtx*>(userp);
  c->log->Add(c->req, flags == TRITONSERVER_REQUEST_RELEASE_ALL ? "release"
                                                                : "release?");
}

// The buffers a repeat request borrows; kept alive until the test ends.
struct RepeatInputs {
  std::vector<int32_t> in;
  std::vector<uint32_t> delay;
  uint32_t wait;
};

TRITONSERVER_InferenceRequest* RepeatRequest(TRITONSERVER_Server* s,
                                             RepeatInputs* d,
                                             TRITONSERVER_ResponseAllocator* a,
                                             StreamCtx* c) {
  TRITONSERVER_InferenceRequest* r = nullptr;
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestNew(&r, s, "repeat_int32", -1)),
           std::string());
  if (r == nullptr) return nullptr;
  int64_t n_in = static_cast<int64_t>(d->in.size());
  int64_t n_delay = static_cast<int64_t>(d->delay.size());
  int64_t n1 = 1;
  E(A().TRITONSERVER_InferenceRequestAddInput(r, "IN", TRITONSERVER_TYPE_INT32,
                                              &n_in, 1));
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "DELAY", TRITONSERVER_TYPE_UINT32, &n_delay, 1));
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "WAIT", TRITONSERVER_TYPE_UINT32, &n1, 1));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "IN", d->in.data(), d->in.size() * 4, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "DELAY", d->delay.data(), d->delay.size() * 4, TRITONSERVER_MEMORY_CPU,
      0));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "WAIT", &d->wait, 4, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, StreamReleaseFn, c));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, c,
                                                         StreamResponseFn, c));
  return r;
}

void DeleteKept(StreamCtx* c) {
  std::lock_guard<std::mutex> l(c->mu);
  for (auto* r : c->kept) E(A().TRITONSERVER_InferenceResponseDelete(r));
  c->kept.clear();
}

std::string ModelState(TRITONSERVER_Server* s, const std::string& model) {
  TRITONSERVER_Message* m = nullptr;
  std::string err = E(A().TRITONSERVER_ServerModelIndex(s, 0, &m));
  if (!err.empty()) return err;
  const char* base;
  size_t size;
  E(A().TRITONSERVER_MessageSerializeToJson(m, &base, &size));
  std::string js(base, size);
  E(A().TRITONSERVER_MessageDelete(m));
  size_t at = js.find("{\"name\":\"" + model + "\"");
  if (at == std::string::npos) return "absent";
  size_t st = js.find("\"state\":\"", at);
  if (st == std::string::npos) return "no state";
  st += 9;
  return js.substr(st, js.find('"', st) - st);
}

}  // namespace

// Reference (b2): repeat with WAIT=0 releases the request (from the execute
// thread) before its first response; the responses and the NULL FINAL come
// from another thread.
TEST(EngineRepeatReleasesBeforeResponsesFromAnotherThread) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewStreamAllocator();
  StreamLog log;
  StreamCtx c{&log, 0};
  RepeatInputs d{{1, 2, 3}, {10, 10, 10}, 0};
  auto* r = RepeatRequest(s, &d, a, &c);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(log.WaitFor("final", 1));
  {
    std::lock_guard<std::mutex> l(log.mu);
    std::vector<std::string> order;
    for (auto& e : log.events) order.push_back(e.what);
    std::vector<std::string> want = {"release", "response", "response",
                                     "response", "final"};
    CHECK(order == want);
    if (order == want) {
      CHECK(log.events[0].thread != log.events[1].thread);
      CHECK(log.events[1].thread == log.events[4].thread);
    }
  }
  DeleteKept(&c);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

// Reference (c), (d): square releases first, then answers from another
// thread (IN=0: only the NULL FINAL).
TEST(EngineSquareReleasesBeforeResponses) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewStreamAllocator();
  for (int32_t value : {3, 0}) {
    StreamLog log;
    StreamCtx c{&log, 0};
    TRITONSERVER_InferenceRequest* r = nullptr;
    E(A().TRITONSERVER_InferenceRequestNew(&r, s, "square_int32", -1));
    int64_t n1 = 1;
    E(A().TRITONSERVER_InferenceRequestAddInput(
        r, "IN", TRITONSERVER_TYPE_INT32, &n1, 1));
    E(A().TRITONSERVER_InferenceRequestAppendInputData(
        r, "IN", &value, 4, TRITONSERVER_MEMORY_CPU, 0));
    E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, StreamReleaseFn,
                                                          &c));
    E(A().TRITONSERVER_InferenceRequestSetResponseCallback(
        r, a, &c, StreamResponseFn, &c));
    CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)),
             std::string());
    CHECK(log.WaitFor("final", 1));
    {
      std::lock_guard<std::mutex> l(log.mu);
      CHECK_EQ(log.events.size(), static_cast<size_t>(value) + 2);
      CHECK_EQ(log.events.front().what, std::string("release"));
      CHECK_EQ(log.events.back().what, std::string("final"));
      CHECK(log.events.front().thread != log.events.back().thread);
    }
    DeleteKept(&c);
    E(A().TRITONSERVER_InferenceRequestDelete(r));
  }
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

// Real repeat starts one response thread per request, so with WAIT=0 the
// streams of a single instance run side by side: every stream has sent its
// first response before any stream ends.
TEST(EngineRepeatStreamsRunConcurrently) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewStreamAllocator();
  StreamLog log;
  const int kN = 3;
  std::vector<std::unique_ptr<StreamCtx>> ctx;
  std::vector<std::unique_ptr<RepeatInputs>> data;
  std::vector<TRITONSERVER_InferenceRequest*> reqs;
  for (int i = 0; i < kN; ++i) {
    ctx.emplace_back(new StreamCtx{&log, i});
    data.emplace_back(new RepeatInputs{{i, i, i}, {50, 50, 50}, 0});
    reqs.push_back(RepeatRequest(s, data.back().get(), a, ctx.back().get()));
    CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, reqs.back(), nullptr)),
             std::string());
  }
  CHECK(log.WaitFor("final", kN));
  {
    std::lock_guard<std::mutex> l(log.mu);
    int first_final = static_cast<int>(log.events.size());
    for (int i = 0; i < kN; ++i) {
      int f = log.First(i, "final");
      if (f >= 0 && f < first_final) first_final = f;
    }
    for (int i = 0; i < kN; ++i) {
      CHECK(log.First(i, "release") >= 0);
      CHECK(log.First(i, "release") < log.First(i, "response"));
      CHECK(log.First(i, "response") < first_final);
    }
    CHECK_EQ(log.Count("response"), 3 * kN);
  }
  for (int i = 0; i < kN; ++i) {
    DeleteKept(ctx[i].get());
    E(A().TRITONSERVER_InferenceRequestDelete(reqs[i]));
  }
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

// Real repeat answers a bad request (IN and DELAY shapes differ) with one
// error response, then still waits WAIT ms before the release and counts
// the request as a success in the statistics.
TEST(EngineRepeatBadRequestStillWaitsBeforeRelease) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo);
  TRITONSERVER_ResponseAllocator* a = NewStreamAllocator();
  StreamLog log;
  StreamCtx c{&log, 0};
  RepeatInputs d{{1, 2}, {1}, 40};
  auto* r = RepeatRequest(s, &d, a, &c);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(log.WaitFor("release", 1));
  {
    std::lock_guard<std::mutex> l(log.mu);
    CHECK_EQ(log.events.size(), static_cast<size_t>(2));
    if (log.events.size() == 2) {
      CHECK_EQ(log.events[0].what, std::string("response-final"));
      CHECK_EQ(log.events[1].what, std::string("release"));
    }
    CHECK_EQ(c.error, std::string("expected IN and DELAY shape to match, got "
                                  "[2] and [1]"));
  }
  DeleteKept(&c);
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  // repeat records its statistics after it released the request (as the
  // real backend does): wait for them rather than read them too early.
  std::string js;
  for (int i = 0; i < 200; ++i) {
    TRITONSERVER_Message* m = nullptr;
    E(A().TRITONSERVER_ServerModelStatistics(s, "repeat_int32", -1, &m));
    const char* base;
    size_t size;
    E(A().TRITONSERVER_MessageSerializeToJson(m, &base, &size));
    js.assign(base, size);
    E(A().TRITONSERVER_MessageDelete(m));
    if (js.find("\"execution_count\":1,") != std::string::npos &&
        js.find("\"success\":{\"count\":1,") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(js.find("\"inference_count\":1,\"execution_count\":1,") !=
        std::string::npos);
  CHECK(js.find("\"success\":{\"count\":1,") != std::string::npos);
  CHECK(js.find("\"fail\":{\"count\":0,\"ns\":0}") != std::string::npos);
  const std::string key = "\"compute_infer\":{\"count\":1,\"ns\":";
  size_t at = js.find(key);
  CHECK(at != std::string::npos);
  if (at != std::string::npos) {
    CHECK(std::atoll(js.c_str() + at + key.size()) >= 40000000LL);
  }
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

namespace {

// Unload: identity and repeat responses both hold the model (UNLOADING)
// until they are deleted.
void CheckUnloadWaitsForResponses(const std::string& repo,
                                  TRITONSERVER_ResponseAllocator* a,
                                  float* in) {
  TRITONSERVER_Server* s = NewServer(repo);
  Probe p;
  auto* r = IdentityRequest(s, "identity_fp32", in, 4, a, &p);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(p.WaitDone());
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  StreamLog log;
  StreamCtx c{&log, 0};
  RepeatInputs d{{5}, {0}, 0};
  auto* rr = RepeatRequest(s, &d, a, &c);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, rr, nullptr)), std::string());
  CHECK(log.WaitFor("final", 1));
  CHECK(log.WaitFor("release", 1));
  E(A().TRITONSERVER_InferenceRequestDelete(rr));
  CHECK_EQ(E(A().TRITONSERVER_ServerUnloadModel(s, "identity_fp32")),
           std::string());
  CHECK_EQ(E(A().TRITONSERVER_ServerUnloadModel(s, "repeat_int32")),
           std::string());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_EQ(ModelState(s, "identity_fp32"), std::string("UNLOADING"));
  CHECK_EQ(ModelState(s, "repeat_int32"), std::string("UNLOADING"));
  DeleteResponses(&p);
  DeleteKept(&c);
  std::string st1, st2;
  for (int i = 0; i < 200; ++i) {
    st1 = ModelState(s, "identity_fp32");
    st2 = ModelState(s, "repeat_int32");
    if (st1 == "UNAVAILABLE" && st2 == "UNAVAILABLE") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK_EQ(st1, std::string("UNAVAILABLE"));
  CHECK_EQ(st2, std::string("UNAVAILABLE"));
  E(A().TRITONSERVER_ServerDelete(s));
}

// Stop waits until a live response is deleted, then succeeds.
void CheckStopWaitsForResponse(const std::string& repo,
                               TRITONSERVER_ResponseAllocator* a, float* in) {
  TRITONSERVER_Server* s = NewServer(repo, 5);
  Probe p;
  auto* r = IdentityRequest(s, "identity_fp32", in, 4, a, &p);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(p.WaitDone());
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  std::atomic<bool> deleted{false};
  std::thread deleter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    deleted = true;
    DeleteResponses(&p);
  });
  CHECK_EQ(E(A().TRITONSERVER_ServerStop(s)), std::string());
  CHECK(deleted.load());  // stop returned only after the delete
  deleter.join();
  E(A().TRITONSERVER_ServerDelete(s));
}

// A response kept past the exit timeout: stop gives up.
void CheckStopGivesUpAfterExitTimeout(const std::string& repo,
                                      TRITONSERVER_ResponseAllocator* a,
                                      float* in) {
  TRITONSERVER_Server* s = NewServer(repo, 1);
  Probe p;
  auto* r = IdentityRequest(s, "identity_fp32", in, 4, a, &p);
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)), std::string());
  CHECK(p.WaitDone());
  E(A().TRITONSERVER_InferenceRequestDelete(r));
  CHECK_EQ(E(A().TRITONSERVER_ServerStop(s)),
           std::string("1: Exit timeout expired. Exiting immediately."));
  DeleteResponses(&p);
  WaitModelsDestroyed();
  E(A().TRITONSERVER_ServerDelete(s));
}

}  // namespace

// On a real core a response the client has not deleted holds its model:
// unload leaves it UNLOADING until the response goes, and ServerStop waits
// for it (up to the exit timeout, then "Exit timeout expired").
TEST(EngineLiveResponsesHoldTheirModel) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_ResponseAllocator* a = NewStreamAllocator();
  float in[4] = {1, 2, 3, 4};
  CheckUnloadWaitsForResponses(repo, a, in);
  CheckStopWaitsForResponse(repo, a, in);
  CheckStopGivesUpAfterExitTimeout(repo, a, in);
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  CHECK(AllZero());
}

namespace {

// One request of the racing loop below: made, sent and waited for; false
// when it was accepted and then never completed.
bool OneRacingRequest(TRITONSERVER_Server* s, TRITONSERVER_ResponseAllocator* a,
                      const float* in) {
  TRITONSERVER_InferenceRequest* r = nullptr;
  // NOT_FOUND / UNAVAILABLE while the model is away: nothing was made.
  if (!E(A().TRITONSERVER_InferenceRequestNew(&r, s, "identity_fp32", -1))
           .empty()) {
    return true;
  }
  Probe p;
  int64_t shape[2] = {1, 4};
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "INPUT0", TRITONSERVER_TYPE_FP32, shape, 2));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "INPUT0", in, 16, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, ReleaseCb, &p));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, &p, ResponseFn,
                                                         &p));
  bool done = true;
  if (E(A().TRITONSERVER_ServerInferAsync(s, r, nullptr)).empty()) {
    done = p.WaitDone(10000);
    DeleteResponses(&p);
  }
  if (done) E(A().TRITONSERVER_InferenceRequestDelete(r));
  return done;
}

}  // namespace

// A request made while its model unloads holds the model from the lookup
// on (Triton keeps a shared pointer to it): it runs and completes, however
// the lookup and the unload interleave. Four threads make requests while a
// fifth unloads and loads the model again.
TEST(EngineRequestsRacingUnloadAllComplete) {
  if (!A().ok) return;
  std::string repo = MakeRepo();
  TRITONSERVER_Server* s = NewServer(repo, 5);
  TRITONSERVER_ResponseAllocator* a = NewAllocator();
  std::atomic<bool> racing{true};
  std::atomic<int> hung{0};
  std::vector<std::thread> requesters;
  for (int t = 0; t < 4; ++t) {
    requesters.emplace_back([&] {
      float in[4] = {1, 2, 3, 4};
      while (racing.load()) {
        if (!OneRacingRequest(s, a, in)) ++hung;
      }
    });
  }
  for (int round = 0; round < 25; ++round) {
    E(A().TRITONSERVER_ServerUnloadModel(s, "identity_fp32"));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK_EQ(E(A().TRITONSERVER_ServerLoadModel(s, "identity_fp32")),
             std::string());
    WaitLoadTail();
  }
  racing = false;
  for (auto& t : requesters) t.join();
  CHECK_EQ(hung.load(), 0);
  CHECK_EQ(E(A().TRITONSERVER_ServerStop(s)), std::string());
  E(A().TRITONSERVER_ServerDelete(s));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  CHECK(AllZero());
}
