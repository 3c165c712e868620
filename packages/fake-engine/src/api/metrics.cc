// Prometheus text for TRITONSERVER_ServerMetrics: the nv_inference_* and
// nv_model_* families per loaded model version, memory and CPU gauges, then
// the custom metrics (custom_metrics.cc).
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../core/engine.h"
#include "../core/error.h"
#include "../core/handles.h"
#include "../core/model.h"
#include "custom_metrics.h"
#include "export.h"

using namespace fake;

// ---- server metrics ---------------------------------------------------------

namespace {

struct Row {
  std::string name;
  int64_t version;
  std::shared_ptr<Model> model;
};

void FamilyHeader(std::string* out, const char* name, const char* help,
                  const char* type) {
  *out += "# HELP ";
  *out += name;
  *out += " ";
  *out += help;
  *out += "\n# TYPE ";
  *out += name;
  *out += " ";
  *out += type;
  *out += "\n";
}

std::string Labels(const Row& r) {
  return "{model=\"" + r.name + "\",version=\"" + std::to_string(r.version) +
         "\"}";
}

uint64_t MemInfo(const char* key) {
  std::ifstream f("/proc/meminfo");
  std::string k;
  uint64_t v = 0;
  std::string unit;
  while (f >> k >> v >> unit) {
    if (k == key) return v * 1024;
  }
  return 0;
}

std::vector<Row> ServedModels(Engine* engine) {
  std::vector<Row> rows;
  std::lock_guard<std::mutex> lock(engine->mu);
  for (auto& kv : engine->models) {
    for (auto& v : kv.second.versions) {
      if (v.second.model != nullptr) {
        rows.push_back({kv.first, v.first, v.second.model});
      }
    }
  }
  return rows;
}

// A per-model counter family, one sample per served version.
struct CounterFamily {
  const char* name;
  const char* help;
  uint64_t (*get)(const ModelStats& s);
};

void AppendCounter(std::string* o, const std::vector<Row>& rows,
                   const CounterFamily& c) {
  FamilyHeader(o, c.name, c.help, "counter");
  for (auto& r : rows) {
    std::lock_guard<std::mutex> lock(r.model->stats.mu);
    *o +=
        c.name + Labels(r) + " " + std::to_string(c.get(r.model->stats)) + "\n";
  }
}

void AppendFailureCounter(std::string* o, const std::vector<Row>& rows) {
  FamilyHeader(o, "nv_inference_request_failure",
               "Number of failed inference requests, all batch sizes",
               "counter");
  for (auto& r : rows) {
    std::lock_guard<std::mutex> lock(r.model->stats.mu);
    ModelStats& s = r.model->stats;
    const std::pair<const char*, uint64_t> reasons[] = {
        {"OTHER", s.fail_other},
        {"BACKEND", s.fail_backend},
        {"CANCELED", s.fail_canceled},
        {"REJECTED", s.fail_rejected}};
    for (auto& rs : reasons) {
      *o += "nv_inference_request_failure{model=\"" + r.name + "\",reason=\"" +
            rs.first + "\",version=\"" + std::to_string(r.version) + "\"} " +
            std::to_string(rs.second) + "\n";
    }
  }
}

// The counters after nv_inference_request_failure, in Triton's order.
const CounterFamily kCountersAfterFailure[] = {
    {"nv_inference_count",
     "Number of inferences performed (does not include cached requests)",
     [](const ModelStats& s) { return s.inference_count; }},
    {"nv_inference_exec_count",
     "Number of model executions performed (does not include cached "
     "requests)",
     [](const ModelStats& s) { return s.execution_count; }},
    {"nv_inference_request_duration_us",
     "Cumulative inference request duration in microseconds (includes "
     "cached requests)",
     [](const ModelStats& s) { return (s.success.ns + s.fail.ns) / 1000; }},
    {"nv_inference_queue_duration_us",
     "Cumulative inference queuing duration in microseconds (includes "
     "cached requests)",
     [](const ModelStats& s) { return s.queue.ns / 1000; }},
    {"nv_inference_compute_input_duration_us",
     "Cumulative compute input duration in microseconds (does not "
     "include cached requests)",
     [](const ModelStats& s) { return s.compute_input.ns / 1000; }},
    {"nv_inference_compute_infer_duration_us",
     "Cumulative compute inference duration in microseconds (does not "
     "include cached requests)",
     [](const ModelStats& s) { return s.compute_infer.ns / 1000; }},
    {"nv_inference_compute_output_duration_us",
     "Cumulative inference compute output duration in microseconds (does "
     "not include cached requests)",
     [](const ModelStats& s) { return s.compute_output.ns / 1000; }},
};

// The identity backend registers this one itself.
void AppendIdentityInputBytes(std::string* o, const std::vector<Row>& rows) {
  bool any_identity = false;
  for (auto& r : rows)
    any_identity |= r.model->backend == BackendKind::kIdentity;
  if (!any_identity) return;
  FamilyHeader(
      o, "input_byte_size_counter",
      "Cumulative input byte size of all requests received by the model",
      "counter");
  for (auto& r : rows) {
    if (r.model->backend != BackendKind::kIdentity) continue;
    std::lock_guard<std::mutex> lock(r.model->stats.mu);
    *o += "input_byte_size_counter" + Labels(r) + " " +
          std::to_string(r.model->stats.input_bytes) + "\n";
  }
}

void AppendModelGauges(std::string* o, const std::vector<Row>& rows) {
  FamilyHeader(o, "nv_inference_pending_request_count",
               "Instantaneous number of pending requests awaiting execution "
               "per-model.",
               "gauge");
  for (auto& r : rows) {
    int64_t p = r.model->stats.pending.load();
    *o += "nv_inference_pending_request_count" + Labels(r) + " " +
          std::to_string(p < 0 ? 0 : p) + "\n";
  }
  FamilyHeader(o, "nv_model_load_duration_secs", "Model load time in seconds",
               "gauge");
  for (auto& r : rows) {
    *o += "nv_model_load_duration_secs" + Labels(r) + " " +
          FormatNumber(r.model->load_seconds) + "\n";
  }
}

// Pinned memory, CPU and RAM gauges of the process.
void AppendServerGauges(std::string* o, Engine* engine) {
  FamilyHeader(o, "nv_pinned_memory_pool_total_bytes",
               "Pinned memory pool total memory size, in bytes", "gauge");
  *o += "nv_pinned_memory_pool_total_bytes " +
        std::to_string(engine->options.pinned_pool) + "\n";
  FamilyHeader(o, "nv_pinned_memory_pool_used_bytes",
               "Pinned memory pool used memory size, in bytes", "gauge");
  *o += "nv_pinned_memory_pool_used_bytes 0\n";
  FamilyHeader(o, "nv_cpu_utilization", "CPU utilization rate [0.0 - 1.0]",
               "gauge");
  *o += "nv_cpu_utilization 0\n";
  uint64_t total = MemInfo("MemTotal:");
  uint64_t avail = MemInfo("MemAvailable:");
  FamilyHeader(o, "nv_cpu_memory_total_bytes",
               "CPU total memory (RAM), in bytes", "gauge");
  *o += "nv_cpu_memory_total_bytes " + std::to_string(total) + "\n";
  FamilyHeader(o, "nv_cpu_memory_used_bytes", "CPU used memory (RAM), in bytes",
               "gauge");
  *o += "nv_cpu_memory_used_bytes " +
        std::to_string(total > avail ? total - avail : 0) + "\n";
}

std::string PrometheusText(Engine* engine) {
  const std::vector<Row> rows = ServedModels(engine);
  std::string o;
  AppendCounter(&o, rows,
                {"nv_inference_request_success",
                 "Number of successful inference requests, all batch sizes",
                 [](const ModelStats& s) { return s.success.count; }});
  AppendFailureCounter(&o, rows);
  for (const CounterFamily& c : kCountersAfterFailure) {
    AppendCounter(&o, rows, c);
  }
  AppendIdentityInputBytes(&o, rows);
  AppendModelGauges(&o, rows);
  AppendServerGauges(&o, engine);
  return o;
}

}  // namespace

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerMetrics(
    TRITONSERVER_Server* server, TRITONSERVER_Metrics** metrics) {
  // Triton does not read the server here (it prints the process-wide
  // registry later); the fake reads its models, so a given server must be
  // live.
  if (server != nullptr) FAKE_LIVE(kServer, server);
  FAKE_NOT_NULL(metrics);
  auto* m = new TRITONSERVER_Metrics();
  if (server == nullptr) {
    m->text = CustomMetricsText();
    *metrics = m;
    return nullptr;
  }
  m->text = PrometheusText(server->engine.get());
  if (!server->engine->options.metrics) {
    // With metrics off, real Triton still prints its families and each
    // model's series, but counts nothing: every per-model value stays 0.
    std::string zeroed;
    size_t start = 0;
    while (start < m->text.size()) {
      size_t end = m->text.find('\n', start);
      if (end == std::string::npos) end = m->text.size();
      std::string line = m->text.substr(start, end - start);
      const size_t space = line.rfind(' ');
      if (!line.empty() && line[0] != '#' &&
          line.find("model=\"") != std::string::npos &&
          space != std::string::npos) {
        line = line.substr(0, space) + " 0";
      }
      zeroed += line;
      zeroed += '\n';
      start = end + 1;
    }
    m->text = std::move(zeroed);
  }
  m->text += CustomMetricsText();
  *metrics = m;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricsDelete(
    TRITONSERVER_Metrics* metrics) {
  FAKE_DELETABLE(kMetrics, metrics);
  delete metrics;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricsFormatted(
    TRITONSERVER_Metrics* metrics, TRITONSERVER_MetricFormat format,
    const char** base, size_t* byte_size) {
  FAKE_LIVE(kMetrics, metrics);
  if (format != TRITONSERVER_METRIC_PROMETHEUS) {
    return ErrArg("unknown metrics format '" +
                  std::to_string(static_cast<int>(format)) + "'");
  }
  FAKE_NOT_NULL(base);
  FAKE_NOT_NULL(byte_size);
  *base = metrics->text.c_str();
  *byte_size = metrics->text.size();
  return nullptr;
}
