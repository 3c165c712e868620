// Aborting on a broken precondition, and the registry of live handles (see
// precondition.h).
#include "precondition.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace fake {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_set<const void*> live[static_cast<int>(Handle::kCount)];
};

// Never destroyed: handles may be deleted by threads still running while
// the process exits.
Registry& GetRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

}  // namespace

void Violation(const char* entry_point, const std::string& what) {
  std::fprintf(stderr, "triton fake: %s: %s\n", entry_point, what.c_str());
  std::fflush(stderr);
  std::abort();
}

const char* HandleName(Handle kind) {
  switch (kind) {
    case Handle::kServer:
      return "TRITONSERVER_Server";
    case Handle::kServerOptions:
      return "TRITONSERVER_ServerOptions";
    case Handle::kRequest:
      return "TRITONSERVER_InferenceRequest";
    case Handle::kResponse:
      return "TRITONSERVER_InferenceResponse";
    case Handle::kAllocator:
      return "TRITONSERVER_ResponseAllocator";
    case Handle::kTrace:
      return "TRITONSERVER_InferenceTrace";
    case Handle::kError:
      return "TRITONSERVER_Error";
    case Handle::kMessage:
      return "TRITONSERVER_Message";
    case Handle::kMetrics:
      return "TRITONSERVER_Metrics";
    case Handle::kParameter:
      return "TRITONSERVER_Parameter";
    case Handle::kBufferAttributes:
      return "TRITONSERVER_BufferAttributes";
    case Handle::kMetricFamily:
      return "TRITONSERVER_MetricFamily";
    case Handle::kMetric:
      return "TRITONSERVER_Metric";
    case Handle::kMetricArgs:
      return "TRITONSERVER_MetricArgs";
    case Handle::kCount:
      break;
  }
  return "handle";
}

void HandleAdd(Handle kind, const void* p) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.live[static_cast<int>(kind)].insert(p);
}

bool HandleRemove(Handle kind, const void* p) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.live[static_cast<int>(kind)].erase(p) == 1;
}

bool HandleLive(Handle kind, const void* p) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.live[static_cast<int>(kind)].count(p) == 1;
}

std::string NotLiveMessage(Handle kind, const char* what, bool is_null) {
  if (is_null) {
    return std::string(what) +
           " is null; the real library dereferences it (crash)";
  }
  return std::string(what) + " is not a live " + HandleName(kind) +
         " (deleted already, or not made by this library); the real library "
         "would use freed memory (crash or heap corruption)";
}

}  // namespace fake
