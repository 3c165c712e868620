#include "request/event_encoder.h"

#include <cstring>
#include <utility>

#include "env/env_data.h"
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
  // Each trace: [id, parent id, model, version, 7 timestamps].
  const TraceLog& log = ctx->traces;
  Napi::Array traces = Napi::Array::New(env, log.count());
  for (size_t i = 0; i < log.count(); ++i) {
    const TraceSpan& s = log.at(i);
    Napi::Array span = Napi::Array::New(env, 4 + kTraceActivities);
    span.Set(0u, Napi::BigInt::New(env, s.id));
    span.Set(1u, Napi::BigInt::New(env, s.parent_id));
    span.Set(2u, Napi::String::New(env, s.model));
    span.Set(3u, Napi::Number::New(env, static_cast<double>(s.version)));
    for (int a = 0; a < kTraceActivities; ++a) {
      span.Set(static_cast<uint32_t>(4 + a),
               Napi::BigInt::New(env, s.timestamps[a]));
    }
    traces.Set(static_cast<uint32_t>(i), span);
  }
  t.Set("traces", traces);
  return t;
}

constexpr size_t kMaxInterned = 256;
constexpr size_t kSlabAlignment = 16;
// A new slab's size, unless one drain needs more. Views keep a slab alive:
// a result of a few bytes may keep this much memory until it is collected.
constexpr size_t kSlabBytes = 32 * 1024;
// The decoder's values go as arguments up to this many, else in an array.
constexpr size_t kMaxValArgs = 32;
constexpr size_t kDecoderFixedArgs = 7;

size_t AlignSlab(size_t offset) {
  return (offset + kSlabAlignment - 1) & ~(kSlabAlignment - 1);
}

// Points `*ref` at `value` (napi_ref values live as long as the encoder).
void Rereference(napi_env env, napi_ref* ref, napi_value value) {
  if (*ref != nullptr) napi_delete_reference(env, *ref);
  *ref = nullptr;
  napi_create_reference(env, value, 1, ref);
}

}  // namespace

void NumberList::Grow() {
  size_t capacity = capacity_ > 0 ? capacity_ * 2 : 256;
  std::unique_ptr<double[]> data(new double[capacity]);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_ * sizeof(double));
  data_ = std::move(data);
  capacity_ = capacity;
}

void EventEncoder::Init(napi_env env) {
  Napi::Env e(env);
  Napi::FunctionReference& factory = GetEnvData(e)->event_decoder_factory;
  if (factory.IsEmpty()) {
    throw MakeError(e, "INTERNAL",
                    "no event decoder: setEventDecoder() was not called in "
                    "this environment (lib/addon/load.ts calls it)");
  }
  Napi::Value decoder = factory.Call({});
  if (!decoder.IsFunction()) {
    throw MakeError(e, "INTERNAL",
                    "the event decoder factory returned no function");
  }
  napi_create_reference(env, decoder, 1, &decoder_);
  napi_value strings = nullptr;
  napi_create_array(env, &strings);
  napi_create_reference(env, strings, 1, &strings_);
}

void EventEncoder::Release(napi_env env) {
  for (napi_ref* ref : {&decoder_, &strings_, &nums_array_, &slab_buffer_}) {
    if (*ref != nullptr) napi_delete_reference(env, *ref);
    *ref = nullptr;
  }
  interned_.clear();
  last_interned_ = 0;
  slab_used_ = 0;
}

void EventEncoder::BeginDrain() {
  scratch_.nums.clear();
  scratch_.vals.clear();
  scratch_.slab.clear();
  scratch_.uses_slab = false;
  scratch_.events = 0;
}

double EventEncoder::Intern(napi_env env, const char* s) {
  const size_t length = std::strlen(s);
  const size_t count = interned_.size();
  // Names come in the same order in every response (outputs, parameters,
  // model): the one after the last found is the likely one.
  size_t i = last_interned_ + 1;
  for (size_t tried = 0; tried < count; ++tried, ++i) {
    if (i >= count) i = 0;
    const std::string& name = interned_[i];
    if (name.size() == length && std::memcmp(name.data(), s, length) == 0) {
      last_interned_ = i;
      return static_cast<double>(i);
    }
  }
  napi_value str = nullptr;
  napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &str);
  if (interned_.size() < kMaxInterned && strings_ != nullptr) {
    napi_value strings = nullptr;
    napi_get_reference_value(env, strings_, &strings);
    uint32_t index = static_cast<uint32_t>(interned_.size());
    if (napi_set_element(env, strings, index, str) == napi_ok) {
      interned_.emplace_back(s, length);
      last_interned_ = index;
      return static_cast<double>(index);
    }
  }
  scratch_.vals.push_back(str);
  return -1;
}

void EventEncoder::AddDecoded(napi_value event) {
  scratch_.nums.push_back(0);
  scratch_.vals.push_back(event);
  ++scratch_.events;
}

