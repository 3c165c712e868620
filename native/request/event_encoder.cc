#include "request/event_encoder.h"

#include <cstring>
#include <utility>

#include "env/js_call.h"
#include "memory/mem_kind.h"
#include "request/context.h"
#include "request/outputs.h"
#include "triton/datatypes.h"

namespace triton_node {
namespace {

Napi::Object TimingObject(Napi::Env env, const RequestContext* ctx) {
  static const char* const kNames[7] = {
      "requestStartNs",    "queueStartNs",         "computeStartNs",
      "computeInputEndNs", "computeOutputStartNs", "computeEndNs",
      "requestEndNs"};
  Napi::Object t = Napi::Object::New(env);
  for (int i = 0; i < 7; ++i) {
    t.Set(kNames[i], Napi::BigInt::New(env, ctx->timestamps[i]));
  }
  return t;
}

// Turns the flat encoding into NativeEvents (lib/binding.ts) and hands them
// to onEvents (or returns them, without onEvents). Layout per event in `n`:
//   0                         an event decoded already: vals[next]
//   1 token final flags ...   flags: EventFlag bits; then, in this order:
//     error: vals; count, per output: name (string index or -1: vals),
//     datatype code, memory kind, memory type id, byteLength,
//     inSlab (1: data = slab, else vals), byteOffset, dims, shape...;
//     parameters: count, per parameter: name (string index or -1: vals),
//     type (TRITONSERVER_ParameterType), value (STRING: vals; INT, DOUBLE:
//     the number; BOOL: 1 or 0; other types: none);
//     model (string index or -1: vals), version; id: vals.
// Every event has the same keys (absent ones undefined) so that V8 gives
// them one shape.
constexpr const char kDecoderSource[] = R"JS(
(function (dtNames, memNames) {
  'use strict';
  return function decode(onEvents, n, vals, strings, slab) {
    const events = [];
    const len = n.length;
    let i = 0;
    let v = 0;
    while (i < len) {
      if (n[i++] === 0) {
        events.push(vals[v++]);
        continue;
      }
      const token = n[i++];
      const final = n[i++] === 1;
      const flags = n[i++];
      let error, outputs, parameters, model, version, id;
      if (flags & 2) error = vals[v++];
      if (flags & 1) {
        const count = n[i++];
        outputs = [];
        for (let k = 0; k < count; k++) {
          const ni = n[i++];
          const name = ni >= 0 ? strings[ni] : vals[v++];
          const datatype = dtNames[n[i++]];
          const memoryType = memNames[n[i++]];
          const memoryTypeId = n[i++];
          const byteLength = n[i++];
          const data = n[i++] === 1 ? slab : vals[v++];
          const byteOffset = n[i++];
          const dims = n[i++];
          const shape = [];
          for (let d = 0; d < dims; d++) shape.push(n[i++]);
          outputs.push({ name, datatype, shape, memoryType, memoryTypeId, byteLength, data, byteOffset });
        }
      }
      if (flags & 4) {
        parameters = {};
        const count = n[i++];
        for (let k = 0; k < count; k++) {
          const pi = n[i++];
          const pname = pi >= 0 ? strings[pi] : vals[v++];
          const ptype = n[i++];
          let value;
          if (ptype === 0) value = vals[v++];
          else if (ptype === 2) value = n[i++] === 1;
          else if (ptype === 1 || ptype === 3) value = n[i++];
          if (pname === '__proto__') {
            Object.defineProperty(parameters, pname, { value, enumerable: true, writable: true, configurable: true });
          } else {
            parameters[pname] = value;
          }
        }
      }
      if (flags & 8) {
        const mi = n[i++];
        model = mi >= 0 ? strings[mi] : vals[v++];
        version = n[i++];
      }
      if (flags & 16) id = vals[v++];
      events.push({ token, final, error, outputs, parameters, model, version, id, timing: undefined });
    }
    if (onEvents === undefined) return events;
    onEvents(events);
  };
})
)JS";

constexpr size_t kMaxInterned = 256;
constexpr size_t kSlabAlignment = 16;

}  // namespace

void EventEncoder::Init(napi_env env) {
  Napi::Env e(env);
  Napi::Array dt_names = Napi::Array::New(e);
  for (int t = 0; t <= kLastDataType; ++t) {
    dt_names.Set(static_cast<uint32_t>(t),
                 Napi::String::New(
                     e, DataTypeName(static_cast<TRITONSERVER_DataType>(t))));
  }
  Napi::Array mem_names = Napi::Array::New(e);
  for (int k = 0; k < kMemKindCount; ++k) {
    mem_names.Set(static_cast<uint32_t>(k),
                  Napi::String::New(e, MemKindName(k)));
  }
  napi_value script = nullptr;
  napi_value factory = nullptr;
  napi_create_string_utf8(env, kDecoderSource, NAPI_AUTO_LENGTH, &script);
  if (napi_run_script(env, script, &factory) != napi_ok) {
    throw Napi::Error::New(e);
  }
  napi_value argv[2] = {dt_names, mem_names};
  napi_value decoder = nullptr;
  if (napi_call_function(env, e.Undefined(), factory, 2, argv, &decoder) !=
      napi_ok) {
    throw Napi::Error::New(e);
  }
  napi_create_reference(env, decoder, 1, &decoder_);
  napi_value strings = nullptr;
  napi_create_array(env, &strings);
  napi_create_reference(env, strings, 1, &strings_);
}

