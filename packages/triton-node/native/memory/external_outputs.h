// Pooled output memory handed to JS: as external ArrayBuffers (their
// registry, for releaseOutput(), and what V8 is told about them) or to
// HostBuffer/CudaBuffer objects.
#ifndef TRITON_NODE_MEMORY_EXTERNAL_OUTPUTS_H_
#define TRITON_NODE_MEMORY_EXTERNAL_OUTPUTS_H_

#include <napi.h>

#include <cstddef>
#include <functional>
#include <memory>

#include "memory/buffer_pool.h"

namespace triton_node {

// An external ArrayBuffer over `size` bytes at `base` in the pooled CPU
// buffer `buffer`, which goes back to the pool when the ArrayBuffer is
// collected or released. Null with `refused` set when the runtime allows no
// external ArrayBuffers (Electron); throws on any other failure.
napi_value ShareAsArrayBuffer(napi_env env, OutputBuffer* buffer,
                              const void* base, size_t size, bool* refused);

// releaseOutput(): gives the pooled memory under an ArrayBuffer from
// ShareAsArrayBuffer back, detaching the ArrayBuffer at once. The pool gets
// the memory now, or when the last request using it (UseExternalOutput) ends.
// False (and nothing done) for any other ArrayBuffer or one already released.
bool ReleaseSharedArrayBuffer(napi_env env, napi_value array_buffer);

// An in-flight use of `array_buffer`'s memory by a request (an input it
// reads, an `into` it writes) when that memory is a pooled output handed to
// JS; null for any other memory. Dropping it (any thread) ends the use.
// JS thread.
std::shared_ptr<void> UseExternalOutput(napi_env env, napi_value array_buffer);

// Marks `buffer` as owned by a JS object (HostBuffer, CudaBuffer) and
// returns the function that gives it back (dispose or GC).
std::function<void()> HandOver(OutputBuffer* buffer);

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_EXTERNAL_OUTPUTS_H_
