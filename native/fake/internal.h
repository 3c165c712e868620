// The fake engine's internal objects. The opaque TRITONSERVER_* handles of
// the C API are defined here as plain C++ structs; everything behind the C
// API lives in namespace fake.
//
// Lifetimes in one place:
//   * ServerCore is shared: the TRITONSERVER_Server handle, every Model and
//     the reaper hold it, so a request that outlives ServerDelete still has a
//     valid core to report to.
//   * Model (one loaded version) is shared by its version slot, by every
//     request object created for it, by every response, and by stream jobs
//     of decoupled backends. Its execution threads are joined by the reaper
//     once the model is unloading and no request object, response object or
//     stream job refers to it (as in Triton, where each holds the model).
#ifndef TRITON_NODE_FAKE_INTERNAL_H_
#define TRITON_NODE_FAKE_INTERNAL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <thread>
#include <utility>
#include <vector>

#include "../include/triton_capi.h"
#include "config/model_config.h"
#include "support/precondition.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace fake {

// ---- leak accounting (order is TRITONFAKE_LiveObjects' order) -------------
enum LiveKind {
  kLiveRequest = 0,
  kLiveResponse,
  kLiveError,
  kLiveMessage,
  kLiveAllocator,
  kLiveOutputBuffer,
  kLiveMetrics,
  kLiveParameter,
  kLiveTrace,
  kLiveServer,
  kLiveKindCount
};
void LiveAdd(LiveKind kind, int64_t delta);
// Backend work running on an engine thread (an execution, a stream thread):
// the library's static objects must outlive it (backends.cc).
void BackendWorkBegin();
void BackendWorkEnd();
// Runs a decoupled request's responses (`run`, which ends with its FINAL)
// on a detached thread of its own, as the real backends do, counted as an
// active inference until then; inline when `inline_mode` (or when no thread
// can be started: then on the calling instance thread).
struct ServerCore;
void RunStreamThread(ServerCore* core, bool inline_mode,
                     std::function<void()> run);

template <LiveKind K>
struct Counted {
  Counted() { LiveAdd(K, 1); }
  Counted(const Counted&) { LiveAdd(K, 1); }
  Counted& operator=(const Counted&) = default;
  ~Counted() { LiveAdd(K, -1); }
};

inline uint64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline uint64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* CodeString(TRITONSERVER_Error_Code code);
const char* DataTypeName(TRITONSERVER_DataType dt);
uint32_t DataTypeSize(TRITONSERVER_DataType dt);
std::string ShapeString(const int64_t* shape, size_t n);
inline std::string ShapeString(const std::vector<int64_t>& s) {
  return ShapeString(s.data(), s.size());
}

// Logging honouring the server's log options (stderr or the log file).
void LogInfo(const std::string& line);
void LogWarning(const std::string& line);
void LogError(const std::string& line);
void SetLogOptions(const TRITONSERVER_ServerOptions& options);
// TRITONSERVER_LogFormat of every log line from now on (process-wide).
void SetLogFormat(int format);

struct ServerCore;
struct Model;

}  // namespace fake

// ---- C API handles ----------------------------------------------------------

struct TRITONSERVER_Error : fake::Counted<fake::kLiveError>,
                            fake::Tracked<fake::Handle::kError> {
  TRITONSERVER_Error_Code code;
  std::string msg;
  TRITONSERVER_Error(TRITONSERVER_Error_Code c, std::string m)
      : code(c), msg(std::move(m)) {}
};

namespace fake {
inline TRITONSERVER_Error* Err(TRITONSERVER_Error_Code c, std::string m) {
  return new TRITONSERVER_Error(c, std::move(m));
}
inline TRITONSERVER_Error* ErrArg(std::string m) {
  return Err(TRITONSERVER_ERROR_INVALID_ARG, std::move(m));
}
}  // namespace fake

struct TRITONSERVER_Message : fake::Counted<fake::kLiveMessage>,
                              fake::Tracked<fake::Handle::kMessage> {
  std::string json;
};

struct TRITONSERVER_Metrics : fake::Counted<fake::kLiveMetrics>,
                              fake::Tracked<fake::Handle::kMetrics> {
  std::string text;
};

