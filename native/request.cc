#include "request.h"

#include <cstring>

#include "completion.h"
#include "errors.h"
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
      return;
    }
    napi_get_value_string_utf8(env, value, nullptr, 0, &length);
    heap_.resize(length + 1);
    napi_get_value_string_utf8(env, value, &heap_[0], length + 1, &length);
    data_ = heap_.c_str();
    length_ = length;
  }
  const char* c_str() const { return data_; }
  size_t size() const { return length_; }

 private:
  char inline_[128];
  std::string heap_;
  const char* data_ = nullptr;
  size_t length_ = 0;
};

napi_value GetProp(Napi::Env env, napi_value obj, napi_value key) {
  napi_value v = nullptr;
  napi_get_property(env, obj, key, &v);
  return v;
}

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

int ParseMemKind(Napi::Env env, napi_value v, const std::string& what) {
  Utf8 s(env, v, what.c_str());
  if (std::strcmp(s.c_str(), "cpu") == 0) return kMemCpu;
  if (std::strcmp(s.c_str(), "pinned") == 0) return kMemPinned;
  if (std::strcmp(s.c_str(), "gpu") == 0) return kMemGpu;
  ThrowTypeError(
      env, what + " must be 'cpu', 'pinned' or 'gpu', got '" + s.c_str() + "'");
}

void RequireCudaFor(Napi::Env env, int kind, const std::string& what) {
  if (kind == kMemCpu || Cuda().available) return;
  throw MakeError(env, "UNSUPPORTED",
                  what + ": " + (kind == kMemGpu ? "GPU" : "pinned") +
                      " memory needs CUDA, which is not available (" +
                      Cuda().reason + ")");
}

void Check(Napi::Env env, TRITONSERVER_Error* err) { ThrowIfError(env, err); }

void KeepAlive(Napi::Env env, RequestContext* ctx, const MemView& view) {
  napi_ref ref = nullptr;
  napi_create_reference(env, view.owner, 1, &ref);
  ctx->refs.push_back(ref);
  if (view.use != nullptr) {
    view.use->Acquire();
    ctx->buffer_uses.push_back(view.use);
  }
}

}  // namespace

const char* const kRequestKeyNames[kRequestKeyCount] = {"model",
                                                        "version",
                                                        "id",
                                                        "priority",
                                                        "timeoutMicroseconds",
                                                        "correlationId",
                                                        "flags",
                                                        "parameters",
                                                        "inputs",
                                                        "outputs",
                                                        "outputMemory",
                                                        "outputDevice",
                                                        "timing",
                                                        "name",
                                                        "datatype",
                                                        "shape",
                                                        "data",
                                                        "byteLength",
                                                        "memory",
                                                        "device",
                                                        "into"};

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
    if (err != nullptr) api.TRITONSERVER_ErrorDelete(err);
    ctx->request = nullptr;
  }
  if (ctx->trace != nullptr) {
    TRITONSERVER_Error* err = api.TRITONSERVER_InferenceTraceDelete(ctx->trace);
    if (err != nullptr) api.TRITONSERVER_ErrorDelete(err);
    ctx->trace = nullptr;
  }
  ReleaseBufferUses(&ctx->buffer_uses);
  for (napi_ref ref : ctx->refs) napi_delete_reference(env, ref);
  ctx->refs.clear();
  for (size_t i = 0; i < ctx->placement_count; ++i) {
    ctx->placements[i].has_into = false;
    ctx->placements[i].into_ref = nullptr;
  }
  ctx->placement_count = 0;
}

