// Opening ONNX Runtime at run time (onnxruntime_api.h).
#include "onnxruntime_api.h"

#include <dlfcn.h>

#include <mutex>

namespace fake {
namespace ort {
namespace {

// OrtApiBase: two functions.
struct ApiBase {
  const void* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)();
};

template <typename Fn>
void Take(const void* const* table, Slot slot, Fn* out) {
  *out = reinterpret_cast<Fn>(const_cast<void*>(table[slot]));
}

void FillApi(const void* const* t, Api* a) {
  Take(t, kGetErrorCode, &a->GetErrorCode);
  Take(t, kGetErrorMessage, &a->GetErrorMessage);
  Take(t, kCreateEnv, &a->CreateEnv);
  Take(t, kCreateSession, &a->CreateSession);
  Take(t, kRun, &a->Run);
  Take(t, kCreateSessionOptions, &a->CreateSessionOptions);
  Take(t, kSetSessionGraphOptimizationLevel,
       &a->SetSessionGraphOptimizationLevel);
  Take(t, kSetIntraOpNumThreads, &a->SetIntraOpNumThreads);
  Take(t, kSetInterOpNumThreads, &a->SetInterOpNumThreads);
  Take(t, kSessionGetInputCount, &a->SessionGetInputCount);
  Take(t, kSessionGetOutputCount, &a->SessionGetOutputCount);
  Take(t, kSessionGetOverridableInitializerCount,
       &a->SessionGetOverridableInitializerCount);
  Take(t, kSessionGetOverridableInitializerTypeInfo,
       &a->SessionGetOverridableInitializerTypeInfo);
  Take(t, kSessionGetOverridableInitializerName,
       &a->SessionGetOverridableInitializerName);
  Take(t, kSessionGetInputTypeInfo, &a->SessionGetInputTypeInfo);
  Take(t, kSessionGetOutputTypeInfo, &a->SessionGetOutputTypeInfo);
  Take(t, kSessionGetInputName, &a->SessionGetInputName);
  Take(t, kSessionGetOutputName, &a->SessionGetOutputName);
  Take(t, kCreateTensorAsOrtValue, &a->CreateTensorAsOrtValue);
  Take(t, kCreateTensorWithDataAsOrtValue, &a->CreateTensorWithDataAsOrtValue);
  Take(t, kGetTensorMutableData, &a->GetTensorMutableData);
  Take(t, kFillStringTensor, &a->FillStringTensor);
  Take(t, kGetStringTensorDataLength, &a->GetStringTensorDataLength);
  Take(t, kGetStringTensorContent, &a->GetStringTensorContent);
  Take(t, kCastTypeInfoToTensorInfo, &a->CastTypeInfoToTensorInfo);
  Take(t, kGetOnnxTypeFromTypeInfo, &a->GetOnnxTypeFromTypeInfo);
  Take(t, kGetTensorElementType, &a->GetTensorElementType);
  Take(t, kGetDimensionsCount, &a->GetDimensionsCount);
  Take(t, kGetDimensions, &a->GetDimensions);
  Take(t, kGetTensorTypeAndShape, &a->GetTensorTypeAndShape);
  Take(t, kCreateCpuMemoryInfo, &a->CreateCpuMemoryInfo);
  Take(t, kAllocatorFree, &a->AllocatorFree);
  Take(t, kGetAllocatorWithDefaultOptions, &a->GetAllocatorWithDefaultOptions);
  Take(t, kReleaseEnv, &a->ReleaseEnv);
  Take(t, kReleaseStatus, &a->ReleaseStatus);
  Take(t, kReleaseMemoryInfo, &a->ReleaseMemoryInfo);
  Take(t, kReleaseSession, &a->ReleaseSession);
  Take(t, kReleaseValue, &a->ReleaseValue);
  Take(t, kReleaseTypeInfo, &a->ReleaseTypeInfo);
  Take(t, kReleaseTensorTypeAndShapeInfo, &a->ReleaseTensorInfo);
  Take(t, kReleaseSessionOptions, &a->ReleaseSessionOptions);
}

std::mutex g_mu;
Library* g_library = nullptr;  // never freed (see Library)

std::string Open(const std::string& path, Library* lib) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return "cannot open '" + path + "': " + (why != nullptr ? why : "?");
  }
  using GetApiBaseFn = const ApiBase* (*)();
  auto get_base =
      reinterpret_cast<GetApiBaseFn>(::dlsym(handle, "OrtGetApiBase"));
  if (get_base == nullptr) {
    return "'" + path + "' is not ONNX Runtime (no OrtGetApiBase)";
  }
  const ApiBase* base = get_base();
  lib->version = base->GetVersionString();
  const void* table = base->GetApi(kRequestedApiVersion);
  if (table == nullptr) {
    return "ONNX Runtime " + lib->version + " at '" + path +
           "' does not serve C API version " +
           std::to_string(kRequestedApiVersion);
  }
  FillApi(static_cast<const void* const*>(table), &lib->api);
  lib->path = path;
  std::string e = lib->Take(
      lib->api.CreateEnv(kLoggingLevelError, "triton-fake", &lib->env));
  if (e.empty()) {
    e = lib->Take(lib->api.CreateCpuMemoryInfo(kArenaAllocator, kMemTypeDefault,
                                               &lib->cpu));
  }
  if (e.empty()) {
    e = lib->Take(lib->api.GetAllocatorWithDefaultOptions(&lib->allocator));
  }
  return e;
}

}  // namespace

std::string Library::Take(Status* status) const {
  if (status == nullptr) return "";
  std::string msg = "onnx runtime error " +
                    std::to_string(api.GetErrorCode(status)) + ": " +
                    api.GetErrorMessage(status);
  api.ReleaseStatus(status);
  return msg;
}

const Library* OpenOnnxRuntime(const std::string& path, std::string* error) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_library != nullptr) {
    if (g_library->path == path) return g_library;
    *error = "ONNX Runtime is already open from '" + g_library->path +
             "' in this process; cannot open a second one from '" + path + "'";
    return nullptr;
  }
  auto* lib = new Library();
  *error = Open(path, lib);
  if (!error->empty()) {
    delete lib;
    return nullptr;
  }
  g_library = lib;
  return lib;
}

}  // namespace ort
}  // namespace fake
