// The functions of the addon object itself (NativeAddon in lib/binding.ts),
// other than createServer and the `cuda` object.
#ifndef TRITON_NODE_OBJECTS_ADDON_FUNCTIONS_H_
#define TRITON_NODE_OBJECTS_ADDON_FUNCTIONS_H_

#include <napi.h>

namespace triton_node {

Napi::Value LoadLibrary(const Napi::CallbackInfo& info);
Napi::Value LibraryInfo(const Napi::CallbackInfo& info);
Napi::Value FakeLiveObjects(const Napi::CallbackInfo& info);
Napi::Value FakeSetSyncCallbacks(const Napi::CallbackInfo& info);
Napi::Value CopyOutputs(const Napi::CallbackInfo& info);
Napi::Value SetCopyOutputs(const Napi::CallbackInfo& info);
Napi::Value AddonStats(const Napi::CallbackInfo& info);
Napi::Value NoteExitCode(const Napi::CallbackInfo& info);
Napi::Value ReleaseOutput(const Napi::CallbackInfo& info);

// The numbers and names lib/binding.ts shares with the addon, from the C++
// definitions: test/contract.test.ts compares them with the TypeScript
// ones, so neither side can drift alone.
Napi::Object ConstantsObject(Napi::Env env);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_ADDON_FUNCTIONS_H_