void BuildRequest(Napi::Env env, TRITONSERVER_Server* server,
                  TRITONSERVER_ResponseAllocator* allocator,
                  Napi::Object request_obj, const napi_value* keys,
                  RequestContext* ctx) {
  const TritonApi& api = Api();
  napi_value req = request_obj;
  EnvData* data = GetEnvData(env);
  ctx->request = nullptr;
  ctx->trace = nullptr;
  ctx->placement_count = 0;
  ctx->refs.clear();
  ctx->timing = false;
  std::memset(ctx->timestamps, 0, sizeof(ctx->timestamps));
  ctx->default_kind = kMemCpu;
  ctx->default_device = 0;

  // Placement defaults first: they are validated before Triton sees anything.
  napi_value v = GetProp(env, req, keys[kKeyOutputMemory]);
  if (!IsUndefined(env, v)) {
    ctx->default_kind = ParseMemKind(env, v, "outputMemory");
    RequireCudaFor(env, ctx->default_kind, "outputMemory");
  }
  v = GetProp(env, req, keys[kKeyOutputDevice]);
  if (!IsUndefined(env, v)) {
    ctx->default_device = static_cast<int>(ToUint64(env, v, "outputDevice"));
  }

  Utf8 model(env, GetProp(env, req, keys[kKeyModel]), "model");
  int64_t version = -1;
  v = GetProp(env, req, keys[kKeyVersion]);
  if (!IsUndefined(env, v)) {
    double d = ToNumber(env, v, "version");
    if (d != static_cast<double>(static_cast<int64_t>(d)) || d < -1) {
      ThrowRangeError(env, "version must be -1 or a non-negative integer");
    }
    version = static_cast<int64_t>(d);
  }
  Check(env, api.TRITONSERVER_InferenceRequestNew(&ctx->request, server,
                                                  model.c_str(), version));
  TRITONSERVER_InferenceRequest* r = ctx->request;

  v = GetProp(env, req, keys[kKeyId]);
  if (!IsUndefined(env, v)) {
    Utf8 id(env, v, "id");
    Check(env, api.TRITONSERVER_InferenceRequestSetId(r, id.c_str()));
  }
  v = GetProp(env, req, keys[kKeyPriority]);
  if (!IsUndefined(env, v)) {
    Check(env, api.TRITONSERVER_InferenceRequestSetPriorityUInt64(
                   r, ToUint64(env, v, "priority")));
  }
  v = GetProp(env, req, keys[kKeyTimeoutMicroseconds]);
  if (!IsUndefined(env, v)) {
    Check(env, api.TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
                   r, ToUint64(env, v, "timeoutMicroseconds")));
  }
  v = GetProp(env, req, keys[kKeyCorrelationId]);
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
  v = GetProp(env, req, keys[kKeyFlags]);
  if (!IsUndefined(env, v)) {
    Check(env, api.TRITONSERVER_InferenceRequestSetFlags(
                   r, static_cast<uint32_t>(ToUint64(env, v, "flags"))));
  }

  // Parameters: [name, type, value].
  v = GetProp(env, req, keys[kKeyParameters]);
  if (!IsUndefined(env, v)) {
    Napi::Array params(env, v);
    if (!params.IsArray()) ThrowTypeError(env, "parameters must be an array");
    uint32_t n = params.Length();
    for (uint32_t i = 0; i < n; ++i) {
      Napi::Value entry = params.Get(i);
      if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 3) {
        ThrowTypeError(env, "parameters[" + std::to_string(i) +
                                "] must be [name, type, value]");
      }
      Napi::Array p = entry.As<Napi::Array>();
      Utf8 name(env, p.Get(0u), "parameter name");
      Utf8 type(env, p.Get(1u), "parameter type");
      napi_value value = p.Get(2u);
      std::string what = std::string("parameter '") + name.c_str() + "'";
      if (std::strcmp(type.c_str(), "string") == 0) {
        Utf8 s(env, value, what.c_str());
        Check(env, api.TRITONSERVER_InferenceRequestSetStringParameter(
                       r, name.c_str(), s.c_str()));
      } else if (std::strcmp(type.c_str(), "int") == 0) {
        int64_t iv = 0;
        napi_valuetype vt;
        napi_typeof(env, value, &vt);
        if (vt == napi_bigint) {
          bool lossless = false;
          napi_get_value_bigint_int64(env, value, &iv, &lossless);
          if (!lossless) ThrowRangeError(env, what + " is out of int64 range");
        } else {
          double d = ToNumber(env, value, what);
          if (d != static_cast<double>(static_cast<int64_t>(d))) {
            ThrowRangeError(env, what + " must be an integer");
          }
          iv = static_cast<int64_t>(d);
        }
        Check(env, api.TRITONSERVER_InferenceRequestSetIntParameter(
                       r, name.c_str(), iv));
      } else if (std::strcmp(type.c_str(), "double") == 0) {
        Check(env, api.TRITONSERVER_InferenceRequestSetDoubleParameter(
                       r, name.c_str(), ToNumber(env, value, what)));
      } else if (std::strcmp(type.c_str(), "bool") == 0) {
        bool b = false;
        if (napi_get_value_bool(env, value, &b) != napi_ok) {
          ThrowTypeError(env, what + " must be a boolean");
        }
        Check(env, api.TRITONSERVER_InferenceRequestSetBoolParameter(
                       r, name.c_str(), b));
      } else {
        ThrowTypeError(env, what + ": unknown type '" + type.c_str() + "'");
      }
    }
  }

  // Inputs: appended as they are (borrowed until RELEASE_ALL).
  v = GetProp(env, req, keys[kKeyInputs]);
  bool is_array = false;
  napi_is_array(env, v, &is_array);
  if (!is_array) ThrowTypeError(env, "inputs must be an array");
  uint32_t input_count = 0;
  napi_get_array_length(env, v, &input_count);
  for (uint32_t i = 0; i < input_count; ++i) {
    napi_value input = nullptr;
    napi_get_element(env, v, i, &input);
    napi_valuetype it;
    napi_typeof(env, input, &it);
    if (it != napi_object) {
      ThrowTypeError(env,
                     "inputs[" + std::to_string(i) + "] must be an object");
    }
    Utf8 name(env, GetProp(env, input, keys[kKeyName]), "input name");
    std::string what = std::string("input '") + name.c_str() + "'";
    Utf8 dtype_name(env, GetProp(env, input, keys[kKeyDatatype]),
                    (what + " datatype").c_str());
    TRITONSERVER_DataType dtype =
        DataTypeFromName(dtype_name.c_str(), dtype_name.size());
    if (dtype == TRITONSERVER_TYPE_INVALID) {
      ThrowTypeError(env,
                     what + ": unknown datatype '" + dtype_name.c_str() + "'");
    }
    napi_value shape_v = GetProp(env, input, keys[kKeyShape]);
    bool shape_is_array = false;
    napi_is_array(env, shape_v, &shape_is_array);
    if (!shape_is_array) ThrowTypeError(env, what + ": shape must be an array");
    uint32_t dims = 0;
    napi_get_array_length(env, shape_v, &dims);
    int64_t shape_inline[16];
    std::vector<int64_t> shape_heap;
    int64_t* shape = shape_inline;
    if (dims > 16) {
      shape_heap.resize(dims);
      shape = shape_heap.data();
    }
    for (uint32_t d = 0; d < dims; ++d) {
      napi_value dim_v;
      napi_get_element(env, shape_v, d, &dim_v);
      double dim = ToNumber(env, dim_v, what + " shape");
      if (dim != static_cast<double>(static_cast<int64_t>(dim))) {
        ThrowTypeError(env, what + ": shape must hold integers");
      }
      shape[d] = static_cast<int64_t>(dim);
    }
    MemView view;
    napi_value data_v = GetProp(env, input, keys[kKeyData]);
    if (!ResolveMemView(env, data, data_v, what, &view)) {
      ThrowTypeError(env, what +
                              ": data must be an ArrayBufferView, HostBuffer "
                              "or CudaBuffer");
    }
    size_t byte_length = view.size;
    napi_value bl = GetProp(env, input, keys[kKeyByteLength]);
    if (!IsUndefined(env, bl)) {
      uint64_t n = ToUint64(env, bl, what + " byteLength");
      if (n > view.size) {
        ThrowRangeError(env, what + ": byteLength " + std::to_string(n) +
                                 " exceeds its data (" +
                                 std::to_string(view.size) + " bytes)");
      }
      byte_length = static_cast<size_t>(n);
    }
    Check(env, api.TRITONSERVER_InferenceRequestAddInput(r, name.c_str(), dtype,
                                                         shape, dims));
    if (view.kind == kMemGpu) {
      if (ctx->attributes == nullptr) {
        Check(env, api.TRITONSERVER_BufferAttributesNew(&ctx->attributes));
      }
      TRITONSERVER_BufferAttributes* attrs = ctx->attributes;
      Check(env, api.TRITONSERVER_BufferAttributesSetMemoryType(
                     attrs, TRITONSERVER_MEMORY_GPU));
      Check(env, api.TRITONSERVER_BufferAttributesSetMemoryTypeId(attrs,
                                                                  view.device));
      Check(env,
            api.TRITONSERVER_BufferAttributesSetByteSize(attrs, byte_length));
      Check(env, api.TRITONSERVER_BufferAttributesSetCudaIpcHandle(
                     attrs, view.ipc != nullptr
                                ? const_cast<unsigned char*>(view.ipc->bytes)
                                : nullptr));
      Check(
          env,
          api.TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
              r, name.c_str(), view.ptr, attrs));
    } else {
      Check(env, api.TRITONSERVER_InferenceRequestAppendInputData(
                     r, name.c_str(), view.ptr, byte_length,
                     static_cast<TRITONSERVER_MemoryType>(view.kind), 0));
    }
    KeepAlive(env, ctx, view);
  }

  // Requested outputs and their placement.
  v = GetProp(env, req, keys[kKeyOutputs]);
  if (!IsUndefined(env, v)) {
    bool outputs_array = false;
    napi_is_array(env, v, &outputs_array);
    if (!outputs_array) ThrowTypeError(env, "outputs must be an array");
    uint32_t n = 0;
    napi_get_array_length(env, v, &n);
    if (ctx->placements.size() < n) ctx->placements.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      napi_value out = nullptr;
      napi_get_element(env, v, i, &out);
      napi_valuetype ot;
      napi_typeof(env, out, &ot);
      if (ot != napi_object) {
        ThrowTypeError(env,
                       "outputs[" + std::to_string(i) + "] must be an object");
      }
      Utf8 name(env, GetProp(env, out, keys[kKeyName]), "output name");
      std::string what = std::string("output '") + name.c_str() + "'";
      OutputPlacement& p = ctx->placements[i];
      p.name.assign(name.c_str(), name.size());
      p.kind = ctx->default_kind;
      p.device = ctx->default_device;
      p.has_into = false;
      p.into_ref = nullptr;
      ctx->placement_count = i + 1;
      napi_value mem = GetProp(env, out, keys[kKeyMemory]);
      if (!IsUndefined(env, mem)) {
        p.kind = ParseMemKind(env, mem, what + " memory");
        RequireCudaFor(env, p.kind, what);
      }
      napi_value dev = GetProp(env, out, keys[kKeyDevice]);
      if (!IsUndefined(env, dev)) {
        p.device = static_cast<int>(ToUint64(env, dev, what + " device"));
      }
      napi_value into = GetProp(env, out, keys[kKeyInto]);
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
        KeepAlive(env, ctx, p.into);
        p.into_ref = ctx->refs.back();
      }
      Check(env, api.TRITONSERVER_InferenceRequestAddRequestedOutput(
                     r, name.c_str()));
    }
  }

  Check(env, api.TRITONSERVER_InferenceRequestSetReleaseCallback(
                 r, OnRequestRelease, ctx));
  Check(env, api.TRITONSERVER_InferenceRequestSetResponseCallback(
                 r, allocator, ctx, OnResponseComplete, ctx));

  v = GetProp(env, req, keys[kKeyTiming]);
  bool timing = false;
  if (!IsUndefined(env, v)) napi_get_value_bool(env, v, &timing);
  if (timing) {
    Check(env, api.TRITONSERVER_InferenceTraceNew(
                   &ctx->trace, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0,
                   OnTraceActivity, OnTraceRelease, ctx));
    ctx->timing = true;
  }
}

}  // namespace triton_node
