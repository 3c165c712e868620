// Module entry: the environment's data, the classes, and one table of the
// addon's functions (NativeAddon in lib/abi/binding.ts).
#include <napi.h>

#include <cstdlib>
#include <cstring>

#include "env/env_data.h"
#include "objects/constants.h"
#include "objects/cuda_buffer.h"
#include "objects/cuda_functions.h"
#include "objects/fake_functions.h"
#include "objects/host_buffer.h"
#include "objects/library_functions.h"
#include "objects/metric.h"
#include "objects/metric_family.h"
#include "objects/output_functions.h"
#include "objects/server_object.h"

namespace triton_node {
namespace {

struct AddonFunction {
  const char* name;
  Napi::Value (*fn)(const Napi::CallbackInfo&);
};

constexpr AddonFunction kFunctions[] = {
    {"loadLibrary", LoadLibrary},
    {"libraryInfo", LibraryInfo},
    {"logSettings", LogSettingsOf},
    {"updateLogSettings", UpdateLogSettings},
    {"setEventDecoder", ServerWrap::SetEventDecoder},
    {"createServer", ServerWrap::CreateServer},
    {"attachServer", ServerWrap::AttachServer},
    {"fakeLiveObjects", FakeLiveObjects},
    {"fakeSetSyncCallbacks", FakeSetSyncCallbacks},
    {"fakeSetStandIns", FakeSetStandIns},
    {"fakeHoldModelLoads", FakeHoldModelLoads},
    {"fakeRelease", FakeRelease},
    {"copyOutputs", CopyOutputs},
    {"setCopyOutputs", SetCopyOutputs},
    {"addonStats", AddonStats},
    {"noteExitCode", NoteExitCode},
    {"releaseOutput", ReleaseOutput},
};

Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  EnvData* data = InstallEnvData(env);
  const char* copy = std::getenv("TRITON_NODE_COPY_OUTPUTS");
  data->copy_outputs_forced = copy != nullptr && std::strcmp(copy, "1") == 0;
  // Each class registers its constructor in the environment's data.
  ServerWrap::Init(env);
  HostBufferWrap::Init(env);
  CudaBufferWrap::Init(env);
  MetricFamilyWrap::Init(env);
  MetricWrap::Init(env);
  for (const AddonFunction& f : kFunctions) {
    exports.Set(f.name, Napi::Function::New(env, f.fn, f.name));
  }
  exports.Set("cuda", CreateCudaObject(env));
  exports.Set("constants", ConstantsObject(env));
  return exports;
}

}  // namespace
}  // namespace triton_node

static Napi::Object InitTritonNode(Napi::Env env, Napi::Object exports) {
  return triton_node::InitAddon(env, exports);
}

// cmake-js builds do not define the node-gyp module name.
#ifndef NODE_GYP_MODULE_NAME
#define NODE_GYP_MODULE_NAME triton_node
#endif
NODE_API_MODULE(NODE_GYP_MODULE_NAME, InitTritonNode)
