#include "memory/cuda_runtime.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "triton/errors.h"

namespace triton_node {
namespace {

constexpr int kCudaMemcpyDefault = 4;  // direction inferred (UVA)
constexpr unsigned int kCudaHostAllocPortable = 1;

// dlopen's the first candidate that opens; `tried` lists the failures.
void* OpenRuntime(std::string* tried) {
  std::vector<std::string> candidates;
  const char* env_path = std::getenv("TRITON_NODE_CUDART");
  if (env_path != nullptr && *env_path != '\0') candidates.push_back(env_path);
  for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                           "libcudart.so.11.0"}) {
    candidates.push_back(name);
  }
  for (const std::string& name : candidates) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return handle;
    const char* err = dlerror();
    *tried += "\n  - " + name + ": " + (err ? err : "dlopen failed");
  }
  return nullptr;
}

// The optional entry points that describe the runtime, driver and devices.
void ResolveDescriptionSymbols(void* handle, CudaRuntime* rt) {
  rt->cudaDriverGetVersion =
      reinterpret_cast<decltype(rt->cudaDriverGetVersion)>(
          dlsym(handle, "cudaDriverGetVersion"));
  rt->cudaRuntimeGetVersion =
      reinterpret_cast<decltype(rt->cudaRuntimeGetVersion)>(
          dlsym(handle, "cudaRuntimeGetVersion"));
  rt->cudaDeviceGetAttribute =
      reinterpret_cast<decltype(rt->cudaDeviceGetAttribute)>(
          dlsym(handle, "cudaDeviceGetAttribute"));
  void* props = dlsym(handle, "cudaGetDeviceProperties_v2");
  if (props == nullptr) props = dlsym(handle, "cudaGetDeviceProperties");
  rt->cudaGetDeviceProperties =
      reinterpret_cast<decltype(rt->cudaGetDeviceProperties)>(props);
  Dl_info where;
  if (rt->cudaGetErrorString != nullptr &&
      dladdr(reinterpret_cast<void*>(rt->cudaGetErrorString), &where) != 0 &&
      where.dli_fname != nullptr) {
    rt->path = where.dli_fname;
  }
}

// Fills the table from `handle`; returns the required entry points missing.
std::string ResolveSymbols(void* handle, CudaRuntime* rt) {
  std::string missing;
#define TRITON_NODE_CUDA_SYM(name)                                       \
  rt->name = reinterpret_cast<decltype(rt->name)>(dlsym(handle, #name)); \
  if (rt->name == nullptr)                                               \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
  TRITON_NODE_CUDA_SYM(cudaGetDeviceCount)
  TRITON_NODE_CUDA_SYM(cudaGetDevice)
  TRITON_NODE_CUDA_SYM(cudaSetDevice)
  TRITON_NODE_CUDA_SYM(cudaMalloc)
  TRITON_NODE_CUDA_SYM(cudaFree)
  TRITON_NODE_CUDA_SYM(cudaHostAlloc)
  TRITON_NODE_CUDA_SYM(cudaFreeHost)
  TRITON_NODE_CUDA_SYM(cudaMemcpy)
  TRITON_NODE_CUDA_SYM(cudaIpcGetMemHandle)
  TRITON_NODE_CUDA_SYM(cudaIpcOpenMemHandle)
  TRITON_NODE_CUDA_SYM(cudaIpcCloseMemHandle)
  TRITON_NODE_CUDA_SYM(cudaGetErrorString)
#undef TRITON_NODE_CUDA_SYM
  rt->cudaPointerGetAttributes =
      reinterpret_cast<decltype(rt->cudaPointerGetAttributes)>(
          dlsym(handle, "cudaPointerGetAttributes"));
  rt->cudaHostGetFlags = reinterpret_cast<decltype(rt->cudaHostGetFlags)>(
      dlsym(handle, "cudaHostGetFlags"));
  rt->cudaMemGetInfo = reinterpret_cast<decltype(rt->cudaMemGetInfo)>(
      dlsym(handle, "cudaMemGetInfo"));
  rt->cudaGetLastError = reinterpret_cast<decltype(rt->cudaGetLastError)>(
      dlsym(handle, "cudaGetLastError"));
  ResolveDescriptionSymbols(handle, rt);
  return missing;
}

CudaRuntime* LoadCuda() {
  auto* rt = new CudaRuntime();  // process-wide, never freed
  std::string tried;
  void* handle = OpenRuntime(&tried);
  if (handle == nullptr) {
    rt->reason = "CUDA runtime not found; tried:" + tried;
    return rt;
  }
  std::string missing = ResolveSymbols(handle, rt);
  if (!missing.empty()) {
    rt->reason = "CUDA runtime found but lacks: " + missing + tried;
    return rt;
  }
  int count = 0;
  int rc = rt->cudaGetDeviceCount(&count);
  if (rc != 0) {
    rt->reason = "cudaGetDeviceCount failed: " +
                 std::string(rt->cudaGetErrorString(rc)) + " (code " +
                 std::to_string(rc) + ")";
    return rt;
  }
  if (count <= 0) {
    rt->reason = "no CUDA device visible (cudaGetDeviceCount returned 0)";
    return rt;
  }
  rt->device_count = count;
  rt->available = true;
  return rt;
}

}  // namespace

const CudaRuntime& Cuda() {
  static CudaRuntime* runtime = LoadCuda();  // thread-safe static init
  return *runtime;
}

std::string CudaErrorText(int code) {
  const CudaRuntime& rt = Cuda();
  std::string text =
      rt.cudaGetErrorString ? rt.cudaGetErrorString(code) : "CUDA error";
  return text + " (code " + std::to_string(code) + ")";
}

void* CudaAllocHost(size_t bytes, std::string* error) {
  const CudaRuntime& rt = Cuda();
  if (!rt.available) {
    *error = "CUDA is not available (" + rt.reason + ")";
    return nullptr;
  }
  void* ptr = nullptr;
  int rc =
      rt.cudaHostAlloc(&ptr, bytes == 0 ? 1 : bytes, kCudaHostAllocPortable);
  if (rc != 0) {
    *error = "cudaHostAlloc(" + std::to_string(bytes) +
             ") failed: " + CudaErrorText(rc);
    return nullptr;
  }
  return ptr;
}

namespace {

std::atomic<int64_t> g_free_failures{0};

// Runs on any thread (frees come from Triton's threads and finalizers).
void ReportFreeFailure(const char* call, const void* ptr, int rc) {
  g_free_failures.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "triton-node: %s(%p) failed: %s\n", call, ptr,
               CudaErrorText(rc).c_str());
}

}  // namespace

