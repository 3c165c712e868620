// CUDA runtime loaded with dlopen (libcudart), and the JS wrappers for
// pinned host memory (HostBuffer) and device memory (CudaBuffer).
#ifndef TRITON_NODE_CUDA_H_
#define TRITON_NODE_CUDA_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "addon.h"

namespace triton_node {

constexpr size_t kCudaIpcHandleSize = 64;
struct CudaIpcHandle {
  unsigned char bytes[kCudaIpcHandleSize];
};

// Process-wide table; loaded lazily and once. Never unloaded.
struct CudaRuntime {
  int (*cudaGetDeviceCount)(int*) = nullptr;
  int (*cudaGetDevice)(int*) = nullptr;
  int (*cudaSetDevice)(int) = nullptr;
  int (*cudaMalloc)(void**, size_t) = nullptr;
  int (*cudaFree)(void*) = nullptr;
  int (*cudaHostAlloc)(void**, size_t, unsigned int) = nullptr;
  int (*cudaFreeHost)(void*) = nullptr;
  int (*cudaMemcpy)(void*, const void*, size_t, int) = nullptr;
  int (*cudaIpcGetMemHandle)(CudaIpcHandle*, void*) = nullptr;
  int (*cudaIpcOpenMemHandle)(void**, CudaIpcHandle, unsigned int) = nullptr;
  int (*cudaIpcCloseMemHandle)(void*) = nullptr;
  const char* (*cudaGetErrorString)(int) = nullptr;
  // Optional (tests look through them at what memory really is): null when
  // the runtime lacks them.
  int (*cudaPointerGetAttributes)(void*, const void*) = nullptr;
  int (*cudaHostGetFlags)(unsigned int*, void*) = nullptr;
  int (*cudaMemGetInfo)(size_t*, size_t*) = nullptr;
  int (*cudaGetLastError)() = nullptr;

  bool available = false;
  int device_count = 0;
  // Why not available: the libraries tried and the errors seen.
  std::string reason;
};

const CudaRuntime& Cuda();

// "<cudaGetErrorString> (code N)".
std::string CudaErrorText(int code);

// Allocation helpers usable from any thread; return null and set `error`
// on failure. Device allocations select `device` for the call and restore
// the caller's current device.
// A failed free is reported on stderr and counted (CudaFreeFailures): it
// means memory was freed twice or was never CUDA's, a bug worth seeing.
void* CudaAllocHost(size_t bytes, std::string* error);
void CudaFreeHost(void* ptr);
void* CudaAllocDevice(size_t bytes, int device, std::string* error);
void CudaFreeDevice(void* ptr, int device);
int64_t CudaFreeFailures();

// Counts the in-flight requests that borrow a HostBuffer's or CudaBuffer's
// memory (as an input or an `into` destination), so that dispose() during a
// request marks the buffer disposed at once but frees its memory only when
// the last such request is released. JS thread only: requests acquire a use
// when they are built and release it where they drop their references.
class BufferUse {
 public:
  void Acquire() { ++users_; }
  void Release();

 protected:
  virtual ~BufferUse() = default;
  // Frees the memory (once); called when disposed with no users left.
  virtual void ReleaseMemory() = 0;
  virtual bool IsDisposed() const = 0;
  int users() const { return users_; }

 private:
  int users_ = 0;
};

// Releases (and clears) the uses a request acquired. JS thread; call it
// before dropping the references that keep the buffers' objects alive.
void ReleaseBufferUses(std::vector<BufferUse*>* uses);

// Where memory lives; values equal TRITONSERVER_MemoryType.
enum MemKind : int { kMemCpu = 0, kMemPinned = 1, kMemGpu = 2 };

// Raw view of the memory behind a JS value: a TypedArray/Buffer/DataView,
// a HostBuffer or a CudaBuffer.
struct MemView {
  uint8_t* ptr = nullptr;
  size_t size = 0;
  int kind = kMemCpu;
  int device = 0;
  const CudaIpcHandle* ipc = nullptr;  // CudaBuffers that have one
  // HostBuffer/CudaBuffer owners: their in-flight use count.
  BufferUse* use = nullptr;
  // The JS object that owns the memory (keep it referenced while borrowed).
  napi_value owner = nullptr;
  // For TypedArray owners: the ArrayBuffer and the view's offset in it.
  napi_value array_buffer = nullptr;
  size_t byte_offset = 0;
};

// Fills `view` from `value`. Returns false when `value` is none of the
// supported kinds. Throws a TypeError naming `what` when the memory is
// unusable (detached ArrayBuffer, disposed buffer).
bool ResolveMemView(Napi::Env env, EnvData* data, napi_value value,
                    const std::string& what, MemView* view);

// Pinned host memory owned by a JS object.
class HostBufferWrap : public Napi::ObjectWrap<HostBufferWrap>,
                       public BufferUse {
 public:
  static Napi::Function Init(Napi::Env env);
  // Wraps memory; `release` frees it (dispose or GC), exactly once.
  static Napi::Object Create(Napi::Env env, void* ptr, size_t size,
                             std::function<void()> release);

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

// Device memory owned by a JS object.
class CudaBufferWrap : public Napi::ObjectWrap<CudaBufferWrap>,
                       public BufferUse {
 public:
  static Napi::Function Init(Napi::Env env);
  static Napi::Object Create(Napi::Env env, void* ptr, size_t size, int device,
                             bool imported, const CudaIpcHandle* handle,
                             std::function<void()> release);

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

// The `cuda` object of the addon (NativeCuda).
Napi::Object CreateCudaObject(Napi::Env env);

}  // namespace triton_node

#endif  // TRITON_NODE_CUDA_H_
