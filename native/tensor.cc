#include "tensor.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "addon.h"
#include "allocator.h"
#include "cuda.h"
#include "request.h"

namespace triton_node {
namespace {

struct DataTypeInfo {
  TRITONSERVER_DataType type;
  const char* name;
  size_t size;
};

// Triton's datatype names and element sizes (ABI facts).
constexpr DataTypeInfo kDataTypes[] = {
    {TRITONSERVER_TYPE_BOOL, "BOOL", 1},
    {TRITONSERVER_TYPE_UINT8, "UINT8", 1},
    {TRITONSERVER_TYPE_UINT16, "UINT16", 2},
    {TRITONSERVER_TYPE_UINT32, "UINT32", 4},
    {TRITONSERVER_TYPE_UINT64, "UINT64", 8},
    {TRITONSERVER_TYPE_INT8, "INT8", 1},
    {TRITONSERVER_TYPE_INT16, "INT16", 2},
    {TRITONSERVER_TYPE_INT32, "INT32", 4},
    {TRITONSERVER_TYPE_INT64, "INT64", 8},
    {TRITONSERVER_TYPE_FP16, "FP16", 2},
    {TRITONSERVER_TYPE_FP32, "FP32", 4},
    {TRITONSERVER_TYPE_FP64, "FP64", 8},
    {TRITONSERVER_TYPE_BYTES, "BYTES", 0},
    {TRITONSERVER_TYPE_BF16, "BF16", 2},
};

// One hand-out of a pooled buffer as an external ArrayBuffer: the
// finalizer's hint. `returned` is set when releaseOutput() gave the buffer
// back early (the ArrayBuffer detached); the finalizer then only frees this.
struct ExternalHandle {
  OutputBuffer* buffer;
  bool returned;
};

// Live hand-outs by data pointer, for releaseOutput(). Finalizers of several
// environments (threads) touch it: guarded by its mutex.
std::mutex g_external_mu;
std::unordered_map<const void*, ExternalHandle*>* g_external =
    new std::unordered_map<const void*, ExternalHandle*>();  // never freed

// Output memory held by JS objects is reported to V8 (so that a program
// that never disposes still gets it collected), but only beyond this
// allowance: V8 starts a full GC whenever reported memory grows by 64 MiB
// since the last one, which would mean one full GC (and its helper threads
// taking the CPU Triton needs) per 64 MiB response even when the program
// disposes every output.
constexpr int64_t kUnreportedBytes = int64_t{256} << 20;

// Per JS thread (one environment each): bytes of live hand-outs, and how
// much of them V8 was told about.
thread_local int64_t t_live_external = 0;
thread_local int64_t t_reported_external = 0;

void AccountExternal(napi_env env, int64_t delta) {
  t_live_external += delta;
  int64_t want = t_live_external > kUnreportedBytes
                     ? t_live_external - kUnreportedBytes
                     : 0;
  if (want == t_reported_external) return;
  int64_t adjusted = 0;
  napi_adjust_external_memory(env, want - t_reported_external, &adjusted);
  t_reported_external = want;
}

// Gives the buffer of a hand-out back to the pool (JS thread).
void ReturnExternal(napi_env env, ExternalHandle* handle) {
  OutputBuffer* buffer = handle->buffer;
  handle->returned = true;
  AccountExternal(env, -static_cast<int64_t>(buffer->capacity));
  BufferPool::live_js_buffers.fetch_sub(1, std::memory_order_relaxed);
  BufferPool::Return(buffer);
}

// Finalizer of an external ArrayBuffer over a pooled buffer (JS thread).
void FinalizeExternal(napi_env env, void*, void* hint) {
  auto* handle = static_cast<ExternalHandle*>(hint);
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = g_external->find(handle->buffer->ptr);
    if (it != g_external->end() && it->second == handle) g_external->erase(it);
  }
  if (!handle->returned) ReturnExternal(env, handle);
  delete handle;
}

// Gives a pooled buffer to a JS object; returns the function that gives it
// back (dispose or GC).
std::function<void()> TakeOver(OutputBuffer* buffer) {
  buffer->js_owned.store(true, std::memory_order_release);
  BufferPool::live_js_buffers.fetch_add(1, std::memory_order_relaxed);
  return [buffer] {
    BufferPool::live_js_buffers.fetch_sub(1, std::memory_order_relaxed);
    BufferPool::Return(buffer);
  };
}

Napi::Value CpuData(Napi::Env env, const OutputRecord& out, size_t* offset) {
  *offset = 0;
  if (out.byte_size == 0 || out.base == nullptr) {
    return Napi::ArrayBuffer::New(env, 0);
  }
  EnvData* data = GetEnvData(env);
  OutputBuffer* buffer = out.buffer;
  bool can_share = buffer != nullptr &&
                   buffer->owner == OutputBuffer::kPooled &&
                   buffer->ptr == out.base && !data->CopyOutputs();
  if (can_share) {
    napi_value ab = nullptr;
    auto* handle = new ExternalHandle{buffer, false};
    napi_status status = napi_create_external_arraybuffer(
        env, const_cast<void*>(out.base), out.byte_size, FinalizeExternal,
        handle, &ab);
    if (status != napi_ok) delete handle;
    if (status == napi_ok) {
      {
        std::lock_guard<std::mutex> lock(g_external_mu);
        (*g_external)[buffer->ptr] = handle;
      }
      // Set before the response is deleted: the release function then
      // leaves the buffer to the finalizer.
      buffer->js_owned.store(true, std::memory_order_release);
      BufferPool::live_js_buffers.fetch_add(1, std::memory_order_relaxed);
      AccountExternal(env, static_cast<int64_t>(buffer->capacity));
      return Napi::Value(env, ab);
    }
    if (status == napi_no_external_buffers_allowed) {
      data->external_refused = true;  // remembered for this environment
    } else {
      throw Napi::Error::New(env);
    }
  }
  // Copy path: the pooled buffer goes back when the response is deleted.
  Napi::ArrayBuffer copy = Napi::ArrayBuffer::New(env, out.byte_size);
  std::memcpy(copy.Data(), out.base, out.byte_size);
  return copy;
}

}  // namespace

