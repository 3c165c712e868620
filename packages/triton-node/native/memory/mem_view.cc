#include "memory/mem_view.h"

#include "env/env_data.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

size_t ElementSize(napi_typedarray_type type) {
  switch (type) {
    case napi_int16_array:
    case napi_uint16_array:
      return 2;
    case napi_int32_array:
    case napi_uint32_array:
    case napi_float32_array:
      return 4;
    case napi_float64_array:
    case napi_bigint64_array:
    case napi_biguint64_array:
      return 8;
    default:
      return 1;
  }
}

// An empty view may sit on a detached ArrayBuffer: its memory is gone.
void RejectDetached(Napi::Env env, size_t length, napi_value array_buffer,
                    const Subject& what) {
  if (length != 0) return;
  bool detached = false;
  napi_is_detached_arraybuffer(env, array_buffer, &detached);
  if (detached)
    ThrowTypeError(env, what.str() + ": its ArrayBuffer is detached");
}

void FillHostView(napi_value owner, void* ptr, size_t size, napi_value ab,
                  size_t offset, MemView* view) {
  view->ptr = static_cast<uint8_t*>(ptr);
  view->size = size;
  view->kind = kMemCpu;
  view->owner = owner;
  view->array_buffer = ab;
  view->byte_offset = offset;
}

bool TypedArrayView(Napi::Env env, napi_value value, const Subject& what,
                    MemView* view) {
  napi_typedarray_type type;
  size_t length = 0;
  void* ptr = nullptr;
  napi_value ab = nullptr;
  size_t offset = 0;
  NAPI_THROW_IF_FAILED(
      env,
      napi_get_typedarray_info(env, value, &type, &length, &ptr, &ab, &offset),
      false);
  RejectDetached(env, length, ab, what);
  FillHostView(value, ptr, length * ElementSize(type), ab, offset, view);
  return true;
}

bool DataViewView(Napi::Env env, napi_value value, const Subject& what,
                  MemView* view) {
  size_t length = 0;
  void* ptr = nullptr;
  napi_value ab = nullptr;
  size_t offset = 0;
  NAPI_THROW_IF_FAILED(
      env, napi_get_dataview_info(env, value, &length, &ptr, &ab, &offset),
      false);
  RejectDetached(env, length, ab, what);
  FillHostView(value, ptr, length, ab, offset, view);
  return true;
}

// A HostBuffer or CudaBuffer: the class fills the view (env/env_data.h).
bool BufferObjectView(Napi::Env env, napi_value value, const Subject& what,
                      MemView* view) {
  napi_valuetype type;
  napi_typeof(env, value, &type);
  if (type != napi_object) return false;
  EnvData* data = GetEnvData(env);
  Napi::Object object(env, value);
  BufferViewFn fn = nullptr;
  if (object.InstanceOf(data->host_buffer_ctor.Value())) {
    fn = data->host_buffer_view;
  } else if (object.InstanceOf(data->cuda_buffer_ctor.Value())) {
    fn = data->cuda_buffer_view;
  }
  if (fn == nullptr) return false;
  fn(object, what, view);
  view->owner = value;
  return true;
}

}  // namespace

bool ResolveMemView(Napi::Env env, napi_value value, const Subject& what,
                    MemView* view) {
  bool is = false;
  napi_is_typedarray(env, value, &is);
  if (is) return TypedArrayView(env, value, what, view);
  napi_is_dataview(env, value, &is);
  if (is) return DataViewView(env, value, what, view);
  return BufferObjectView(env, value, what, view);
}

}  // namespace triton_node
