// Events of a server's requests, encoded for the JS thread in a flat form:
// a Float64Array of numbers, the values that must be JS values, and an
// ArrayBuffer (the slab) holding the drain's small outputs. A JS function
// (lib/addon/events.ts, one per server, made by the factory JS gave the
// addon through setEventDecoder) turns them into NativeEvent objects:
// building objects property by property through Node-API costs far more per
// property than a JS object literal. The layout is documented once, at
// NativeEventDecoder in lib/abi/binding.ts. The Float64Array and the slab
// are kept from one drain to the next: a new ArrayBuffer per drain costs
// more than the rest of the encoding.
#ifndef TRITON_NODE_REQUEST_EVENT_ENCODER_H_
#define TRITON_NODE_REQUEST_EVENT_ENCODER_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "request/completion_queue.h"
#include "triton/errors.h"

namespace triton_node {

struct RequestContext;

// The encoding's numbers: a growable array whose append is inline (a
// vector's out-of-line append cost more than the rest of an output's
// encoding); growing is not inline.
class NumberList {
 public:
  NumberList() = default;
  NumberList(NumberList&& other) noexcept { *this = std::move(other); }
  NumberList& operator=(NumberList&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.size_ = 0;
    other.capacity_ = 0;
    return *this;
  }

  void push_back(double d) {
    if (size_ == capacity_) Grow();
    data_[size_++] = d;
  }
  const double* data() const { return data_.get(); }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }
  // Drops the numbers from `size` on (size <= size()).
  void Truncate(size_t size) { size_ = size; }

 private:
  void Grow();

  std::unique_ptr<double[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// JS thread only. Keeps interned strings (model and output names) and
// scratch vectors that keep their capacity. References are created and
// deleted on the JS thread (Init, Release); an encoder whose environment is
// gone just forgets them.
class EventEncoder {
 public:
  // The bits of an event's `flags` (what follows in the encoding):
  // EVENT_FLAGS in lib/abi/binding.ts (constants.eventEncoding).
  enum EventFlag : int {
    kHasOutputs = 1,
    kHasError = 2,
    kHasParameters = 4,
    kHasModel = 8,
    kHasId = 16,
  };

  // Makes the server's decoder with the environment's factory; throws when
  // there is none.
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
  bool empty() const { return scratch_.events == 0; }
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
  // The kept Float64Array, holding a copy of the scratch's numbers.
  napi_value NumsArray(napi_env env);
  // The slab holding a copy of the scratch's small outputs, from `*base`.
  napi_value SlabWithScratch(napi_env env, size_t* base);

  // What one call of the decoder encodes.
  struct Scratch {
    NumberList nums;
    std::vector<napi_value> vals;  // valid inside the drain's handle scope
    std::vector<uint8_t> slab;     // small outputs, copied to the JS slab
    bool uses_slab = false;        // some output is in the slab (maybe empty)
    uint32_t events = 0;
  };

  napi_ref decoder_ = nullptr;
  napi_ref strings_ = nullptr;  // JS array of interned strings
  std::vector<std::string> interned_;
  size_t last_interned_ = 0;  // index of the last name found
  Scratch scratch_;
  // The Float64Array the decoder reads. JS never sees it (the decoder keeps
  // it to itself), but its memory is looked up again on every call all the
  // same: no pointer into JS memory is kept between calls.
  napi_ref nums_array_ = nullptr;
  // The slab: an ArrayBuffer that result tensors view, carved drain after
  // drain (never written where a view may be). The caller may detach it
  // (transfer it) at any time, which frees or moves its memory: it is
  // checked on every call, and replaced when detached or full.
  napi_ref slab_buffer_ = nullptr;
  size_t slab_used_ = 0;  // bytes handed out so far
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_EVENT_ENCODER_H_
