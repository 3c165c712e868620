// The C API's small handles, as plain structs: messages, metrics text,
// parameters, buffer attributes, response allocators, traces, metric args
// and server options. Each counts itself (leak_counters.h) and is tracked
// while it lives (precondition.h), so a use after delete is caught.
#ifndef TRITON_NODE_FAKE_CORE_HANDLES_H_
#define TRITON_NODE_FAKE_CORE_HANDLES_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../../include/triton_capi.h"
#include "../support/leak_counters.h"
#include "../support/precondition.h"

struct TRITONSERVER_Message : fake::Counted<fake::kLiveMessage>,
                              fake::Tracked<fake::Handle::kMessage> {
  std::string json;
};

struct TRITONSERVER_Metrics : fake::Counted<fake::kLiveMetrics>,
                              fake::Tracked<fake::Handle::kMetrics> {
  std::string text;
};

struct TRITONSERVER_Parameter : fake::Counted<fake::kLiveParameter>,
                                fake::Tracked<fake::Handle::kParameter> {
  std::string name;
  TRITONSERVER_ParameterType type = TRITONSERVER_PARAMETER_STRING;
  std::string str;  // STRING value or BYTES content
  int64_t i = 0;
  bool b = false;
  double d = 0;
  // Where ParameterValue-style getters point (value of the right type).
  const void* ValuePtr() const {
    switch (type) {
      case TRITONSERVER_PARAMETER_STRING:
        return str.c_str();
      case TRITONSERVER_PARAMETER_INT:
        return &i;
      case TRITONSERVER_PARAMETER_BOOL:
        return &b;
      case TRITONSERVER_PARAMETER_DOUBLE:
        return &d;
      default:
        return str.data();
    }
  }
};

struct TRITONSERVER_BufferAttributes
    : fake::Tracked<fake::Handle::kBufferAttributes> {
  TRITONSERVER_MemoryType memory_type = TRITONSERVER_MEMORY_CPU;
  int64_t memory_type_id = 0;
  size_t byte_size = 0;
  // A copy of the 64-byte CUDA IPC handle, as Triton keeps one.
  unsigned char cuda_ipc_handle[64] = {};
  bool has_cuda_ipc_handle = false;
};

struct TRITONSERVER_ResponseAllocator
    : fake::Counted<fake::kLiveAllocator>,
      fake::Tracked<fake::Handle::kAllocator> {
  TRITONSERVER_ResponseAllocatorAllocFn_t alloc_fn = nullptr;
  TRITONSERVER_ResponseAllocatorReleaseFn_t release_fn = nullptr;
  TRITONSERVER_ResponseAllocatorStartFn_t start_fn = nullptr;
  TRITONSERVER_ResponseAllocatorQueryFn_t query_fn = nullptr;
  TRITONSERVER_ResponseAllocatorBufferAttributesFn_t buffer_attributes_fn =
      nullptr;
  // In-flight requests that may still create responses with this allocator
  // and output buffers it handed out that are not yet released: while any
  // exist Triton still calls its functions, so it must not be deleted.
  std::atomic<int64_t> users{0};
};

struct TRITONSERVER_InferenceTrace : fake::Counted<fake::kLiveTrace>,
                                     fake::Tracked<fake::Handle::kTrace> {
  uint64_t id = 0;
  uint64_t parent_id = 0;
  // The model of the request that took the trace (set when it starts, as
  // Triton does before REQUEST_START).
  std::string model_name;
  int64_t model_version = -1;
  TRITONSERVER_InferenceTraceLevel level = TRITONSERVER_TRACE_LEVEL_DISABLED;
  TRITONSERVER_InferenceTraceActivityFn_t activity_fn = nullptr;
  TRITONSERVER_InferenceTraceReleaseFn_t release_fn = nullptr;
  void* userp = nullptr;
  // Set while a request in flight uses the trace (from ServerInferAsync to
  // the trace's release): deleting it then is a use after free.
  std::atomic<bool> attached{false};
  // Both functions are called without a null check, as Triton does;
  // ServerInferAsync checks them before a request takes the trace.
  void Report(TRITONSERVER_InferenceTraceActivity a, uint64_t ns) {
    if ((level & TRITONSERVER_TRACE_LEVEL_TIMESTAMPS) != 0) {
      activity_fn(this, a, ns, userp);
    }
  }
  void Release() {
    attached.store(false);
    release_fn(this, userp);
  }
};

struct TRITONSERVER_MetricArgs : fake::Tracked<fake::Handle::kMetricArgs> {
  bool histogram = false;
  std::vector<double> buckets;
};

struct TRITONSERVER_ServerOptions
    : fake::Tracked<fake::Handle::kServerOptions> {
  std::string server_id = "triton";
  std::vector<std::string> repo_paths;
  TRITONSERVER_ModelControlMode mode = TRITONSERVER_MODEL_CONTROL_NONE;
  std::vector<std::string> startup_models;
  bool strict_config = true;
  bool exit_on_error = true;
  bool strict_readiness = true;
  unsigned exit_timeout_s = 30;
  std::string backend_dir;
  std::string model_config_name;
  bool metrics = true;
  uint64_t pinned_pool = 268435456;
  TRITONSERVER_RateLimitMode rate_limit_mode = TRITONSERVER_RATE_LIMIT_OFF;
  // device (-1 global) -> resource -> count; a repeated resource keeps the
  // smaller count, as Triton does.
  std::map<int, std::map<std::string, size_t>> rate_limit_resources;
  // policy -> setting -> value
  std::map<std::string, std::map<std::string, std::string>> host_policies;
  // cache name -> its JSON config
  std::map<std::string, std::string> caches;
  // backend ("" for every backend) -> setting -> value
  std::map<std::string, std::map<std::string, std::string>> backend_config;
  std::string cache_dir = "/opt/tritonserver/caches";
};

#endif  // TRITON_NODE_FAKE_CORE_HANDLES_H_
