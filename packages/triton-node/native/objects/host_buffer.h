// HostBuffer: pinned host memory owned by a JS object.
#ifndef TRITON_NODE_OBJECTS_HOST_BUFFER_H_
#define TRITON_NODE_OBJECTS_HOST_BUFFER_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memory/buffer_use.h"
#include "memory/mem_view.h"

namespace triton_node {

// Pinned host memory owned by a JS object.
class HostBufferWrap : public Napi::ObjectWrap<HostBufferWrap>,
                       public BufferUse {
 public:
  // Defines the class and registers it in the environment's data.
  static Napi::Function Init(Napi::Env env);
  // The BufferViewFn of the class (env/env_data.h).
  static void ViewOf(Napi::Object object, const Subject& what, MemView* view);

  explicit HostBufferWrap(const Napi::CallbackInfo& info);
  ~HostBufferWrap() override;

  uint8_t* data() const { return ptr_; }
  size_t size() const { return size_; }
  bool disposed() const { return disposed_; }

 private:
  Napi::Value Kind(const Napi::CallbackInfo& info);
  Napi::Value ByteLength(const Napi::CallbackInfo& info);
  Napi::Value Disposed(const Napi::CallbackInfo& info);
  Napi::Value ArrayBuffer(const Napi::CallbackInfo& info);
  void CopyFrom(const Napi::CallbackInfo& info);
  void CopyTo(const Napi::CallbackInfo& info);
  void Dispose(const Napi::CallbackInfo& info);
  // Marks disposed and detaches the views; frees unless a request uses it.
  void Free(napi_env env);
  void ReleaseMemory() override;
  bool IsDisposed() const override { return disposed_; }

  uint8_t* ptr_ = nullptr;
  size_t size_ = 0;
  bool disposed_ = false;
  std::function<void()> release_;
  // Weak references to ArrayBuffers handed out by arrayBuffer(); detached
  // on dispose() so no view outlives the memory.
  std::vector<napi_ref> views_;
};

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_HOST_BUFFER_H_
