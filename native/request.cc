#include "request.h"

#include <cmath>
#include <cstring>

#include "completion.h"
#include "errors.h"
#include "js_memory.h"
#include "tensor.h"
#include "triton_api.h"

namespace triton_node {
namespace {

// A JS string as UTF-8, on the stack when short (no heap per request).
class Utf8 {
 public:
  Utf8(Napi::Env env, napi_value value, const char* what) {
    napi_valuetype type;
    napi_typeof(env, value, &type);
    if (type != napi_string) {
      ThrowTypeError(env, std::string(what) + " must be a string");
    }
    size_t length = 0;
    napi_get_value_string_utf8(env, value, inline_, sizeof(inline_), &length);
    if (length + 1 < sizeof(inline_)) {
      data_ = inline_;
      length_ = length;
      RejectNul(env, what);
      return;
    }
    napi_get_value_string_utf8(env, value, nullptr, 0, &length);
    heap_.resize(length + 1);
    napi_get_value_string_utf8(env, value, &heap_[0], length + 1, &length);
    data_ = heap_.c_str();
    length_ = length;
    RejectNul(env, what);
  }
  const char* c_str() const { return data_; }
  size_t size() const { return length_; }

 private:
  // Triton takes C strings: a NUL would silently cut the value.
  void RejectNul(Napi::Env env, const char* what) const {
    if (std::memchr(data_, '\0', length_) == nullptr) return;
    std::string shown;
    for (size_t i = 0; i < length_; ++i) {
      if (data_[i] == '\0') {
        shown += "\\u0000";
      } else {
        shown += data_[i];
      }
    }
    ThrowTypeError(env, std::string(what) + " \"" + shown +
                            "\" must not contain a NUL character");
  }

  char inline_[128];
  std::string heap_;
  const char* data_ = nullptr;
  size_t length_ = 0;
};

bool IsUndefined(Napi::Env env, napi_value v) {
  napi_valuetype type;
  napi_typeof(env, v, &type);
  return type == napi_undefined || type == napi_null;
}

double ToNumber(Napi::Env env, napi_value v, const std::string& what) {
  double d = 0;
  if (napi_get_value_double(env, v, &d) != napi_ok) {
    ThrowTypeError(env, what + " must be a number");
  }
  return d;
}

uint64_t ToUint64(Napi::Env env, napi_value v, const std::string& what) {
  napi_valuetype type;
  napi_typeof(env, v, &type);
  if (type == napi_bigint) {
    uint64_t u = 0;
    bool lossless = false;
    napi_get_value_bigint_uint64(env, v, &u, &lossless);
    if (!lossless) ThrowRangeError(env, what + " is out of range");
    return u;
  }
  double d = ToNumber(env, v, what);
  if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d))) {
    ThrowRangeError(env, what + " must be a non-negative integer");
  }
  return static_cast<uint64_t>(d);
}

bool IsInteger(double d) {
  return d >= -9007199254740992.0 && d <= 9007199254740992.0 &&
         d == std::trunc(d);
}

// The numbers of submit() (its first argument, a Float64Array; layout in
// request.h). Its memory is read directly: no Node-API call per number. The
// array may be longer than the request needs (the TS layer reuses one).
class Nums {
 public:
  Nums(Napi::Env env, const Napi::CallbackInfo& info) : env_(env) {
    bool is_typed = false;
    if (info.Length() >= kSubmitFixedArgs) {
      napi_is_typedarray(env, info[0], &is_typed);
    }
    napi_typedarray_type type = napi_int8_array;
    void* ptr = nullptr;
    if (is_typed) {
      napi_value buffer = nullptr;
      size_t offset = 0;
      napi_get_typedarray_info(env, info[0], &type, &size_, &ptr, &buffer,
                               &offset);
    }
    if (!is_typed || type != napi_float64_array || size_ < kSubmitHeader) {
      ThrowTypeError(env,
                     "submit(nums, model, id, correlationId, ...) expects a "
                     "Float64Array of at least " +
                         std::to_string(kSubmitHeader) + " numbers first");
    }
    data_ = static_cast<const double*>(ptr);
  }