void EventEncoder::Release(napi_env env) {
  if (decoder_ != nullptr) napi_delete_reference(env, decoder_);
  if (strings_ != nullptr) napi_delete_reference(env, strings_);
  decoder_ = nullptr;
  strings_ = nullptr;
  interned_.clear();
}

void EventEncoder::BeginDrain() {
  nums_.clear();
  vals_.clear();
  slab_.clear();
  events_ = 0;
}

double EventEncoder::Intern(napi_env env, const char* s) {
  for (size_t i = 0; i < interned_.size(); ++i) {
    if (interned_[i] == s) return static_cast<double>(i);
  }
  napi_value str = nullptr;
  napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &str);
  if (interned_.size() < kMaxInterned && strings_ != nullptr) {
    napi_value strings = nullptr;
    napi_get_reference_value(env, strings_, &strings);
    uint32_t index = static_cast<uint32_t>(interned_.size());
    if (napi_set_element(env, strings, index, str) == napi_ok) {
      interned_.emplace_back(s);
      return static_cast<double>(index);
    }
  }
  vals_.push_back(str);
  return -1;
}

void EventEncoder::AddDecoded(napi_value event) {
  nums_.push_back(0);
  vals_.push_back(event);
  ++events_;
}

void EventEncoder::AddResponse(napi_env env, Completion* c) {
  size_t nums_mark = nums_.size();
  size_t vals_mark = vals_.size();
  try {
    EncodeResponse(env, c);
    ++events_;
  } catch (const Napi::Error& e) {
    // Roll back the partial event and report the failure on it instead.
    nums_.resize(nums_mark);
    vals_.resize(vals_mark);
    bool final = (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
    AddError(env, c->ctx->token, final,
             ErrorInfo{TRITONSERVER_ERROR_INTERNAL,
                       "cannot convert the response: " + e.Message()});
  }
}

void EventEncoder::AddError(napi_env env, uint64_t token, bool final,
                            const ErrorInfo& error) {
  nums_.push_back(1);
  nums_.push_back(static_cast<double>(token));
  nums_.push_back(final ? 1 : 0);
  nums_.push_back(kHasError);
  vals_.push_back(MakeErrorInfoObject(Napi::Env(env), error));
  ++events_;
}

napi_value EventEncoder::DecodeAlone(napi_env env, Completion* c) {
  // This event alone, in scratch of its own; the drain's scratch is kept.
  std::vector<double> nums;
  std::vector<napi_value> vals;
  std::vector<uint8_t> slab;
  uint32_t events = 0;
  nums.swap(nums_);
  vals.swap(vals_);
  slab.swap(slab_);
  std::swap(events, events_);
  napi_value decoded = nullptr;
  try {
    AddResponse(env, c);
    napi_value undefined = nullptr;
    napi_get_undefined(env, &undefined);
    napi_value list = Call(env, undefined);
    napi_get_element(env, list, 0, &decoded);
  } catch (...) {
    nums.swap(nums_);
    vals.swap(vals_);
    slab.swap(slab_);
    std::swap(events, events_);
    throw;
  }
  nums.swap(nums_);
  vals.swap(vals_);
  slab.swap(slab_);
  std::swap(events, events_);
  return decoded;
}

void EventEncoder::EncodeOutput(napi_env env, const RequestContext* ctx,
                                const OutputRecord& out) {
  nums_.push_back(Intern(env, out.name != nullptr ? out.name : ""));
  int dtype = static_cast<int>(out.datatype);
  if (dtype < 0 || dtype > kLastDataType) {
    dtype = TRITONSERVER_TYPE_INVALID;
  }
  nums_.push_back(dtype);
  int kind = static_cast<int>(out.memory_type);
  nums_.push_back(kind >= 0 && kind < kMemKindCount ? kind : 0);
  nums_.push_back(static_cast<double>(out.memory_type_id));
  nums_.push_back(static_cast<double>(out.byte_size));
  if (CopiedSmall(out)) {
    // Into the drain's slab; the pooled buffer goes back with the response.
    size_t offset = (slab_.size() + kSlabAlignment - 1) & ~(kSlabAlignment - 1);
    slab_.resize(offset + out.byte_size);
    if (out.byte_size > 0) {
      std::memcpy(slab_.data() + offset, out.base, out.byte_size);
    }
    nums_.push_back(1);
    nums_.push_back(static_cast<double>(offset));
  } else {
    size_t offset = 0;
    vals_.push_back(OutputData(Napi::Env(env), ctx, out, &offset));
    nums_.push_back(0);
    nums_.push_back(static_cast<double>(offset));
  }
  nums_.push_back(static_cast<double>(out.dim_count));
  for (uint64_t d = 0; d < out.dim_count; ++d) {
    nums_.push_back(static_cast<double>(out.shape[d]));
  }
}

// Per parameter: its name (interned), its type and its value (a string in
// vals, a number or a boolean in nums; nothing for other types).
void EventEncoder::EncodeParameters(napi_env env, const Completion* c) {
  uint32_t named = 0;
  for (uint32_t i = 0; i < c->parameter_count; ++i) {
    if (c->parameters[i].name != nullptr) ++named;
  }
  nums_.push_back(named);
  for (uint32_t i = 0; i < c->parameter_count; ++i) {
    const ParameterRecord& p = c->parameters[i];
    if (p.name == nullptr) continue;
    nums_.push_back(Intern(env, p.name));
    nums_.push_back(static_cast<double>(p.type));
    switch (p.type) {
      case TRITONSERVER_PARAMETER_STRING: {
        napi_value s = nullptr;
        napi_create_string_utf8(env, static_cast<const char*>(p.value),
                                NAPI_AUTO_LENGTH, &s);
        vals_.push_back(s);
        break;
      }
      case TRITONSERVER_PARAMETER_INT:
        nums_.push_back(
            static_cast<double>(*static_cast<const int64_t*>(p.value)));
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        nums_.push_back(*static_cast<const bool*>(p.value) ? 1 : 0);
        break;
      case TRITONSERVER_PARAMETER_DOUBLE:
        nums_.push_back(*static_cast<const double*>(p.value));
        break;
      default:
        break;  // undefined in JS
    }
  }
}

void EventEncoder::EncodeResponse(napi_env env, Completion* c) {
  Napi::Env e(env);
  const RequestContext* ctx = c->ctx;
  nums_.push_back(1);
  nums_.push_back(static_cast<double>(ctx->token));
  nums_.push_back((c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0 ? 1
                                                                         : 0);
  if (c->response == nullptr) {
    nums_.push_back(0);
    return;
  }
  int flags = kHasOutputs;
  if (c->has_error) flags |= kHasError;
  if (c->parameter_count > 0) flags |= kHasParameters;
  if (c->model != nullptr) flags |= kHasModel;
  if (c->id != nullptr && c->id[0] != '\0') flags |= kHasId;
  nums_.push_back(flags);
  if (c->has_error) vals_.push_back(MakeErrorInfoObject(e, c->error));
  nums_.push_back(c->output_count);
  for (uint32_t i = 0; i < c->output_count; ++i) {
    EncodeOutput(env, ctx, c->outputs[i]);
  }
  if (c->parameter_count > 0) EncodeParameters(env, c);
  if (c->model != nullptr) {
    nums_.push_back(Intern(env, c->model));
    nums_.push_back(static_cast<double>(c->version));
  }
  if (c->id != nullptr && c->id[0] != '\0') {
    vals_.push_back(Napi::String::New(e, c->id));
  }
}

napi_value EventEncoder::Call(napi_env env, napi_value on_events) {
  Napi::Env e(env);
  size_t nbytes = nums_.size() * sizeof(double);
  Napi::ArrayBuffer nums_buffer = Napi::ArrayBuffer::New(e, nbytes);
  if (nbytes > 0) std::memcpy(nums_buffer.Data(), nums_.data(), nbytes);
  Napi::Float64Array nums =
      Napi::Float64Array::New(e, nums_.size(), nums_buffer, 0);
  Napi::Array vals = Napi::Array::New(e, vals_.size());
  for (size_t i = 0; i < vals_.size(); ++i) {
    napi_set_element(env, vals, static_cast<uint32_t>(i), vals_[i]);
  }
  Napi::ArrayBuffer slab = Napi::ArrayBuffer::New(e, slab_.size());
  if (!slab_.empty()) std::memcpy(slab.Data(), slab_.data(), slab_.size());
  napi_value strings = nullptr;
  napi_get_reference_value(env, strings_, &strings);
  napi_value decoder = nullptr;
  napi_get_reference_value(env, decoder_, &decoder);
  napi_value argv[5] = {on_events, nums, vals, strings, slab};
  // Whatever happens next, this scratch is spent.
  BeginDrain();
  return CallJs(env, decoder, 5, argv);
}

void EventEncoder::Deliver(napi_env env, napi_value on_events) {
  if (events_ == 0 || decoder_ == nullptr) {
    BeginDrain();
    return;
  }
  Call(env, on_events);
}

void EventEncoder::AttachTiming(napi_env env, napi_value event,
                                const RequestContext* ctx) {
  Napi::Object(env, event).Set("timing", TimingObject(Napi::Env(env), ctx));
}

}  // namespace triton_node
