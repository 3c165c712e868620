#include "objects/metric_family.h"

#include <string>
#include <utility>
#include <vector>

#include "env/env_data.h"
#include "objects/metric.h"
#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

struct FamilyInit {
  std::shared_ptr<MetricFamily> family;
};

// labels: [key, value][] as Triton parameters.
std::vector<ParameterOwner> ReadLabels(Napi::Env env, Napi::Value value) {
  std::vector<ParameterOwner> labels;
  if (value.IsUndefined()) return labels;
  if (!value.IsArray()) {
    ThrowTypeError(env, "labels must be an array of [key, value]");
  }
  Napi::Array arr = value.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value pair = arr.Get(i);
    if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2 ||
        !pair.As<Napi::Array>().Get(0u).IsString() ||
        !pair.As<Napi::Array>().Get(1u).IsString()) {
      ThrowTypeError(env, "labels[" + std::to_string(i) +
                              "] must be [key, value] strings");
    }
    std::string key = pair.As<Napi::Array>().Get(0u).As<Napi::String>();
    std::string val = pair.As<Napi::Array>().Get(1u).As<Napi::String>();
    labels.emplace_back(Api().TRITONSERVER_ParameterNew(
        key.c_str(), TRITONSERVER_PARAMETER_STRING, val.c_str()));
  }
  return labels;
}

std::vector<double> ReadBuckets(Napi::Env env, Napi::Value value) {
  if (!value.IsArray()) {
    ThrowTypeError(env, "buckets must be an array of numbers");
  }
  const TritonApi& api = Api();
  if (api.TRITONSERVER_MetricArgsNew == nullptr ||
      api.TRITONSERVER_MetricArgsSetHistogram == nullptr ||
      api.TRITONSERVER_MetricNewWithArgs == nullptr ||
      api.TRITONSERVER_MetricArgsDelete == nullptr) {
    ThrowLibraryLacks(env,
                      "histogram metrics (TRITONSERVER_MetricNewWithArgs)");
  }
  Napi::Array arr = value.As<Napi::Array>();
  std::vector<double> buckets;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value b = arr.Get(i);
    if (!b.IsNumber()) {
      ThrowTypeError(env,
                     "buckets[" + std::to_string(i) + "] must be a number");
    }
    buckets.push_back(b.As<Napi::Number>().DoubleValue());
  }
  return buckets;
}

TRITONSERVER_Error* NewHistogram(TRITONSERVER_Metric** metric,
                                 TRITONSERVER_MetricFamily* family,
                                 const TRITONSERVER_Parameter** labels,
                                 size_t label_count,
                                 const std::vector<double>& buckets) {
  const TritonApi& api = Api();
  TRITONSERVER_MetricArgs* args = nullptr;
  TRITONSERVER_Error* err = api.TRITONSERVER_MetricArgsNew(&args);
  if (err == nullptr) {
    err = api.TRITONSERVER_MetricArgsSetHistogram(args, buckets.data(),
                                                  buckets.size());
  }
  if (err == nullptr) {
    err = api.TRITONSERVER_MetricNewWithArgs(metric, family, labels,
                                             label_count, args);
  }
  if (args != nullptr) DropError(api.TRITONSERVER_MetricArgsDelete(args));
  return err;
}

}  // namespace

Napi::Function MetricFamilyWrap::Init(Napi::Env env) {
  Napi::Function ctor =
      DefineClass(env, "NativeMetricFamily",
                  {InstanceMethod<&MetricFamilyWrap::Metric>("metric"),
                   InstanceMethod<&MetricFamilyWrap::Dispose>("dispose")});
  GetEnvData(env)->metric_family_ctor = Napi::Persistent(ctor);
  return ctor;
}

MetricFamilyWrap::MetricFamilyWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<MetricFamilyWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(), "use server.createMetricFamily()");
  }
  family_ = info[0].As<Napi::External<FamilyInit>>().Data()->family;
}

// metric(labels?, buckets?)
Napi::Value MetricFamilyWrap::Metric(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!family_ || family_->family == nullptr) {
    ThrowTypeError(env, "metric family was disposed");
  }
  std::vector<ParameterOwner> labels =
      ReadLabels(env, info.Length() > 0 ? info[0] : env.Undefined());
  std::vector<const TRITONSERVER_Parameter*> params;
  for (const ParameterOwner& p : labels) params.push_back(p.get());
  TRITONSERVER_Metric* metric = nullptr;
  TRITONSERVER_Error* err;
  if (info.Length() > 1 && !info[1].IsUndefined()) {
    std::vector<double> buckets = ReadBuckets(env, info[1]);
    err = NewHistogram(&metric, family_->family, params.data(), params.size(),
                       buckets);
  } else {
    err = Api().TRITONSERVER_MetricNew(&metric, family_->family, params.data(),
                                       params.size());
  }
  ThrowIfError(env, err);
  return MetricWrap::New(env, MetricOwner(metric), family_);
}

void MetricFamilyWrap::Dispose(const Napi::CallbackInfo& info) {
  if (!family_ || family_->family == nullptr) return;
  // Triton refuses while metrics of the family exist; say so.
  ThrowIfError(info.Env(),
               Api().TRITONSERVER_MetricFamilyDelete(family_->family));
  family_->family = nullptr;
  family_.reset();
}

Napi::Value CreateMetricFamilyObject(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsString() ||
      !info[2].IsString()) {
    ThrowTypeError(
        env, "createMetricFamily(kind, name, description) expects strings");
  }
  std::string kind_name = info[0].As<Napi::String>();
  TRITONSERVER_MetricKind kind;
  if (kind_name == "counter") {
    kind = TRITONSERVER_METRIC_KIND_COUNTER;
  } else if (kind_name == "gauge") {
    kind = TRITONSERVER_METRIC_KIND_GAUGE;
  } else if (kind_name == "histogram") {
    kind = TRITONSERVER_METRIC_KIND_HISTOGRAM;
    if (Api().TRITONSERVER_MetricNewWithArgs == nullptr) {
      ThrowLibraryLacks(env,
                        "histogram metrics (TRITONSERVER_MetricNewWithArgs)");
    }
  } else {
    ThrowTypeError(env,
                   "kind must be 'counter', 'gauge' or 'histogram', got '" +
                       kind_name + "'");
  }
  std::string name = info[1].As<Napi::String>();
  std::string description = info[2].As<Napi::String>();
  auto family = std::make_shared<MetricFamily>();
  family->kind = kind;
  ThrowIfError(env,
               Api().TRITONSERVER_MetricFamilyNew(
                   &family->family, kind, name.c_str(), description.c_str()));
  FamilyInit init{family};
  return GetEnvData(env)->metric_family_ctor.New(
      {Napi::External<FamilyInit>::New(env, &init)});
}

}  // namespace triton_node
