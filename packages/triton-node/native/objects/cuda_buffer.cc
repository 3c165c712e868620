#include "objects/cuda_buffer.h"

#include <cstring>
#include <utility>

#include "env/env_data.h"
#include "memory/buffer_objects.h"
#include "objects/buffer_copy.h"
#include "triton/errors.h"

namespace triton_node {

Napi::Function CudaBufferWrap::Init(Napi::Env env) {
  Napi::Function ctor =
      DefineClass(env, "CudaBuffer",
                  {InstanceAccessor<&CudaBufferWrap::Kind>("kind"),
                   InstanceAccessor<&CudaBufferWrap::Device>("device"),
                   InstanceAccessor<&CudaBufferWrap::ByteLength>("byteLength"),
                   InstanceAccessor<&CudaBufferWrap::Disposed>("disposed"),
                   InstanceAccessor<&CudaBufferWrap::Imported>("imported"),
                   InstanceMethod<&CudaBufferWrap::CopyFrom>("copyFrom"),
                   InstanceMethod<&CudaBufferWrap::CopyTo>("copyTo"),
                   InstanceMethod<&CudaBufferWrap::IpcHandle>("ipcHandle"),
                   InstanceMethod<&CudaBufferWrap::Dispose>("dispose")});
  EnvData* data = GetEnvData(env);
  data->cuda_buffer_ctor = Napi::Persistent(ctor);
  data->cuda_buffer_view = &CudaBufferWrap::ViewOf;
  return ctor;
}

void CudaBufferWrap::ViewOf(Napi::Object object, const Subject& what,
                            MemView* view) {
  CudaBufferWrap* dev = Unwrap(object);
  if (dev->disposed_) {
    ThrowTypeError(object.Env(), what.str() + ": the CudaBuffer was disposed");
  }
  view->ptr = dev->ptr_;
  view->size = dev->size_;
  view->kind = kMemGpu;
  view->device = dev->device_;
  view->ipc = dev->ipc();
  view->use = dev;
}

CudaBufferWrap::CudaBufferWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<CudaBufferWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(),
                   "CudaBuffer cannot be constructed directly; use "
                   "cuda.alloc() or cuda.openIpcHandle()");
  }
  BufferInit* init = info[0].As<Napi::External<BufferInit>>().Data();
  ptr_ = static_cast<uint8_t*>(init->ptr);
  size_ = init->size;
  device_ = init->device;
  imported_ = init->imported;
  if (init->handle != nullptr) {
    ipc_ = *init->handle;
    has_ipc_ = true;
  }
  release_ = std::move(init->release);
}

// See ~HostBufferWrap.
CudaBufferWrap::~CudaBufferWrap() {
  Free();
  ReleaseMemory();
}

void CudaBufferWrap::Free() {
  if (disposed_) return;
  disposed_ = true;
  if (users() == 0) ReleaseMemory();
}

void CudaBufferWrap::ReleaseMemory() {
  if (release_) release_();
  release_ = nullptr;
}

Napi::Value CudaBufferWrap::Kind(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), "cuda");
}
Napi::Value CudaBufferWrap::Device(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), device_);
}
Napi::Value CudaBufferWrap::ByteLength(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(size_));
}
Napi::Value CudaBufferWrap::Disposed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), disposed_);
}
Napi::Value CudaBufferWrap::Imported(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), imported_);
}

void CudaBufferWrap::CopyFrom(const Napi::CallbackInfo& info) {
  if (disposed_) ThrowTypeError(info.Env(), "CudaBuffer was disposed");
  CopyWithBuffer(info, ptr_, size_, kMemGpu, true);
}

void CudaBufferWrap::CopyTo(const Napi::CallbackInfo& info) {
  if (disposed_) ThrowTypeError(info.Env(), "CudaBuffer was disposed");
  CopyWithBuffer(info, ptr_, size_, kMemGpu, false);
}

Napi::Value CudaBufferWrap::IpcHandle(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (disposed_) ThrowTypeError(env, "CudaBuffer was disposed");
  if (!has_ipc_) {
    RequireCuda(env, "ipcHandle");
    int rc = Cuda().cudaIpcGetMemHandle(&ipc_, ptr_);
    if (rc != 0) {
      throw MakeError(env, "INTERNAL",
                      "cudaIpcGetMemHandle failed: " + CudaErrorText(rc));
    }
    has_ipc_ = true;
  }
  Napi::Uint8Array out = Napi::Uint8Array::New(env, kCudaIpcHandleSize);
  std::memcpy(out.Data(), ipc_.bytes, kCudaIpcHandleSize);
  return out;
}

void CudaBufferWrap::Dispose(const Napi::CallbackInfo& info) { Free(); }

}  // namespace triton_node
