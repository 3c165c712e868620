// Reading submit()'s arguments (request/submit_layout.h) without
// allocating: strings on the stack when short, numbers straight from the
// Float64Array's memory.
#ifndef TRITON_NODE_REQUEST_SUBMIT_ARGS_H_
#define TRITON_NODE_REQUEST_SUBMIT_ARGS_H_

#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "request/submit_layout.h"
#include "triton/errors.h"

namespace triton_node {

// A JS string as UTF-8, on the stack when short (no heap per request).
// Throws a TypeError naming `what` for a non-string or one holding a NUL
// (Triton takes C strings: a NUL would silently cut the value).
class Utf8 {
 public:
  Utf8(Napi::Env env, napi_value value, const Subject& what);
  const char* c_str() const { return data_; }
  size_t size() const { return length_; }

 private:
  void RejectNul(Napi::Env env, const Subject& what) const;

  char inline_[128];
  std::string heap_;
  const char* data_ = nullptr;
  size_t length_ = 0;
};

// The numbers of submit() (its first argument, a Float64Array). Its memory
// is read directly: no Node-API call per number. The array may be longer
// than the request needs (the TS layer reuses one).
class SubmitNumbers {
 public:
  SubmitNumbers(Napi::Env env, const Napi::CallbackInfo& info);
  // Position of the next number after the header.
  size_t Next();
  double At(size_t i) const { return data_[i]; }
  // -1 (not set) or a non-negative integer.
  int64_t Optional(size_t i, const char* what) const;
  // A non-negative integer that fits in 32 bits.
  uint32_t Count(size_t i, const char* what) const;
  // -1 (not set) to `max`.
  int Enum(size_t i, int max, const char* what) const;

 private:
  Napi::Env env_;
  const double* data_ = nullptr;
  size_t size_ = 0;
  size_t next_ = kSubmitHeader;
};

bool IsNullish(Napi::Env env, napi_value v);
bool IsInteger(double d);
double ToNumber(Napi::Env env, napi_value v, const Subject& what);
uint64_t ToUint64(Napi::Env env, napi_value v, const Subject& what);
int64_t ToInt64(Napi::Env env, napi_value v, const Subject& what);
bool ToBool(Napi::Env env, napi_value v, const Subject& what);

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_SUBMIT_ARGS_H_
