// Server options: every TRITONSERVER_ServerOptions* entry point.
#include <string>

#include "../core/error.h"
#include "../core/handles.h"
#include "../support/log.h"
#include "export.h"

using namespace fake;

// ---- options
// ------------------------------------------------------------------

// Every options setter reads the options object (the logging ones
// excepted, below); the string ones copy their argument into a std::string.
#define OPT_SETTER(name, type, body)                                \
  FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptions##name( \
      TRITONSERVER_ServerOptions* options, type value) {            \
    FAKE_LIVE(kServerOptions, options);                             \
    body;                                                           \
    return nullptr;                                                 \
  }
// Triton's logging setters change its process-wide logger when they are
// called and never read the options object (tritonserver passes none to
// change the log at run time); so do these.
#define LOG_SETTER(name, type, body)                                \
  FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptions##name( \
      TRITONSERVER_ServerOptions* options, type value) {            \
    (void)options;                                                  \
    body;                                                           \
    return nullptr;                                                 \
  }

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsNew(
    TRITONSERVER_ServerOptions** options) {
  FAKE_NOT_NULL(options);
  *options = new TRITONSERVER_ServerOptions();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsDelete(
    TRITONSERVER_ServerOptions* options) {
  FAKE_DELETABLE(kServerOptions, options);
  delete options;
  return nullptr;
}

OPT_SETTER(SetServerId, const char*, FAKE_NOT_NULL(value);
           options->server_id = value)
OPT_SETTER(SetModelRepositoryPath, const char*, FAKE_NOT_NULL(value);
           options->repo_paths.push_back(value))
OPT_SETTER(SetStartupModel, const char*, FAKE_NOT_NULL(value);
           options->startup_models.push_back(value))
OPT_SETTER(SetStrictModelConfig, bool, options->strict_config = value)
OPT_SETTER(SetPinnedMemoryPoolByteSize, uint64_t, options->pinned_pool = value)
OPT_SETTER(SetMinSupportedComputeCapability, double, (void)value)
OPT_SETTER(SetExitOnError, bool, options->exit_on_error = value)
OPT_SETTER(SetStrictReadiness, bool, options->strict_readiness = value)
OPT_SETTER(SetExitTimeout, unsigned int, options->exit_timeout_s = value)
OPT_SETTER(SetModelLoadThreadCount, unsigned int, (void)value)
OPT_SETTER(SetModelLoadRetryCount, unsigned int, (void)value)
FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetLogFile(
    TRITONSERVER_ServerOptions* options, const char* file) {
  (void)options;
  const std::string refused = SetLogFile(file == nullptr ? "" : file);
  if (refused.empty()) return nullptr;
  return Err(TRITONSERVER_ERROR_INTERNAL, refused);
}
LOG_SETTER(SetLogInfo, bool, SetLogInfo(value))
LOG_SETTER(SetLogWarn, bool, SetLogWarn(value))
LOG_SETTER(SetLogError, bool, SetLogError(value))
LOG_SETTER(SetLogVerbose, int, SetLogVerbose(value))
// An unknown format changes nothing.
LOG_SETTER(SetLogFormat, TRITONSERVER_LogFormat,
           if (value == TRITONSERVER_LOG_DEFAULT ||
               value == TRITONSERVER_LOG_ISO8601) SetLogFormat(value))
OPT_SETTER(SetMetrics, bool, options->metrics = value)
OPT_SETTER(SetGpuMetrics, bool, (void)value)
OPT_SETTER(SetCpuMetrics, bool, (void)value)
OPT_SETTER(SetMetricsInterval, uint64_t, (void)value)
OPT_SETTER(SetBackendDirectory, const char*, FAKE_NOT_NULL(value);
           options->backend_dir = value)
OPT_SETTER(SetRepoAgentDirectory, const char*, FAKE_NOT_NULL(value))
OPT_SETTER(SetModelConfigName, const char*, FAKE_NOT_NULL(value);
           options->model_config_name = value)
OPT_SETTER(SetEnablePeerAccess, bool, (void)value)

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetModelControlMode(
    TRITONSERVER_ServerOptions* options, TRITONSERVER_ModelControlMode mode) {
  FAKE_LIVE(kServerOptions, options);
  if (mode != TRITONSERVER_MODEL_CONTROL_NONE &&
      mode != TRITONSERVER_MODEL_CONTROL_POLL &&
      mode != TRITONSERVER_MODEL_CONTROL_EXPLICIT) {
    return ErrArg("unknown control mode '" +
                  std::to_string(static_cast<int>(mode)) + "'");
  }
  options->mode = mode;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetRateLimiterMode(
    TRITONSERVER_ServerOptions* options, TRITONSERVER_RateLimitMode mode) {
  FAKE_LIVE(kServerOptions, options);
  if (mode != TRITONSERVER_RATE_LIMIT_OFF &&
      mode != TRITONSERVER_RATE_LIMIT_EXEC_COUNT) {
    return ErrArg("unknown rate limit mode '" +
                  std::to_string(static_cast<int>(mode)) + "'");
  }
  options->rate_limit_mode = mode;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_ServerOptionsAddRateLimiterResource(
    TRITONSERVER_ServerOptions* options, const char* resource_name,
    size_t resource_count, int device) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(resource_name);
  auto& resources = options->rate_limit_resources[device];
  auto it = resources.find(resource_name);
  if (it == resources.end()) {
    resources.emplace(resource_name, resource_count);
  } else if (resource_count < it->second) {
    it->second = resource_count;  // as Triton: the smaller count wins
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetHostPolicy(
    TRITONSERVER_ServerOptions* options, const char* policy_name,
    const char* setting, const char* value) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(policy_name);
  FAKE_NOT_NULL(setting);
  FAKE_NOT_NULL(value);
  const std::string name(setting);
  if (name != "numa-node" && name != "cpu-cores") {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "Unsupported host policy setting '" + name +
                   "' is specified, supported settings are 'numa-node', "
                   "'cpu-cores'");
  }
  options->host_policies[policy_name][name] = value;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetCacheConfig(
    TRITONSERVER_ServerOptions* options, const char* cache_name,
    const char* config_json) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(cache_name);
  FAKE_NOT_NULL(config_json);
  options->caches[cache_name] = config_json;
  return nullptr;
}

OPT_SETTER(SetCacheDirectory, const char*, FAKE_NOT_NULL(value);
           options->cache_dir = value)

FAKE_EXPORT TRITONSERVER_Error*
TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
    TRITONSERVER_ServerOptions* options, int gpu_device, uint64_t size) {
  FAKE_LIVE(kServerOptions, options);
  (void)gpu_device;
  (void)size;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerOptionsSetBackendConfig(
    TRITONSERVER_ServerOptions* options, const char* backend_name,
    const char* setting, const char* value) {
  FAKE_LIVE(kServerOptions, options);
  FAKE_NOT_NULL(backend_name);
  FAKE_NOT_NULL(setting);
  FAKE_NOT_NULL(value);
  options->backend_config[backend_name][setting] = value;
  return nullptr;
}