struct TRITONSERVER_Parameter : fake::Counted<fake::kLiveParameter>,
                                fake::Tracked<fake::Handle::kParameter> {
  std::string name;
  TRITONSERVER_ParameterType type = TRITONSERVER_PARAMETER_STRING;
  std::string str;  // STRING value or BYTES content
  int64_t i = 0;
  bool b = false;
  double d = 0;
  // Where ParameterValue-style getters point (value of the right type).
  const void* ValuePtr() const {
    switch (type) {
      case TRITONSERVER_PARAMETER_STRING:
        return str.c_str();
      case TRITONSERVER_PARAMETER_INT:
        return &i;
      case TRITONSERVER_PARAMETER_BOOL:
        return &b;
      case TRITONSERVER_PARAMETER_DOUBLE:
        return &d;
      default:
        return str.data();
    }
  }
};

struct TRITONSERVER_BufferAttributes
    : fake::Tracked<fake::Handle::kBufferAttributes> {
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  size_t byte_size = 0;
  // A copy of the 64-byte CUDA IPC handle, as Triton keeps one.
  unsigned char cuda_ipc_handle[64] = {};
  bool has_cuda_ipc_handle = false;
};

struct TRITONSERVER_ResponseAllocator
    : fake::Counted<fake::kLiveAllocator>,
      fake::Tracked<fake::Handle::kAllocator> {
  TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn = nullptr;
  TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn = nullptr;
  TRITONSERVER_ResponseAllocatorStartFn_t start_fn = nullptr;
  TRITONSERVER_ResponseAllocatorQueryFn_t query_fn = nullptr;
  TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn =
      nullptr;
  // In-flight requests that may still create responses with this allocator
  // and output buffers it handed out that are not yet released: while any
  // exist Triton still calls its functions, so it must not be deleted.
  std::atomic<int64_t> users{0};
};

struct TRITONSERVER_InferenceTrace : fake::Counted<fake::kLiveTrace>,
                                     fake::Tracked<fake::Handle::kTrace> {
  uint64_t id = 0;
  uint64_t parent_id = 0;
  TRITONSERVER_InferenceTraceLevel level = TRITONSERVER_TRACE_LEVEL_DISABLED;
  TRITONSERVER_InferenceTraceActivityFn_t activity_fn = nullptr;
  TRITONSERVER_InferenceTraceReleaseFn_t release_fn = nullptr;
  void* userp = nullptr;
  // Set while a request in flight uses the trace (from ServerInferAsync to
  // the trace's release): deleting it then is a use after free.
  std::atomic<bool> attached{false};
  // Both functions are called without a null check, as Triton does;
  // ServerInferAsync checks them before a request takes the trace.
  void Report(TRITONSERVER_InferenceTraceActivity a, uint64_t ns) {
    if ((level & TRITONSERVER_TRACE_LEVEL_TIMESTAMPS) != 0) {
      activity_fn(this, a, ns, userp);
    }
  }
  void Release() {
    attached.store(false);
    release_fn(this, userp);
  }
};

namespace fake {

struct InputData {
  const void* base;
  size_t size;
  TRITONSERVER_MemoryType type;
  int64_t type_id;
};

struct RequestInput {
  std::string name;
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> shape;  // as given (Triton's original shape)
  // Filled at submission: the shape the backend sees (Triton's shape with
  // the batch dimension; without it when the request's batch size is 0).
  std::vector<int64_t> batch_shape;
  std::vector<InputData> data;  // zero-byte appends are dropped, as Triton
  size_t total = 0;
};

// Triton's request states (InferenceRequest::State), named as Triton logs
// them; a request in PENDING or EXECUTING belongs to Triton.
enum class RequestState {
  kInitialized,
  kPending,
  kExecuting,
  kReleased,
  kFailedEnqueue
};
const char* RequestStateName(RequestState s);

// Compute durations of the steps of one ensemble request, summed (Triton's
// secondary statistics aggregator): the ensemble reports them as its own.
struct StepComputeTotals {
  std::mutex mu;
  uint64_t input_ns = 0, infer_ns = 0, output_ns = 0;
};

// What a response needs to reach the caller, copied out of the request so
// decoupled backends can keep answering after the request was released.
struct ResponseTarget {
  TRITONSERVER_ResponseAllocator* allocator = nullptr;
  void* alloc_userp = nullptr;
  TRITONSERVER_InferenceResponseCompleteFn_t response_fn = nullptr;
  void* response_userp = nullptr;
  std::string id;
};

}  // namespace fake

