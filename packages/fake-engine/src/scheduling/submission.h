// A validated request's way into its model's scheduler (submission.cc):
// the request becomes PENDING, passes its sequence's admission, and is
// queued, or run at once when callbacks are synchronous.
#ifndef TRITON_NODE_FAKE_SCHEDULING_SUBMISSION_H_
#define TRITON_NODE_FAKE_SCHEDULING_SUBMISSION_H_

#include "../../include/triton_capi.h"
#include "../core/request.h"

namespace fake {

// Runs a validated request: PENDING, then queued on its model (or run at
// once with synchronous callbacks). On an error the caller keeps it.
TRITONSERVER_Error* RunRequest(TRITONSERVER_InferenceRequest* r,
                               TRITONSERVER_InferenceTrace* trace);

// A child of `parent` for an ensemble step's request (api/trace.cc), as
// Triton's ensemble scheduler spawns one.
TRITONSERVER_InferenceTrace* SpawnChildTrace(
    TRITONSERVER_InferenceTrace* parent);

// Synchronous callbacks (TRITONFAKE_SetSyncCallbacks, or
// TRITONFAKE_SYNC_CALLBACKS=1 when a server is created): every request runs
// on the thread that submits it. Process-wide.
void SetSyncCallbacks(bool enabled);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_SUBMISSION_H_
