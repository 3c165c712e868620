// bench_driver: the C++ baseline of triton-node's benchmarks.
//
// Runs the same closed-loop workloads as `triton-node bench`, straight on the
// C API of whichever libtritonserver.so it is given (the fake engine or a real
// Triton), and prints one JSON line with throughput and latency percentiles.
//
// Two ways to keep the loop going, both measured:
//   * hop (default): Triton's callback hands each response to one consumer
//     thread (a queue + condition variable), which reads it, deletes it and
//     resubmits. That is the work a binding must do to reach the JS thread.
//   * --resubmit-in-callback: the response callback resubmits on Triton's own
//     thread; the fastest loop the C API allows.
//
// Entry points are resolved with dlsym through the X-macro list of
// native/include/triton_capi.h; nothing links against the library.

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "triton_capi.h"

namespace {

using Clock = std::chrono::steady_clock;

// ---- The function table ----------------------------------------------------

struct Api {
#define TRITON_BENCH_DECLARE_FIELD(ret, name, params) \
  ret(*name) params = nullptr;
  TRITON_CAPI_REQUIRED(TRITON_BENCH_DECLARE_FIELD)
#undef TRITON_BENCH_DECLARE_FIELD
};

Api api;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "bench_driver: %s\n", message.c_str());
  std::exit(1);
}

// Takes ownership of `error` (the caller's to delete, per the C API).
void Check(TRITONSERVER_Error* error, const char* what) {
  if (error == nullptr) return;
  std::string message = std::string(what) + ": " +
                        api.TRITONSERVER_ErrorCodeString(error) + ": " +
                        api.TRITONSERVER_ErrorMessage(error);
  api.TRITONSERVER_ErrorDelete(error);
  Die(message);
}

void LoadApi(const std::string& path) {
  // RTLD_LOCAL: the library's symbols stay out of the global namespace, as
  // in the addon; everything goes through the table.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) Die("cannot dlopen '" + path + "': " + dlerror());
  std::string missing;
#define TRITON_BENCH_RESOLVE(ret, name, params)                     \
  api.name = reinterpret_cast<ret(*) params>(dlsym(handle, #name)); \
  if (api.name == nullptr)                                          \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
  TRITON_CAPI_REQUIRED(TRITON_BENCH_RESOLVE)
#undef TRITON_BENCH_RESOLVE
  if (!missing.empty()) {
    Die("'" + path + "' is not a Triton server library; missing: " + missing);
  }
  uint32_t major = 0, minor = 0;
  Check(api.TRITONSERVER_ApiVersion(&major, &minor), "ApiVersion");
  if (major != TRITON_NODE_API_MAJOR || minor < TRITON_NODE_API_MIN_MINOR) {
    Die("'" + path + "' has API " + std::to_string(major) + "." +
        std::to_string(minor) + ", need " +
        std::to_string(TRITON_NODE_API_MAJOR) + "." +
        std::to_string(TRITON_NODE_API_MIN_MINOR) + " or newer");
  }
  // The handle is never closed: the library lives as long as the process.
}

// ---- Options ---------------------------------------------------------------

struct Options {
  std::string library;
  std::string repository;
  std::string backend_dir;
  std::string model;
  std::string bench_case = "infer";
  std::string input_name;  // default per case: INPUT0 (infer), IN (stream)
  std::string datatype = "FP32";
  std::vector<int64_t> shape = {1, 4};
  int concurrency = 1;
  double duration_s = 5;
  double warmup_s = 0.5;
  int64_t responses = 10000;
  bool resubmit_in_callback = false;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(
      stderr,
      "bench_driver: %s\n"
      "usage: bench_driver --library PATH --repository DIR --model NAME\n"
      "  [--backend-dir DIR] [--case infer|stream] [--concurrency N]\n"
      "  [--duration SECONDS] [--warmup SECONDS] [--shape 1,4]\n"
      "  [--datatype FP32] [--input NAME] [--responses N]\n"
      "  [--resubmit-in-callback]\n",
      problem.c_str());
  std::exit(2);
}

double ParseNumber(const std::string& flag, const std::string& text,
                   double min) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= min)) {
    Usage("expected a number >= " + std::to_string(min) + " for " + flag +
          " but received '" + text + "'");
  }
  return value;
}

