#include "cuda.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "errors.h"

namespace triton_node {
namespace {

constexpr int kCudaMemcpyDefault = 4;  // direction inferred (UVA)
constexpr unsigned int kCudaHostAllocPortable = 1;
constexpr unsigned int kCudaIpcMemLazyEnablePeerAccess = 1;

CudaRuntime* LoadCuda() {
  auto* rt = new CudaRuntime();  // process-wide, never freed
  std::vector<std::string> candidates;
  const char* env_path = std::getenv("TRITON_NODE_CUDART");
  if (env_path != nullptr && *env_path != '\0') candidates.push_back(env_path);
  for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                           "libcudart.so.11.0"}) {
    candidates.push_back(name);
  }
  void* handle = nullptr;
  std::string tried;
  for (const std::string& name : candidates) {
    dlerror();
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    const char* err = dlerror();
    tried += "\n  - " + name + ": " + (err ? err : "dlopen failed");
  }
  if (handle == nullptr) {
    rt->reason = "CUDA runtime not found; tried:" + tried;
    return rt;
  }
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

// Restores the calling thread's current device when it goes out of scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    const CudaRuntime& rt = Cuda();
    if (rt.cudaGetDevice(&previous_) != 0) previous_ = -1;
    if (previous_ != device) {
      rc_ = rt.cudaSetDevice(device);
      switched_ = rc_ == 0;
    }
  }
  ~DeviceGuard() {
    if (switched_ && previous_ >= 0) Cuda().cudaSetDevice(previous_);
  }
  int rc() const { return rc_; }

 private:
  int previous_ = -1;
  int rc_ = 0;
  bool switched_ = false;
};

[[noreturn]] void ThrowUnsupported(Napi::Env env, const std::string& what) {
  throw MakeError(env, "UNSUPPORTED",
                  what + ": CUDA is not available (" + Cuda().reason + ")");
}

void RequireCuda(Napi::Env env, const std::string& what) {
  if (!Cuda().available) ThrowUnsupported(env, what);
}

// Copies between any two kinds of memory; plain memcpy when both are host.
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

size_t ParseOffset(const Napi::CallbackInfo& info, size_t index) {
  if (info.Length() <= index || info[index].IsUndefined()) return 0;
  if (!info[index].IsNumber()) {
    ThrowTypeError(info.Env(), "offset must be a non-negative integer");
  }
  double d = info[index].As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d))) {
    ThrowRangeError(info.Env(), "offset must be a non-negative integer, got " +
                                    std::to_string(d));
  }
  return static_cast<size_t>(d);
}

// Copies `src` (whole) into `dst` at `offset`.
void CopyInto(Napi::Env env, const MemView& dst, const MemView& src,
              size_t offset) {
  if (offset > dst.size || src.size > dst.size - offset) {
    ThrowRangeError(env, "copy of " + std::to_string(src.size) +
                             " bytes at offset " + std::to_string(offset) +
                             " does not fit in " + std::to_string(dst.size) +
                             " bytes");
  }
  CopyBytes(env, dst.ptr + offset, dst.kind, src.ptr, src.kind, src.size);
}

MemView RequireView(const Napi::CallbackInfo& info, size_t index,
                    const char* what) {
  MemView view;
  EnvData* data = GetEnvData(info.Env());
  if (info.Length() <= index ||
      !ResolveMemView(info.Env(), data, info[index], what, &view)) {
    ThrowTypeError(info.Env(),
                   std::string(what) +
                       " must be an ArrayBufferView, HostBuffer or CudaBuffer");
  }
  return view;
}

struct WrapInit {
  void* ptr;
  size_t size;
  int device;
  bool imported;
  const CudaIpcHandle* handle;
  std::function<void()> release;
};

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

