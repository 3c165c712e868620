// Request states as Triton names them.
#include "request.h"

namespace fake {

const char* RequestStateName(RequestState s) {
  switch (s) {
    case RequestState::kInitialized:
      return "INITIALIZED";
    case RequestState::kPending:
      return "PENDING";
    case RequestState::kExecuting:
      return "EXECUTING";
    case RequestState::kReleased:
      return "RELEASED";
    case RequestState::kFailedEnqueue:
      return "FAILED_ENQUEUE";
  }
  return "UNKNOWN";
}
}  // namespace fake
