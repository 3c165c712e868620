#include "objects/cuda_functions.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "memory/buffer_objects.h"
#include "memory/cuda_runtime.h"
#include "memory/mem_view.h"
#include "objects/buffer_copy.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

size_t ParseByteLength(Napi::Env env, Napi::Value v, const char* what) {
  if (!v.IsNumber())
    ThrowTypeError(env, std::string(what) + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d)) ||
      d > 9007199254740991.0) {
    ThrowRangeError(env, std::string(what) +
                             " must be a non-negative integer, got " +
                             std::to_string(d));
  }
  return static_cast<size_t>(d);
}

int ParseDevice(Napi::Env env, Napi::Value v) {
  if (v.IsUndefined()) return 0;
  if (!v.IsNumber()) ThrowTypeError(env, "device must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d != static_cast<int>(d)) {
    ThrowRangeError(env, "device must be a non-negative integer");
  }
  int device = static_cast<int>(d);
  if (Cuda().available && device >= Cuda().device_count) {
    ThrowRangeError(env, "CUDA device " + std::to_string(device) +
                             " does not exist (" +
                             std::to_string(Cuda().device_count) + " visible)");
  }
  return device;
}

// cudaMemoryType values.
const char* PointerMemoryTypeName(int type) {
  switch (type) {
    case 0:
      return "unregistered";
    case 1:
      return "host";
    case 2:
      return "device";
    case 3:
      return "managed";
    default:
      return "unknown";
  }
}

// Internal (tests): what CUDA says the memory behind a HostBuffer,
// CudaBuffer or TypedArray is. { memoryType, device, hostFlags }, hostFlags
// null where cudaHostGetFlags refuses the pointer (not page-locked).
Napi::Value PointerAttributes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  MemView view = RequireView(info, 0, "pointerAttributes(buffer)");
  RequireCuda(env, "pointerAttributes");
  const CudaRuntime& rt = Cuda();
  if (rt.cudaPointerGetAttributes == nullptr) {
    throw MakeError(env, "UNSUPPORTED",
                    "the CUDA runtime lacks cudaPointerGetAttributes");
  }
  // cudaPointerAttributes starts { int type; int device; ... }; the
  // runtime's struct is smaller than this buffer in every version.
  alignas(16) unsigned char attributes[256] = {};
  int rc = rt.cudaPointerGetAttributes(attributes, view.ptr);
  int type = 0;
  int device = -1;
  if (rc == 0) {
    std::memcpy(&type, attributes, sizeof(int));
    std::memcpy(&device, attributes + sizeof(int), sizeof(int));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("memoryType", Napi::String::New(env, PointerMemoryTypeName(type)));
  out.Set("device", Napi::Number::New(env, device));
  unsigned int flags = 0;
  int flags_rc = rt.cudaHostGetFlags != nullptr
                     ? rt.cudaHostGetFlags(&flags, view.ptr)
                     : -1;
  if (flags_rc == 0) {
    out.Set("hostFlags", Napi::Number::New(env, flags));
  } else {
    out.Set("hostFlags", env.Null());
  }
  // A refused probe (pageable memory) leaves its error as the thread's last
  // CUDA error; clear it so nothing later mistakes it for its own.
  if ((rc != 0 || flags_rc > 0) && rt.cudaGetLastError != nullptr) {
    rt.cudaGetLastError();
  }
  return out;
}

// Internal (tests): cudaMemGetInfo on `device`: { free, total } bytes.
Napi::Value MemGetInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RequireCuda(env, "memGetInfo");
  int device = ParseDevice(env, info[0]);
  const CudaRuntime& rt = Cuda();
  if (rt.cudaMemGetInfo == nullptr) {
    throw MakeError(env, "UNSUPPORTED",
                    "the CUDA runtime lacks cudaMemGetInfo");
  }
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  int rc;
  {
    DeviceGuard guard(device);
    rc = guard.rc() != 0 ? guard.rc()
                         : rt.cudaMemGetInfo(&free_bytes, &total_bytes);
  }
  if (rc != 0) {
    throw MakeError(env, "INTERNAL",
                    "cudaMemGetInfo failed: " + CudaErrorText(rc));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("free", Napi::Number::New(env, static_cast<double>(free_bytes)));
  out.Set("total", Napi::Number::New(env, static_cast<double>(total_bytes)));
  return out;
}

Napi::Value IsAvailable(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), Cuda().available);
}

Napi::Value UnavailableReason(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), Cuda().available ? "" : Cuda().reason);
}

Napi::Value DeviceCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), Cuda().device_count);
}

Napi::Value FreeFailures(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(CudaFreeFailures()));
}

// allocHost(byteLength): pinned memory, reported to V8 while it lives.
Napi::Value AllocHost(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t bytes = ParseByteLength(env, info[0], "byteLength");
  RequireCuda(env, "allocHost");
  std::string error;
  void* ptr = CudaAllocHost(bytes, &error);
  if (ptr == nullptr) throw MakeError(env, "INTERNAL", error);
  Napi::MemoryManagement::AdjustExternalMemory(env,
                                               static_cast<int64_t>(bytes));
  napi_env raw = env;
  BufferInit init;
  init.ptr = ptr;
  init.size = bytes;
  init.release = [ptr, bytes, raw] {
    CudaFreeHost(ptr);
    int64_t adjusted = 0;
    napi_adjust_external_memory(raw, -static_cast<int64_t>(bytes), &adjusted);
  };
  return NewHostBufferObject(env, std::move(init));
}