struct TRITONSERVER_InferenceRequest : fake::Counted<fake::kLiveRequest>,
                                       fake::Tracked<fake::Handle::kRequest> {
  std::shared_ptr<fake::Model> model;
  std::string id;
  uint32_t flags = 0;
  bool corr_is_string = false;
  uint64_t corr_id = 0;
  std::string corr_str;
  uint64_t priority = 0;
  uint64_t timeout_us = 0;
  // Triton keeps the inputs in a std::unordered_map and validates them in
  // its iteration order, which shows in which error a request with several
  // bad inputs gets: the same container with the same operations gives the
  // same order.
  std::unordered_map<std::string, fake::RequestInput> inputs;
  std::string raw_input_name;               // set by AddRawInput
  std::set<std::string> requested_outputs;  // a set in Triton too (sorted)
  std::vector<std::unique_ptr<TRITONSERVER_Parameter>> parameters;
  TRITONSERVER_InferenceRequestReleaseFn_t release_fn = nullptr;
  void* release_userp = nullptr;
  bool has_response_callback = false;
  fake::ResponseTarget target;
  // Set between ServerInferAsync and RELEASE_ALL; shared with stream jobs so
  // a cancel after the release still reaches a running decoupled backend.
  std::shared_ptr<std::atomic<bool>> cancelled =
      std::make_shared<std::atomic<bool>>(false);
  std::atomic<fake::RequestState> state{fake::RequestState::kInitialized};
  // Triton makes the request's response factory at the start of every
  // ServerInferAsync (even one that then fails): from then on Cancel and
  // IsCancelled work.
  std::atomic<bool> has_factory{false};
  // Filled at submission.
  TRITONSERVER_InferenceTrace* trace = nullptr;
  uint64_t request_start_ns = 0;
  uint64_t queue_start_ns = 0;
  uint64_t batch_size = 1;     // batch elements (1 for non-batching models)
  uint64_t request_batch = 0;  // Triton's BatchSize(): 0 without a batch dim
  uint64_t deadline_ns = 0;    // 0 = none (queue policy timeout)
  // The outputs the backend is asked for, in Triton's (sorted) order.
  std::vector<const fake::TensorConfig*> outputs_to_send;
  // A step of an ensemble: what its inputs' data lives in (kept until the
  // request is deleted), and where its compute durations are summed too.
  std::vector<std::shared_ptr<const void>> input_owners;
  std::shared_ptr<fake::StepComputeTotals> step_totals;

  fake::RequestInput* FindInput(const std::string& n) {
    auto it = inputs.find(n);
    return it == inputs.end() ? nullptr : &it->second;
  }
  bool InFlight() const {
    fake::RequestState s = state.load();
    return s == fake::RequestState::kPending ||
           s == fake::RequestState::kExecuting;
  }
  std::string Prefix() const {
    return "[request id: " + (id.empty() ? std::string("<id_unknown>") : id) +
           "] ";
  }
};

namespace fake {
struct ResponseOutput {
  const TensorConfig* config = nullptr;  // name and datatype
  std::vector<int64_t> shape;
  void* buffer = nullptr;
  void* buffer_userp = nullptr;
  size_t byte_size = 0;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  bool owned = false;  // release_fn is owed for this buffer
};
}  // namespace fake

struct TRITONSERVER_InferenceResponse : fake::Counted<fake::kLiveResponse>,
                                        fake::Tracked<fake::Handle::kResponse> {
  std::shared_ptr<fake::Model> model;
  std::string id;
  TRITONSERVER_Error* error = nullptr;  // owned by the response
  std::vector<fake::ResponseOutput> outputs;
  bool identity_params = false;  // param0..param3 as the identity backend
  // After those: what an echo_request model echoes, an ensemble's
  // sequence parameters, a stand-in's marker.
  std::vector<std::unique_ptr<TRITONSERVER_Parameter>> extra_params;
  TRITONSERVER_ResponseAllocator* allocator = nullptr;
  // The trace of a one-to-one request is released when its response goes.
  TRITONSERVER_InferenceTrace* trace = nullptr;
  ~TRITONSERVER_InferenceResponse();
};

