// Helpers shared by the fake engine's engine tests: the C API table
// (dlopen of TRITON_FAKE_LIB, default build/fake/libtritonserver.so), a
// temporary model repository, a server on it, and a probe that records the
// callbacks of a request.
#ifndef TRITON_NODE_FAKE_TEST_ENGINE_SUPPORT_H_
#define TRITON_NODE_FAKE_TEST_ENGINE_SUPPORT_H_

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../../include/triton_capi.h"
#include "harness.h"

namespace fake_engine_test {

struct Api {
#define FAKE_TEST_FIELD(ret, name, params) ret(*name) params = nullptr;
  TRITON_CAPI_REQUIRED(FAKE_TEST_FIELD)
  TRITON_CAPI_OPTIONAL(FAKE_TEST_FIELD)
#undef FAKE_TEST_FIELD
  TRITONFAKE_LiveObjectsFn_t live = nullptr;
  TRITONFAKE_SetSyncCallbacksFn_t set_sync = nullptr;
  bool ok = false;
};

inline const Api& A() {
  static Api api = [] {
    Api a;
    const char* path = std::getenv("TRITON_FAKE_LIB");
    void* h = ::dlopen(path ? path : "build/fake/libtritonserver.so",
                       RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::cerr << "cannot open the fake engine: " << ::dlerror() << "\n";
      return a;
    }
#define FAKE_TEST_LOAD(ret, name, params) \
  a.name = reinterpret_cast<ret(*) params>(::dlsym(h, #name));
    TRITON_CAPI_REQUIRED(FAKE_TEST_LOAD)
    TRITON_CAPI_OPTIONAL(FAKE_TEST_LOAD)
#undef FAKE_TEST_LOAD
    a.live = reinterpret_cast<TRITONFAKE_LiveObjectsFn_t>(
        ::dlsym(h, "TRITONFAKE_LiveObjects"));
    a.set_sync = reinterpret_cast<TRITONFAKE_SetSyncCallbacksFn_t>(
        ::dlsym(h, "TRITONFAKE_SetSyncCallbacks"));
    a.ok = a.live != nullptr && a.TRITONSERVER_ServerNew != nullptr;
    return a;
  }();
  return api;
}

// Takes an error: returns "" for success, else "<code>: <message>".
inline std::string E(TRITONSERVER_Error* e) {
  if (e == nullptr) return "";
  std::string s = std::to_string(A().TRITONSERVER_ErrorCode(e)) + ": " +
                  A().TRITONSERVER_ErrorMessage(e);
  A().TRITONSERVER_ErrorDelete(e);
  return s;
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The models of the test repository: name, config.pbtxt, and whether it
// has a version folder "1" (no_version has none).
struct TestModel {
  const char* name;
  const char* config;
  bool has_version_1;
};

inline const TestModel kTestModels[] = {
    {"identity_fp32",
     "name: \"identity_fp32\" backend: \"identity\" max_batch_size: 8\n"
     "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "instance_group [ { count: 1 kind: KIND_CPU } ]\n",
     true},
    {"identity_dyn",
     "name: \"identity_dyn\" backend: \"identity\" max_batch_size: 8\n"
     "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "dynamic_batching { max_queue_delay_microseconds: 2000 }\n"
     "instance_group [ { count: 1 kind: KIND_CPU } ]\n"
     "parameters { key: \"execute_delay_ms\" value: { string_value: \"5\" } "
     "}\n",
     true},
    {"identity_slow",
     "name: \"identity_slow\" backend: \"identity\" max_batch_size: 0\n"
     "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "parameters { key: \"execute_delay_ms\" value: { string_value: \"100\" "
     "} }\n",
     true},
    {"repeat_int32",
     "name: \"repeat_int32\" backend: \"repeat\" max_batch_size: 0\n"
     "model_transaction_policy { decoupled: true }\n"
     "input [ { name: \"IN\" data_type: TYPE_INT32 dims: [ -1 ] },\n"
     "        { name: \"DELAY\" data_type: TYPE_UINT32 dims: [ -1 ] },\n"
     "        { name: \"WAIT\" data_type: TYPE_UINT32 dims: [ 1 ] } ]\n"
     "output [ { name: \"OUT\" data_type: TYPE_INT32 dims: [ 1 ] },\n"
     "         { name: \"IDX\" data_type: TYPE_UINT32 dims: [ 1 ] } ]\n",
     true},
    {"square_int32",
     "name: \"square_int32\" backend: \"square\" max_batch_size: 0\n"
     "model_transaction_policy { decoupled: true }\n"
     "input [ { name: \"IN\" data_type: TYPE_INT32 dims: [ 1 ] } ]\n"
     "output [ { name: \"OUT\" data_type: TYPE_INT32 dims: [ 1 ] } ]\n",
     true},
    {"identity_fixed",
     "name: \"identity_fixed\" backend: \"identity\" max_batch_size: 4\n"
     "input [ { name: \"INPUT0\" data_type: TYPE_INT32 dims: [ 2, 3 ] } ]\n"
     "output [ { name: \"OUTPUT0\" data_type: TYPE_INT32 dims: [ 2, 3 ] } "
     "]\n",
     true},
    {"identity_optional",
     "name: \"identity_optional\" backend: \"identity\" max_batch_size: 0\n"
     "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ -1 ] },\n"
     "        { name: \"INPUT1\" data_type: TYPE_FP32 dims: [ -1 ] "
     "optional: true } ]\n"
     "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ -1 ] },\n"
     "         { name: \"OUTPUT1\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n",
     true},
    {"unknown_backend",
     "name: \"unknown_backend\" backend: \"no_such_backend\"\n"
     "max_batch_size: 0\n"
     "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n",
     true},
    {"no_version",
     "name: \"no_version\" backend: \"identity\" max_batch_size: 0\n"
     "input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n"
     "output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ -1 ] } ]\n",
     false},
};

inline std::string MakeRepo() {
  char tmpl[] = "/tmp/fake-engine-test-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
  for (const TestModel& m : kTestModels) {
    const std::string dir = root + "/" + m.name;
    ::mkdir(dir.c_str(), 0755);
    WriteFile(dir + "/config.pbtxt", m.config);
    if (m.has_version_1) ::mkdir((dir + "/1").c_str(), 0755);
  }
  return root;
}

// A model is not unloaded within 50 ms of its load (the fake aborts, as
// Triton r25.07 can crash then: core/engine.cc, QueueFinalize): wait that out.
inline void WaitLoadTail() {
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
}

// After a stop that timed out, a server may be deleted only once Triton has
// destroyed every one of its models (the fake aborts otherwise, as Triton
// crashes: api/server.cc, ServerDelete). Nothing in the C API tells when; the
// fake's reaper takes microseconds once the last holder of a model is gone.
inline void WaitModelsDestroyed() {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

inline TRITONSERVER_Server* NewServer(const std::string& repo,
                                      unsigned exit_timeout = 5) {
  TRITONSERVER_ServerOptions* o = nullptr;
  E(A().TRITONSERVER_ServerOptionsNew(&o));
  E(A().TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, repo.c_str()));
  E(A().TRITONSERVER_ServerOptionsSetModelControlMode(
      o, TRITONSERVER_MODEL_CONTROL_EXPLICIT));
  E(A().TRITONSERVER_ServerOptionsSetExitTimeout(o, exit_timeout));
  E(A().TRITONSERVER_ServerOptionsSetLogInfo(o, false));
  E(A().TRITONSERVER_ServerOptionsSetLogError(o, false));
  TRITONSERVER_Server* s = nullptr;
  std::string err = E(A().TRITONSERVER_ServerNew(&s, o));
  CHECK_EQ(err, std::string());
  E(A().TRITONSERVER_ServerOptionsDelete(o));
  for (const char* m : {"identity_fp32", "identity_dyn", "identity_slow",
                        "repeat_int32", "square_int32"}) {
    CHECK_EQ(E(A().TRITONSERVER_ServerLoadModel(s, m)), std::string());
  }
  WaitLoadTail();
  return s;
}

// Records every callback of one request, in order.
struct Probe {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;
  int finals = 0, releases = 0, responses = 0;
  std::vector<TRITONSERVER_InferenceResponse*> kept;
  std::vector<std::vector<float>> outputs;
  std::vector<std::string> errors;
  void Add(const std::string& e) {
    std::lock_guard<std::mutex> l(mu);
    events.push_back(e);
  }
  bool WaitDone(int ms = 5000) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::milliseconds(ms),
                       [&] { return finals >= 1 && releases >= 1; });
  }
};

inline TRITONSERVER_Error* AllocFn(TRITONSERVER_ResponseAllocator*,
                                   const char* name, size_t size,
                                   TRITONSERVER_MemoryType, int64_t,
                                   void* userp, void** buffer,
                                   void** buffer_userp,
                                   TRITONSERVER_MemoryType* type, int64_t* id) {
  auto* p = static_cast<Probe*>(userp);
  p->Add(std::string("alloc:") + name);
  *buffer = size == 0 ? nullptr : std::malloc(size);
  *buffer_userp = p;
  *type = TRITONSERVER_MEMORY_CPU;
  *id = 0;
  return nullptr;
}
inline TRITONSERVER_Error* ReleaseFn(TRITONSERVER_ResponseAllocator*,
                                     void* buffer, void* buffer_userp, size_t,
                                     TRITONSERVER_MemoryType, int64_t) {
  static_cast<Probe*>(buffer_userp)->Add("buffer-release");
  std::free(buffer);
  return nullptr;
}
inline TRITONSERVER_Error* StartFn(TRITONSERVER_ResponseAllocator*,
                                   void* userp) {
  static_cast<Probe*>(userp)->Add("start");
  return nullptr;
}
inline void ResponseFn(TRITONSERVER_InferenceResponse* resp,
                       const uint32_t flags, void* userp) {
  auto* p = static_cast<Probe*>(userp);
  std::lock_guard<std::mutex> l(p->mu);
  p->events.push_back(
      std::string("response") + (resp ? "" : "(null)") +
      ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) ? ":FINAL" : ""));
  if (resp != nullptr) {
    ++p->responses;
    // A fresh error on every call, the caller's to delete (as Triton).
    TRITONSERVER_Error* err = A().TRITONSERVER_InferenceResponseError(resp);
    p->errors.push_back(err ? A().TRITONSERVER_ErrorMessage(err) : "");
    if (err != nullptr) A().TRITONSERVER_ErrorDelete(err);
    uint32_t n = 0;
    A().TRITONSERVER_InferenceResponseOutputCount(resp, &n);
    std::vector<float> values;
    for (uint32_t i = 0; i < n; ++i) {
      const char* name;
      TRITONSERVER_DataType dt;
      const int64_t* shape;
      uint64_t dims;
      const void* base;
      size_t size;
      TRITONSERVER_MemoryType mt;
      int64_t id;
      void* up;
      A().TRITONSERVER_InferenceResponseOutput(
          resp, i, &name, &dt, &shape, &dims, &base, &size, &mt, &id, &up);
      if (dt == TRITONSERVER_TYPE_FP32) {
        const float* f = static_cast<const float*>(base);
        values.assign(f, f + size / 4);
      } else if (dt == TRITONSERVER_TYPE_INT32 && size == 4) {
        values.push_back(
            static_cast<float>(*static_cast<const int32_t*>(base)));
      }
    }
    p->outputs.push_back(values);
    p->kept.push_back(resp);
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) ++p->finals;
  p->cv.notify_all();
}
inline void ReleaseCb(TRITONSERVER_InferenceRequest*, const uint32_t flags,
                      void* userp) {
  auto* p = static_cast<Probe*>(userp);
  std::lock_guard<std::mutex> l(p->mu);
  p->events.push_back(flags == TRITONSERVER_REQUEST_RELEASE_ALL ? "release:ALL"
                                                                : "release:?");
  ++p->releases;
  p->cv.notify_all();
}

inline TRITONSERVER_ResponseAllocator* NewAllocator() {
  TRITONSERVER_ResponseAllocator* a = nullptr;
  E(A().TRITONSERVER_ResponseAllocatorNew(&a, AllocFn, ReleaseFn, StartFn));
  return a;
}

inline TRITONSERVER_InferenceRequest* IdentityRequest(
    TRITONSERVER_Server* s, const char* model, const float* data, int64_t n,
    TRITONSERVER_ResponseAllocator* a, Probe* p, bool batched = true) {
  TRITONSERVER_InferenceRequest* r = nullptr;
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestNew(&r, s, model, -1)),
           std::string());
  if (r == nullptr) return nullptr;
  int64_t shape[2] = {1, n};
  E(A().TRITONSERVER_InferenceRequestAddInput(
      r, "INPUT0", TRITONSERVER_TYPE_FP32, batched ? shape : shape + 1,
      batched ? 2 : 1));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, "INPUT0", data, n * 4, TRITONSERVER_MEMORY_CPU, 0));
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(r, ReleaseCb, p));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(r, a, p, ResponseFn,
                                                         p));
  return r;
}

inline void DeleteResponses(Probe* p) {
  for (auto* r : p->kept) E(A().TRITONSERVER_InferenceResponseDelete(r));
  p->kept.clear();
}

inline bool AllZero() {
  uint64_t c[TRITONFAKE_LIVE_OBJECT_KINDS] = {};
  for (int i = 0; i < 100; ++i) {
    A().live(c, TRITONFAKE_LIVE_OBJECT_KINDS);
    bool zero = true;
    for (auto v : c) zero &= v == 0;
    if (zero) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto v : c) std::cerr << v << " ";
  std::cerr << "\n";
  return false;
}

}  // namespace fake_engine_test

#endif  // TRITON_NODE_FAKE_TEST_ENGINE_SUPPORT_H_