// alloc(byteLength, device?): device memory.
Napi::Value Alloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t bytes = ParseByteLength(env, info[0], "byteLength");
  RequireCuda(env, "alloc");
  int device = ParseDevice(env, info[1]);
  std::string error;
  void* ptr = CudaAllocDevice(bytes, device, &error);
  if (ptr == nullptr) throw MakeError(env, "INTERNAL", error);
  BufferInit init;
  init.ptr = ptr;
  init.size = bytes;
  init.device = device;
  init.release = [ptr, device] { CudaFreeDevice(ptr, device); };
  return NewCudaBufferObject(env, std::move(init));
}

// openIpcHandle(handle, byteLength, device?): device memory of another
// process.
Napi::Value OpenIpcHandle(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().ByteLength() != kCudaIpcHandleSize) {
    ThrowTypeError(env, "handle must be a 64-byte Uint8Array");
  }
  Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
  size_t size = ParseByteLength(env, info[1], "byteLength");
  RequireCuda(env, "openIpcHandle");
  int device = ParseDevice(env, info[2]);
  CudaIpcHandle handle;
  std::memcpy(handle.bytes, bytes.Data(), kCudaIpcHandleSize);
  void* ptr = nullptr;
  int rc;
  {
    DeviceGuard guard(device);
    rc = guard.rc() != 0 ? guard.rc()
                         : Cuda().cudaIpcOpenMemHandle(
                               &ptr, handle, kCudaIpcMemLazyEnablePeerAccess);
  }
  if (rc != 0) {
    throw MakeError(env, "INVALID_ARG",
                    "cudaIpcOpenMemHandle failed: " + CudaErrorText(rc));
  }
  BufferInit init;
  init.ptr = ptr;
  init.size = size;
  init.device = device;
  init.imported = true;
  init.handle = &handle;
  init.release = [ptr, device] {
    DeviceGuard guard(device);
    Cuda().cudaIpcCloseMemHandle(ptr);
  };
  return NewCudaBufferObject(env, std::move(init));
}

// cudaDeviceAttr values (stable across CUDA versions).
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
// cudaDeviceProp begins { char name[256]; cudaUUID_t uuid; char luid[8];
// unsigned int luidDeviceNodeMask; size_t totalGlobalMem; ... } in CUDA 11,
// 12 and 13; the rest of it changes between versions and is not read. The
// buffer is larger than the struct of any of them.
constexpr size_t kPropsTotalGlobalMemOffset = 288;
constexpr size_t kPropsBufferSize = 8192;

// One device for describe(): name, total memory, compute capability; a field
// is null where the runtime lacks the entry point or the call fails.
Napi::Object DescribeDevice(Napi::Env env, const CudaRuntime& rt, int device) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("index", device);
  out.Set("name", env.Null());
  out.Set("totalMemory", env.Null());
  if (rt.cudaGetDeviceProperties != nullptr) {
    std::vector<unsigned char> props(kPropsBufferSize, 0);
    if (rt.cudaGetDeviceProperties(props.data(), device) == 0) {
      props[255] = 0;
      out.Set("name", reinterpret_cast<const char*>(props.data()));
      size_t total = 0;
      std::memcpy(&total, props.data() + kPropsTotalGlobalMemOffset,
                  sizeof(total));
      out.Set("totalMemory", static_cast<double>(total));
    }
  }
  int major = -1;
  int minor = -1;
  if (rt.cudaDeviceGetAttribute == nullptr ||
      rt.cudaDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, device) !=
          0 ||
      rt.cudaDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, device) !=
          0) {
    out.Set("computeCapability", env.Null());
  } else {
    out.Set("computeCapability",
            std::to_string(major) + "." + std::to_string(minor));
  }
  return out;
}

// A version from cudaDriverGetVersion/cudaRuntimeGetVersion (1000 * major +
// 10 * minor), or null. The driver's is 0 when no driver is installed.
Napi::Value VersionOf(Napi::Env env, int (*get)(int*)) {
  int version = 0;
  if (get == nullptr || get(&version) != 0) return env.Null();
  return Napi::Number::New(env, version);
}

// describe(): what `triton-node doctor` reports about CUDA. Never throws.
Napi::Value Describe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const CudaRuntime& rt = Cuda();
  Napi::Object out = Napi::Object::New(env);
  out.Set("available", rt.available);
  out.Set("reason", rt.reason);
  out.Set("runtimePath", rt.path);
  out.Set("runtimeVersion", VersionOf(env, rt.cudaRuntimeGetVersion));
  out.Set("driverVersion", VersionOf(env, rt.cudaDriverGetVersion));
  Napi::Array devices = Napi::Array::New(env);
  for (int d = 0; rt.available && d < rt.device_count; ++d) {
    devices.Set(static_cast<uint32_t>(d), DescribeDevice(env, rt, d));
  }
  out.Set("devices", devices);
  return out;
}

}  // namespace

Napi::Object CreateCudaObject(Napi::Env env) {
  static const struct {
    const char* name;
    Napi::Value (*fn)(const Napi::CallbackInfo&);
  } kFunctions[] = {
      {"isAvailable", IsAvailable},
      {"unavailableReason", UnavailableReason},
      {"deviceCount", DeviceCount},
      {"allocHost", AllocHost},
      {"alloc", Alloc},
      {"openIpcHandle", OpenIpcHandle},
      {"pointerAttributes", PointerAttributes},
      {"memGetInfo", MemGetInfo},
      {"freeFailures", FreeFailures},
      {"describe", Describe},
  };
  Napi::Object cuda = Napi::Object::New(env);
  for (const auto& f : kFunctions) {
    cuda.Set(f.name, Napi::Function::New(env, f.fn, f.name));
  }
  return cuda;
}

}  // namespace triton_node