struct TRITONSERVER_MetricFamily;
struct TRITONSERVER_Metric;
struct TRITONSERVER_MetricArgs : fake::Tracked<fake::Handle::kMetricArgs> {
  bool histogram = false;
  std::vector<double> buckets;
};

struct TRITONSERVER_ServerOptions
    : fake::Tracked<fake::Handle::kServerOptions> {
  std::string server_id = "triton";
  std::vector<std::string> repo_paths;
  TRITONSERVER_ModelControlMode mode = TRITONSERVER_MODEL_CONTROL_NONE;
  std::vector<std::string> startup_models;
  bool strict_config = true;
  bool exit_on_error = true;
  bool strict_readiness = true;
  unsigned exit_timeout_s = 30;
  std::string backend_dir;
  std::string model_config_name;
  std::string log_file;
  bool log_info = true, log_warn = true, log_error = true;
  int log_verbose = 0;
  bool metrics = true;
  uint64_t pinned_pool = 268435456;
  TRITONSERVER_RateLimitMode rate_limit_mode = TRITONSERVER_RATE_LIMIT_OFF;
  // device (-1 global) -> resource -> count; a repeated resource keeps the
  // smaller count, as Triton does.
  std::map<int, std::map<std::string, size_t>> rate_limit_resources;
  // policy -> setting -> value
  std::map<std::string, std::map<std::string, std::string>> host_policies;
  // cache name -> its JSON config
  std::map<std::string, std::string> caches;
  // backend ("" for every backend) -> setting -> value
  std::map<std::string, std::map<std::string, std::string>> backend_config;
  std::string cache_dir = "/opt/tritonserver/caches";
};

namespace fake {

// ---- statistics (statistics.cc) -------------------------------------------
struct Duration {
  uint64_t count = 0, ns = 0;
  void Add(uint64_t d) {
    ++count;
    ns += d;
  }
};
struct BatchStat {
  Duration input, infer, output;
};
struct ResponseStat {
  Duration compute_infer, compute_output, success, fail, empty_response, cancel;
};
struct ModelStats {
  std::mutex mu;
  uint64_t last_inference_ms = 0;
  uint64_t inference_count = 0;
  uint64_t execution_count = 0;
  Duration success, fail, queue, compute_input, compute_infer, compute_output;
  std::map<uint64_t, BatchStat> batch;
  std::map<uint64_t, ResponseStat> response;
  // Prometheus-only.
  uint64_t fail_backend = 0, fail_rejected = 0, fail_canceled = 0,
           fail_other = 0;
  uint64_t input_bytes = 0;
  std::atomic<int64_t> pending{0};
};
std::string StatsEntryJson(const std::string& name, int64_t version,
                           ModelStats* stats);

// ---- models and scheduling (scheduler.cc, backends.cc) ---------------------
enum class BackendKind {
  kIdentity,
  kRepeat,
  kSquare,
  kTextStream,
  kEnsemble,
  kStandIn,
  kOnnxRuntime
};

struct EnsemblePlan;
struct OnnxModel;

struct StreamJob;

// One sequence of a sequence-batching model (sequence_batcher.cc).
struct Sequence {
  bool running = false;  // a request of it is queued or executing
  std::deque<TRITONSERVER_InferenceRequest*> waiting;  // behind that one
  uint64_t last_us = 0;                                // its last request
  // Implicit state, one per sequence_batching.state: its current value.
  std::vector<std::vector<char>> states;
};
struct SequenceStore {
  std::mutex mu;
  std::map<std::string, Sequence> by_key;  // SequenceKey()
};

struct Model {
  std::shared_ptr<ServerCore> core;
  std::weak_ptr<Model> self;
  std::string name;
  int64_t version = 0;
  ModelConfig config;
  BackendKind backend = BackendKind::kIdentity;
  uint64_t execute_delay_ms = 0;  // identity
  // identity, config parameter echo_request "true": the fake's own test
  // aid (no Triton backend does this) answering with what the request
  // carried: its parameters as "request.<name>", its correlation id,
  // priority and timeout.
  bool echo_request = false;
  uint64_t square_delay_ns = 0;  // square CUSTOM_INFER_DELAY_NS
  uint64_t word_delay_ns = 0;    // fake_text_stream word_delay_ms
  // Ensembles: the steps (ensemble_scheduler.cc). An ensemble has no
  // instance threads; busy_instances counts its requests in flight.
  std::shared_ptr<const EnsemblePlan> ensemble;
  // Stand-ins (stand_ins.cc): "<backend>:<mode>", and whether it echoes.
  std::string stand_in;
  bool stand_in_echoes = false;
  // onnxruntime models (onnxruntime_backend.cc): the version's session.
  std::shared_ptr<OnnxModel> onnx;
  // Sequence batching: the sequences in flight.
  SequenceStore sequences;
  double load_seconds = 0;
  ModelStats stats;

