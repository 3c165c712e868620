// One submitted request's state, and the pool that reuses them.
#ifndef TRITON_NODE_REQUEST_CONTEXT_H_
#define TRITON_NODE_REQUEST_CONTEXT_H_

#include <napi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "memory/buffer_use.h"
#include "memory/placements.h"
#include "request/lifecycle.h"
#include "request/trace_log.h"
#include "triton_capi.h"

namespace triton_node {

class CompletionQueue;
class InflightLedger;
class KeptRequestPool;
struct KeptRequest;

// Pooled per server and reused, so steady-state submission allocates
// nothing here. Created and recycled on the JS thread; between submit and
// recycle, Triton's callbacks read the placements (never written while
// submitted) and write Triton's half of the lifecycle (under the ledger's
// lock) and the trace timestamps.
struct RequestContext {
  // The server's; both outlive every context (the ledger keeps the server
  // alive while a request is in flight).
  InflightLedger* ledger = nullptr;
  CompletionQueue* queue = nullptr;
  uint32_t index = 0;  // position in the pool
  uint64_t generation = 0;
  uint64_t token = 0;
  TRITONSERVER_InferenceRequest* request = nullptr;
  // The server's kept requests (request/kept_requests.h), and the record of
  // this context's request when it is to be kept at its release (a plain
  // request). Set on the JS thread while building; the ledger keeps it (on
  // a Triton thread) and clears it, else recycling discards it.
  KeptRequestPool* kept_requests = nullptr;
  KeptRequest* kept_record = nullptr;

  // The response allocator's `userp`.
  OutputPlacements placements;

  // JS owners of HostBuffer/CudaBuffer inputs and of destinations (dropped
  // at recycle, on the JS thread).
  std::vector<napi_ref> refs;
  // Holds on ArrayBuffer memory (memory/js_memory.h) and copies of
  // resizable inputs: Triton's pointers into them stay valid until recycle.
  std::vector<std::shared_ptr<void>> holds;
  // Buffers among them whose dispose() must wait for this request (released
  // with the references).
  std::vector<BufferUse*> buffer_uses;
  // Reused for GPU inputs: Triton copies an attributes object on append, so
  // one object serves every input, as long as no field of one input can
  // reach the next. The C API can set a CUDA IPC handle but never clear it
  // (and copies 64 bytes from the pointer it is given, null included), so
  // `attributes` never carries a handle and `ipc_attributes` gets its
  // handle overwritten before each use.
  TRITONSERVER_BufferAttributes* attributes = nullptr;
  TRITONSERVER_BufferAttributes* ipc_attributes = nullptr;

  // The trace of a request that asked for timing; its timestamps are
  // written by the trace's activity callback and read on the JS thread
  // after the trace release was queued.
  TRITONSERVER_InferenceTrace* trace = nullptr;
  uint64_t timestamps[7] = {0, 0, 0, 0, 0, 0, 0};
  // Every trace of the request (request/trace_log.h): its own, and the
  // children Triton spawns for ensemble steps with the same callbacks.
  TraceLog traces;

  // Where the request is in its life (each half's threads: there).
  RequestLifecycle lifecycle;
};

// The contexts of one server. JS thread only, except that callbacks use the
// contexts they were given.
class ContextPool {
 public:
  ContextPool(InflightLedger* ledger, CompletionQueue* queue,
              KeptRequestPool* kept_requests)
      : ledger_(ledger), queue_(queue), kept_requests_(kept_requests) {}
  // Deletes the contexts Triton is done with; one it may still call back
  // for belongs to Triton and is leaked (only the process-exit path gets
  // here with one).
  ~ContextPool();
  ContextPool(const ContextPool&) = delete;
  ContextPool& operator=(const ContextPool&) = delete;

  // A context with a fresh token, not yet active. Throws when too many
  // requests are in flight.
  RequestContext* Acquire(Napi::Env env);
  // Marks an acquired context active (submitted).
  void Activate(RequestContext* ctx);
  // Back to the free list after every event reached JS, or (not activated)
  // after a failed build or submit: deletes the unsubmitted Triton request
  // and trace, and drops JS references and holds.
  void Recycle(napi_env env, RequestContext* ctx);
  // The context of `token`, or null (it never existed).
  RequestContext* Find(uint64_t token) const;
  const std::vector<RequestContext*>& all() const { return contexts_; }
  int active() const { return active_; }

 private:
  InflightLedger* ledger_;
  CompletionQueue* queue_;
  KeptRequestPool* kept_requests_;
  std::vector<RequestContext*> contexts_;
  std::vector<RequestContext*> free_;
  int active_ = 0;
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_CONTEXT_H_
