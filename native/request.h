// Per-request state and the building of a TRITONSERVER_InferenceRequest
// from a NativeRequest (inputs appended as is: no copy).
#ifndef TRITON_NODE_REQUEST_H_
#define TRITON_NODE_REQUEST_H_

#include <napi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "allocator.h"
#include "cuda.h"
#include "triton_capi.h"

namespace triton_node {

class ServerCore;

// Where one requested output goes.
struct OutputPlacement {
  std::string name;
  int kind = kMemCpu;
  int device = 0;
  bool has_into = false;
  MemView into;  // valid while `into_ref` holds its owner
  napi_ref into_ref = nullptr;
  OutputBuffer into_tag;  // the buffer_userp for this destination
};

// One submitted request. Pooled per server and reused, so steady-state
// submission allocates nothing here. Ownership: created and recycled on the
// JS thread; between submit and recycle, Triton's callbacks read the
// placement fields (never written while submitted) and write the fields
// under `ServerCore::ctx_mu_` or the trace timestamps (read on the JS thread
// after the trace release was queued).
struct RequestContext {
  ServerCore* core = nullptr;  // outlives every context it owns
  uint32_t index = 0;          // position in ServerCore::contexts_
  uint64_t generation = 0;
  uint64_t token = 0;
  TRITONSERVER_InferenceRequest* request = nullptr;

  // Placement (read by the allocator on Triton threads).
  int default_kind = kMemCpu;
  int default_device = 0;
  // Reused; first `placement_count` valid. A deque: elements never move.
  std::deque<OutputPlacement> placements;
  size_t placement_count = 0;

  // JS owners of HostBuffer/CudaBuffer inputs and of destinations (dropped
  // at recycle, on the JS thread).
  std::vector<napi_ref> refs;
  // Holds on ArrayBuffer memory (js_memory.h) and copies of resizable
  // inputs: Triton's pointers into them stay valid until recycle.
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

  // Timing.
  bool timing = false;
  TRITONSERVER_InferenceTrace* trace = nullptr;
  uint64_t timestamps[7] = {0, 0, 0, 0, 0, 0, 0};

  // Guarded by ServerCore::ctx_mu_. The request object is deleted once
  // Triton released it AND the FINAL response came: a decoupled stream may
  // outlive the release and is cancelled through the (released) request.
  // The request counts as in flight (ServerCore::inflight_) until both came
  // and, when traced, the trace was released too: the last of these may come
  // from a backend thread after stop() and even after ServerDelete.
  bool submitted = false;
  bool released = false;
  bool final_seen = false;
  bool trace_pending = false;
  int cancel_inflight = 0;
  bool delete_deferred = false;

  // JS thread only.
  bool active = false;  // between submit and recycle
  bool js_final = false;
  bool js_released = false;
  bool js_trace_done = false;
  napi_ref held_final_event = nullptr;  // FINAL waiting for the trace

  const OutputPlacement* FindPlacement(const char* name) const;
};

// submit() takes the request positionally (lib/binding.ts, SubmitSlot):
//   submit(nums, model, id, correlationId,
//          ...[name, data] per input, ...[name, into] per output,
//          ...[name, value] per parameter)
// with every number in one Float64Array `nums` (header, then per input
// datatype code, byteLength, rank and dims, per output memory and device, per
// parameter its type). Reading arguments and a Float64Array costs a few
// Node-API calls per input; reading the same request from objects by key cost
// ~40 property reads (~600 instructions each) per request.
enum SubmitSlot : int {
  kSlotVersion,       // -1: the highest ready version
  kSlotPriority,      // -1: not set
  kSlotTimeout,       // microseconds, -1: not set
  kSlotFlags,         // -1: not set
  kSlotOutputMemory,  // -1 default (cpu), else kMemCpu/kMemPinned/kMemGpu
  kSlotOutputDevice,  // -1: default (0)
  kSlotTiming,        // 1: attach a TIMESTAMPS trace
  kSlotInputCount,
  kSlotOutputCount,  // 0: every output the model produces
  kSlotParameterCount,
  kSubmitHeader
};
// Positional arguments before the inputs: nums, model, id, correlationId.
constexpr size_t kSubmitFixedArgs = 4;
// Parameter type codes (per parameter in nums).
enum SubmitParameterType : int {
  kParamString,
  kParamInt,
  kParamDouble,
  kParamBool
};

// Fills `ctx` from submit()'s arguments and builds the Triton request (not
// submitted). Throws a JS error; on throw, the caller cleans up with
// ResetContext.
void BuildRequest(const Napi::CallbackInfo& info, TRITONSERVER_Server* server,
                  TRITONSERVER_ResponseAllocator* allocator,
                  RequestContext* ctx);

// Deletes the unsubmitted Triton request and trace, drops references; the
// context is then ready for reuse. JS thread only.
void ResetContext(napi_env env, RequestContext* ctx);

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_H_
