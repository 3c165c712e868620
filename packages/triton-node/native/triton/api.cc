#include "triton/api.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace triton_node {
namespace {

std::mutex g_load_mutex;
// Written once under g_load_mutex, then only read; never freed.
std::atomic<TritonApi*> g_api{nullptr};
dev_t g_loaded_dev = 0;
ino_t g_loaded_ino = 0;

bool HasSlash(const std::string& path) {
  return path.find('/') != std::string::npos;
}

// Fills `api` from `handle`; returns the names of required symbols missing.
std::vector<std::string> ResolveSymbols(void* handle, TritonApi* api) {
  std::vector<std::string> missing;
#define TRITON_NODE_RESOLVE_REQUIRED(ret, name, params)              \
  api->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name)); \
  if (api->name == nullptr) missing.push_back(#name);
  TRITON_CAPI_REQUIRED(TRITON_NODE_RESOLVE_REQUIRED)
#undef TRITON_NODE_RESOLVE_REQUIRED
#define TRITON_NODE_RESOLVE_OPTIONAL(ret, name, params)              \
  api->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name)); \
  api->optional.emplace_back(#name, api->name != nullptr);
  TRITON_CAPI_OPTIONAL(TRITON_NODE_RESOLVE_OPTIONAL)
#undef TRITON_NODE_RESOLVE_OPTIONAL
  // Presence only: the log callback (C API 1.35, Triton 2.72) is not in any
  // header this project was written against (r25.07 and r26.06 lack it), so
  // it is never called; `log.logger` says it needs it.
  api->optional.emplace_back(
      "TRITONSERVER_ServerOptionsSetLogCallback",
      dlsym(handle, "TRITONSERVER_ServerOptionsSetLogCallback") != nullptr);
  api->TRITONFAKE_LiveObjects = reinterpret_cast<TRITONFAKE_LiveObjectsFn_t>(
      dlsym(handle, "TRITONFAKE_LiveObjects"));
  api->TRITONFAKE_SetSyncCallbacks =
      reinterpret_cast<TRITONFAKE_SetSyncCallbacksFn_t>(
          dlsym(handle, "TRITONFAKE_SetSyncCallbacks"));
  api->TRITONFAKE_SetStandIns = reinterpret_cast<TRITONFAKE_SetStandInsFn_t>(
      dlsym(handle, "TRITONFAKE_SetStandIns"));
  api->TRITONFAKE_HoldModelLoads =
      reinterpret_cast<TRITONFAKE_HoldModelLoadsFn_t>(
          dlsym(handle, "TRITONFAKE_HoldModelLoads"));
  api->TRITONFAKE_SetRelease = reinterpret_cast<TRITONFAKE_SetReleaseFn_t>(
      dlsym(handle, "TRITONFAKE_SetRelease"));
  return missing;
}

std::string JoinNames(const std::vector<std::string>& names, size_t limit) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  if (names.size() > limit) {
    out += ", ... (" + std::to_string(names.size() - limit) + " more)";
  }
  return out;
}

// Tries one candidate; on success returns a heap table (never freed).
TritonApi* TryCandidate(const std::string& path, LoadAttempt* attempt) {
  attempt->path = path;
  struct stat st;
  if (HasSlash(path) && stat(path.c_str(), &st) != 0) {
    attempt->outcome = "missing";
    attempt->detail = std::strerror(errno);
    return nullptr;
  }
  dlerror();
  // RTLD_LOCAL keeps Triton's symbols (protobuf, etc.) out of Node's global
  // namespace; backends link libtritonserver.so themselves.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    std::string text = err ? err : "unknown dlopen error";
    bool not_there =
        !HasSlash(path) &&
        text.find("cannot open shared object file") != std::string::npos;
    attempt->outcome = not_there ? "missing" : "dlopen";
    attempt->detail = text;
    return nullptr;
  }
  auto* api = new TritonApi();
  std::vector<std::string> missing = ResolveSymbols(handle, api);
  if (!missing.empty()) {
    attempt->outcome = "symbols";
    attempt->detail = "not a Triton server library: missing " +
                      std::to_string(missing.size()) +
                      " required entry point(s): " + JoinNames(missing, 5);
    delete api;
    dlclose(handle);
    return nullptr;
  }
  uint32_t major = 0, minor = 0;
  TRITONSERVER_Error* err = api->TRITONSERVER_ApiVersion(&major, &minor);
  if (err != nullptr) {
    attempt->outcome = "version";
    attempt->detail = std::string("TRITONSERVER_ApiVersion failed: ") +
                      api->TRITONSERVER_ErrorMessage(err);
    api->TRITONSERVER_ErrorDelete(err);
    delete api;
    dlclose(handle);
    return nullptr;
  }
  if (major != TRITON_NODE_API_MAJOR || minor < TRITON_NODE_API_MIN_MINOR) {
    attempt->outcome = "version";
    attempt->detail =
        "API version " + std::to_string(major) + "." + std::to_string(minor) +
        " found, " + std::to_string(TRITON_NODE_API_MAJOR) + "." +
        std::to_string(TRITON_NODE_API_MIN_MINOR) + " or a later " +
        std::to_string(TRITON_NODE_API_MAJOR) + ".x needed";
    delete api;
    dlclose(handle);
    return nullptr;
  }
  api->handle = handle;
  api->path = path;
  api->api_major = major;
  api->api_minor = minor;
  attempt->outcome = "loaded";
  attempt->detail =
      "API " + std::to_string(major) + "." + std::to_string(minor);
  if (HasSlash(path) && stat(path.c_str(), &st) == 0) {
    g_loaded_dev = st.st_dev;
    g_loaded_ino = st.st_ino;
  }
  return api;
}

