// The custom metric API (families, metrics, histogram args) and its part
// of TRITONSERVER_ServerMetrics' text.
#include "custom_metrics.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../core/error.h"
#include "../core/handles.h"
#include "export.h"

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