std::vector<int64_t> ParseShape(const std::string& text) {
  std::vector<int64_t> shape;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    long long dim = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || dim < 0) {
      Usage(
          "expected a comma-separated list of dimensions >= 0 for --shape "
          "but received '" +
          text + "'");
    }
    shape.push_back(dim);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shape;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--resubmit-in-callback") {
      o.resubmit_in_callback = true;
      continue;
    }
    if (flag == "--help" || flag == "-h") Usage("help");
    if (i + 1 >= argc) Usage("missing value for " + flag);
    std::string value = argv[++i];
    if (flag == "--library") {
      o.library = value;
    } else if (flag == "--repository") {
      o.repository = value;
    } else if (flag == "--backend-dir") {
      o.backend_dir = value;
    } else if (flag == "--model") {
      o.model = value;
    } else if (flag == "--case") {
      if (value != "infer" && value != "stream") {
        Usage("expected 'infer' or 'stream' for --case but received '" + value +
              "'");
      }
      o.bench_case = value;
    } else if (flag == "--input") {
      o.input_name = value;
    } else if (flag == "--datatype") {
      o.datatype = value;
    } else if (flag == "--shape") {
      o.shape = ParseShape(value);
    } else if (flag == "--concurrency") {
      o.concurrency = static_cast<int>(ParseNumber(flag, value, 1));
    } else if (flag == "--duration") {
      o.duration_s = ParseNumber(flag, value, 0.001);
    } else if (flag == "--warmup") {
      o.warmup_s = ParseNumber(flag, value, 0);
    } else if (flag == "--responses") {
      o.responses = static_cast<int64_t>(ParseNumber(flag, value, 0));
    } else {
      Usage("unknown option '" + flag + "'");
    }
  }
  if (o.library.empty()) Usage("--library is required");
  if (o.repository.empty()) Usage("--repository is required");
  if (o.model.empty()) Usage("--model is required");
  if (o.input_name.empty()) {
    o.input_name = o.bench_case == "stream" ? "IN" : "INPUT0";
  }
  return o;
}

// ---- Output allocator: buffers reused per power-of-two size class ----------

// Fresh memory costs page faults on first touch (PERF-NOTES: ~185 ms for 64
// MiB against ~4 ms for a warm copy), so released buffers go back to a free
// list of their size class and the next response of that size reuses them.
// Called on Triton's threads (alloc) and on whichever thread deletes the
// response (release), hence the mutex.
class BufferPool {
 public:
  ~BufferPool() {
    for (auto& list : free_)
      for (void* p : list) std::free(p);
  }

  void* Take(size_t byte_size) {
    int cls = SizeClass(byte_size);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_[cls].empty()) {
        void* p = free_[cls].back();
        free_[cls].pop_back();
        return p;
      }
    }
    return std::malloc(size_t{1} << cls);
  }

  void Give(void* buffer, size_t byte_size) {
    std::lock_guard<std::mutex> lock(mu_);
    free_[SizeClass(byte_size)].push_back(buffer);
  }

 private:
  static int SizeClass(size_t byte_size) {
    int cls = 6;  // 64 bytes minimum
    while ((size_t{1} << cls) < byte_size) ++cls;
    return cls;
  }

  std::mutex mu_;
  std::vector<void*> free_[64];
};

BufferPool pool;

