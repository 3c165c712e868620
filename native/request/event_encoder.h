// Events of a server's requests, encoded for the JS thread in a flat form:
// one Float64Array of numbers, one array of the values that must be JS
// objects, and one ArrayBuffer holding every small output of the drain. A JS
// function compiled once per server turns them into NativeEvent objects:
// building objects property by property through Node-API costs far more per
// property than a JS object literal.
#ifndef TRITON_NODE_REQUEST_EVENT_ENCODER_H_
#define TRITON_NODE_REQUEST_EVENT_ENCODER_H_

#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "request/completion_queue.h"
#include "triton/errors.h"

namespace triton_node {

struct RequestContext;

// JS thread only. Keeps interned strings (model and output names) and
// scratch vectors that keep their capacity. References are created and
// deleted on the JS thread (Init, Release); an encoder whose environment is
// gone just forgets them.
class EventEncoder {
 public:
  // The bits of an event's `flags` (what follows in the encoding).
  enum EventFlag : int {
    kHasOutputs = 1,
    kHasError = 2,
    kHasParameters = 4,
    kHasModel = 8,
    kHasId = 16,
  };

  void Init(napi_env env);
  void Release(napi_env env);

  // Starts a drain: the scratch is empty.
  void BeginDrain();
  // A response (or a bare FINAL); a response that cannot be converted
  // becomes an error event.
  void AddResponse(napi_env env, Completion* c);
  // An event carrying only an error.
  void AddError(napi_env env, uint64_t token, bool final,
                const ErrorInfo& error);
  // An event decoded already (DecodeAlone).
  void AddDecoded(napi_value event);
  bool empty() const { return events_ == 0; }
  // Hands the events to `on_events` in one call, and empties the scratch.
  void Deliver(napi_env env, napi_value on_events);

  // One response decoded into its NativeEvent now (a timed FINAL, held
  // until its trace is released); the drain's scratch is left as it is.
  napi_value DecodeAlone(napi_env env, Completion* c);
  // Sets the `timing` of a decoded event from the context's trace.
  static void AttachTiming(napi_env env, napi_value event,
                           const RequestContext* ctx);

 private:
  void EncodeResponse(napi_env env, Completion* c);
  void EncodeOutput(napi_env env, const RequestContext* ctx,
                    const OutputRecord& out);
  void EncodeParameters(napi_env env, const Completion* c);
  // Index of `s` in the interned string array, or -1 (value pushed to vals).
  double Intern(napi_env env, const char* s);
  // Runs the decoder over the scratch (empties it); returns its result.
  napi_value Call(napi_env env, napi_value on_events);

  napi_ref decoder_ = nullptr;
  napi_ref strings_ = nullptr;  // JS array of interned strings
  std::vector<std::string> interned_;
  std::vector<double> nums_;
  std::vector<napi_value> vals_;  // valid inside the drain's handle scope
  std::vector<uint8_t> slab_;
  uint32_t events_ = 0;
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_EVENT_ENCODER_H_
