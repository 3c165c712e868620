// The CUDA runtime (libcudart), loaded with dlopen on first use: a table of
// the entry points the addon uses, and allocation helpers over it.
#ifndef TRITON_NODE_MEMORY_CUDA_RUNTIME_H_
#define TRITON_NODE_MEMORY_CUDA_RUNTIME_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "memory/mem_kind.h"

namespace triton_node {

constexpr size_t kCudaIpcHandleSize = 64;
struct CudaIpcHandle {
  unsigned char bytes[kCudaIpcHandleSize];
};
constexpr unsigned int kCudaIpcMemLazyEnablePeerAccess = 1;

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
  // Optional, for `triton-node doctor`: versions and what each device is.
  int (*cudaDriverGetVersion)(int*) = nullptr;
  int (*cudaRuntimeGetVersion)(int*) = nullptr;
  int (*cudaDeviceGetAttribute)(int*, int, int) = nullptr;
  // cudaGetDeviceProperties_v2 where the runtime has it (CUDA 12+).
  int (*cudaGetDeviceProperties)(void*, int) = nullptr;

  bool available = false;
  int device_count = 0;
  // Why not available: the libraries tried and the errors seen.
  std::string reason;
  // The file the runtime was loaded from ('' when none was).
  std::string path;
};

const CudaRuntime& Cuda();

// "<cudaGetErrorString> (code N)".
std::string CudaErrorText(int code);

// Throws an UNSUPPORTED error naming `what` when CUDA is not available.
void RequireCuda(Napi::Env env, const std::string& what);

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

// Copies `n` bytes between any two kinds of memory (memmove when both are
// host memory). Throws when a device copy fails.
void CopyBytes(Napi::Env env, void* dst, int dst_kind, const void* src,
               int src_kind, size_t n);

// Makes `device` the calling thread's current device, and restores the
// previous one when it goes out of scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  // cudaSetDevice's result (0 when no switch was needed).
  int rc() const { return rc_; }

 private:
  int previous_ = -1;
  int rc_ = 0;
  bool switched_ = false;
};

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_CUDA_RUNTIME_H_
