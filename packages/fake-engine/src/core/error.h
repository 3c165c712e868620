// The C API's error object, and the two one-line ways the engine makes one.
#ifndef TRITON_NODE_FAKE_CORE_ERROR_H_
#define TRITON_NODE_FAKE_CORE_ERROR_H_

#include <string>
#include <utility>

#include "../../include/triton_capi.h"
#include "../support/leak_counters.h"
#include "../support/precondition.h"

struct TRITONSERVER_Error : fake::Counted<fake::kLiveError>,
                            fake::Tracked<fake::Handle::kError> {
  TRITONSERVER_Error_Code code;
  std::string msg;
  TRITONSERVER_Error(TRITONSERVER_Error_Code c, std::string m)
      : code(c), msg(std::move(m)) {}
};

namespace fake {

inline TRITONSERVER_Error* Err(TRITONSERVER_Error_Code c, std::string m) {
  return new TRITONSERVER_Error(c, std::move(m));
}
inline TRITONSERVER_Error* ErrArg(std::string m) {
  return Err(TRITONSERVER_ERROR_INVALID_ARG, std::move(m));
}

// Triton's phrase for a code (TRITONSERVER_ErrorCodeString): "Invalid
// argument", "Not found", ...
const char* CodeString(TRITONSERVER_Error_Code code);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CORE_ERROR_H_
