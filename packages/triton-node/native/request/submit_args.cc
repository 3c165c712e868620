#include "request/submit_args.h"

#include <cmath>
#include <cstring>

#include "triton/errors.h"

namespace triton_node {

Utf8::Utf8(Napi::Env env, napi_value value, const Subject& what) {
  // No napi_typeof first: reading a non-string fails (napi_string_expected).
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, inline_, sizeof(inline_),
                                 &length) != napi_ok) {
    ThrowTypeError(env, what.str() + " must be a string");
  }
  if (length + 1 < sizeof(inline_)) {
    data_ = inline_;
    length_ = length;
    RejectNul(env, what);
    return;
  }
  napi_get_value_string_utf8(env, value, nullptr, 0, &length);
  heap_.resize(length + 1);
  napi_get_value_string_utf8(env, value, &heap_[0], length + 1, &length);
  data_ = heap_.c_str();
  length_ = length;
  RejectNul(env, what);
}

void Utf8::RejectNul(Napi::Env env, const Subject& what) const {
  if (std::memchr(data_, '\0', length_) == nullptr) return;
  std::string shown;
  for (size_t i = 0; i < length_; ++i) {
    if (data_[i] == '\0') {
      shown += "\\u0000";
    } else {
      shown += data_[i];
    }
  }
  ThrowTypeError(
      env, what.str() + " \"" + shown + "\" must not contain a NUL character");
}

SubmitNumbers::SubmitNumbers(Napi::Env env, const Napi::CallbackInfo& info)
    : env_(env) {
  // A value that is not a TypedArray fails napi_get_typedarray_info.
  bool is_typed = false;
  napi_typedarray_type type = napi_int8_array;
  void* ptr = nullptr;
  if (info.Length() >= kSubmitFixedArgs) {
    is_typed = napi_get_typedarray_info(env, info[0], &type, &size_, &ptr,
                                        nullptr, nullptr) == napi_ok;
  }
  if (!is_typed || type != napi_float64_array || size_ < kSubmitHeader) {
    ThrowTypeError(env,
                   "submit(nums, model, id, correlationId, ...) expects a "
                   "Float64Array of at least " +
                       std::to_string(kSubmitHeader) + " numbers first");
  }
  data_ = static_cast<const double*>(ptr);
}

size_t SubmitNumbers::Next() {
  if (next_ >= size_) {
    ThrowTypeError(env_, "submit: the request's numbers end early (" +
                             std::to_string(size_) + ")");
  }
  return next_++;
}

int64_t SubmitNumbers::Optional(size_t i, const char* what) const {
  double d = data_[i];
  if (d == -1) return -1;
  if (!(d >= 0) || !IsInteger(d)) {
    ThrowRangeError(env_, std::string(what) +
                              " must be a non-negative integer, got " +
                              std::to_string(d));
  }
  return static_cast<int64_t>(d);
}

uint32_t SubmitNumbers::Count(size_t i, const char* what) const {
  int64_t n = Optional(i, what);
  if (n < 0 || n > static_cast<int64_t>(UINT32_MAX)) {
    ThrowRangeError(env_, std::string("submit: bad ") + what);
  }
  return static_cast<uint32_t>(n);
}

int SubmitNumbers::Enum(size_t i, int max, const char* what) const {
  double d = data_[i];
  if (!IsInteger(d) || d < -1 || d > max) {
    ThrowTypeError(env_, std::string("submit: bad ") + what + " code " +
                             std::to_string(d));
  }
  return static_cast<int>(d);
}

bool IsNullish(Napi::Env env, napi_value v) {
  napi_valuetype type;
  napi_typeof(env, v, &type);
  return type == napi_undefined || type == napi_null;
}

bool IsInteger(double d) {
  return d >= -9007199254740992.0 && d <= 9007199254740992.0 &&
         d == std::trunc(d);
}

double ToNumber(Napi::Env env, napi_value v, const Subject& what) {
  double d = 0;
  if (napi_get_value_double(env, v, &d) != napi_ok) {
    ThrowTypeError(env, what.str() + " must be a number");
  }
  return d;
}

uint64_t ToUint64(Napi::Env env, napi_value v, const Subject& what) {
  napi_valuetype type;
  napi_typeof(env, v, &type);
  if (type == napi_bigint) {
    uint64_t u = 0;
    bool lossless = false;
    napi_get_value_bigint_uint64(env, v, &u, &lossless);
    if (!lossless) ThrowRangeError(env, what.str() + " is out of range");
    return u;
  }
  double d = ToNumber(env, v, what);
  if (!(d >= 0) || d != static_cast<double>(static_cast<uint64_t>(d))) {
    ThrowRangeError(env, what.str() + " must be a non-negative integer");
  }
  return static_cast<uint64_t>(d);
}

int64_t ToInt64(Napi::Env env, napi_value v, const Subject& what) {
  napi_valuetype type;
  napi_typeof(env, v, &type);
  if (type == napi_bigint) {
    int64_t i = 0;
    bool lossless = false;
    napi_get_value_bigint_int64(env, v, &i, &lossless);
    if (!lossless) ThrowRangeError(env, what.str() + " is out of int64 range");
    return i;
  }
  double d = ToNumber(env, v, what);
  if (!IsInteger(d)) ThrowRangeError(env, what.str() + " must be an integer");
  return static_cast<int64_t>(d);
}

bool ToBool(Napi::Env env, napi_value v, const Subject& what) {
  bool b = false;
  if (napi_get_value_bool(env, v, &b) != napi_ok) {
    ThrowTypeError(env, what.str() + " must be a boolean");
  }
  return b;
}

}  // namespace triton_node
