#include "server/options.h"

#include "triton/api.h"
#include "triton/log_settings.h"
#include "triton/owners.h"
#include "triton/server_handles.h"

namespace triton_node {
namespace {

std::string Str(Napi::Value v) { return v.As<Napi::String>().Utf8Value(); }
bool Bool(Napi::Value v) { return v.As<Napi::Boolean>().Value(); }
double Num(Napi::Value v) { return v.As<Napi::Number>().DoubleValue(); }
unsigned int Uint(Napi::Value v) { return v.As<Napi::Number>().Uint32Value(); }

std::vector<std::string> StrList(Napi::Value v) {
  Napi::Array a = v.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(Str(a.Get(i)));
  return out;
}

void ReadLog(Napi::Object log, ServerOptionsData* d) {
  d->log_verbose = static_cast<int>(Uint(log.Get("verbose")));
  d->log_info = Bool(log.Get("info"));
  d->log_warn = Bool(log.Get("warn"));
  d->log_error = Bool(log.Get("error"));
  Napi::Value file = log.Get("file");
  if (!file.IsUndefined()) d->log_file = Str(file);
  Napi::Value format = log.Get("format");
  if (!format.IsUndefined()) d->log_format = static_cast<int>(Uint(format));
}

// The options that may be absent.
void ReadOptional(Napi::Object o, ServerOptionsData* d) {
  Napi::Value v = o.Get("pinnedMemoryPoolBytes");
  if (!v.IsUndefined()) {
    d->has_pinned = true;
    d->pinned_bytes = static_cast<uint64_t>(Num(v));
  }
  v = o.Get("cudaMemoryPoolBytes");
  if (!v.IsUndefined()) {
    Napi::Array pools = v.As<Napi::Array>();
    for (uint32_t i = 0; i < pools.Length(); ++i) {
      Napi::Array pair = pools.Get(i).As<Napi::Array>();
      d->cuda_pools.emplace_back(static_cast<int>(Num(pair.Get(0u))),
                                 static_cast<uint64_t>(Num(pair.Get(1u))));
    }
  }
  v = o.Get("minComputeCapability");
  if (!v.IsUndefined()) {
    d->has_min_cc = true;
    d->min_cc = Num(v);
  }
  v = o.Get("serverId");
  if (!v.IsUndefined()) d->server_id = Str(v);
  v = o.Get("modelConfigName");
  if (!v.IsUndefined()) d->model_config_name = Str(v);
}

std::vector<std::array<std::string, 3>> Triples(Napi::Value v) {
  std::vector<std::array<std::string, 3>> out;
  if (v.IsUndefined()) return out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); ++i) {
    Napi::Array t = a.Get(i).As<Napi::Array>();
    out.push_back({Str(t.Get(0u)), Str(t.Get(1u)), Str(t.Get(2u))});
  }
  return out;
}

// Rate limiter, host policies, response cache and the metrics details.
void ReadScheduling(Napi::Object o, ServerOptionsData* d) {
  Napi::Value v = o.Get("rateLimiter");
  if (!v.IsUndefined()) {
    Napi::Object rl = v.As<Napi::Object>();
    d->rate_limit_mode = static_cast<int>(Uint(rl.Get("mode")));
    Napi::Array res = rl.Get("resources").As<Napi::Array>();
    for (uint32_t i = 0; i < res.Length(); ++i) {
      Napi::Array r = res.Get(i).As<Napi::Array>();
      d->rate_limit_resources.emplace_back(Str(r.Get(0u)),
                                           static_cast<size_t>(Num(r.Get(1u))),
                                           static_cast<int>(Num(r.Get(2u))));
    }
  }
  d->host_policy = Triples(o.Get("hostPolicy"));
  v = o.Get("cache");
  if (!v.IsUndefined()) {
    Napi::Object cache = v.As<Napi::Object>();
    d->cache_name = Str(cache.Get("name"));
    d->cache_config = Str(cache.Get("config"));
    Napi::Value dir = cache.Get("directory");
    if (!dir.IsUndefined()) d->cache_dir = Str(dir);
  }
  v = o.Get("gpuMetrics");
  if (!v.IsUndefined()) d->gpu_metrics = Bool(v) ? 1 : 0;
  v = o.Get("cpuMetrics");
  if (!v.IsUndefined()) d->cpu_metrics = Bool(v) ? 1 : 0;
  v = o.Get("metricsIntervalMs");
  if (!v.IsUndefined()) {
    d->has_metrics_interval = true;
    d->metrics_interval_ms = static_cast<uint64_t>(Num(v));
  }
}

// Records the first failure of a sequence of option calls.
class FirstError {
 public:
  void Check(TRITONSERVER_Error* err, const char* what) {
    if (err == nullptr) return;
    ErrorInfo info = TakeError(err);
    if (ok_) {
      ok_ = false;
      error_ = {info.code, std::string(what) + ": " + info.message};
    }
  }
  // A failure found here rather than returned by Triton.
  void Fail(TRITONSERVER_Error_Code code, std::string message) {
    if (!ok_) return;
    ok_ = false;
    error_ = {code, std::move(message)};
  }
  bool ok() const { return ok_; }
  const ErrorInfo& error() const { return error_; }

