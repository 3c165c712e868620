// The Triton release the fake imitates, where releases differ (the list is
// native/fake/PRECONDITIONS.md's "Releases"). Process-wide: every server of
// the process behaves as the release set last, from its next call on.
#ifndef TRITON_NODE_FAKE_SUPPORT_RELEASE_H_
#define TRITON_NODE_FAKE_SUPPORT_RELEASE_H_

#include <string>

namespace fake {

enum class Release {
  kR25_07,  // Triton 2.59.1
  kR26_06,  // Triton 2.70.0: the default
};

Release CurrentRelease();
bool AtLeast(Release r);
// "r25.07" or "r26.06" (false, and nothing changes, for any other name).
bool SetRelease(const std::string& name);
// TRITONFAKE_RELEASE, when set; an unknown name is logged and ignored.
void ReadReleaseFromEnvironment();
// Triton's version string of the release ("2.70.0").
const char* ReleaseServerVersion();
const char* ReleaseName();

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_RELEASE_H_