int64_t CudaFreeFailures() {
  return g_free_failures.load(std::memory_order_relaxed);
}

void CudaFreeHost(void* ptr) {
  if (ptr == nullptr) return;
  int rc = Cuda().cudaFreeHost(ptr);
  if (rc != 0) ReportFreeFailure("cudaFreeHost", ptr, rc);
}

void* CudaAllocDevice(size_t bytes, int device, std::string* error) {
  const CudaRuntime& rt = Cuda();
  if (!rt.available) {
    *error = "CUDA is not available (" + rt.reason + ")";
    return nullptr;
  }
  if (device < 0 || device >= rt.device_count) {
    *error = "CUDA device " + std::to_string(device) + " does not exist (" +
             std::to_string(rt.device_count) + " visible)";
    return nullptr;
  }
  DeviceGuard guard(device);
  if (guard.rc() != 0) {
    *error = "cudaSetDevice(" + std::to_string(device) +
             ") failed: " + CudaErrorText(guard.rc());
    return nullptr;
  }
  void* ptr = nullptr;
  int rc = rt.cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
  if (rc != 0) {
    *error = "cudaMalloc(" + std::to_string(bytes) + ") on device " +
             std::to_string(device) + " failed: " + CudaErrorText(rc);
    return nullptr;
  }
  return ptr;
}

void CudaFreeDevice(void* ptr, int device) {
  if (ptr == nullptr) return;
  DeviceGuard guard(device);
  int rc = Cuda().cudaFree(ptr);
  if (rc != 0) ReportFreeFailure("cudaFree", ptr, rc);
}

DeviceGuard::DeviceGuard(int device) {
  const CudaRuntime& rt = Cuda();
  if (rt.cudaGetDevice(&previous_) != 0) previous_ = -1;
  if (previous_ != device) {
    rc_ = rt.cudaSetDevice(device);
    switched_ = rc_ == 0;
  }
}

DeviceGuard::~DeviceGuard() {
  if (switched_ && previous_ >= 0) Cuda().cudaSetDevice(previous_);
}

void RequireCuda(Napi::Env env, const std::string& what) {
  if (Cuda().available) return;
  throw MakeError(env, "UNSUPPORTED",
                  what + ": CUDA is not available (" + Cuda().reason + ")");
}

void CopyBytes(Napi::Env env, void* dst, int dst_kind, const void* src,
               int src_kind, size_t n) {
  if (n == 0) return;
  if (dst_kind != kMemGpu && src_kind != kMemGpu) {
    std::memmove(dst, src, n);
    return;
  }
  RequireCuda(env, "device copy");
  int rc = Cuda().cudaMemcpy(dst, src, n, kCudaMemcpyDefault);
  if (rc != 0) {
    throw MakeError(env, "INTERNAL", "cudaMemcpy failed: " + CudaErrorText(rc));
  }
}

}  // namespace triton_node
