// The addon's functions about output memory: copying, early release, and
// the counts of what is held.
#ifndef TRITON_NODE_OBJECTS_OUTPUT_FUNCTIONS_H_
#define TRITON_NODE_OBJECTS_OUTPUT_FUNCTIONS_H_

#include <napi.h>

namespace triton_node {

Napi::Value CopyOutputs(const Napi::CallbackInfo& info);
Napi::Value SetCopyOutputs(const Napi::CallbackInfo& info);
Napi::Value ReleaseOutput(const Napi::CallbackInfo& info);
Napi::Value AddonStats(const Napi::CallbackInfo& info);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_OUTPUT_FUNCTIONS_H_