void EventEncoder::AddResponse(napi_env env, Completion* c) {
  size_t nums_mark = scratch_.nums.size();
  size_t vals_mark = scratch_.vals.size();
  try {
    EncodeResponse(env, c);
    ++scratch_.events;
  } catch (const Napi::Error& e) {
    // Roll back the partial event and report the failure on it instead.
    scratch_.nums.Truncate(nums_mark);
    scratch_.vals.resize(vals_mark);
    bool final = (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0;
    AddError(env, c->ctx->token, final,
             ErrorInfo{TRITONSERVER_ERROR_INTERNAL,
                       "cannot convert the response: " + e.Message()});
  }
}

void EventEncoder::AddError(napi_env env, uint64_t token, bool final,
                            const ErrorInfo& error) {
  scratch_.nums.push_back(1);
  scratch_.nums.push_back(static_cast<double>(token));
  scratch_.nums.push_back(final ? 1 : 0);
  scratch_.nums.push_back(kHasError);
  scratch_.vals.push_back(MakeErrorInfoObject(Napi::Env(env), error));
  ++scratch_.events;
}

napi_value EventEncoder::DecodeAlone(napi_env env, Completion* c) {
  // This event alone, in scratch of its own; the drain's scratch is kept.
  Scratch drain;
  std::swap(drain, scratch_);
  napi_value decoded = nullptr;
  try {
    AddResponse(env, c);
    napi_value undefined = nullptr;
    napi_get_undefined(env, &undefined);
    napi_value list = Call(env, undefined);
    napi_get_element(env, list, 0, &decoded);
  } catch (...) {
    std::swap(drain, scratch_);
    throw;
  }
  std::swap(drain, scratch_);
  return decoded;
}

void EventEncoder::EncodeOutput(napi_env env, const RequestContext* ctx,
                                const OutputRecord& out) {
  scratch_.nums.push_back(Intern(env, out.name != nullptr ? out.name : ""));
  int dtype = static_cast<int>(out.datatype);
  if (dtype < 0 || dtype > kLastDataType) {
    dtype = TRITONSERVER_TYPE_INVALID;
  }
  scratch_.nums.push_back(dtype);
  int kind = static_cast<int>(out.memory_type);
  scratch_.nums.push_back(kind >= 0 && kind < kMemKindCount ? kind : 0);
  scratch_.nums.push_back(static_cast<double>(out.memory_type_id));
  scratch_.nums.push_back(static_cast<double>(out.byte_size));
  if (CopiedSmall(out)) {
    // Into the drain's slab; the pooled buffer goes back with the response.
    // (Offsets from the start of the drain's part of the slab.)
    size_t offset = AlignSlab(scratch_.slab.size());
    scratch_.slab.resize(offset + out.byte_size);
    if (out.byte_size > 0) {
      std::memcpy(scratch_.slab.data() + offset, out.base, out.byte_size);
    }
    scratch_.uses_slab = true;
    scratch_.nums.push_back(1);
    scratch_.nums.push_back(static_cast<double>(offset));
  } else {
    size_t offset = 0;
    scratch_.vals.push_back(OutputData(Napi::Env(env), ctx, out, &offset));
    scratch_.nums.push_back(0);
    scratch_.nums.push_back(static_cast<double>(offset));
  }
  scratch_.nums.push_back(static_cast<double>(out.dim_count));
  for (uint64_t d = 0; d < out.dim_count; ++d) {
    scratch_.nums.push_back(static_cast<double>(out.shape[d]));
  }
}

// Per parameter: its name (interned), its type and its value (a string in
// vals, a number or a boolean in nums; nothing for other types).
void EventEncoder::EncodeParameters(napi_env env, const Completion* c) {
  uint32_t named = 0;
  for (uint32_t i = 0; i < c->parameter_count; ++i) {
    if (c->parameters[i].name != nullptr) ++named;
  }
  scratch_.nums.push_back(named);
  for (uint32_t i = 0; i < c->parameter_count; ++i) {
    const ParameterRecord& p = c->parameters[i];
    if (p.name == nullptr) continue;
    scratch_.nums.push_back(Intern(env, p.name));
    scratch_.nums.push_back(static_cast<double>(p.type));
    switch (p.type) {
      case TRITONSERVER_PARAMETER_STRING: {
        napi_value s = nullptr;
        napi_create_string_utf8(env, static_cast<const char*>(p.value),
                                NAPI_AUTO_LENGTH, &s);
        scratch_.vals.push_back(s);
        break;
      }
      case TRITONSERVER_PARAMETER_INT:
        scratch_.nums.push_back(
            static_cast<double>(*static_cast<const int64_t*>(p.value)));
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        scratch_.nums.push_back(*static_cast<const bool*>(p.value) ? 1 : 0);
        break;
      case TRITONSERVER_PARAMETER_DOUBLE:
        scratch_.nums.push_back(*static_cast<const double*>(p.value));
        break;
      default:
        break;  // undefined in JS
    }
  }
}

void EventEncoder::EncodeResponse(napi_env env, Completion* c) {
  Napi::Env e(env);
  const RequestContext* ctx = c->ctx;
  scratch_.nums.push_back(1);
  scratch_.nums.push_back(static_cast<double>(ctx->token));
  scratch_.nums.push_back(
      (c->flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) != 0 ? 1 : 0);
  if (c->response == nullptr) {
    scratch_.nums.push_back(0);
    return;
  }
  int flags = kHasOutputs;
  if (c->has_error) flags |= kHasError;
  if (c->parameter_count > 0) flags |= kHasParameters;
  if (c->model != nullptr) flags |= kHasModel;
  if (c->id != nullptr && c->id[0] != '\0') flags |= kHasId;
  scratch_.nums.push_back(flags);
  if (c->has_error) scratch_.vals.push_back(MakeErrorInfoObject(e, c->error));
  scratch_.nums.push_back(c->output_count);
  for (uint32_t i = 0; i < c->output_count; ++i) {
    EncodeOutput(env, ctx, c->outputs[i]);
  }
  if (c->parameter_count > 0) EncodeParameters(env, c);
  if (c->model != nullptr) {
    scratch_.nums.push_back(Intern(env, c->model));
    scratch_.nums.push_back(static_cast<double>(c->version));
  }
  if (c->id != nullptr && c->id[0] != '\0') {
    scratch_.vals.push_back(Napi::String::New(e, c->id));
  }
}

napi_value EventEncoder::NumsArray(napi_env env) {
  const size_t count = scratch_.nums.size();
  napi_value array = nullptr;
  void* data = nullptr;
  size_t length = 0;
  if (nums_array_ != nullptr) {
    napi_get_reference_value(env, nums_array_, &array);
    napi_get_typedarray_info(env, array, nullptr, &length, &data, nullptr,
                             nullptr);
  }
  if (array == nullptr || data == nullptr || length < count) {
    size_t capacity = length > 64 ? length : 64;
    while (capacity < count) capacity *= 2;
    Napi::Env e(env);
    Napi::ArrayBuffer buffer =
        Napi::ArrayBuffer::New(e, capacity * sizeof(double));
    data = buffer.Data();
    array = Napi::Float64Array::New(e, capacity, buffer, 0);
    Rereference(env, &nums_array_, array);
  }
  if (count > 0) {
    std::memcpy(data, scratch_.nums.data(), count * sizeof(double));
  }
  return array;
}

napi_value EventEncoder::SlabWithScratch(napi_env env, size_t* base) {
  const size_t need = scratch_.slab.size();
  napi_value slab = nullptr;
  void* data = nullptr;
  size_t length = 0;
  bool detached = true;
  if (slab_buffer_ != nullptr) {
    napi_get_reference_value(env, slab_buffer_, &slab);
    // The caller may have detached it since the last drain (its views are
    // the caller's): then its memory is gone, whatever `data` says.
    napi_is_detached_arraybuffer(env, slab, &detached);
    if (!detached) napi_get_arraybuffer_info(env, slab, &data, &length);
  }
  *base = AlignSlab(slab_used_);
  if (detached || data == nullptr || *base > length || length - *base < need) {
    Napi::ArrayBuffer fresh = Napi::ArrayBuffer::New(
        Napi::Env(env), need > kSlabBytes ? need : kSlabBytes);
    slab = fresh;
    data = fresh.Data();
    Rereference(env, &slab_buffer_, slab);
    *base = 0;
  }
  // Written now, before any JS runs: the bytes from `base` on were never
  // handed out, so no view sees them change.
  if (need > 0) {
    std::memcpy(static_cast<uint8_t*>(data) + *base, scratch_.slab.data(),
                need);
  }
  slab_used_ = *base + need;
  return slab;
}

napi_value EventEncoder::Call(napi_env env, napi_value on_events) {
  napi_value argv[kDecoderFixedArgs + kMaxValArgs];
  napi_value undefined = nullptr;
  napi_get_undefined(env, &undefined);
  argv[0] = on_events;
  argv[1] = NumsArray(env);
  napi_create_uint32(env, static_cast<uint32_t>(scratch_.nums.size()),
                     &argv[2]);
  napi_get_reference_value(env, strings_, &argv[3]);
  size_t base = 0;
  argv[4] = scratch_.uses_slab ? SlabWithScratch(env, &base) : undefined;
  napi_create_uint32(env, static_cast<uint32_t>(base), &argv[5]);
  const size_t nvals = scratch_.vals.size();
  size_t argc = kDecoderFixedArgs;
  if (nvals <= kMaxValArgs) {
    argv[6] = undefined;
    for (size_t i = 0; i < nvals; ++i) argv[argc++] = scratch_.vals[i];
  } else {
    Napi::Array list = Napi::Array::New(Napi::Env(env), nvals);
    for (size_t i = 0; i < nvals; ++i) {
      napi_set_element(env, list, static_cast<uint32_t>(i), scratch_.vals[i]);
    }
    argv[6] = list;
  }
  napi_value decoder = nullptr;
  napi_get_reference_value(env, decoder_, &decoder);
  // Whatever happens next, this scratch is spent.
  BeginDrain();
  return CallJs(env, decoder, argc, argv);
}

void EventEncoder::Deliver(napi_env env, napi_value on_events) {
  if (scratch_.events == 0 || decoder_ == nullptr) {
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