  // References that keep the version UNLOADING (and ServerStop waiting):
  // request objects, response objects not yet deleted, and decoupled
  // stream jobs.
  std::atomic<int64_t> refs{0};
  std::atomic<bool> unloading{false};
  std::atomic<bool> finalize_queued{false};
  // Until then its instance threads count as still returning from the
  // load's warm-up (server.cc, QueueFinalize); 0 once that cannot matter.
  std::atomic<uint64_t> load_tail_until_ns{0};

  // Scheduler queue (instance threads wait on cv).
  std::mutex mu;
  std::condition_variable cv;
  std::deque<TRITONSERVER_InferenceRequest*> queue;
  bool stop_threads = false;
  std::vector<std::thread> threads;  // one per instance
  int busy_instances = 0;            // guarded by mu

  ~Model();
  void Start();        // spawns the instance threads
  void JoinThreads();  // called by the reaper only
  TRITONSERVER_Error* Enqueue(TRITONSERVER_InferenceRequest* r);
  void ExecuteInline(TRITONSERVER_InferenceRequest* r);
  void AddRef() { refs.fetch_add(1, std::memory_order_relaxed); }
  void Release();  // may queue finalization
  bool queue_policy_active() const {
    const auto& qp = config.dynamic_batching.default_queue_policy;
    return config.dynamic_batching.present && qp.present &&
           (qp.default_timeout_microseconds > 0 || qp.allow_timeout_override);
  }

  void InstanceLoop(size_t instance);
  void Execute(std::vector<TRITONSERVER_InferenceRequest*>& batch,
               size_t instance, bool inline_mode);
};

// A decoupled stream handed from the execute thread to its own stream
// thread (backends.cc).
struct StreamJob {
  std::shared_ptr<Model> model;
  ResponseTarget target;
  std::shared_ptr<std::atomic<bool>> cancelled;
  std::vector<int32_t> in;
  std::vector<uint32_t> delay;
  int32_t square_n = 0;
  std::vector<const TensorConfig*> outputs;  // requested, config order
};
void RunStream(StreamJob* job);

// Backend pieces (backends.cc).
void IdentityExecute(Model* m, std::vector<TRITONSERVER_InferenceRequest*>& b,
                     bool inline_mode);
void RepeatExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                   bool inline_mode);
void SquareExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                   bool inline_mode);
// The fake's own text backend (text_stream.cc).
void TextStreamExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                       bool inline_mode);
// A new response for the request behind `t` (the allocator's start function
// runs); it holds `model` until deleted.
TRITONSERVER_InferenceResponse* NewResponse(const std::shared_ptr<Model>& model,
                                            const ResponseTarget& t);
// Asks t's allocator for one output (preferring CPU/0, as the real backends
// and Triton's ensembles do) and records it on the response, failed or not.
// A null buffer for a non-empty output is not an error here (Triton lets
// whoever copies into it fail).
TRITONSERVER_Error* AllocateOutput(TRITONSERVER_InferenceResponse* resp,
                                   const ResponseTarget& t,
                                   const TensorConfig* cfg,
                                   std::vector<int64_t> shape, size_t bytes,
                                   ResponseOutput** out);
// Sends one error response (FINAL) for a request without releasing it.
void SendErrorResponse(TRITONSERVER_InferenceRequest* r,
                       TRITONSERVER_Error* err, bool call_start);
// Completes a request with one error response (FINAL) and its release.
void FailRequest(Model* m, TRITONSERVER_InferenceRequest* r,
                 TRITONSERVER_Error* err, bool call_start);
