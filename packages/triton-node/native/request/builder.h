// Building a TRITONSERVER_InferenceRequest from submit()'s arguments
// (request/submit_layout.h). Inputs are appended as they are: no copy.
#ifndef TRITON_NODE_REQUEST_BUILDER_H_
#define TRITON_NODE_REQUEST_BUILDER_H_

#include <napi.h>

#include "request/context.h"
#include "triton_capi.h"

namespace triton_node {

// Fills `ctx` and builds its Triton request (not submitted). Throws a JS
// error; the caller then recycles the context (ContextPool::Recycle), which
// deletes whatever was built.
void BuildRequest(const Napi::CallbackInfo& info, TRITONSERVER_Server* server,
                  TRITONSERVER_ResponseAllocator* allocator,
                  RequestContext* ctx);

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_BUILDER_H_
