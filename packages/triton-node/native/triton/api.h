// The one place that opens libtritonserver.so: a process-wide table of
// function pointers resolved with dlsym from the TRITON_CAPI_* lists.
#ifndef TRITON_NODE_TRITON_API_H_
#define TRITON_NODE_TRITON_API_H_

#include <string>
#include <utility>
#include <vector>

#include "triton_capi.h"

namespace triton_node {

// Every entry point as a member named exactly like the C function, so call
// sites read `Api().TRITONSERVER_ServerNew(...)`. Optional ones may be null.
struct TritonApi {
#define TRITON_NODE_API_MEMBER(ret, name, params) ret(*name) params = nullptr;
  TRITON_CAPI_REQUIRED(TRITON_NODE_API_MEMBER)
  TRITON_CAPI_OPTIONAL(TRITON_NODE_API_MEMBER)
#undef TRITON_NODE_API_MEMBER
  // Fake engine extras (null on a real Triton).
  TRITONFAKE_LiveObjectsFn_t TRITONFAKE_LiveObjects = nullptr;
  TRITONFAKE_SetSyncCallbacksFn_t TRITONFAKE_SetSyncCallbacks = nullptr;
  TRITONFAKE_SetStandInsFn_t TRITONFAKE_SetStandIns = nullptr;
  TRITONFAKE_HoldModelLoadsFn_t TRITONFAKE_HoldModelLoads = nullptr;
  TRITONFAKE_SetReleaseFn_t TRITONFAKE_SetRelease = nullptr;

  void* handle = nullptr;
  std::string path;
  uint32_t api_major = 0;
  uint32_t api_minor = 0;
  // Optional entry point names and whether each resolved, in list order.
  std::vector<std::pair<std::string, bool>> optional;
};

// One candidate the loader looked at (mirrors NativeLoadAttempt).
struct LoadAttempt {
  std::string path;
  std::string outcome;  // missing | dlopen | symbols | version | loaded
  std::string detail;
};

struct LoadResult {
  const TritonApi* api = nullptr;  // null on failure
  // On failure: "NOT_FOUND" (nothing usable), "UNSUPPORTED" (a library was
  // found but is not a usable Triton), "ALREADY_EXISTS" (another library is
  // already loaded in this process).
  const char* error_code = nullptr;
  std::string error_message;
  std::vector<LoadAttempt> attempts;
};

// Loads the library once per process (thread-safe; worker threads share it).
// A later call succeeds only when a candidate names the file already loaded.
LoadResult LoadTritonLibrary(const std::vector<std::string>& candidates);

// The loaded table, or null before a successful LoadTritonLibrary. The
// library is never unloaded: Triton's threads may outlive any environment.
const TritonApi* LoadedApi();

// Shorthand for code that runs only after a successful load.
inline const TritonApi& Api() { return *LoadedApi(); }

}  // namespace triton_node

#endif  // TRITON_NODE_TRITON_API_H_