  // Position of the next number after the header.
  size_t Next() {
    if (next_ >= size_) {
      ThrowTypeError(env_, "submit: the request's numbers end early (" +
                               std::to_string(size_) + ")");
    }
    return next_++;
  }
  double At(size_t i) const { return data_[i]; }
  // -1 (not set) or a non-negative integer.
  int64_t Optional(size_t i, const char* what) const {
    double d = data_[i];
    if (d == -1) return -1;
    if (!(d >= 0) || !IsInteger(d)) {
      ThrowRangeError(env_, std::string(what) +
                                " must be a non-negative integer, got " +
                                std::to_string(d));
    }
    return static_cast<int64_t>(d);
  }
  uint32_t Count(size_t i, const char* what) const {
    int64_t n = Optional(i, what);
    if (n < 0 || n > static_cast<int64_t>(UINT32_MAX)) {
      ThrowRangeError(env_, std::string("submit: bad ") + what);
    }
    return static_cast<uint32_t>(n);
  }
  // -1 (not set) to `max`.
  int Enum(size_t i, int max, const char* what) const {
    double d = data_[i];
    if (!IsInteger(d) || d < -1 || d > max) {
      ThrowTypeError(env_, std::string("submit: bad ") + what + " code " +
                               std::to_string(d));
    }
    return static_cast<int>(d);
  }

 private:
  Napi::Env env_;
  const double* data_ = nullptr;
  size_t size_ = 0;
  size_t next_ = kSubmitHeader;
};

void RequireCudaFor(Napi::Env env, int kind, const std::string& what) {
  if (kind == kMemCpu || Cuda().available) return;
  throw MakeError(env, "UNSUPPORTED",
                  what + ": " + (kind == kMemGpu ? "GPU" : "pinned") +
                      " memory needs CUDA, which is not available (" +
                      Cuda().reason + ")");
}

void Check(Napi::Env env, TRITONSERVER_Error* err) { ThrowIfError(env, err); }

// Inputs: the memory must stay alive and in place until RELEASE_ALL, whatever
// the caller does with its buffer. HostBuffer/CudaBuffer memory is ours (its
// use count defers a dispose()); an ArrayBuffer's memory is held through its
// backing store, and a resizable one, which could shrink under the request,
// is copied first (`view` then points at the copy).
void KeepInput(Napi::Env env, RequestContext* ctx, MemView* view) {
  if (view->use != nullptr) {
    napi_ref ref = nullptr;
    napi_create_reference(env, view->owner, 1, &ref);
    ctx->refs.push_back(ref);
    view->use->Acquire();
    ctx->buffer_uses.push_back(view->use);
    return;
  }
  JsMemoryKind kind = JsMemoryKind::kFixed;
  std::shared_ptr<void> hold = HoldJsMemory(view->array_buffer, &kind);
  if (hold == nullptr) {
    throw MakeError(env, "INTERNAL", "input memory has no ArrayBuffer");
  }
  if (kind == JsMemoryKind::kResizable) {
    std::shared_ptr<uint8_t> copy(new uint8_t[view->size > 0 ? view->size : 1],
                                  std::default_delete<uint8_t[]>());
    if (view->size > 0) std::memcpy(copy.get(), view->ptr, view->size);
    view->ptr = copy.get();
    hold = std::move(copy);
  }
  ctx->holds.push_back(std::move(hold));
}

// Destinations (`into`): held like inputs, plus a reference to the caller's
// object, which the result hands back. A resizable ArrayBuffer could shrink
// before Triton writes, so it is refused.
void KeepDestination(Napi::Env env, RequestContext* ctx, const MemView& view,
                     const std::string& what) {
  if (view.use == nullptr) {
    JsMemoryKind kind = JsMemoryKind::kFixed;
    std::shared_ptr<void> hold = HoldJsMemory(view.array_buffer, &kind);
    if (hold == nullptr) {
      throw MakeError(env, "INTERNAL", what + " has no ArrayBuffer");
    }
    if (kind == JsMemoryKind::kResizable) {
      ThrowTypeError(env, what +
                              ": a resizable ArrayBuffer cannot be a "
                              "destination (it could shrink before Triton "
                              "writes); use a fixed-length one");
    }
    ctx->holds.push_back(std::move(hold));
  } else {
    view.use->Acquire();
    ctx->buffer_uses.push_back(view.use);
  }
  napi_ref ref = nullptr;
  napi_create_reference(env, view.owner, 1, &ref);
  ctx->refs.push_back(ref);
}

