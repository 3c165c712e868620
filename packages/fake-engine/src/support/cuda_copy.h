// Copies between host, pinned and device memory (libcudart opened with
// dlopen the first time a GPU buffer is involved).
#ifndef TRITON_NODE_FAKE_SUPPORT_CUDA_COPY_H_
#define TRITON_NODE_FAKE_SUPPORT_CUDA_COPY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "../../include/triton_capi.h"

namespace fake {

// Copies between any two memory types; returns an error message on failure
// ("" on success). `what` names the tensor in the message.
std::string CopyBuffer(void* dst, TRITONSERVER_MemoryType dst_type,
                       int64_t dst_id, const void* src,
                       TRITONSERVER_MemoryType src_type, int64_t src_id,
                       size_t bytes, const std::string& what);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_CUDA_COPY_H_