TRITONSERVER_Error* AllocFn(TRITONSERVER_ResponseAllocator*, const char*,
                            size_t byte_size, TRITONSERVER_MemoryType, int64_t,
                            void*, void** buffer, void** buffer_userp,
                            TRITONSERVER_MemoryType* actual_memory_type,
                            int64_t* actual_memory_type_id) {
  // Always CPU memory, whatever the backend prefers: the benchmark compares
  // host paths, as the addon's default placement does.
  *actual_memory_type = TRITONSERVER_MEMORY_CPU;
  *actual_memory_type_id = 0;
  *buffer_userp = nullptr;
  *buffer = byte_size == 0 ? nullptr : pool.Take(byte_size);
  if (byte_size != 0 && *buffer == nullptr) {
    return api.TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL,
                                     "bench_driver: out of memory");
  }
  return nullptr;
}

TRITONSERVER_Error* ReleaseFn(TRITONSERVER_ResponseAllocator*, void* buffer,
                              void*, size_t byte_size, TRITONSERVER_MemoryType,
                              int64_t) {
  if (buffer != nullptr) pool.Give(buffer, byte_size);
  return nullptr;
}

// ---- The closed loop -------------------------------------------------------

struct Bench;

// One of the `concurrency` requests in flight. A slot is resubmitted when
// the FINAL response of its current request has been consumed; the request
// object itself is deleted independently, when Triton releases it.
struct Slot {
  Bench* bench = nullptr;
  Clock::time_point submitted;
  int64_t responses = 0;  // data responses of the current request
};

// What a Triton thread hands to the consumer thread in hop mode.
struct Completion {
  Slot* slot;
  TRITONSERVER_InferenceResponse* response;  // may be null (bare FINAL)
  bool final;
};

struct Bench {
  Options options;
  TRITONSERVER_Server* server = nullptr;
  TRITONSERVER_ResponseAllocator* allocator = nullptr;
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<char> input;  // shared by all requests; read-only
  int32_t stream_count = 0;
  std::vector<Slot> slots;

  // Measurement window; completions outside it are not counted.
  Clock::time_point window_start, window_end;
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> unreleased{0};  // submitted, not yet RELEASE_ALL
  std::atomic<int> inflight{0};        // slots waiting for their FINAL

  // Results, written by the consuming thread (one at a time: the consumer
  // thread in hop mode; Triton's callback thread otherwise, under mu).
  std::mutex result_mu;
  std::vector<uint64_t> latencies_ns;
  int64_t completed = 0;
  int64_t responses_in_window = 0;
  int64_t errors = 0;
  std::string first_error;

  // Hop mode: completions queued by Triton's threads for the consumer.
  std::mutex queue_mu;
  std::condition_variable queue_cv;
  std::vector<Completion> queue;
  bool consumer_waiting = false;
};

void Submit(Slot* slot);

void RequestReleased(TRITONSERVER_InferenceRequest* request, uint32_t flags,
                     void* userp) {
  // Ownership returns to us only with RELEASE_ALL; only then delete.
  if ((flags & TRITONSERVER_REQUEST_RELEASE_ALL) == 0) return;
  Bench* bench = static_cast<Bench*>(userp);
  Check(api.TRITONSERVER_InferenceRequestDelete(request), "RequestDelete");
  bench->unreleased.fetch_sub(1, std::memory_order_acq_rel);
}

// Reads one response (checks its error, touches its outputs as a consumer
// would) and deletes it, which hands its buffers back to the pool.
void ConsumeResponse(Bench* bench, Slot* slot,
                     TRITONSERVER_InferenceResponse* response) {
  if (response == nullptr) return;
  TRITONSERVER_Error* error = api.TRITONSERVER_InferenceResponseError(response);
  if (error != nullptr) {
    // The response owns its error: read it, do not delete it.
    std::lock_guard<std::mutex> lock(bench->result_mu);
    if (bench->errors++ == 0) {
      bench->first_error =
          std::string(api.TRITONSERVER_ErrorCodeString(error)) + ": " +
          api.TRITONSERVER_ErrorMessage(error);
    }
  } else {
    uint32_t count = 0;
    Check(api.TRITONSERVER_InferenceResponseOutputCount(response, &count),
          "ResponseOutputCount");
    for (uint32_t i = 0; i < count; ++i) {
      const char* name;
      TRITONSERVER_DataType datatype;
      const int64_t* shape;
      uint64_t dims;
      const void* base;
      size_t byte_size;
      TRITONSERVER_MemoryType memory_type;
      int64_t memory_type_id;
      void* userp;
      Check(api.TRITONSERVER_InferenceResponseOutput(
                response, i, &name, &datatype, &shape, &dims, &base, &byte_size,
                &memory_type, &memory_type_id, &userp),
            "ResponseOutput");
    }
    ++slot->responses;
  }
  Check(api.TRITONSERVER_InferenceResponseDelete(response), "ResponseDelete");
}