// A device input goes in with its buffer attributes (memory type, device,
// size and, for memory opened from another process, its CUDA IPC handle).
void AppendDeviceInput(Napi::Env env, RequestContext* ctx, const char* name,
                       const MemView& view, size_t byte_length) {
  const TritonApi& api = Api();
  const bool ipc = view.ipc != nullptr;
  TRITONSERVER_BufferAttributes*& slot =
      ipc ? ctx->ipc_attributes : ctx->attributes;
  if (slot == nullptr) Check(env, api.TRITONSERVER_BufferAttributesNew(&slot));
  TRITONSERVER_BufferAttributes* attrs = slot;
  Check(env, api.TRITONSERVER_BufferAttributesSetMemoryType(
                 attrs, TRITONSERVER_MEMORY_GPU));
  Check(env,
        api.TRITONSERVER_BufferAttributesSetMemoryTypeId(attrs, view.device));
  Check(env, api.TRITONSERVER_BufferAttributesSetByteSize(attrs, byte_length));
  if (ipc) {
    Check(env, api.TRITONSERVER_BufferAttributesSetCudaIpcHandle(
                   attrs, const_cast<unsigned char*>(view.ipc->bytes)));
  }
  Check(env,
        api.TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
            ctx->request, name, view.ptr, attrs));
}

}  // namespace

const OutputPlacement* RequestContext::FindPlacement(const char* name) const {
  if (name == nullptr) return nullptr;
  for (size_t i = 0; i < placement_count; ++i) {
    if (std::strcmp(placements[i].name.c_str(), name) == 0) {
      return &placements[i];
    }
  }
  return nullptr;
}

void ResetContext(napi_env env, RequestContext* ctx) {
  const TritonApi& api = Api();
  if (ctx->request != nullptr) {
    TRITONSERVER_Error* err =
        api.TRITONSERVER_InferenceRequestDelete(ctx->request);
    DropError(err);
    ctx->request = nullptr;
  }
  if (ctx->trace != nullptr) {
    TRITONSERVER_Error* err = api.TRITONSERVER_InferenceTraceDelete(ctx->trace);
    DropError(err);
    ctx->trace = nullptr;
  }
  ReleaseBufferUses(&ctx->buffer_uses);
  for (napi_ref ref : ctx->refs) napi_delete_reference(env, ref);
  ctx->refs.clear();
  ctx->holds.clear();
  for (size_t i = 0; i < ctx->placement_count; ++i) {
    ctx->placements[i].has_into = false;
    ctx->placements[i].into_ref = nullptr;
  }
  ctx->placement_count = 0;
}

