#include "objects/host_buffer.h"

#include <utility>

#include "env/env_data.h"
#include "memory/buffer_objects.h"
#include "objects/buffer_copy.h"
#include "triton/errors.h"

namespace triton_node {

Napi::Function HostBufferWrap::Init(Napi::Env env) {
  Napi::Function ctor =
      DefineClass(env, "HostBuffer",
                  {InstanceAccessor<&HostBufferWrap::Kind>("kind"),
                   InstanceAccessor<&HostBufferWrap::ByteLength>("byteLength"),
                   InstanceAccessor<&HostBufferWrap::Disposed>("disposed"),
                   InstanceMethod<&HostBufferWrap::ArrayBuffer>("arrayBuffer"),
                   InstanceMethod<&HostBufferWrap::CopyFrom>("copyFrom"),
                   InstanceMethod<&HostBufferWrap::CopyTo>("copyTo"),
                   InstanceMethod<&HostBufferWrap::Dispose>("dispose")});
  EnvData* data = GetEnvData(env);
  data->host_buffer_ctor = Napi::Persistent(ctor);
  data->host_buffer_view = &HostBufferWrap::ViewOf;
  return ctor;
}

void HostBufferWrap::ViewOf(Napi::Object object, const Subject& what,
                            MemView* view) {
  HostBufferWrap* host = Unwrap(object);
  if (host->disposed_) {
    ThrowTypeError(object.Env(), what.str() + ": the HostBuffer was disposed");
  }
  view->ptr = host->ptr_;
  view->size = host->size_;
  view->kind = kMemPinned;
  view->use = host;
}

HostBufferWrap::HostBufferWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<HostBufferWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(),
                   "HostBuffer cannot be constructed directly; use "
                   "cuda.allocHost()");
  }
  BufferInit* init = info[0].As<Napi::External<BufferInit>>().Data();
  ptr_ = static_cast<uint8_t*>(init->ptr);
  size_ = init->size;
  release_ = std::move(init->release);
}

// Only reached with no request using the buffer (a request holds a
// reference to it), except at environment teardown, where the memory goes.
HostBufferWrap::~HostBufferWrap() {
  Free(Env());
  ReleaseMemory();
}

void HostBufferWrap::Free(napi_env env) {
  for (napi_ref ref : views_) {
    napi_value ab = nullptr;
    if (disposed_ == false &&
        napi_get_reference_value(env, ref, &ab) == napi_ok && ab != nullptr) {
      napi_detach_arraybuffer(env, ab);
    }
    napi_delete_reference(env, ref);
  }
  views_.clear();
  if (!disposed_) {
    disposed_ = true;
    if (users() == 0) ReleaseMemory();
  }
}

void HostBufferWrap::ReleaseMemory() {
  if (release_) release_();
  release_ = nullptr;
}

Napi::Value HostBufferWrap::Kind(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), "host");
}
Napi::Value HostBufferWrap::ByteLength(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(size_));
}
Napi::Value HostBufferWrap::Disposed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), disposed_);
}

Napi::Value HostBufferWrap::ArrayBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (disposed_) ThrowTypeError(env, "HostBuffer was disposed");
  // The ArrayBuffer holds a strong reference to this wrapper so the pinned
  // memory outlives every view; dispose() detaches the views instead.
  napi_ref self_ref = nullptr;
  napi_create_reference(env, Value(), 1, &self_ref);
  napi_value ab = nullptr;
  napi_status status = napi_create_external_arraybuffer(
      env, ptr_, size_,
      [](napi_env e, void*, void* hint) {
        napi_delete_reference(e, static_cast<napi_ref>(hint));
      },
      self_ref, &ab);
  if (status != napi_ok) {
    napi_delete_reference(env, self_ref);
    if (status == napi_no_external_buffers_allowed) {
      GetEnvData(env)->external_refused = true;
      throw MakeError(env, "UNSUPPORTED",
                      "this runtime does not allow external ArrayBuffers "
                      "(Electron); use copyFrom/copyTo");
    }
    throw Napi::Error::New(env);
  }
  napi_ref weak = nullptr;
  napi_create_reference(env, ab, 0, &weak);
  views_.push_back(weak);
  return Napi::Value(env, ab);
}

// copyFrom(src, offset) / copyTo(dst, offset) of a HostBuffer or CudaBuffer

void HostBufferWrap::CopyFrom(const Napi::CallbackInfo& info) {
  if (disposed_) ThrowTypeError(info.Env(), "HostBuffer was disposed");
  CopyWithBuffer(info, ptr_, size_, kMemPinned, true);
}

void HostBufferWrap::CopyTo(const Napi::CallbackInfo& info) {
  if (disposed_) ThrowTypeError(info.Env(), "HostBuffer was disposed");
  CopyWithBuffer(info, ptr_, size_, kMemPinned, false);
}

void HostBufferWrap::Dispose(const Napi::CallbackInfo& info) {
  Free(info.Env());
}

}  // namespace triton_node