std::string DescribeAttempts(const std::vector<LoadAttempt>& attempts) {
  std::string text;
  for (const LoadAttempt& a : attempts) {
    text += "\n  - " + a.path + ": " + a.outcome + " (" + a.detail + ")";
  }
  return text;
}

}  // namespace

const TritonApi* LoadedApi() { return g_api.load(std::memory_order_acquire); }

LoadResult LoadTritonLibrary(const std::vector<std::string>& candidates) {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  LoadResult result;
  TritonApi* loaded = g_api.load(std::memory_order_relaxed);
  if (loaded != nullptr) {
    // Already loaded in this process: accept the first candidate that exists
    // only if it is the same file.
    for (const std::string& path : candidates) {
      LoadAttempt attempt;
      attempt.path = path;
      struct stat st;
      if (path == loaded->path) {
        attempt.outcome = "loaded";
        attempt.detail = "already loaded";
        result.attempts.push_back(attempt);
        result.api = loaded;
        return result;
      }
      if (!HasSlash(path) || stat(path.c_str(), &st) != 0) {
        attempt.outcome = "missing";
        attempt.detail = HasSlash(path)
                             ? std::strerror(errno)
                             : "not a path; already loaded: " + loaded->path;
        result.attempts.push_back(attempt);
        continue;
      }
      if (st.st_dev == g_loaded_dev && st.st_ino == g_loaded_ino) {
        attempt.outcome = "loaded";
        attempt.detail = "same file as " + loaded->path;
        result.attempts.push_back(attempt);
        result.api = loaded;
        return result;
      }
      attempt.outcome = "dlopen";
      attempt.detail = "another Triton library is loaded: " + loaded->path;
      result.attempts.push_back(attempt);
      result.error_code = "ALREADY_EXISTS";
      result.error_message =
          "a different libtritonserver is already loaded in this process (" +
          loaded->path + "); it cannot be replaced by " + path +
          ". Use the same library in every environment.";
      return result;
    }
    result.error_code = "NOT_FOUND";
    result.error_message =
        "none of the candidate libraries exists (already loaded in this "
        "process: " +
        loaded->path + "); tried:" + DescribeAttempts(result.attempts);
    return result;
  }

  bool found_file = false;
  for (const std::string& path : candidates) {
    LoadAttempt attempt;
    TritonApi* api = TryCandidate(path, &attempt);
    result.attempts.push_back(attempt);
    if (api != nullptr) {
      g_api.store(api, std::memory_order_release);
      result.api = api;
      return result;
    }
    if (attempt.outcome != "missing") found_file = true;
  }
  result.error_code = found_file ? "UNSUPPORTED" : "NOT_FOUND";
  // Facts only: the advice (what to do, which C API is needed) is the TS
  // loader's (lib/addon/load.ts), said once; this message is its cause.
  result.error_message =
      std::string(found_file ? "no usable libtritonserver.so found"
                             : "libtritonserver.so not found") +
      "; tried:" +
      (result.attempts.empty() ? std::string("\n  (no candidates given)")
                               : DescribeAttempts(result.attempts));
  return result;
}

}  // namespace triton_node
