// TRITONSERVER_Error → plain ErrorInfo → JS Error with `code`.
#ifndef TRITON_NODE_TRITON_ERRORS_H_
#define TRITON_NODE_TRITON_ERRORS_H_

#include <napi.h>

#include <string>

#include "triton_capi.h"

namespace triton_node {

// A Triton error detached from the library (safe to move across threads).
struct ErrorInfo {
  int code = TRITONSERVER_ERROR_UNKNOWN;
  std::string message;
};

// Triton's code name by numeric value ("INVALID_ARG"...); unknown values
// map to "UNKNOWN". Never uses TRITONSERVER_ErrorCodeString (it returns
// phrases, and nothing for CANCELLED).
const char* ErrorCodeName(int code);
// Codes are 0 .. ErrorCodeCount() - 1.
int ErrorCodeCount();

// Copies code and message out of `err` and deletes it. `err` must be
// non-null and owned by the caller.
ErrorInfo TakeError(TRITONSERVER_Error* err);

// Reads code and message of an error without deleting it.
ErrorInfo PeekError(TRITONSERVER_Error* err);

// Deletes an error nobody needs (the failure of a best-effort call); null is
// fine. Every error the C API returns is the caller's to delete.
void DropError(TRITONSERVER_Error* err);

// What an error is about ("input 'INPUT0'", "output 'OUT' destination"),
// kept as its parts: the text is made only when an error is thrown, not for
// each item of each request. It points at its parts, which must outlive it:
// make one for the call that uses it.
class Subject {
 public:
  // Plain text. Implicit, so that a literal or a string names a subject.
  Subject(const char* text) : kind_(text) {}  // NOLINT(runtime/explicit)
  Subject(const std::string& text)            // NOLINT(runtime/explicit)
      : kind_(text.c_str()) {}
  // kind 'name'suffix
  Subject(const char* kind, const char* name, const char* suffix = "")
      : kind_(kind), name_(name), suffix_(suffix) {}
  // The same subject followed by `suffix` (which replaces its own).
  Subject With(const char* suffix) const {
    Subject s = *this;
    s.suffix_ = suffix;
    return s;
  }
  std::string str() const;

 private:
  const char* kind_;
  const char* name_ = nullptr;
  const char* suffix_ = "";
};

// A JS Error with `code` set.
Napi::Error MakeError(Napi::Env env, const char* code,
                      const std::string& message);
Napi::Error MakeError(Napi::Env env, const ErrorInfo& info);

// `{code, message}` plain object (NativeErrorInfo).
Napi::Object MakeErrorInfoObject(Napi::Env env, const ErrorInfo& info);

// Throws (as a C++ exception carrying a JS Error) if `err` is non-null,
// after deleting it. `context` is prefixed to the message when non-empty.
void ThrowIfError(Napi::Env env, TRITONSERVER_Error* err,
                  const std::string& context);
// The same without a context (no string made on the path where all is well).
inline void ThrowIfError(Napi::Env env, TRITONSERVER_Error* err) {
  if (err != nullptr) ThrowIfError(env, err, std::string());
}

// Throws a TypeError / RangeError with `code` INVALID_ARG.
[[noreturn]] void ThrowTypeError(Napi::Env env, const std::string& message);
[[noreturn]] void ThrowRangeError(Napi::Env env, const std::string& message);

// Throws UNSUPPORTED: the loaded Triton library lacks `what` (an optional
// entry point or a feature built on one); names the library's API version.
[[noreturn]] void ThrowLibraryLacks(Napi::Env env, const std::string& what);

}  // namespace triton_node

#endif  // TRITON_NODE_TRITON_ERRORS_H_