void BuildRequest(const Napi::CallbackInfo& info, TRITONSERVER_Server* server,
                  TRITONSERVER_ResponseAllocator* allocator,
                  RequestContext* ctx) {
  const TritonApi& api = Api();
  Napi::Env env = info.Env();
  EnvData* data = GetEnvData(env);
  ctx->request = nullptr;
  ctx->trace = nullptr;
  ctx->placement_count = 0;
  ctx->refs.clear();
  ctx->timing = false;
  std::memset(ctx->timestamps, 0, sizeof(ctx->timestamps));
  ctx->default_kind = kMemCpu;
  ctx->default_device = 0;

  Nums nums(env, info);
  const size_t argc = info.Length();
  const uint32_t input_count = nums.Count(kSlotInputCount, "input count");
  const uint32_t output_count = nums.Count(kSlotOutputCount, "output count");
  const uint32_t param_count =
      nums.Count(kSlotParameterCount, "parameter count");
  if (argc != kSubmitFixedArgs + 2 * (static_cast<size_t>(input_count) +
                                      output_count + param_count)) {
    ThrowTypeError(
        env, "submit: expected " +
                 std::to_string(kSubmitFixedArgs +
                                2 * (static_cast<size_t>(input_count) +
                                     output_count + param_count)) +
                 " arguments for " + std::to_string(input_count) + " inputs, " +
                 std::to_string(output_count) + " outputs and " +
                 std::to_string(param_count) + " parameters, got " +
                 std::to_string(argc));
  }

  // Placement defaults first: they are validated before Triton sees anything.
  int kind = nums.Enum(kSlotOutputMemory, kMemGpu, "outputMemory");
  if (kind >= 0) {
    ctx->default_kind = kind;
    RequireCudaFor(env, kind, "outputMemory");
  }
  int64_t device = nums.Optional(kSlotOutputDevice, "outputDevice");
  if (device >= 0) ctx->default_device = static_cast<int>(device);

  Utf8 model(env, info[1], "model");
  int64_t version = nums.Optional(kSlotVersion, "version");
  Check(env, api.TRITONSERVER_InferenceRequestNew(&ctx->request, server,
                                                  model.c_str(), version));
  TRITONSERVER_InferenceRequest* r = ctx->request;

  napi_value v = info[2];
  if (!IsUndefined(env, v)) {
    Utf8 id(env, v, "request id");
    Check(env, api.TRITONSERVER_InferenceRequestSetId(r, id.c_str()));
  }
  int64_t n = nums.Optional(kSlotPriority, "priority");
  if (n >= 0) {
    Check(env, api.TRITONSERVER_InferenceRequestSetPriorityUInt64(
                   r, static_cast<uint64_t>(n)));
  }
  n = nums.Optional(kSlotTimeout, "timeoutMicroseconds");
  if (n >= 0) {
    Check(env, api.TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
                   r, static_cast<uint64_t>(n)));
  }
  v = info[3];
  if (!IsUndefined(env, v)) {
    napi_valuetype type;
    napi_typeof(env, v, &type);
    if (type == napi_string) {
      Utf8 cid(env, v, "correlationId");
      Check(env, api.TRITONSERVER_InferenceRequestSetCorrelationIdString(
                     r, cid.c_str()));
    } else {
      Check(env, api.TRITONSERVER_InferenceRequestSetCorrelationId(
                     r, ToUint64(env, v, "correlationId")));
    }
  }
  n = nums.Optional(kSlotFlags, "flags");
  if (n >= 0) {
    if (n > UINT32_MAX) ThrowRangeError(env, "flags is out of range");
    Check(env, api.TRITONSERVER_InferenceRequestSetFlags(
                   r, static_cast<uint32_t>(n)));
  }

  // Inputs: appended as they are (borrowed until RELEASE_ALL).
  size_t arg = kSubmitFixedArgs;
  for (uint32_t i = 0; i < input_count; ++i, arg += 2) {
    Utf8 name(env, info[arg], "input name");
    std::string what = std::string("input '") + name.c_str() + "'";
    int code = nums.Enum(nums.Next(), TRITONSERVER_TYPE_BF16, "datatype");
    if (code <= static_cast<int>(TRITONSERVER_TYPE_INVALID)) {
      ThrowTypeError(env,
                     what + ": unknown datatype code " + std::to_string(code));
    }
    TRITONSERVER_DataType dtype = static_cast<TRITONSERVER_DataType>(code);
    int64_t byte_length_arg = nums.Optional(nums.Next(), "byteLength");
    uint32_t dims = nums.Count(nums.Next(), "rank");
    int64_t shape_inline[16];
    std::vector<int64_t> shape_heap;
    int64_t* shape = shape_inline;
    if (dims > 16) {
      shape_heap.resize(dims);
      shape = shape_heap.data();
    }
    for (uint32_t d = 0; d < dims; ++d) {
      double dim = nums.At(nums.Next());
      if (!IsInteger(dim)) {
        ThrowTypeError(env, what + ": shape must hold integers");
      }
      shape[d] = static_cast<int64_t>(dim);
    }
    MemView view;
    if (!ResolveMemView(env, data, info[arg + 1], what, &view)) {
      ThrowTypeError(env, what +
                              ": data must be an ArrayBufferView, HostBuffer "
                              "or CudaBuffer");
    }
    size_t byte_length = view.size;
    if (byte_length_arg >= 0) {
      if (static_cast<uint64_t>(byte_length_arg) > view.size) {
        ThrowRangeError(env, what + ": byteLength " +
                                 std::to_string(byte_length_arg) +
                                 " exceeds its data (" +
                                 std::to_string(view.size) + " bytes)");
      }
      byte_length = static_cast<size_t>(byte_length_arg);
    }
    Check(env, api.TRITONSERVER_InferenceRequestAddInput(r, name.c_str(), dtype,
                                                         shape, dims));
    KeepInput(env, ctx, &view);
    if (view.kind == kMemGpu) {
      AppendDeviceInput(env, ctx, name.c_str(), view, byte_length);
    } else {
      Check(env, api.TRITONSERVER_InferenceRequestAppendInputData(
                     r, name.c_str(), view.ptr, byte_length,
                     static_cast<TRITONSERVER_MemoryType>(view.kind), 0));
    }
  }

  // Requested outputs and their placement.
  if (ctx->placements.size() < output_count) {
    ctx->placements.resize(output_count);
  }
  for (uint32_t i = 0; i < output_count; ++i, arg += 2) {
    Utf8 name(env, info[arg], "output name");
    std::string what = std::string("output '") + name.c_str() + "'";
    OutputPlacement& p = ctx->placements[i];
    p.name.assign(name.c_str(), name.size());
    p.kind = ctx->default_kind;
    p.device = ctx->default_device;
    p.has_into = false;
    p.into_ref = nullptr;
    ctx->placement_count = i + 1;
    int mem = nums.Enum(nums.Next(), kMemGpu, "output memory");
    if (mem >= 0) {
      p.kind = mem;
      RequireCudaFor(env, p.kind, what);
    }
    int64_t dev = nums.Optional(nums.Next(), "output device");
    if (dev >= 0) p.device = static_cast<int>(dev);
    napi_value into = info[arg + 1];
    if (!IsUndefined(env, into)) {
      if (!ResolveMemView(env, data, into, what + " destination", &p.into)) {
        ThrowTypeError(env, what +
                                ": into must be an ArrayBufferView, "
                                "HostBuffer or CudaBuffer");
      }
      p.has_into = true;
      p.into_tag.owner = OutputBuffer::kCaller;
      p.into_tag.kind = p.into.kind;
      p.into_tag.device = p.into.device;
      p.into_tag.ptr = p.into.ptr;
      p.into_tag.capacity = p.into.size;
      p.into_tag.placement = static_cast<int>(i);
      KeepDestination(env, ctx, p.into, what + " destination");
      p.into_ref = ctx->refs.back();
    }
    Check(env,
          api.TRITONSERVER_InferenceRequestAddRequestedOutput(r, name.c_str()));
  }

  // Parameters: name and value, typed by the TS layer.
  for (uint32_t i = 0; i < param_count; ++i, arg += 2) {
    Utf8 name(env, info[arg], "parameter name");
    napi_value value = info[arg + 1];
    std::string what = std::string("parameter '") + name.c_str() + "'";
    switch (nums.Enum(nums.Next(), kParamBool, "parameter type")) {
      case kParamString: {
        Utf8 s(env, value, what.c_str());
        Check(env, api.TRITONSERVER_InferenceRequestSetStringParameter(
                       r, name.c_str(), s.c_str()));
        break;
      }
      case kParamInt: {
        int64_t iv = 0;
        napi_valuetype vt;
        napi_typeof(env, value, &vt);
        if (vt == napi_bigint) {
          bool lossless = false;
          napi_get_value_bigint_int64(env, value, &iv, &lossless);
          if (!lossless) ThrowRangeError(env, what + " is out of int64 range");
        } else {
          double d = ToNumber(env, value, what);
          if (!IsInteger(d)) ThrowRangeError(env, what + " must be an integer");
          iv = static_cast<int64_t>(d);
        }
        Check(env, api.TRITONSERVER_InferenceRequestSetIntParameter(
                       r, name.c_str(), iv));
        break;
      }
      case kParamDouble:
        Check(env, api.TRITONSERVER_InferenceRequestSetDoubleParameter(
                       r, name.c_str(), ToNumber(env, value, what)));
        break;
      case kParamBool: {
        bool b = false;
        if (napi_get_value_bool(env, value, &b) != napi_ok) {
          ThrowTypeError(env, what + " must be a boolean");
        }
        Check(env, api.TRITONSERVER_InferenceRequestSetBoolParameter(
                       r, name.c_str(), b));
        break;
      }
      default:
        ThrowTypeError(env, what + ": missing type");
    }
  }

  Check(env, api.TRITONSERVER_InferenceRequestSetReleaseCallback(
                 r, OnRequestRelease, ctx));
  Check(env, api.TRITONSERVER_InferenceRequestSetResponseCallback(
                 r, allocator, ctx, OnResponseComplete, ctx));

  if (nums.At(kSlotTiming) != 0) {
    Check(env, api.TRITONSERVER_InferenceTraceNew(
                   &ctx->trace, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0,
                   OnTraceActivity, OnTraceRelease, ctx));
    ctx->timing = true;
  }
}

}  // namespace triton_node
