// The addon's `cuda` object (NativeCuda in lib/abi/binding.ts).
#ifndef TRITON_NODE_OBJECTS_CUDA_FUNCTIONS_H_
#define TRITON_NODE_OBJECTS_CUDA_FUNCTIONS_H_

#include <napi.h>

namespace triton_node {

Napi::Object CreateCudaObject(Napi::Env env);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_CUDA_FUNCTIONS_H_
