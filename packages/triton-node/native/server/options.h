// Server options: read from the NativeServerOptions object that lib/ built
// and checked (lib/abi/binding.ts), and applied to a new Triton server.
#ifndef TRITON_NODE_SERVER_OPTIONS_H_
#define TRITON_NODE_SERVER_OPTIONS_H_

#include <napi.h>

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "triton/errors.h"
#include "triton_capi.h"

namespace triton_node {

struct ServerOptionsData {
  std::vector<std::string> repositories;
  int control_mode = 0;
  std::vector<std::string> startup_models;
  bool strict_config = true;
  unsigned int exit_timeout = 30;
  unsigned int retry_count = 0;
  bool exit_on_error = true;
  bool strict_readiness = true;
  unsigned int load_threads = 0;  // 0: Triton's default
  std::string backend_dir;
  bool has_pinned = false;
  uint64_t pinned_bytes = 0;
  std::vector<std::pair<int, uint64_t>> cuda_pools;
  bool has_min_cc = false;
  double min_cc = 0;
  std::vector<std::array<std::string, 3>> backend_config;
  int log_verbose = 0;
  bool log_info = false, log_warn = true, log_error = true;
  std::string log_file;
  int log_format = -1;  // -1: not set
  bool metrics = true;
  int gpu_metrics = -1, cpu_metrics = -1;  // -1: Triton's default
  bool has_metrics_interval = false;
  uint64_t metrics_interval_ms = 0;
  std::string server_id;
  std::string model_config_name;
  int rate_limit_mode = -1;  // -1: not set (Triton's default, off)
  // (resource, count, device); device -1 is a global resource.
  std::vector<std::tuple<std::string, size_t, int>> rate_limit_resources;
  std::vector<std::array<std::string, 3>>
      host_policy;  // policy, setting, value
  std::string cache_name, cache_config, cache_dir;
};

// Plain typed reads: the TS layer checked every field (lib/api/options.ts), so
// a value of the wrong type here is a bug of ours, reported as the JS error
// Node-API raises for it.
ServerOptionsData ReadServerOptions(Napi::Object o);

// Worker thread: TRITONSERVER_ServerNew with these options (it blocks while
// startup models load). On failure, `error` says which option or call.
TRITONSERVER_Server* NewTritonServer(const ServerOptionsData& d,
                                     ErrorInfo* error);

}  // namespace triton_node

#endif  // TRITON_NODE_SERVER_OPTIONS_H_