void ReleaseRequest(TRITONSERVER_InferenceRequest* r);

// ---- requests (inference.cc)
// Triton's checks at submission (InferenceRequest::Normalize); fills the
// request's batch size and each input's batch_shape.
TRITONSERVER_Error* ValidateRequest(TRITONSERVER_InferenceRequest* r, Model* m);
// Runs a validated request: PENDING, then queued on its model (or run at
// once with synchronous callbacks). On an error the caller keeps it.
TRITONSERVER_Error* RunRequest(TRITONSERVER_InferenceRequest* r,
                               TRITONSERVER_InferenceTrace* trace);

// ---- stand-in backends (stand_ins.cc), opt-in: TRITONFAKE_SetStandIns
// The stand-in configured for `backend` (its name, else "*"): true with
// *mode ("zeros" or "echo") when there is one.
bool StandInFor(const std::string& backend, std::string* mode);
// The configured stand-ins as a JSON object ({"onnxruntime":"zeros"}), or
// "" when none.
std::string StandInsJson();
// TRITONFAKE_STAND_INS, read when a server is created.
void ReadStandInsFromEnvironment();
// Answers one request of a stand-in model: each output of its configured
// data type and shape (zeros, or a compatible input's copy when it echoes),
// and the parameter triton_node_stand_in = "<backend>:<mode>".
void StandInRespond(Model* m, TRITONSERVER_InferenceRequest* r,
                    TRITONSERVER_InferenceResponse* resp);

// ---- the onnxruntime backend (onnxruntime_backend.cc)
namespace ort {
struct Library;
}
// Where ONNX Runtime is: the library triton-node's lib/ found (backend
// config onnxruntime / fake-onnxruntime-library) and what it searched
// (fake-onnxruntime-searched), both "" when not given;
// TRITON_NODE_ONNXRUNTIME_LIB wins over them.
struct OnnxRuntimeSource {
  std::string library;
  std::string searched;
};
// Opens ONNX Runtime for an onnxruntime model: "" with *lib set, else why
// it cannot (naming what was tried and how to install it).
std::string OnnxRuntimeLibraryProblem(const OnnxRuntimeSource& source,
                                      const ort::Library** lib);
struct OnnxLoadOptions {
  bool auto_complete = false;      // Triton's strict model config is off
  int default_max_batch_size = 4;  // backend config default-max-batch-size
};
// Loads version `version` of the model in `dir` as the real backend does:
// its session, the config auto-completed (options.auto_complete) and
// checked against the model. "" with *out set, else the error (*code;
// *session_leaked when the real backend would leak the failed instance's
// session, see OnnxBackendLoadFailed).
std::string OnnxRuntimeLoad(const ort::Library* lib, const std::string& dir,
                            int64_t version, const OnnxLoadOptions& options,
                            ModelConfig* cfg, std::shared_ptr<OnnxModel>* out,
                            TRITONSERVER_Error_Code* code,
                            bool* session_leaked);
// Real Triton r25.07's onnxruntime backend cannot stop its ONNX Runtime
// loader once a model instance failed its checks after making its session
// (the session is never released): every later server of the process fails
// to start the backend again ("OnnxLoader singleton already initialized";
// a missing model file or a failed auto-complete does not do it). The fake
// remembers the server where that happened (OnnxBackendLoadFailed) and
// refuses onnxruntime loads on servers after it (once it is stopped).
void OnnxBackendLoadFailed(ServerCore* core);
std::string OnnxBackendRestartProblem(ServerCore* core,
                                      TRITONSERVER_Error_Code* code);
// One run for the whole batch; each request's outputs (or the run's error)
// on its response.
void OnnxRuntimeRespond(Model* m,
                        const std::vector<TRITONSERVER_InferenceRequest*>& b,
                        TRITONSERVER_InferenceResponse** resps);

// ---- the sequence batcher (sequence_batcher.cc)
// A request's sequence: "u:<id>" or "s:<id>".
std::string SequenceKey(const TRITONSERVER_InferenceRequest* r);
// What the fake cannot do (UNSUPPORTED) or Triton refuses (INVALID_ARG,
// its initial-state checks) in a sequence_batching config; "" when fine.
std::string SequenceConfigProblem(const ModelConfig& cfg,
                                  TRITONSERVER_Error_Code* code);
