// Per-model scheduling (scheduler.cc): one instance thread per instance of
// the model's instance groups, its queue (priority levels, max_queue_size),
// and the dynamic batcher that gathers queued requests into the batches the
// backend gets.
#ifndef TRITON_NODE_FAKE_SCHEDULING_SCHEDULER_H_
#define TRITON_NODE_FAKE_SCHEDULING_SCHEDULER_H_

#include "../../include/triton_capi.h"
#include "../core/model.h"

namespace fake {

// Starts the model's instance threads (none for an ensemble, whose steps'
// models run); Model::JoinThreads stops them.
void StartInstances(Model* m);
// Queues a PENDING request for the model's instance threads (an ensemble
// request starts at once, on this thread). UNAVAILABLE when the queue is
// full; the caller keeps the request then.
TRITONSERVER_Error* Enqueue(Model* m, TRITONSERVER_InferenceRequest* r);
// Runs the request on the calling thread (synchronous callbacks).
void ExecuteInline(Model* m, TRITONSERVER_InferenceRequest* r);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_SCHEDULER_H_
