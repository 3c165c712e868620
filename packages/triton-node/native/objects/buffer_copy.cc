#include "objects/buffer_copy.h"

#include "memory/cuda_runtime.h"
#include "memory/mem_view.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

size_t ParseOffset(const Napi::CallbackInfo& info, size_t index) {
  if (info.Length() <= index || info[index].IsUndefined()) return 0;
  if (!info[index].IsNumber()) {
    ThrowTypeError(info.Env(), "offset must be a non-negative integer");
  }
  double d = info[index].As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d))) {
    ThrowRangeError(info.Env(), "offset must be a non-negative integer, got " +
                                    std::to_string(d));
  }
  return static_cast<size_t>(d);
}

// Copies `src` (whole) into `dst` at `offset`.
void CopyInto(Napi::Env env, const MemView& dst, const MemView& src,
              size_t offset) {
  if (offset > dst.size || src.size > dst.size - offset) {
    ThrowRangeError(env, "copy of " + std::to_string(src.size) +
                             " bytes at offset " + std::to_string(offset) +
                             " does not fit in " + std::to_string(dst.size) +
                             " bytes");
  }
  CopyBytes(env, dst.ptr + offset, dst.kind, src.ptr, src.kind, src.size);
}

}  // namespace

MemView RequireView(const Napi::CallbackInfo& info, size_t index,
                    const char* what) {
  MemView view;
  if (info.Length() <= index ||
      !ResolveMemView(info.Env(), info[index], what, &view)) {
    ThrowTypeError(info.Env(),
                   std::string(what) +
                       " must be an ArrayBufferView, HostBuffer or CudaBuffer");
  }
  return view;
}

void CopyWithBuffer(const Napi::CallbackInfo& info, uint8_t* ptr, size_t size,
                    MemKind kind, bool into_buffer) {
  MemView self;
  self.ptr = ptr;
  self.size = size;
  self.kind = kind;
  MemView other = RequireView(
      info, 0, into_buffer ? "copyFrom source" : "copyTo destination");
  if (into_buffer) {
    CopyInto(info.Env(), self, other, ParseOffset(info, 1));
  } else {
    CopyInto(info.Env(), other, self, ParseOffset(info, 1));
  }
}

}  // namespace triton_node
