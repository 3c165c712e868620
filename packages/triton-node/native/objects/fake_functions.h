// The addon's functions that reach the fake engine's extras (null or false
// on a real Triton).
#ifndef TRITON_NODE_OBJECTS_FAKE_FUNCTIONS_H_
#define TRITON_NODE_OBJECTS_FAKE_FUNCTIONS_H_

#include <napi.h>

namespace triton_node {

Napi::Value FakeLiveObjects(const Napi::CallbackInfo& info);
Napi::Value FakeSetSyncCallbacks(const Napi::CallbackInfo& info);
// fakeSetStandIns(spec): false on a real Triton; throws the fake's error
// for a malformed spec.
Napi::Value FakeSetStandIns(const Napi::CallbackInfo& info);
// fakeHoldModelLoads(mode): how many explicit loads the fake holds back
// (mode 1 holds them, 0 lets them go, -1 only asks); null on a real Triton.
Napi::Value FakeHoldModelLoads(const Napi::CallbackInfo& info);
// fakeRelease(name | null): the release the fake imitates after setting
// `name` (null only asks); null on a real Triton; throws a TypeError for an
// unknown name.
Napi::Value FakeRelease(const Napi::CallbackInfo& info);
// The fake's live-object kinds, in TRITONFAKE_LiveObjects order
// (TRITONFAKE_LIVE_OBJECT_KINDS of them).
const char* LiveObjectKindName(unsigned index);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_FAKE_FUNCTIONS_H_
