#include "memory/buffer_objects.h"

#include <utility>

#include "env/env_data.h"

namespace triton_node {

Napi::Object NewHostBufferObject(Napi::Env env, BufferInit init) {
  return GetEnvData(env)->host_buffer_ctor.New(
      {Napi::External<BufferInit>::New(env, &init)});
}

Napi::Object NewCudaBufferObject(Napi::Env env, BufferInit init) {
  return GetEnvData(env)->cuda_buffer_ctor.New(
      {Napi::External<BufferInit>::New(env, &init)});
}

}  // namespace triton_node
