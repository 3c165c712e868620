#include "request/outputs.h"

#include <cstring>
#include <utility>

#include "env/env_data.h"
#include "memory/buffer_objects.h"
#include "memory/buffer_pool.h"
#include "memory/external_outputs.h"
#include "memory/mem_kind.h"
#include "request/context.h"

namespace triton_node {
namespace {

// CPU memory: an external ArrayBuffer over the pooled buffer, or a copy
// (external buffers refused or disabled, or memory that is not pooled).
Napi::Value CpuData(Napi::Env env, const OutputRecord& out) {
  if (out.byte_size == 0 || out.base == nullptr) {
    return Napi::ArrayBuffer::New(env, 0);
  }
  EnvData* data = GetEnvData(env);
  OutputBuffer* buffer = out.buffer;
  bool can_share = buffer != nullptr &&
                   buffer->owner == OutputBuffer::kPooled &&
                   buffer->ptr == out.base && !data->CopyOutputs();
  if (can_share) {
    bool refused = false;
    napi_value ab =
        ShareAsArrayBuffer(env, buffer, out.base, out.byte_size, &refused);
    if (ab != nullptr) return Napi::Value(env, ab);
    data->external_refused = true;  // remembered for this environment
  }
  // The pooled buffer goes back when the response is deleted.
  Napi::ArrayBuffer copy = Napi::ArrayBuffer::New(env, out.byte_size);
  std::memcpy(copy.Data(), out.base, out.byte_size);
  return copy;
}

// The caller's own destination comes back as the caller's object (for CPU
// memory: its ArrayBuffer, with the output's offset in it).
Napi::Value DestinationData(Napi::Env env, const RequestContext* ctx,
                            const OutputRecord& out, size_t* offset) {
  const OutputPlacement& p = ctx->placements.items[out.buffer->placement];
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

}  // namespace

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
    return DestinationData(env, ctx, out, offset);
  }
  if (out.memory_type == TRITONSERVER_MEMORY_GPU && buffer != nullptr) {
    BufferInit init;
    init.ptr = buffer->ptr;
    init.size = out.byte_size;
    init.device = buffer->device;
    init.release = HandOver(buffer);
    return NewCudaBufferObject(env, std::move(init));
  }
  if (out.memory_type == TRITONSERVER_MEMORY_CPU_PINNED && buffer != nullptr) {
    BufferInit init;
    init.ptr = buffer->ptr;
    init.size = out.byte_size;
    init.release = HandOver(buffer);
    return NewHostBufferObject(env, std::move(init));
  }
  return CpuData(env, out);
}

}  // namespace triton_node
