#include "release.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "log.h"

namespace fake {
namespace {

// The newest release the fake follows unless asked for another.
std::atomic<Release> g_release{Release::kR26_06};

}  // namespace

Release CurrentRelease() { return g_release.load(); }

bool AtLeast(Release r) {
  return static_cast<int>(g_release.load()) >= static_cast<int>(r);
}

bool SetRelease(const std::string& name) {
  if (name == "r25.07") {
    g_release = Release::kR25_07;
  } else if (name == "r26.06") {
    g_release = Release::kR26_06;
  } else {
    return false;
  }
  return true;
}

void ReadReleaseFromEnvironment() {
  // Once per process: a release set through TRITONFAKE_SetRelease later is
  // not undone by the next server.
  static std::once_flag once;
  std::call_once(once, [] {
    const char* name = std::getenv("TRITONFAKE_RELEASE");
    if (name == nullptr || *name == '\0') return;
    if (!SetRelease(name)) {
      LogError(std::string("TRITONFAKE_RELEASE: unknown release '") + name +
               "' (the fake imitates r25.07 or r26.06)");
    }
  });
}

const char* ReleaseServerVersion() {
  return g_release.load() == Release::kR25_07 ? "2.59.1" : "2.70.0";
}

const char* ReleaseName() {
  return g_release.load() == Release::kR25_07 ? "r25.07" : "r26.06";
}

}  // namespace fake