// At submission: Triton's checks (START on a new sequence; an idle one was
// released), then whether r runs now or waits behind its sequence's
// running request (*run_now false: SequenceStepDone queues it later).
TRITONSERVER_Error* SequenceAdmit(Model* m, TRITONSERVER_InferenceRequest* r,
                                  bool* run_now);
// The running request's implicit state; `reading` (its inputs are being
// made): reset to the initial values when the request starts a sequence.
std::vector<std::vector<char>>* SequenceStates(
    Model* m, const TRITONSERVER_InferenceRequest* r, bool reading);
// After a request of sequence `key` executed: forgets the sequence on END
// and queues its next request.
void SequenceStepDone(Model* m, const std::string& key, bool end);

// ---- ensembles (ensemble_scheduler.cc)
// How an ensemble runs, built once from its validated config.
std::shared_ptr<const EnsemblePlan> MakeEnsemblePlan(const ModelConfig& cfg);
// Starts an ensemble request (PENDING, its model's scheduler took it); runs
// on the submitting thread, as Triton's ensemble scheduler does.
void EnsembleStart(const std::shared_ptr<Model>& m,
                   TRITONSERVER_InferenceRequest* r);
// Whether Triton's process-wide host memory manager exists (server.cc):
// made by the creation of a server when missing, torn down by the deletion
// of any server. Triton's ensembles allocate their intermediate tensors
// from it.
bool HostMemoryManagerExists();
// Exit order (server.cc): registers, once per owner ("server", or a
// backend's name), an exit handler that marks Triton's singletons destroyed;
// a server stop or delete after it aborts (the real library crashes).
void RegisterExitSingletons(const std::string& owner);
void CheckExitSingletons(const char* call);
void DeliverResponse(const ResponseTarget& t, TRITONSERVER_InferenceResponse* r,
                     uint32_t flags);

// ---- CUDA (cuda_loader.cc)
// --------------------------------------------------- Copies between any two
// memory types; returns an error message on failure
// ("" on success). `what` names the tensor in the message.
std::string CopyBuffer(void* dst, TRITONSERVER_MemoryType dst_type,
                       int64_t dst_id, const void* src,
                       TRITONSERVER_MemoryType src_type, int64_t src_id,
                       size_t bytes, const std::string& what);

// ---- server (server.cc, model_repository.cc)
// ---------------------------------
enum class VersionState { kReady, kUnloading, kUnavailable };

struct VersionSlot {
  VersionState state = VersionState::kUnavailable;
  std::string reason;
  std::shared_ptr<Model> model;
};

struct ModelEntry {
  std::string dir;  // model directory in a repository
  // In-memory model ("file:" load parameters): the temporary directory its
  // files were written to. Owned by the entry: removed when the model is
  // unloaded, replaced by another load, or the server stops.
  std::string temp_dir;
  std::vector<int64_t> version_dirs;  // as found at the last load attempt
  std::map<int64_t, VersionSlot> versions;
  std::string config_json;  // of the loaded config, to detect reloads
  // An ensemble in Triton's dependency graph (from its first load until it
  // is unloaded itself): the models its steps name. Unloading one of them
  // unloads the ensemble; loading it again loads the ensemble again.
  std::set<std::string> composing;
  // Loaded by name (not only as an ensemble's step), since its last unload.
  bool explicitly_loaded = false;
  // The "config" an ensemble was loaded with, if any: it loads with it again.
  std::string override_config;
  bool has_override_config = false;
};

struct ServerCore {
  std::weak_ptr<ServerCore> self;
  TRITONSERVER_ServerOptions options;
  std::mutex mu;  // guards models, stopping
  std::condition_variable cv;
  std::map<std::string, ModelEntry> models;
  std::atomic<bool> stopping{false};
  // Inference Triton still works on: requests between ServerInferAsync and
  // their release, and decoupled streams until their FINAL. Deleting the
  // server while any exist crashes Triton's backend threads.
  std::atomic<int64_t> active_inferences{0};
  std::atomic<bool> sync_callbacks{false};
  std::mutex load_mu;             // serializes loads and unloads
  std::set<std::string> loading;  // ensembles being loaded (load_mu)
  uint64_t created_ns = 0;
  // Set when the server failed before its model repository existed and
  // exit-on-error was off: Triton hands such a server back, not live.
  bool init_failed = false;

