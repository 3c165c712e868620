// CudaBuffer: device memory owned by a JS object (allocated here or opened
// from another process's CUDA IPC handle).
#ifndef TRITON_NODE_OBJECTS_CUDA_BUFFER_H_
#define TRITON_NODE_OBJECTS_CUDA_BUFFER_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "memory/buffer_use.h"
#include "memory/cuda_runtime.h"
#include "memory/mem_view.h"

namespace triton_node {

// Device memory owned by a JS object.
class CudaBufferWrap : public Napi::ObjectWrap<CudaBufferWrap>,
                       public BufferUse {
 public:
  // Defines the class and registers it in the environment's data.
  static Napi::Function Init(Napi::Env env);
  // The BufferViewFn of the class (env/env_data.h).
  static void ViewOf(Napi::Object object, const Subject& what, MemView* view);

  explicit CudaBufferWrap(const Napi::CallbackInfo& info);
  ~CudaBufferWrap() override;

  uint8_t* data() const { return ptr_; }
  size_t size() const { return size_; }
  int device() const { return device_; }
  bool disposed() const { return disposed_; }
  const CudaIpcHandle* ipc() const { return has_ipc_ ? &ipc_ : nullptr; }

 private:
  Napi::Value Kind(const Napi::CallbackInfo& info);
  Napi::Value Device(const Napi::CallbackInfo& info);
  Napi::Value ByteLength(const Napi::CallbackInfo& info);
  Napi::Value Disposed(const Napi::CallbackInfo& info);
  Napi::Value Imported(const Napi::CallbackInfo& info);
  void CopyFrom(const Napi::CallbackInfo& info);
  void CopyTo(const Napi::CallbackInfo& info);
  Napi::Value IpcHandle(const Napi::CallbackInfo& info);
  void Dispose(const Napi::CallbackInfo& info);
  // Marks disposed; frees unless a request uses it.
  void Free();
  void ReleaseMemory() override;
  bool IsDisposed() const override { return disposed_; }

  uint8_t* ptr_ = nullptr;
  size_t size_ = 0;
  int device_ = 0;
  bool imported_ = false;
  bool disposed_ = false;
  bool has_ipc_ = false;
  CudaIpcHandle ipc_{};
  std::function<void()> release_;
};

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_CUDA_BUFFER_H_