bool ResolveMemView(Napi::Env env, EnvData* data, napi_value value,
                    const std::string& what, MemView* view) {
  bool is_typed = false;
  napi_is_typedarray(env, value, &is_typed);
  if (is_typed) {
    napi_typedarray_type type;
    size_t length = 0;
    void* ptr = nullptr;
    napi_value ab = nullptr;
    size_t offset = 0;
    NAPI_THROW_IF_FAILED(env,
                         napi_get_typedarray_info(env, value, &type, &length,
                                                  &ptr, &ab, &offset),
                         false);
    size_t elem = 1;
    switch (type) {
      case napi_int16_array:
      case napi_uint16_array:
        elem = 2;
        break;
      case napi_int32_array:
      case napi_uint32_array:
      case napi_float32_array:
        elem = 4;
        break;
      case napi_float64_array:
      case napi_bigint64_array:
      case napi_biguint64_array:
        elem = 8;
        break;
      default:
        elem = 1;
        break;
    }
    if (length == 0) {
      bool detached = false;
      napi_is_detached_arraybuffer(env, ab, &detached);
      if (detached) {
        ThrowTypeError(env, what + ": its ArrayBuffer is detached");
      }
    }
    view->ptr = static_cast<uint8_t*>(ptr);
    view->size = length * elem;
    view->kind = kMemCpu;
    view->owner = value;
    view->array_buffer = ab;
    view->byte_offset = offset;
    return true;
  }
  bool is_dataview = false;
  napi_is_dataview(env, value, &is_dataview);
  if (is_dataview) {
    size_t length = 0;
    void* ptr = nullptr;
    napi_value ab = nullptr;
    size_t offset = 0;
    NAPI_THROW_IF_FAILED(
        env, napi_get_dataview_info(env, value, &length, &ptr, &ab, &offset),
        false);
    if (length == 0) {
      bool detached = false;
      napi_is_detached_arraybuffer(env, ab, &detached);
      if (detached) {
        ThrowTypeError(env, what + ": its ArrayBuffer is detached");
      }
    }
    view->ptr = static_cast<uint8_t*>(ptr);
    view->size = length;
    view->kind = kMemCpu;
    view->owner = value;
    view->array_buffer = ab;
    view->byte_offset = offset;
    return true;
  }
  napi_valuetype vt;
  napi_typeof(env, value, &vt);
  if (vt != napi_object) return false;
  Napi::Object obj(env, value);
  if (obj.InstanceOf(data->host_buffer_ctor.Value())) {
    HostBufferWrap* host = HostBufferWrap::Unwrap(obj);
    if (host->disposed()) {
      ThrowTypeError(env, what + ": the HostBuffer was disposed");
    }
    view->ptr = host->data();
    view->size = host->size();
    view->kind = kMemPinned;
    view->owner = value;
    view->use = host;
    return true;
  }
  if (obj.InstanceOf(data->cuda_buffer_ctor.Value())) {
    CudaBufferWrap* dev = CudaBufferWrap::Unwrap(obj);
    if (dev->disposed()) {
      ThrowTypeError(env, what + ": the CudaBuffer was disposed");
    }
    view->ptr = dev->data();
    view->size = dev->size();
    view->kind = kMemGpu;
    view->device = dev->device();
    view->ipc = dev->ipc();
    view->owner = value;
    view->use = dev;
    return true;
  }
  return false;
}

// ---- BufferUse -------------------------------------------------------------

void BufferUse::Release() {
  if (--users_ == 0 && IsDisposed()) ReleaseMemory();
}

void ReleaseBufferUses(std::vector<BufferUse*>* uses) {
  for (BufferUse* use : *uses) use->Release();
  uses->clear();
}

// ---- HostBufferWrap --------------------------------------------------------

Napi::Function HostBufferWrap::Init(Napi::Env env) {
  return DefineClass(
      env, "HostBuffer",
      {InstanceAccessor<&HostBufferWrap::Kind>("kind"),
       InstanceAccessor<&HostBufferWrap::ByteLength>("byteLength"),
       InstanceAccessor<&HostBufferWrap::Disposed>("disposed"),
       InstanceMethod<&HostBufferWrap::ArrayBuffer>("arrayBuffer"),
       InstanceMethod<&HostBufferWrap::CopyFrom>("copyFrom"),
       InstanceMethod<&HostBufferWrap::CopyTo>("copyTo"),
       InstanceMethod<&HostBufferWrap::Dispose>("dispose")});
}

Napi::Object HostBufferWrap::Create(Napi::Env env, void* ptr, size_t size,
                                    std::function<void()> release) {
  WrapInit init{ptr, size, 0, false, nullptr, std::move(release)};
  return GetEnvData(env)->host_buffer_ctor.New(
      {Napi::External<WrapInit>::New(env, &init)});
}

HostBufferWrap::HostBufferWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<HostBufferWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(),
                   "HostBuffer cannot be constructed directly; use "
                   "cuda.allocHost()");
  }
  WrapInit* init = info[0].As<Napi::External<WrapInit>>().Data();
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
// whose memory is [ptr, ptr + size) of `kind`: the whole source goes to
// `offset` bytes into the destination.
void CopyWithBuffer(const Napi::CallbackInfo& info, uint8_t* ptr, size_t size,
                    MemKind kind, bool into_buffer) {
  MemView self;
  self.ptr = ptr;
  self.size = size;
  self.kind = kind;
  MemView other = RequireView(
      info, 0, into_buffer ? "copyFrom source" : "copyTo destination");
  if (into_buffer) {
    CopyInto(info.Env(), self, other, ParseOffset(info, 1));
  } else {
    CopyInto(info.Env(), other, self, ParseOffset(info, 1));
  }
}

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

