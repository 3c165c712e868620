// What Triton's callbacks report, as plain records in one queue per server,
// with one wake-up of the JS thread per burst.
#ifndef TRITON_NODE_REQUEST_COMPLETION_QUEUE_H_
#define TRITON_NODE_REQUEST_COMPLETION_QUEUE_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "memory/buffer_pool.h"
#include "triton/errors.h"
#include "triton_capi.h"

namespace triton_node {

struct RequestContext;

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

// Disposes of a completion without JS (teardown): deletes its response.
void DisposeCompletion(Completion* c);

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_COMPLETION_QUEUE_H_