 private:
  bool ok_ = true;
  ErrorInfo error_;
};

void SetModelOptions(TRITONSERVER_ServerOptions* opts,
                     const ServerOptionsData& d, FirstError* c) {
  const TritonApi& api = Api();
  if (!d.server_id.empty()) {
    c->Check(
        api.TRITONSERVER_ServerOptionsSetServerId(opts, d.server_id.c_str()),
        "serverId");
  }
  for (const std::string& repo : d.repositories) {
    c->Check(api.TRITONSERVER_ServerOptionsSetModelRepositoryPath(opts,
                                                                  repo.c_str()),
             "modelRepositories");
  }
  c->Check(
      api.TRITONSERVER_ServerOptionsSetModelControlMode(
          opts, static_cast<TRITONSERVER_ModelControlMode>(d.control_mode)),
      "modelControlMode");
  for (const std::string& model : d.startup_models) {
    c->Check(api.TRITONSERVER_ServerOptionsSetStartupModel(opts, model.c_str()),
             "startupModels");
  }
  c->Check(
      api.TRITONSERVER_ServerOptionsSetStrictModelConfig(opts, d.strict_config),
      "strictModelConfig");
  c->Check(api.TRITONSERVER_ServerOptionsSetExitTimeout(opts, d.exit_timeout),
           "exitTimeoutSeconds");
  // Always set: the library leaves this option uninitialised otherwise.
  c->Check(
      api.TRITONSERVER_ServerOptionsSetModelLoadRetryCount(opts, d.retry_count),
      "modelLoadRetryCount");
  c->Check(api.TRITONSERVER_ServerOptionsSetExitOnError(opts, d.exit_on_error),
           "exitOnError");
  c->Check(api.TRITONSERVER_ServerOptionsSetStrictReadiness(opts,
                                                            d.strict_readiness),
           "strictReadiness");
  if (d.load_threads > 0) {
    c->Check(api.TRITONSERVER_ServerOptionsSetModelLoadThreadCount(
                 opts, d.load_threads),
             "modelLoadThreads");
  }
  if (!d.model_config_name.empty()) {
    if (api.TRITONSERVER_ServerOptionsSetModelConfigName == nullptr) {
      c->Fail(TRITONSERVER_ERROR_UNSUPPORTED,
              "modelConfigName: this Triton library has no "
              "TRITONSERVER_ServerOptionsSetModelConfigName (API 1.31 or "
              "newer needed)");
    } else {
      c->Check(api.TRITONSERVER_ServerOptionsSetModelConfigName(
                   opts, d.model_config_name.c_str()),
               "modelConfigName");
    }
  }
}

void SetSchedulingOptions(TRITONSERVER_ServerOptions* opts,
                          const ServerOptionsData& d, FirstError* c) {
  const TritonApi& api = Api();
  if (d.rate_limit_mode >= 0) {
    c->Check(
        api.TRITONSERVER_ServerOptionsSetRateLimiterMode(
            opts, static_cast<TRITONSERVER_RateLimitMode>(d.rate_limit_mode)),
        "rateLimiter.mode");
  }
  for (const auto& r : d.rate_limit_resources) {
    c->Check(api.TRITONSERVER_ServerOptionsAddRateLimiterResource(
                 opts, std::get<0>(r).c_str(), std::get<1>(r), std::get<2>(r)),
             "rateLimiter.resources");
  }
  for (const auto& p : d.host_policy) {
    c->Check(api.TRITONSERVER_ServerOptionsSetHostPolicy(
                 opts, p[0].c_str(), p[1].c_str(), p[2].c_str()),
             "hostPolicy");
  }
  if (!d.cache_name.empty()) {
    c->Check(api.TRITONSERVER_ServerOptionsSetCacheConfig(
                 opts, d.cache_name.c_str(), d.cache_config.c_str()),
             "responseCache");
  }
  if (!d.cache_dir.empty()) {
    c->Check(api.TRITONSERVER_ServerOptionsSetCacheDirectory(
                 opts, d.cache_dir.c_str()),
             "responseCache.directory");
  }
}

void SetBackendOptions(TRITONSERVER_ServerOptions* opts,
                       const ServerOptionsData& d, FirstError* c) {
  const TritonApi& api = Api();
  if (!d.backend_dir.empty()) {
    c->Check(api.TRITONSERVER_ServerOptionsSetBackendDirectory(
                 opts, d.backend_dir.c_str()),
             "backendDirectory");
  }
  for (const auto& t : d.backend_config) {
    c->Check(api.TRITONSERVER_ServerOptionsSetBackendConfig(
                 opts, t[0].c_str(), t[1].c_str(), t[2].c_str()),
             "backendConfig");
  }
}

