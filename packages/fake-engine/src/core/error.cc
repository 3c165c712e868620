// Triton's phrases for its error codes.
#include "error.h"

namespace fake {

const char* CodeString(TRITONSERVER_Error_Code code) {
  switch (code) {
    case TRITONSERVER_ERROR_UNKNOWN:
      return "Unknown";
    case TRITONSERVER_ERROR_INTERNAL:
      return "Internal";
    case TRITONSERVER_ERROR_NOT_FOUND:
      return "Not found";
    case TRITONSERVER_ERROR_INVALID_ARG:
      return "Invalid argument";
    case TRITONSERVER_ERROR_UNAVAILABLE:
      return "Unavailable";
    case TRITONSERVER_ERROR_UNSUPPORTED:
      return "Unsupported";
    case TRITONSERVER_ERROR_ALREADY_EXISTS:
      return "Already exists";
    case TRITONSERVER_ERROR_CANCELLED:
      // Triton's table has no phrase for CANCELLED.
      return "<invalid code>";
  }
  return "Unknown";
}

}  // namespace fake
