// Triton's callbacks for a request (userp = RequestContext*). They run on
// Triton threads (or inside ServerInferAsync) and never touch Node-API: each
// turns what happened into a Completion for the JS thread.
#ifndef TRITON_NODE_REQUEST_CALLBACKS_H_
#define TRITON_NODE_REQUEST_CALLBACKS_H_

#include <cstdint>

#include "triton_capi.h"

namespace triton_node {

void OnResponseComplete(TRITONSERVER_InferenceResponse* response,
                        const uint32_t flags, void* userp);
void OnRequestRelease(TRITONSERVER_InferenceRequest* request,
                      const uint32_t flags, void* userp);
void OnTraceActivity(TRITONSERVER_InferenceTrace* trace,
                     TRITONSERVER_InferenceTraceActivity activity,
                     uint64_t timestamp_ns, void* userp);
void OnTraceRelease(TRITONSERVER_InferenceTrace* trace, void* userp);

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_CALLBACKS_H_