TRITONSERVER_DataType DataTypeFromName(const char* name, size_t length) {
  for (const DataTypeInfo& info : kDataTypes) {
    if (std::strlen(info.name) == length &&
        std::memcmp(info.name, name, length) == 0) {
      return info.type;
    }
  }
  return TRITONSERVER_TYPE_INVALID;
}

const char* DataTypeName(TRITONSERVER_DataType type) {
  for (const DataTypeInfo& info : kDataTypes) {
    if (info.type == type) return info.name;
  }
  return "INVALID";
}

size_t DataTypeSize(TRITONSERVER_DataType type) {
  for (const DataTypeInfo& info : kDataTypes) {
    if (info.type == type) return info.size;
  }
  return 0;
}

const char* MemKindName(int kind) {
  switch (kind) {
    case kMemPinned:
      return "pinned";
    case kMemGpu:
      return "gpu";
    default:
      return "cpu";
  }
}

Napi::Value ReleaseOutput(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) {
    ThrowTypeError(env, "releaseOutput(arrayBuffer) expects an ArrayBuffer");
  }
  napi_value ab = info[0];
  void* data = nullptr;
  size_t length = 0;
  napi_get_arraybuffer_info(env, ab, &data, &length);
  ExternalHandle* handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = data != nullptr ? g_external->find(data) : g_external->end();
    if (it == g_external->end() || it->second->returned) {
      return Napi::Boolean::New(env, false);
    }
    handle = it->second;
  }
  // Detached first: once no JS object can reach the memory, it may go back.
  if (napi_detach_arraybuffer(env, ab) != napi_ok) {
    return Napi::Boolean::New(env, false);
  }
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = g_external->find(data);
    if (it != g_external->end() && it->second == handle) g_external->erase(it);
  }
  ReturnExternal(env, handle);
  return Napi::Boolean::New(env, true);
}

bool CopiedSmall(const OutputRecord& out) {
  if (out.memory_type != TRITONSERVER_MEMORY_CPU) return false;
  if (out.byte_size > kSmallOutputBytes) return false;
  if (out.byte_size > 0 && out.base == nullptr) return false;
  return out.buffer == nullptr || out.buffer->owner == OutputBuffer::kPooled;
}

Napi::Value OutputData(Napi::Env env, const RequestContext* ctx,
                       const OutputRecord& out, size_t* offset) {
  OutputBuffer* buffer = out.buffer;
  *offset = 0;
  if (buffer != nullptr && buffer->owner == OutputBuffer::kCaller) {
    // The caller's own destination comes back as the caller's object.
    const OutputPlacement& p = ctx->placements[buffer->placement];
    napi_value owner = nullptr;
    napi_get_reference_value(env, p.into_ref, &owner);
    Napi::Value owner_v(env, owner);
    if (p.into.kind != kMemCpu) return owner_v;
    Napi::Value data;
    if (owner_v.IsTypedArray()) {
      Napi::TypedArray ta = owner_v.As<Napi::TypedArray>();
      data = ta.ArrayBuffer();
      *offset = ta.ByteOffset();
    } else if (owner_v.IsDataView()) {
      Napi::DataView dv = owner_v.As<Napi::DataView>();
      data = dv.ArrayBuffer();
      *offset = dv.ByteOffset();
    } else {
      data = owner_v;
    }
    *offset += static_cast<const uint8_t*>(out.base) - p.into.ptr;
    return data;
  }
  if (out.memory_type == TRITONSERVER_MEMORY_GPU && buffer != nullptr) {
    return CudaBufferWrap::Create(env, buffer->ptr, out.byte_size,
                                  buffer->device, false, nullptr,
                                  TakeOver(buffer));
  }
  if (out.memory_type == TRITONSERVER_MEMORY_CPU_PINNED && buffer != nullptr) {
    return HostBufferWrap::Create(env, buffer->ptr, out.byte_size,
                                  TakeOver(buffer));
  }
  return CpuData(env, out, offset);
}

Napi::Object ConvertOutput(Napi::Env env, const RequestContext* ctx,
                           const OutputRecord& out) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", Napi::String::New(env, out.name ? out.name : ""));
  o.Set("datatype", Napi::String::New(env, DataTypeName(out.datatype)));
  Napi::Array shape = Napi::Array::New(env, out.dim_count);
  for (uint64_t d = 0; d < out.dim_count; ++d) {
    shape.Set(static_cast<uint32_t>(d),
              Napi::Number::New(env, static_cast<double>(out.shape[d])));
  }
  o.Set("shape", shape);
  o.Set("memoryType", Napi::String::New(env, MemKindName(out.memory_type)));
  o.Set("memoryTypeId",
        Napi::Number::New(env, static_cast<double>(out.memory_type_id)));
  o.Set("byteLength",
        Napi::Number::New(env, static_cast<double>(out.byte_size)));
  size_t offset = 0;
  o.Set("data", OutputData(env, ctx, out, &offset));
  o.Set("byteOffset", Napi::Number::New(env, static_cast<double>(offset)));
  return o;
}

}  // namespace triton_node
