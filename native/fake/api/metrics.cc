// Prometheus text for TRITONSERVER_ServerMetrics (the nv_inference_* and
// nv_model_* families per loaded model version, memory and CPU gauges) and
// the custom metric API (families, metrics, histogram args).
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <set>

#include "../internal.h"

// ---- custom metrics
// -----------------------------------------------------------

namespace fake {
namespace {

struct Series {
  std::string labels;  // rendered {k="v",...} in label-name order ("" = none)
  double value = 0;
  std::vector<double> bounds;
  std::vector<uint64_t> bucket_counts;
  uint64_t count = 0;
  double sum = 0;
  int refs = 0;
};

struct Family {
  std::string name, description;
  TRITONSERVER_MetricKind kind;
  std::map<std::string, std::shared_ptr<Series>> series;  // by labels
  int handles = 0;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, TRITONSERVER_MetricKind> kinds;  // names ever used
  std::vector<std::shared_ptr<Family>> families;         // creation order
};

Registry& Reg() {
  static Registry* r = new Registry();
  return *r;
}

const char* KindName(TRITONSERVER_MetricKind k) {
  switch (k) {
    case TRITONSERVER_METRIC_KIND_COUNTER:
      return "COUNTER";
    case TRITONSERVER_METRIC_KIND_GAUGE:
      return "GAUGE";
    default:
      return "HISTOGRAM";
  }
}

bool ValidName(const std::string& n, bool allow_colon) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

// prometheus-cpp writes doubles with 16 significant digits in the default
// float format (max_digits10 - 1): 10 -> "10", 0.1 + 0.2 -> "0.3".
std::string FormatNumber(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.16g", v);
  return buf;
}

std::string CustomMetricsText() {
  Registry& reg = Reg();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::string out;
  std::set<std::string> done;
  for (auto& f : reg.families) {
    if (done.count(f->name)) continue;
    // Families of one name share their series (see MetricFamilyNew).
    bool any = false;
    for (auto& g : reg.families)
      any |= g->name == f->name && !g->series.empty();
    if (!any) continue;
    done.insert(f->name);
    // prometheus-cpp leaves out the HELP line of a family without help.
    if (!f->description.empty()) {
      out += "# HELP " + f->name + " " + f->description + "\n";
    }
    out += "# TYPE " + f->name + " " +
           (f->kind == TRITONSERVER_METRIC_KIND_COUNTER ? "counter"
            : f->kind == TRITONSERVER_METRIC_KIND_GAUGE ? "gauge"
                                                        : "histogram") +
           "\n";
    for (auto& kv : f->series) {
      Series& s = *kv.second;
      if (f->kind != TRITONSERVER_METRIC_KIND_HISTOGRAM) {
        out += f->name + s.labels + " " + FormatNumber(s.value) + "\n";
        continue;
      }
      out +=
          f->name + "_count" + s.labels + " " + std::to_string(s.count) + "\n";
      out += f->name + "_sum" + s.labels + " " + FormatNumber(s.sum) + "\n";
      std::string inner = s.labels.empty()
                              ? std::string()
                              : s.labels.substr(1, s.labels.size() - 2) + ",";
      uint64_t cum = 0;
      for (size_t i = 0; i <= s.bounds.size(); ++i) {
        cum += s.bucket_counts[i];
        std::string le =
            i < s.bounds.size() ? FormatNumber(s.bounds[i]) : "+Inf";
        out += f->name + "_bucket{" + inner + "le=\"" + le + "\"} " +
               std::to_string(cum) + "\n";
      }
    }
  }
  return out;
}

}  // namespace fake

struct TRITONSERVER_MetricFamily : fake::Tracked<fake::Handle::kMetricFamily> {
  TRITONSERVER_MetricFamily(std::shared_ptr<fake::Family> f)
      : family(std::move(f)) {}
  std::shared_ptr<fake::Family> family;
  int live_metrics = 0;  // guarded by the registry mutex
};

struct TRITONSERVER_Metric : fake::Tracked<fake::Handle::kMetric> {
  TRITONSERVER_Metric(TRITONSERVER_MetricFamily* f,
                      std::shared_ptr<fake::Series> s)
      : family(f), series(std::move(s)) {}
  TRITONSERVER_MetricFamily* family;
  std::shared_ptr<fake::Series> series;
};

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricFamilyNew(
    TRITONSERVER_MetricFamily** family, const TRITONSERVER_MetricKind kind,
    const char* name, const char* description) {
  FAKE_NOT_NULL(family);
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(description);
  if (kind != TRITONSERVER_METRIC_KIND_COUNTER &&
      kind != TRITONSERVER_METRIC_KIND_GAUGE &&
      kind != TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    return ErrArg("Unsupported kind passed to MetricFamily constructor.");
  }
  if (!ValidName(name, true)) return ErrArg("Invalid metric name");
  Registry& reg = Reg();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.kinds.find(name);
  if (it != reg.kinds.end() && it->second != kind) {
    return ErrArg("Family name already exists with different type");
  }
  reg.kinds[name] = kind;
  // A family of the same name and kind is the same family.
  std::shared_ptr<Family> f;
  for (auto& g : reg.families) {
    if (g->name == name) f = g;
  }
  if (f == nullptr) {
    f = std::make_shared<Family>();
    f->name = name;
    f->description = description;
    f->kind = kind;
    reg.families.push_back(f);
  }
  ++f->handles;
  *family = new TRITONSERVER_MetricFamily(f);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricFamilyDelete(
    TRITONSERVER_MetricFamily* family) {
  FAKE_LIVE(kMetricFamily, family);
  Registry& reg = Reg();
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    if (family->live_metrics > 0) {
      return Err(TRITONSERVER_ERROR_INTERNAL,
                 "Must call MetricDelete on all dependent metrics before "
                 "calling MetricFamilyDelete.");
    }
    if (--family->family->handles == 0) {
      for (auto it = reg.families.begin(); it != reg.families.end(); ++it) {
        if (*it == family->family) {
          reg.families.erase(it);
          break;
        }
      }
    }
  }
  delete family;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricArgsNew(
    TRITONSERVER_MetricArgs** args) {
  FAKE_NOT_NULL(args);
  *args = new TRITONSERVER_MetricArgs();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricArgsSetHistogram(
    TRITONSERVER_MetricArgs* args, const double* buckets,
    const uint64_t buckets_count) {
  FAKE_LIVE(kMetricArgs, args);
  FAKE_EXPECT(buckets != nullptr || buckets_count == 0,
              "buckets is null with buckets_count " +
                  std::to_string(buckets_count) +
                  "; the real library reads that many doubles from it "
                  "(crash)");
  args->histogram = true;
  args->buckets.assign(buckets, buckets + buckets_count);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricArgsDelete(
    TRITONSERVER_MetricArgs* args) {
  FAKE_DELETABLE(kMetricArgs, args);
  delete args;
  return nullptr;
}

namespace {

// What a metric of the family's kind takes: a histogram strictly sorted
// bucket boundaries, a counter or gauge no args.
TRITONSERVER_Error* CheckMetricArgs(TRITONSERVER_MetricKind kind,
                                    const TRITONSERVER_MetricArgs* args) {
  switch (kind) {
    case TRITONSERVER_METRIC_KIND_HISTOGRAM:
      if (args == nullptr) {
        return ErrArg("Bucket boundaries not found in Metric args.");
      }
      if (!args->histogram) {
        return ErrArg("Metric args not set to histogram kind.");
      }
      for (size_t i = 1; i < args->buckets.size(); ++i) {
        if (!(args->buckets[i - 1] < args->buckets[i])) {
          return ErrArg("Bucket Boundaries must be strictly sorted");
        }
      }
      return nullptr;
    case TRITONSERVER_METRIC_KIND_COUNTER:
      if (args != nullptr) {
        return ErrArg("Unexpected args found in counter Metric constructor.");
      }
      return nullptr;
    default:
      if (args != nullptr) {
        return ErrArg("Unexpected args found in gauge Metric constructor.");
      }
      return nullptr;
  }
}

// The series key of a label set, as the exposition writes it:
// `{a="x",b="y"}` sorted by name, values escaped; "" without labels.
TRITONSERVER_Error* LabelKey(const TRITONSERVER_Parameter** labels,
                             uint64_t label_count, std::string* key) {
  std::map<std::string, std::string> sorted;
  for (uint64_t i = 0; i < label_count; ++i) {
    const TRITONSERVER_Parameter* p = labels[i];
    if (p->type != TRITONSERVER_PARAMETER_STRING) {
      return ErrArg("Parameter [" + p->name +
                    "] must have a type of TRITONSERVER_PARAMETER_STRING to "
                    "be added as a label.");
    }
    if (!ValidName(p->name, false)) return ErrArg("Invalid label name");
    sorted[p->name] = p->str;
  }
  key->clear();
  if (sorted.empty()) return nullptr;
  *key = "{";
  for (auto& kv : sorted) {
    if (key->size() > 1) *key += ",";
    *key += kv.first + "=\"";
    for (char c : kv.second) {
      if (c == '\\' || c == '"') *key += '\\';
      if (c == '\n') {
        *key += "\\n";
        continue;
      }
      *key += c;
    }
    *key += "\"";
  }
  *key += "}";
  return nullptr;
}

}  // namespace

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricNewWithArgs(
    TRITONSERVER_Metric** metric, TRITONSERVER_MetricFamily* family,
    const TRITONSERVER_Parameter** labels, const uint64_t label_count,
    const TRITONSERVER_MetricArgs* args) {
  FAKE_NOT_NULL(metric);
  FAKE_LIVE(kMetricFamily, family);
  FAKE_EXPECT(labels != nullptr || label_count == 0,
              "labels is null with label_count " + std::to_string(label_count) +
                  "; the real library reads that many parameters from it "
                  "(crash)");
  for (uint64_t i = 0; i < label_count; ++i) {
    FAKE_LIVE(kParameter, labels[i]);
  }
  if (args != nullptr) FAKE_LIVE(kMetricArgs, args);
  Family& f = *family->family;
  if (auto* e = CheckMetricArgs(f.kind, args)) return e;
  std::string key;
  if (auto* e = LabelKey(labels, label_count, &key)) return e;
  Registry& reg = Reg();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::shared_ptr<Series>& s = f.series[key];
  if (s == nullptr) {
    s = std::make_shared<Series>();
    s->labels = key;
    if (f.kind == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
      s->bounds = args->buckets;
      s->bucket_counts.assign(s->bounds.size() + 1, 0);
    }
  }
  ++s->refs;
  ++family->live_metrics;
  *metric = new TRITONSERVER_Metric(family, s);
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricNew(
    TRITONSERVER_Metric** metric, TRITONSERVER_MetricFamily* family,
    const TRITONSERVER_Parameter** labels, const uint64_t label_count) {
  return TRITONSERVER_MetricNewWithArgs(metric, family, labels, label_count,
                                        nullptr);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricDelete(
    TRITONSERVER_Metric* metric) {
  FAKE_LIVE(kMetric, metric);
  Registry& reg = Reg();
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    --metric->family->live_metrics;
    if (--metric->series->refs == 0) {
      metric->family->family->series.erase(metric->series->labels);
    }
  }
  delete metric;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricValue(
    TRITONSERVER_Metric* metric, double* value) {
  FAKE_LIVE(kMetric, metric);
  FAKE_NOT_NULL(value);
  TRITONSERVER_MetricKind k = metric->family->family->kind;
  if (k == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Value");
  }
  std::lock_guard<std::mutex> lock(Reg().mu);
  *value = metric->series->value;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricIncrement(
    TRITONSERVER_Metric* metric, double value) {
  FAKE_LIVE(kMetric, metric);
  TRITONSERVER_MetricKind k = metric->family->family->kind;
  if (k == TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Increment");
  }
  if (k == TRITONSERVER_METRIC_KIND_COUNTER && value < 0) {
    return ErrArg(
        "TRITONSERVER_METRIC_KIND_COUNTER can only be incremented "
        "monotonically by non-negative values.");
  }
  std::lock_guard<std::mutex> lock(Reg().mu);
  metric->series->value += value;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricSet(
    TRITONSERVER_Metric* metric, double value) {
  FAKE_LIVE(kMetric, metric);
  TRITONSERVER_MetricKind k = metric->family->family->kind;
  if (k != TRITONSERVER_METRIC_KIND_GAUGE) {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               std::string("TRITONSERVER_METRIC_KIND_") + KindName(k) +
                   " does not support Set");
  }
  std::lock_guard<std::mutex> lock(Reg().mu);
  metric->series->value = value;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_MetricObserve(
    TRITONSERVER_Metric* metric, double value) {
  FAKE_LIVE(kMetric, metric);
  TRITONSERVER_MetricKind k = metric->family->family->kind;
  if (k != TRITONSERVER_METRIC_KIND_HISTOGRAM) {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               std::string("TRITONSERVER_METRIC_KIND_") + KindName(k) +
                   " does not support Observe");
  }
  std::lock_guard<std::mutex> lock(Reg().mu);
  Series& s = *metric->series;
  size_t i = 0;
  while (i < s.bounds.size() && value > s.bounds[i]) ++i;
  ++s.bucket_counts[i];
  ++s.count;
  s.sum += value;
  return nullptr;
}

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

std::vector<Row> ServedModels(ServerCore* core) {
  std::vector<Row> rows;
  std::lock_guard<std::mutex> lock(core->mu);
  for (auto& kv : core->models) {
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
void AppendServerGauges(std::string* o, ServerCore* core) {
  FamilyHeader(o, "nv_pinned_memory_pool_total_bytes",
               "Pinned memory pool total memory size, in bytes", "gauge");
  *o += "nv_pinned_memory_pool_total_bytes " +
        std::to_string(core->options.pinned_pool) + "\n";
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

}  // namespace

namespace fake {

std::string PrometheusText(ServerCore* core) {
  const std::vector<Row> rows = ServedModels(core);
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
  AppendServerGauges(&o, core);
  return o;
}

}  // namespace fake

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
  m->text = PrometheusText(server->core.get());
  if (!server->core->options.metrics) {
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