// ---- CudaBufferWrap --------------------------------------------------------

Napi::Function CudaBufferWrap::Init(Napi::Env env) {
  return DefineClass(
      env, "CudaBuffer",
      {InstanceAccessor<&CudaBufferWrap::Kind>("kind"),
       InstanceAccessor<&CudaBufferWrap::Device>("device"),
       InstanceAccessor<&CudaBufferWrap::ByteLength>("byteLength"),
       InstanceAccessor<&CudaBufferWrap::Disposed>("disposed"),
       InstanceAccessor<&CudaBufferWrap::Imported>("imported"),
       InstanceMethod<&CudaBufferWrap::CopyFrom>("copyFrom"),
       InstanceMethod<&CudaBufferWrap::CopyTo>("copyTo"),
       InstanceMethod<&CudaBufferWrap::IpcHandle>("ipcHandle"),
       InstanceMethod<&CudaBufferWrap::Dispose>("dispose")});
}

Napi::Object CudaBufferWrap::Create(Napi::Env env, void* ptr, size_t size,
                                    int device, bool imported,
                                    const CudaIpcHandle* handle,
                                    std::function<void()> release) {
  WrapInit init{ptr, size, device, imported, handle, std::move(release)};
  return GetEnvData(env)->cuda_buffer_ctor.New(
      {Napi::External<WrapInit>::New(env, &init)});
}

CudaBufferWrap::CudaBufferWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<CudaBufferWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(),
                   "CudaBuffer cannot be constructed directly; use "
                   "cuda.alloc() or cuda.openIpcHandle()");
  }
  WrapInit* init = info[0].As<Napi::External<WrapInit>>().Data();
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

// ---- the `cuda` object -----------------------------------------------------

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

}  // namespace

Napi::Object CreateCudaObject(Napi::Env env) {
  Napi::Object cuda = Napi::Object::New(env);
  cuda.Set("isAvailable",
           Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
             return Napi::Boolean::New(info.Env(), Cuda().available);
           }));
  cuda.Set("unavailableReason",
           Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
             return Napi::String::New(info.Env(),
                                      Cuda().available ? "" : Cuda().reason);
           }));
  cuda.Set("deviceCount",
           Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
             return Napi::Number::New(info.Env(), Cuda().device_count);
           }));
  cuda.Set("allocHost",
           Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
             Napi::Env env = info.Env();
             size_t bytes = ParseByteLength(env, info[0], "byteLength");
             RequireCuda(env, "allocHost");
             std::string error;
             void* ptr = CudaAllocHost(bytes, &error);
             if (ptr == nullptr) throw MakeError(env, "INTERNAL", error);
             Napi::MemoryManagement::AdjustExternalMemory(
                 env, static_cast<int64_t>(bytes));
             napi_env raw = env;
             return HostBufferWrap::Create(env, ptr, bytes, [ptr, bytes, raw] {
               CudaFreeHost(ptr);
               int64_t adjusted = 0;
               napi_adjust_external_memory(raw, -static_cast<int64_t>(bytes),
                                           &adjusted);
             });
           }));
  cuda.Set("alloc",
           Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
             Napi::Env env = info.Env();
             size_t bytes = ParseByteLength(env, info[0], "byteLength");
             RequireCuda(env, "alloc");
             int device = ParseDevice(env, info[1]);
             std::string error;
             void* ptr = CudaAllocDevice(bytes, device, &error);
             if (ptr == nullptr) throw MakeError(env, "INTERNAL", error);
             return CudaBufferWrap::Create(
                 env, ptr, bytes, device, false, nullptr,
                 [ptr, device] { CudaFreeDevice(ptr, device); });
           }));
  cuda.Set(
      "openIpcHandle",
      Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
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
          rc = guard.rc() != 0
                   ? guard.rc()
                   : Cuda().cudaIpcOpenMemHandle(
                         &ptr, handle, kCudaIpcMemLazyEnablePeerAccess);
        }
        if (rc != 0) {
          throw MakeError(env, "INVALID_ARG",
                          "cudaIpcOpenMemHandle failed: " + CudaErrorText(rc));
        }
        return CudaBufferWrap::Create(env, ptr, size, device, true, &handle,
                                      [ptr, device] {
                                        DeviceGuard guard(device);
                                        Cuda().cudaIpcCloseMemHandle(ptr);
                                      });
      }));
  cuda.Set("pointerAttributes", Napi::Function::New(env, PointerAttributes));
  cuda.Set("memGetInfo", Napi::Function::New(env, MemGetInfo));
  cuda.Set("freeFailures",
           Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
             return Napi::Number::New(info.Env(),
                                      static_cast<double>(CudaFreeFailures()));
           }));
  return cuda;
}

}  // namespace triton_node
