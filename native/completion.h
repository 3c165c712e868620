// Triton callbacks → plain structs → one queue per server → one wake-up of
// the JS thread per burst.
#ifndef TRITON_NODE_COMPLETION_H_
#define TRITON_NODE_COMPLETION_H_

#include <napi.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "allocator.h"
#include "errors.h"
#include "request.h"
#include "triton_capi.h"

namespace triton_node {

struct RequestContext;
class ServerCore;

// One output of a response. Pointers point into the response, which stays
// alive until the JS thread has converted the outputs.
struct OutputRecord {
  const char* name = nullptr;
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  const int64_t* shape = nullptr;
  uint64_t dim_count = 0;
  const void* base = nullptr;
  size_t byte_size = 0;
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  OutputBuffer* buffer = nullptr;  // our buffer_userp (null: zero bytes)
};

struct ParameterRecord {
  const char* name = nullptr;
  TRITONSERVER_ParameterType type = TRITONSERVER_PARAMETER_STRING;
  const void* value = nullptr;
};

// One thing that happened to a request, made on a Triton thread. Pooled
// (vectors keep their capacity) so a steady stream allocates nothing.
struct Completion {
  enum Type : uint8_t { kResponse, kReleased, kTraceReleased };
  Type type = kResponse;
  RequestContext* ctx = nullptr;
  TRITONSERVER_InferenceResponse* response = nullptr;  // may be null
  uint32_t flags = 0;
  bool has_error = false;
  ErrorInfo error;
  const char* model = nullptr;
  int64_t version = -1;
  const char* id = nullptr;
  std::vector<OutputRecord> outputs;
  uint32_t output_count = 0;
  std::vector<ParameterRecord> parameters;
  uint32_t parameter_count = 0;
};

// Multi-producer (Triton threads), single-consumer (the JS thread).
class CompletionQueue {
 public:
  using WakeFn = void (*)(void* arg);
  CompletionQueue() = default;
  ~CompletionQueue();

  void SetWake(WakeFn fn, void* arg) {
    wake_ = fn;
    wake_arg_ = arg;
  }
  Completion* Acquire();
  // Queues `c`; wakes the JS thread only if no wake-up is pending. After
  // Close(), the item is disposed of here instead (response deleted).
  void Push(Completion* c);
  // Wakes the JS thread (for non-completion work). False once closed.
  bool Poke();
  // JS thread, first thing in a wake-up: later Push/Poke calls wake again.
  // Without it, work handed over between the start of a wake-up and its
  // TakeAll (a finished op, say) would find a wake-up "pending" that has
  // already looked, and wait for the next unrelated one.
  void BeginWake();
  // Takes everything queued (JS thread).
  void TakeAll(std::vector<Completion*>* out);
  void Recycle(std::vector<Completion*>* items);
  // No more wake-ups; later pushes are disposed of on the pushing thread.
  // Returns what was still queued.
  void Close(std::vector<Completion*>* leftover);
  bool closed();

 private:
  std::mutex mu_;
  std::vector<Completion*> queue_;
  std::vector<Completion*> free_;
  bool wake_pending_ = false;
  bool closed_ = false;
  WakeFn wake_ = nullptr;
  void* wake_arg_ = nullptr;
};

// JS-thread state of one server that makes the drain cheap: interned strings
// (model and output names), the event decoder, and scratch vectors that keep
// their capacity.
//
// Events cross to JS in a flat form (one Float64Array of numbers, one array
// of the values that must be JS objects, one ArrayBuffer holding every small
// output of the drain) and a JS function compiled once per server turns them
// into NativeEvent objects: building objects property by property through
// N-API costs ~2,000 instructions per property, a JS object literal a few.
//
// References are created and deleted on the JS thread only (Init, Release);
// a JsCache whose environment is gone just forgets them.
class JsCache {
 public:
  void Init(napi_env env);
  void Release(napi_env env);

  // Drain-time encoding (JS thread).
  void BeginDrain();
  // Adds one response/bare-FINAL event; on a conversion error, the event
  // becomes an error event. `prebuilt` events (timing) are whole objects.
  void AddEvent(napi_env env, Completion* c);
  void AddPrebuilt(napi_value event);
  bool empty() const { return events_ == 0; }
  // Hands the events to `on_events` in one call.
  void Deliver(napi_env env, napi_value on_events);

 private:
  void EncodeResponse(napi_env env, Completion* c);
  // Index of `s` in the interned string array, or -1 (value pushed to vals).
  double Intern(napi_env env, const char* s);

  napi_ref decoder_ = nullptr;
  napi_ref strings_ = nullptr;  // JS array of interned strings
  std::vector<std::string> interned_;
  std::vector<double> nums_;
  std::vector<napi_value> vals_;  // valid inside the drain's handle scope
  std::vector<uint8_t> slab_;
  uint32_t events_ = 0;
};

// Marks a frame of ours that may settle a request (Triton callbacks, response
// deletes). When a server's last request in flight settles, the core's
// keep-alive is released only as the outermost such frame on the thread
// returns: that may free the core, which inner frames still use.
class SettleScope {
 public:
  SettleScope() { ++depth_; }
  ~SettleScope();
  SettleScope(const SettleScope&) = delete;
  SettleScope& operator=(const SettleScope&) = delete;
  static void Defer(std::shared_ptr<ServerCore> core);

 private:
  static thread_local int depth_;
  static thread_local std::vector<std::shared_ptr<ServerCore>> dropped_;
};

// Triton callbacks (userp = RequestContext*). They never touch N-API.
void OnResponseComplete(TRITONSERVER_InferenceResponse* response,
                        const uint32_t flags, void* userp);
void OnRequestRelease(TRITONSERVER_InferenceRequest* request,
                      const uint32_t flags, void* userp);
void OnTraceActivity(TRITONSERVER_InferenceTrace* trace,
                     TRITONSERVER_InferenceTraceActivity activity,
                     uint64_t timestamp_ns, void* userp);
void OnTraceRelease(TRITONSERVER_InferenceTrace* trace, void* userp);

// Thrown instead of a Napi::Error when a call into JS failed without an
// exception object: JS cannot run (the environment is terminating).
struct JsUnavailable : std::exception {
  const char* what() const noexcept override { return "JS cannot run"; }
};

// JS thread: calls `fn` with undefined as `this`. Throws Napi::Error for a JS
// exception, JsUnavailable when JS cannot run; never a fatal error.
void CallJs(napi_env env, napi_value fn, size_t argc, const napi_value* argv);

// JS thread: converts everything queued for `core` into NativeEvents and
// hands them to its onEvents callback in one call.
void DrainCompletions(Napi::Env env, ServerCore* core);

// Disposes of a completion without JS (teardown): deletes its response.
void DisposeCompletion(Completion* c);

}  // namespace triton_node

#endif  // TRITON_NODE_COMPLETION_H_
