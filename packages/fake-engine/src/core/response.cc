// Responses: made, filled through the caller's allocator, delivered, and
// deleted (the allocator's release runs then); a request's release.
#include "response.h"

#include <cstdint>

#include "../support/clock.h"
#include "engine.h"
#include "error.h"
#include "model.h"

namespace fake {
namespace {

// What the fake hands out for Triton's uninitialized buffer_userp: an
// address in the first page, which is never mapped.
void* const kUninitializedUserp = reinterpret_cast<void*>(uintptr_t{0x34});

}  // namespace

TRITONSERVER_InferenceResponse* NewResponse(const std::shared_ptr<Model>& model,
                                            const ResponseTarget& t) {
  auto* resp = new TRITONSERVER_InferenceResponse();
  model->AddRef();  // a live response keeps its model UNLOADING
  resp->model = model;
  resp->id = t.id;
  resp->allocator = t.allocator;
  // Triton calls the start function (when set) for every response it
  // creates, reading the allocator each time.
  if (t.allocator->start_fn != nullptr) {
    delete t.allocator->start_fn(t.allocator, t.alloc_userp);
  }
  return resp;
}

TRITONSERVER_Error* AllocateOutput(TRITONSERVER_InferenceResponse* resp,
                                   const ResponseTarget& t,
                                   const TensorConfig* cfg,
                                   std::vector<int64_t> shape, size_t bytes,
                                   ResponseOutput** out) {
  resp->outputs.emplace_back();
  ResponseOutput& o = resp->outputs.back();
  o.config = cfg;
  o.shape = std::move(shape);
  void* buffer = nullptr;
  void* tag = nullptr;
  TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
  int64_t id = 0;
  TRITONSERVER_ResponseAllocator* a = t.allocator;
  if (a->alloc_fn == nullptr) {
    Violation("TRITONSERVER_ResponseAllocatorNew",
              "the response allocator's alloc_fn is null; the real library "
              "calls it for output '" +
                  cfg->name + "' (crash)");
  }
  TRITONSERVER_Error* err =
      a->alloc_fn(a, cfg->name.c_str(), bytes, TRITONSERVER_MEMORY_CPU, 0,
                  t.alloc_userp, &buffer, &tag, &type, &id);
  if (err != nullptr) {
    // Triton never initializes the buffer_userp of an output whose
    // allocation failed, and InferenceResponseOutput hands it out as it is:
    // the fake hands out an address that faults, so a caller that reads
    // through it crashes here as it may on the real library.
    o.buffer_userp = kUninitializedUserp;
    return err;
  }
  if (a->buffer_attributes_fn != nullptr) {
    TRITONSERVER_BufferAttributes attrs;
    attrs.memory_type = type;
    attrs.memory_type_id = id;
    attrs.byte_size = bytes;
    // What the function writes is ignored: alloc's answer stands, as in
    // Triton.
    delete a->buffer_attributes_fn(a, cfg->name.c_str(), &attrs, t.alloc_userp,
                                   tag);
  }
  o.buffer = buffer;
  o.buffer_userp = tag;
  o.byte_size = bytes;
  o.memory_type = type;
  o.memory_type_id = id;
  if (buffer != nullptr) {
    o.owned = true;
    a->users.fetch_add(1);  // released when the response is deleted
    LiveAdd(kLiveOutputBuffer, 1);
  }
  *out = &o;
  return nullptr;
}

void DeliverResponse(const ResponseTarget& t, TRITONSERVER_InferenceResponse* r,
                     uint32_t flags) {
  // After the FINAL callback Triton creates no more responses for the
  // request (only the responses already made still hold buffers).
  if ((flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0) {
    t.allocator->users.fetch_sub(1);
  }
  t.response_fn(r, flags, t.response_userp);
}

void ReleaseRequest(TRITONSERVER_InferenceRequest* r) {
  // The request may be deleted or resubmitted inside the callback: read
  // everything first and never touch it afterwards.
  auto fn = r->release_fn;
  void* userp = r->release_userp;
  r->model->engine->active_inferences.fetch_sub(1);
  r->state.store(RequestState::kReleased);
  fn(r, TRITONSERVER_REQUEST_RELEASE_ALL, userp);
}

void SendErrorResponse(TRITONSERVER_InferenceRequest* r,
                       TRITONSERVER_Error* err, bool call_start) {
  TRITONSERVER_InferenceResponse* resp;
  if (call_start) {
    resp = NewResponse(r->model, r->target);
  } else {
    resp = new TRITONSERVER_InferenceResponse();
    r->model->AddRef();
    resp->model = r->model;
    resp->id = r->id;
    resp->allocator = r->target.allocator;
  }
  resp->error = err;
  if (r->trace != nullptr) {
    r->trace->Report(TRITONSERVER_TRACE_REQUEST_END, SteadyNs());
    resp->trace = r->trace;  // released with the response
    r->trace = nullptr;
  }
  DeliverResponse(r->target, resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
}

void FailRequest(Model* m, TRITONSERVER_InferenceRequest* r,
                 TRITONSERVER_Error* err, bool call_start) {
  (void)m;
  SendErrorResponse(r, err, call_start);
  ReleaseRequest(r);
}

}  // namespace fake

using namespace fake;

TRITONSERVER_InferenceResponse::~TRITONSERVER_InferenceResponse() {
  // The allocator's release runs here, on the deleting thread, once per
  // buffer it handed out (never for a null buffer).
  for (auto& o : outputs) {
    if (!o.owned) continue;
    if (allocator->release_fn == nullptr) {
      Violation("TRITONSERVER_InferenceResponseDelete",
                "the response allocator's release_fn is null; the real "
                "library calls it for output '" +
                    o.config->name + "' (crash)");
    }
    TRITONSERVER_Error* e =
        allocator->release_fn(allocator, o.buffer, o.buffer_userp, o.byte_size,
                              o.memory_type, o.memory_type_id);
    delete e;
    allocator->users.fetch_sub(1);
    LiveAdd(kLiveOutputBuffer, -1);
  }
  if (trace != nullptr) trace->Release();
  delete error;
  // Last: the response no longer holds its model up (it may finish
  // unloading, and a waiting ServerStop may return).
  if (model != nullptr) model->Release();
}
