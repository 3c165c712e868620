// What the JS thread makes of each thing Triton reported for a request:
// events in the drain's encoding (request/event_encoder.h), and what the
// request's lifecycle (request/lifecycle.h) records of them. A timed FINAL
// is held back until its trace is released, so that it carries the
// trace's timestamps. JS thread only.
#ifndef TRITON_NODE_REQUEST_DELIVERY_H_
#define TRITON_NODE_REQUEST_DELIVERY_H_

#include <napi.h>

#include "request/completion_queue.h"
#include "request/event_encoder.h"

namespace triton_node {

struct RequestContext;

// Encodes what `c` reports (or holds it back), and disposes of its
// response once its outputs are converted. Throws when JS fails: the caller
// then disposes of `c` and calls LostCompletion.
void DeliverCompletion(napi_env env, EventEncoder* encoder, Completion* c);
// `c` was lost to a JS failure: what it meant for the request still
// counts, so that the context is recycled.
void LostCompletion(const Completion* c);
// The server stopped before Triton finished the active request `ctx`: a
// FINAL held for its trace goes as it is, and a request that had no FINAL
// gets an UNAVAILABLE error as its FINAL.
void DeliverStoppedRequest(napi_env env, EventEncoder* encoder,
                           RequestContext* ctx);

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_DELIVERY_H_