void SetMemoryOptions(TRITONSERVER_ServerOptions* opts,
                      const ServerOptionsData& d, FirstError* c) {
  const TritonApi& api = Api();
  if (d.has_pinned) {
    c->Check(api.TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize(
                 opts, d.pinned_bytes),
             "pinnedMemoryPoolBytes");
  }
  for (const auto& pool : d.cuda_pools) {
    c->Check(api.TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize(
                 opts, pool.first, pool.second),
             "cudaMemoryPoolBytes");
  }
  if (d.has_min_cc) {
    c->Check(api.TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability(
                 opts, d.min_cc),
             "minComputeCapability");
  }
}

void SetLogAndMetricsOptions(TRITONSERVER_ServerOptions* opts,
                             const ServerOptionsData& d, FirstError* c) {
  const TritonApi& api = Api();
  // Each log setter changes Triton's process-wide logger now (log_settings.h
  // records it); one at a time, so that a failure names its option.
  LogUpdate file, verbose, format, info, warn, error;
  if (!d.log_file.empty()) file.file = d.log_file;
  verbose.verbose = d.log_verbose;
  if (d.log_format >= 0) format.format = d.log_format;
  info.info = d.log_info;
  warn.warn = d.log_warn;
  error.error = d.log_error;
  const std::pair<const LogUpdate*, const char*> log[] = {
      {&file, "log.file"}, {&verbose, "log.verbose"}, {&format, "log.format"},
      {&info, "log.info"}, {&warn, "log.warn"},       {&error, "log.error"}};
  for (const auto& [update, what] : log) {
    c->Check(ApplyLogUpdate(opts, *update), what);
  }
  c->Check(api.TRITONSERVER_ServerOptionsSetMetrics(opts, d.metrics),
           "metrics");
  if (d.gpu_metrics >= 0) {
    c->Check(
        api.TRITONSERVER_ServerOptionsSetGpuMetrics(opts, d.gpu_metrics == 1),
        "metrics.gpu");
  }
  if (d.cpu_metrics >= 0) {
    c->Check(
        api.TRITONSERVER_ServerOptionsSetCpuMetrics(opts, d.cpu_metrics == 1),
        "metrics.cpu");
  }
  if (d.has_metrics_interval) {
    c->Check(api.TRITONSERVER_ServerOptionsSetMetricsInterval(
                 opts, d.metrics_interval_ms),
             "metrics.intervalMs");
  }
}

}  // namespace

ServerOptionsData ReadServerOptions(Napi::Object o) {
  ServerOptionsData d;
  d.repositories = StrList(o.Get("modelRepositories"));
  d.control_mode = static_cast<int>(Uint(o.Get("modelControlMode")));
  d.startup_models = StrList(o.Get("startupModels"));
  d.strict_config = Bool(o.Get("strictModelConfig"));
  d.exit_timeout = Uint(o.Get("exitTimeoutSeconds"));
  d.retry_count = Uint(o.Get("modelLoadRetryCount"));
  d.exit_on_error = Bool(o.Get("exitOnError"));
  d.strict_readiness = Bool(o.Get("strictReadiness"));
  Napi::Value threads = o.Get("modelLoadThreads");
  if (!threads.IsUndefined()) d.load_threads = Uint(threads);
  d.backend_dir = Str(o.Get("backendDirectory"));
  Napi::Array config = o.Get("backendConfig").As<Napi::Array>();
  for (uint32_t i = 0; i < config.Length(); ++i) {
    Napi::Array t = config.Get(i).As<Napi::Array>();
    d.backend_config.push_back(
        {Str(t.Get(0u)), Str(t.Get(1u)), Str(t.Get(2u))});
  }
  ReadLog(o.Get("log").As<Napi::Object>(), &d);
  d.metrics = Bool(o.Get("metrics"));
  ReadOptional(o, &d);
  ReadScheduling(o, &d);
  return d;
}

TRITONSERVER_Server* NewTritonServer(const ServerOptionsData& d,
                                     ErrorInfo* error) {
  const TritonApi& api = Api();
  TRITONSERVER_ServerOptions* raw = nullptr;
  TRITONSERVER_Error* err = api.TRITONSERVER_ServerOptionsNew(&raw);
  if (err != nullptr) {
    *error = TakeError(err);
    return nullptr;
  }
  ServerOptionsOwner opts(raw);
  FirstError c;
  SetModelOptions(raw, d, &c);
  SetBackendOptions(raw, d, &c);
  SetMemoryOptions(raw, d, &c);
  SetSchedulingOptions(raw, d, &c);
  SetLogAndMetricsOptions(raw, d, &c);
  if (!c.ok()) {
    *error = c.error();
    return nullptr;
  }
  TRITONSERVER_Server* server = nullptr;
  err = CreateServer(raw, d.repositories.empty() ? "" : d.repositories.front(),
                     &server);
  if (err != nullptr) {
    *error = TakeError(err);
    return nullptr;
  }
  return server;
}

}  // namespace triton_node
