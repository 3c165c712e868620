// Copies between host, pinned and device memory. libcudart is opened with
// dlopen the first time a GPU buffer is involved; without it, a GPU copy
// fails with the message Triton's CPU-only build gives.
#include "cuda_copy.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace fake {
namespace {

using MemcpyFn = int (*)(void*, const void*, size_t, int);
using SetDeviceFn = int (*)(int);
using ErrorStringFn = const char* (*)(int);
constexpr int kCudaMemcpyDefault = 4;

struct Cudart {
  MemcpyFn memcpy = nullptr;
  SetDeviceFn set_device = nullptr;
  ErrorStringFn error_string = nullptr;
};

const Cudart& GetCudart() {
  static Cudart cudart = [] {
    Cudart c;
    // TRITON_NODE_CUDART (the addon's own override) first: the test stand-in.
    const char* env_path = std::getenv("TRITON_NODE_CUDART");
    const char* names[] = {env_path != nullptr ? env_path : "libcudart.so",
                           "libcudart.so", "libcudart.so.13", "libcudart.so.12",
                           "libcudart.so.11.0"};
    for (const char* n : names) {
      if (*n == '\0') continue;
      void* h = ::dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      c.memcpy = reinterpret_cast<MemcpyFn>(::dlsym(h, "cudaMemcpy"));
      c.set_device = reinterpret_cast<SetDeviceFn>(::dlsym(h, "cudaSetDevice"));
      c.error_string =
          reinterpret_cast<ErrorStringFn>(::dlsym(h, "cudaGetErrorString"));
      if (c.memcpy != nullptr) break;
    }
    return c;
  }();
  return cudart;
}

}  // namespace

std::string CopyBuffer(void* dst, TRITONSERVER_MemoryType dst_type,
                       int64_t dst_id, const void* src,
                       TRITONSERVER_MemoryType src_type, int64_t src_id,
                       size_t bytes, const std::string& what) {
  if (bytes == 0) return "";
  // As the backends' copy helper (backend_common.cc) says it.
  if (src == nullptr || dst == nullptr) {
    return what + ": attempted a copy of " + std::to_string(bytes) + " Bytes " +
           (src == nullptr ? "from" : "to") + " an uninitialized memory";
  }
  if (dst_type != TRITONSERVER_MEMORY_GPU &&
      src_type != TRITONSERVER_MEMORY_GPU) {
    std::memcpy(dst, src, bytes);
    return "";
  }
  const Cudart& c = GetCudart();
  if (c.memcpy == nullptr) {
    return what + ": try to use CUDA copy while GPU is not supported";
  }
  if (c.set_device != nullptr) {
    c.set_device(static_cast<int>(
        dst_type == TRITONSERVER_MEMORY_GPU ? dst_id : src_id));
  }
  int rc = c.memcpy(dst, src, bytes, kCudaMemcpyDefault);
  if (rc != 0) {
    return what + ": failed to copy " + std::to_string(bytes) +
           " bytes with cudaMemcpy: " +
           (c.error_string != nullptr ? c.error_string(rc)
                                      : std::to_string(rc));
  }
  return "";
}

}  // namespace fake