  // Model lookup for a request or a metadata query: NOT_FOUND in Triton's
  // words when no READY version matches.
  TRITONSERVER_Error* FindReady(const std::string& name, int64_t version,
                                std::shared_ptr<Model>* out);
  // FindReady that also takes a reference (Model::AddRef) on success, for
  // a request that will hold the model; Model::Release gives it back.
  TRITONSERVER_Error* FindReadyAndHold(const std::string& name, int64_t version,
                                       std::shared_ptr<Model>* out);
  // Caller holds mu.
  TRITONSERVER_Error* FindReadyLocked(const std::string& name, int64_t version,
                                      std::shared_ptr<Model>* out);
  // `files` (may be null): an in-memory model's files, relative path →
  // bytes; they are written to a temporary model directory that replaces
  // the repository's (Triton requires `override_json` with them).
  TRITONSERVER_Error* Load(
      const std::string& name, const std::string* override_json,
      const std::vector<std::pair<std::string, std::string>>* files = nullptr);
  // With `dependents`, the models an ensemble's steps brought in go too
  // (those not loaded by name, which no other ensemble uses).
  TRITONSERVER_Error* Unload(const std::string& name, bool dependents);
  // Load's work, under load_mu (ensembles load their steps' models with it).
  TRITONSERVER_Error* LoadModel(
      const std::string& name, const std::string* override_json,
      const std::vector<std::pair<std::string, std::string>>* files);
  // An ensemble's steps, as Triton resolves them at load (ensemble_models.cc):
  // loads the steps' models that are new or changed, then checks them and
  // the ensemble against them. "" when the ensemble can load (and
  // cfg->decoupled set as Triton sets it), else why not (INVALID_ARG).
  // Caller holds load_mu, not mu.
  std::string PrepareEnsemble(ModelConfig* cfg);
  // After `name` loaded: the ensembles that wait for it load again; after
  // it was unloaded: the ensembles that use it are unloaded (and wait).
  // Caller holds load_mu, not mu.
  void ReloadWaitingEnsembles(const std::string& name);
  void UnloadEnsemblesUsing(const std::string& name);
  void UnloadUnusedSteps(const std::set<std::string>& steps);
  void UnloadAll();
  std::string IndexJson(bool ready_only);
  // Strict readiness: every model ever loaded has each version READY or
  // unloaded (a version that failed to load, or is loading, is not).
  bool AllModelsReady();
  void Finalized(Model* m);  // reaper: the model's threads are gone
  bool AllIdle();            // no model still referenced
};

void ScanRepository(ServerCore* core);
// How long after a load returns its model must not be destroyed (Triton
// r25.07's instance thread may still be returning from the warm-up).
constexpr uint64_t kLoadTailNs = 50'000'000;
void QueueFinalize(std::shared_ptr<Model> m);
// Models whose destruction cannot race their load (Triton releases them
// itself, long after): a reload's previous versions, ServerNew's own stop.
void ForgetLoadTails(ModelEntry* entry);
std::string PrometheusText(ServerCore* core);
std::string CustomMetricsText();

extern std::atomic<bool> g_sync_callbacks;

}  // namespace fake

struct TRITONSERVER_Server : fake::Counted<fake::kLiveServer>,
                             fake::Tracked<fake::Handle::kServer> {
  std::shared_ptr<fake::ServerCore> core;
};

namespace fake {
// rate_limiter.cc: why `cfg` cannot load under the server's rate limiter
// ("" when it can). Caller holds core.mu.
std::string RateLimiterProblem(const ServerCore& core, const std::string& name,
                               const ModelConfig& cfg);
}  // namespace fake

// A model call on a server that failed to initialize: Triton has no model
// repository manager then and dereferences a null one.
#define FAKE_INITIALIZED(server)                                           \
  FAKE_EXPECT(!(server)->core->init_failed,                                \
              "this server failed to initialize (exit-on-error was off); " \
              "the real library has no model repository then and crashes " \
              "on a null pointer")

#endif  // TRITON_NODE_FAKE_INTERNAL_H_
