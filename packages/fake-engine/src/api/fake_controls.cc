// The fake's own exports (TRITONFAKE_*, no Triton has them): live-object
// counts for leak tests, synchronous callbacks, stand-in backends, and
// model loads held back, and the Triton release imitated.
#include <cstdint>
#include <string>

#include "../backends/stand_ins.h"
#include "../core/error.h"
#include "../repository/repository.h"
#include "../scheduling/submission.h"
#include "../support/leak_counters.h"
#include "../support/release.h"
#include "export.h"

using namespace fake;

FAKE_EXPORT uint32_t TRITONFAKE_LiveObjects(uint64_t* counts,
                                            uint32_t capacity) {
  if (counts == nullptr) return 0;
  uint32_t n = capacity < static_cast<uint32_t>(kLiveKindCount)
                   ? capacity
                   : static_cast<uint32_t>(kLiveKindCount);
  for (uint32_t i = 0; i < n; ++i) {
    counts[i] = LiveCount(static_cast<LiveKind>(i));
  }
  return n;
}

FAKE_EXPORT void TRITONFAKE_SetSyncCallbacks(bool enabled) {
  SetSyncCallbacks(enabled);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONFAKE_SetStandIns(const char* spec) {
  FAKE_NOT_NULL(spec);
  std::string error;
  if (!SetStandIns(spec, &error)) return ErrArg(error);
  return nullptr;
}

FAKE_EXPORT uint32_t TRITONFAKE_HoldModelLoads(int32_t mode) {
  return HoldModelLoads(mode);
}

// The Triton release to imitate from now on ("r25.07", "r26.06"); null
// leaves it. Returns the release imitated (a static string).
FAKE_EXPORT const char* TRITONFAKE_SetRelease(const char* name) {
  if (name != nullptr) {
    ReadReleaseFromEnvironment();  // so that a later server does not undo it
    SetRelease(name);
  }
  return ReleaseName();
}
