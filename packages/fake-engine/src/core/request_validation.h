// Triton's checks of a request at submission (InferenceRequest::Normalize),
// in its order and words.
#ifndef TRITON_NODE_FAKE_CORE_REQUEST_VALIDATION_H_
#define TRITON_NODE_FAKE_CORE_REQUEST_VALIDATION_H_

#include "../../include/triton_capi.h"
#include "model.h"
#include "request.h"

namespace fake {

// Checks `r` against its model `m` and fills the request's batch size, each
// input's batch_shape and the outputs to send; an error (INVALID_ARG, in
// Triton's words) leaves the request the caller's.
TRITONSERVER_Error* ValidateRequest(TRITONSERVER_InferenceRequest* r, Model* m);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CORE_REQUEST_VALIDATION_H_