// The FINAL of a slot's request was consumed: record it and go again.
void FinishRequest(Bench* bench, Slot* slot, Clock::time_point now) {
  if (now >= bench->window_start && now < bench->window_end) {
    std::lock_guard<std::mutex> lock(bench->result_mu);
    bench->latencies_ns.push_back(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now -
                                                             slot->submitted)
            .count()));
    ++bench->completed;
    bench->responses_in_window += slot->responses;
  }
  if (bench->stopping.load(std::memory_order_acquire) ||
      now >= bench->window_end) {
    bench->inflight.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  Submit(slot);
}

// Callbacks may run synchronously inside ServerInferAsync (a cache hit, the
// fake's sync mode). Resubmitting from there would recurse, so a callback
// that finds itself inside Submit on the same thread defers the slot to the
// outermost Submit, which runs them in a loop.
thread_local int submit_depth = 0;
thread_local std::vector<Slot*>* deferred = nullptr;

void ResponseComplete(TRITONSERVER_InferenceResponse* response, uint32_t flags,
                      void* userp) {
  // Runs on a Triton thread (or inside ServerInferAsync); owns `response`.
  Slot* slot = static_cast<Slot*>(userp);
  Bench* bench = slot->bench;
  bool final = (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
  if (bench->options.resubmit_in_callback) {
    ConsumeResponse(bench, slot, response);
    if (!final) return;
    if (submit_depth > 0 && deferred != nullptr) {
      deferred->push_back(slot);
      return;
    }
    FinishRequest(bench, slot, Clock::now());
    return;
  }
  bool wake;
  {
    std::lock_guard<std::mutex> lock(bench->queue_mu);
    bench->queue.push_back(Completion{slot, response, final});
    wake = bench->consumer_waiting;
    bench->consumer_waiting = false;
  }
  // Wake the consumer only if it sleeps; a busy consumer drains the queue
  // on its next pass anyway.
  if (wake) bench->queue_cv.notify_one();
}

void SubmitOne(Slot* slot) {
  Bench* bench = slot->bench;
  const Options& o = bench->options;
  TRITONSERVER_InferenceRequest* request = nullptr;
  Check(api.TRITONSERVER_InferenceRequestNew(&request, bench->server,
                                             o.model.c_str(), -1),
        "InferenceRequestNew");
  Check(api.TRITONSERVER_InferenceRequestSetReleaseCallback(
            request, RequestReleased, bench),
        "SetReleaseCallback");
  Check(api.TRITONSERVER_InferenceRequestSetResponseCallback(
            request, bench->allocator, nullptr, ResponseComplete, slot),
        "SetResponseCallback");
  if (o.bench_case == "stream") {
    int64_t shape[1] = {1};
    Check(api.TRITONSERVER_InferenceRequestAddInput(
              request, o.input_name.c_str(), TRITONSERVER_TYPE_INT32, shape, 1),
          "AddInput");
    Check(api.TRITONSERVER_InferenceRequestAppendInputData(
              request, o.input_name.c_str(), &bench->stream_count,
              sizeof(bench->stream_count), TRITONSERVER_MEMORY_CPU, 0),
          "AppendInputData");
  } else {
    Check(api.TRITONSERVER_InferenceRequestAddInput(
              request, o.input_name.c_str(), bench->datatype, o.shape.data(),
              o.shape.size()),
          "AddInput");
    Check(api.TRITONSERVER_InferenceRequestAppendInputData(
              request, o.input_name.c_str(), bench->input.data(),
              bench->input.size(), TRITONSERVER_MEMORY_CPU, 0),
          "AppendInputData");
  }
  slot->responses = 0;
  slot->submitted = Clock::now();
  bench->unreleased.fetch_add(1, std::memory_order_acq_rel);
  TRITONSERVER_Error* error =
      api.TRITONSERVER_ServerInferAsync(bench->server, request, nullptr);
  if (error != nullptr) {
    // Refused: the request is still ours and no callback will come.
    bench->unreleased.fetch_sub(1, std::memory_order_acq_rel);
    api.TRITONSERVER_InferenceRequestDelete(request);
    Check(error, "ServerInferAsync");
  }
}

void Submit(Slot* slot) {
  if (submit_depth > 0) {
    SubmitOne(slot);  // only reached from the deferred loop below
    return;
  }
  std::vector<Slot*> local;
  deferred = &local;
  ++submit_depth;
  SubmitOne(slot);
  while (!local.empty()) {
    Slot* next = local.back();
    local.pop_back();
    // FinishRequest may call Submit again: it lands in SubmitOne above, and
    // synchronous completions keep going into `local`.
    FinishRequest(next->bench, next, Clock::now());
  }
  --submit_depth;
  deferred = nullptr;
}

// Hop mode: the consumer thread drains every queued completion per wake-up.
void ConsumeLoop(Bench* bench) {
  std::vector<Completion> batch;
  while (bench->inflight.load(std::memory_order_acquire) > 0) {
    {
      std::unique_lock<std::mutex> lock(bench->queue_mu);
      while (bench->queue.empty()) {
        bench->consumer_waiting = true;
        // A timeout only as a safety net; completions notify.
        bench->queue_cv.wait_for(lock, std::chrono::milliseconds(100));
        if (bench->inflight.load(std::memory_order_acquire) == 0) return;
      }
      batch.swap(bench->queue);
    }
    Clock::time_point now = Clock::now();
    for (const Completion& c : batch) {
      ConsumeResponse(bench, c.slot, c.response);
      if (c.final) FinishRequest(bench, c.slot, now);
    }
    batch.clear();
  }
}

// ---- Statistics ------------------------------------------------------------

struct StatsSnapshot {
  uint64_t success_count = 0, queue_ns = 0, compute_input_ns = 0,
           compute_infer_ns = 0, compute_output_ns = 0, execution_count = 0,
           inference_count = 0;
  // Decoupled models: sums over every response index of response_stats.
  uint64_t response_count = 0, response_infer_ns = 0, response_output_ns = 0;
};

// Sums `"<section>":{"count":N,"ns":M}` over every occurrence in
// [from, to) of the JSON text.
void SumSections(const std::string& json, size_t from, size_t to,
                 const char* section, uint64_t* count, uint64_t* ns) {
  std::string needle = std::string("\"") + section + "\"";
  for (size_t pos = json.find(needle, from);
       pos != std::string::npos && pos < to;
       pos = json.find(needle, pos + needle.size())) {
    size_t count_at = json.find("\"count\"", pos);
    size_t ns_at = json.find("\"ns\"", pos);
    if (count_at == std::string::npos || ns_at == std::string::npos) return;
    *count +=
        std::strtoull(json.c_str() + json.find(':', count_at) + 1, nullptr, 10);
    *ns += std::strtoull(json.c_str() + json.find(':', ns_at) + 1, nullptr, 10);
  }
}

// Finds `"key":` after `from` and parses the unsigned number that follows.
uint64_t NumberAfter(const std::string& json, size_t from, const char* key,
                     size_t* at = nullptr) {
  std::string needle = std::string("\"") + key + "\"";
  size_t pos = json.find(needle, from);
  if (pos == std::string::npos) return 0;
  pos = json.find(':', pos + needle.size());
  if (pos == std::string::npos) return 0;
  ++pos;
  while (pos < json.size() && (json[pos] == ' ' || json[pos] == '"')) ++pos;
  if (at != nullptr) *at = pos;
  return std::strtoull(json.c_str() + pos, nullptr, 10);
}

// `{"count":N,"ns":M}` of inference_stats.<section>.
uint64_t SectionNs(const std::string& json, size_t stats_at,
                   const char* section, uint64_t* count = nullptr) {
  std::string needle = std::string("\"") + section + "\"";
  size_t pos = json.find(needle, stats_at);
  if (pos == std::string::npos) return 0;
  if (count != nullptr) *count = NumberAfter(json, pos, "count");
  return NumberAfter(json, pos, "ns");
}

StatsSnapshot ReadStats(Bench* bench) {
  TRITONSERVER_Message* message = nullptr;
  Check(api.TRITONSERVER_ServerModelStatistics(
            bench->server, bench->options.model.c_str(), -1, &message),
        "ServerModelStatistics");
  const char* base = nullptr;
  size_t size = 0;
  Check(api.TRITONSERVER_MessageSerializeToJson(message, &base, &size),
        "MessageSerializeToJson");
  std::string json(base, size);
  Check(api.TRITONSERVER_MessageDelete(message), "MessageDelete");
  StatsSnapshot s;
  s.inference_count = NumberAfter(json, 0, "inference_count");
  s.execution_count = NumberAfter(json, 0, "execution_count");
  size_t stats_at = json.find("\"inference_stats\"");
  if (stats_at == std::string::npos) return s;
  SectionNs(json, stats_at, "success", &s.success_count);
  s.queue_ns = SectionNs(json, stats_at, "queue");
  s.compute_input_ns = SectionNs(json, stats_at, "compute_input");
  s.compute_infer_ns = SectionNs(json, stats_at, "compute_infer");
  s.compute_output_ns = SectionNs(json, stats_at, "compute_output");
  size_t responses_at = json.find("\"response_stats\"");
  if (responses_at != std::string::npos) {
    size_t end = json.find("\"batch_stats\"", responses_at);
    if (end == std::string::npos) end = json.size();
    uint64_t ignored = 0;
    SumSections(json, responses_at, end, "success", &s.response_count,
                &ignored);
    ignored = 0;
    SumSections(json, responses_at, end, "compute_infer", &ignored,
                &s.response_infer_ns);
    ignored = 0;
    SumSections(json, responses_at, end, "compute_output", &ignored,
                &s.response_output_ns);
  }
  return s;
}

// ---- Server ----------------------------------------------------------------

void StartServer(Bench* bench) {
  const Options& o = bench->options;
  TRITONSERVER_ServerOptions* options = nullptr;
  Check(api.TRITONSERVER_ServerOptionsNew(&options), "ServerOptionsNew");
  Check(api.TRITONSERVER_ServerOptionsSetModelRepositoryPath(
            options, o.repository.c_str()),
        "SetModelRepositoryPath");
  Check(api.TRITONSERVER_ServerOptionsSetModelControlMode(
            options, TRITONSERVER_MODEL_CONTROL_EXPLICIT),
        "SetModelControlMode");
  // Never left unset: the real library does not initialise it (CAPI-NOTES).
  Check(api.TRITONSERVER_ServerOptionsSetModelLoadRetryCount(options, 0),
        "SetModelLoadRetryCount");
  if (!o.backend_dir.empty()) {
    Check(api.TRITONSERVER_ServerOptionsSetBackendDirectory(
              options, o.backend_dir.c_str()),
          "SetBackendDirectory");
  }
  Check(api.TRITONSERVER_ServerOptionsSetLogInfo(options, false), "SetLogInfo");
  Check(api.TRITONSERVER_ServerOptionsSetLogWarn(options, false), "SetLogWarn");
  Check(api.TRITONSERVER_ServerOptionsSetExitTimeout(options, 5),
        "SetExitTimeout");
  Check(api.TRITONSERVER_ServerNew(&bench->server, options), "ServerNew");
  Check(api.TRITONSERVER_ServerOptionsDelete(options), "ServerOptionsDelete");
  Check(api.TRITONSERVER_ServerLoadModel(bench->server, o.model.c_str()),
        ("loading model '" + o.model + "'").c_str());
  bool ready = false;
  Check(api.TRITONSERVER_ServerModelIsReady(bench->server, o.model.c_str(), -1,
                                            &ready),
        "ServerModelIsReady");
  if (!ready) Die("model '" + o.model + "' loaded but is not ready");
  Check(api.TRITONSERVER_ResponseAllocatorNew(&bench->allocator, AllocFn,
                                              ReleaseFn, nullptr),
        "ResponseAllocatorNew");
}

void PrepareInput(Bench* bench) {
  const Options& o = bench->options;
  if (o.bench_case == "stream") {
    if (o.responses > INT32_MAX) Die("--responses must fit in INT32");
    bench->stream_count = static_cast<int32_t>(o.responses);
    return;
  }
  bench->datatype = api.TRITONSERVER_StringToDataType(o.datatype.c_str());
  uint32_t element = api.TRITONSERVER_DataTypeByteSize(bench->datatype);
  if (bench->datatype == TRITONSERVER_TYPE_INVALID || element == 0) {
    Die("expected a fixed-size Triton datatype (FP32, INT32, ...) for "
        "--datatype but received '" +
        o.datatype + "'");
  }
  size_t count = 1;
  for (int64_t d : o.shape) count *= static_cast<size_t>(d);
  bench->input.resize(count * element);
  // Touched once here, so page faults are not part of any request.
  for (size_t i = 0; i < bench->input.size(); ++i) {
    bench->input[i] = static_cast<char>(i * 7);
  }
}

// Nearest-rank percentile of sorted samples.
double PercentileUs(const std::vector<uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(
      std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return static_cast<double>(sorted[std::min(rank, sorted.size()) - 1]) / 1e3;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  auto bench = std::make_unique<Bench>();
  bench->options = ParseOptions(argc, argv);
  const Options& o = bench->options;
  LoadApi(o.library);
  StartServer(bench.get());
  PrepareInput(bench.get());

  bench->slots.resize(o.concurrency);
  for (Slot& slot : bench->slots) slot.bench = bench.get();

  StatsSnapshot before = ReadStats(bench.get());
  Clock::time_point start = Clock::now();
  bench->window_start = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(o.warmup_s));
  bench->window_end =
      bench->window_start + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(o.duration_s));

  bench->inflight.store(o.concurrency);
  // Hop mode: the consumer runs on its own thread while this one submits
  // the first round, as a JS thread would hand requests to the addon.
  std::thread consumer;
  if (!o.resubmit_in_callback) {
    consumer = std::thread(ConsumeLoop, bench.get());
  }
  for (Slot& slot : bench->slots) Submit(&slot);
  // Slots stop resubmitting by themselves once the window has ended.
  std::this_thread::sleep_until(bench->window_end);
  bench->stopping.store(true, std::memory_order_release);
  if (consumer.joinable()) {
    consumer.join();
  }
  // Every slot sees its FINAL, then every request its RELEASE_ALL, before
  // the server goes: a live request would hold ServerStop for its timeout.
  while (bench->inflight.load(std::memory_order_acquire) > 0 ||
         bench->unreleased.load(std::memory_order_acquire) > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  StatsSnapshot after = ReadStats(bench.get());

  std::vector<uint64_t> sorted = bench->latencies_ns;
  std::sort(sorted.begin(), sorted.end());
  double mean_us = 0;
  for (uint64_t v : sorted) mean_us += static_cast<double>(v) / 1e3;
  if (!sorted.empty()) mean_us /= static_cast<double>(sorted.size());

  uint64_t requests = after.success_count - before.success_count;
  auto per_request_us = [&](uint64_t ns_before, uint64_t ns_after) {
    return requests == 0 ? 0.0
                         : static_cast<double>(ns_after - ns_before) / 1e3 /
                               static_cast<double>(requests);
  };
  uint64_t input_bytes = o.bench_case == "stream" ? 4 : bench->input.size();

  std::string json = "{";
  char buf[512];
  json += "\"case\":" + JsonString(o.bench_case);
  json += ",\"model\":" + JsonString(o.model);
  json += std::string(",\"mode\":") +
          (o.resubmit_in_callback ? "\"callback\"" : "\"hop\"");
  std::snprintf(buf, sizeof buf,
                ",\"concurrency\":%d,\"inputBytes\":%" PRIu64
                ",\"requests\":%" PRId64 ",\"durationS\":%.3f",
                o.concurrency, input_bytes, bench->completed, o.duration_s);
  json += buf;
  std::snprintf(buf, sizeof buf, ",\"throughput\":%.1f",
                static_cast<double>(bench->completed) / o.duration_s);
  json += buf;
  std::snprintf(
      buf, sizeof buf,
      ",\"latencyUs\":{\"p50\":%.2f,\"p90\":%.2f,\"p99\":%.2f,\"max\":%.2f,"
      "\"mean\":%.2f}",
      PercentileUs(sorted, 50), PercentileUs(sorted, 90),
      PercentileUs(sorted, 99), PercentileUs(sorted, 100), mean_us);
  json += buf;
  if (o.bench_case == "stream") {
    std::snprintf(
        buf, sizeof buf, ",\"responsesPerSec\":%.1f",
        static_cast<double>(bench->responses_in_window) / o.duration_s);
    json += buf;
  }
  std::snprintf(
      buf, sizeof buf,
      ",\"server\":{\"requests\":%" PRIu64 ",\"executions\":%" PRIu64
      ",\"queueUs\":%.2f,\"computeInputUs\":%.2f,\"computeInferUs\":%.2f,"
      "\"computeOutputUs\":%.2f}",
      requests, after.execution_count - before.execution_count,
      per_request_us(before.queue_ns, after.queue_ns),
      per_request_us(before.compute_input_ns, after.compute_input_ns),
      per_request_us(before.compute_infer_ns, after.compute_infer_ns),
      per_request_us(before.compute_output_ns, after.compute_output_ns));
  json += buf;
  uint64_t responses = after.response_count - before.response_count;
  if (responses > 0) {
    std::snprintf(buf, sizeof buf,
                  ",\"serverResponses\":{\"responses\":%" PRIu64
                  ",\"computeInferUs\":%.3f,\"computeOutputUs\":%.3f}",
                  responses,
                  static_cast<double>(after.response_infer_ns -
                                      before.response_infer_ns) /
                      1e3 / static_cast<double>(responses),
                  static_cast<double>(after.response_output_ns -
                                      before.response_output_ns) /
                      1e3 / static_cast<double>(responses));
    json += buf;
  }
  std::snprintf(buf, sizeof buf, ",\"errors\":%" PRId64, bench->errors);
  json += buf;
  if (bench->errors > 0)
    json += ",\"firstError\":" + JsonString(bench->first_error);
  json += "}";
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);

  Check(api.TRITONSERVER_ServerStop(bench->server), "ServerStop");
  Check(api.TRITONSERVER_ServerDelete(bench->server), "ServerDelete");
  Check(api.TRITONSERVER_ResponseAllocatorDelete(bench->allocator),
        "ResponseAllocatorDelete");
  return bench->errors > 0 ? 3 : 0;
}
