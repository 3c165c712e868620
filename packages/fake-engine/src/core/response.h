// An inference response as the engine keeps it, and the steps every
// backend and scheduler goes through to answer a request: a new response
// (the allocator's start function), its outputs (the allocator's alloc
// function), its delivery to the caller, and the request's release.
#ifndef TRITON_NODE_FAKE_CORE_RESPONSE_H_
#define TRITON_NODE_FAKE_CORE_RESPONSE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../../include/triton_capi.h"
#include "../config/model_config.h"
#include "../support/leak_counters.h"
#include "../support/precondition.h"
#include "handles.h"
#include "request.h"

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

namespace fake {

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

// Hands a response (null: a FINAL without one) to the caller's callback;
// after FINAL the allocator is no longer the request's to use.
void DeliverResponse(const ResponseTarget& t, TRITONSERVER_InferenceResponse* r,
                     uint32_t flags);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CORE_RESPONSE_H_
