// The addon's `constants`.
#ifndef TRITON_NODE_OBJECTS_CONSTANTS_H_
#define TRITON_NODE_OBJECTS_CONSTANTS_H_

#include <napi.h>

namespace triton_node {

// The numbers and names lib/abi/binding.ts shares with the addon, from the C++
// definitions: test/addon/contract.test.ts compares them with the TypeScript
// ones, so neither side can drift alone.
Napi::Object ConstantsObject(Napi::Env env);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_CONSTANTS_H_
