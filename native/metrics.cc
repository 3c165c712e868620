#include "metrics.h"

#include <cstring>
#include <string>
#include <vector>

#include "addon.h"
#include "errors.h"
#include "triton_api.h"

namespace triton_node {
namespace {

struct FamilyInit {
  std::shared_ptr<FamilyHandle> handle;
};
struct MetricInit {
  TRITONSERVER_Metric* metric;
  std::shared_ptr<FamilyHandle> family;
};

double RequireNumber(const Napi::CallbackInfo& info, const char* what) {
  if (info.Length() < 1 || !info[0].IsNumber()) {
    ThrowTypeError(info.Env(), std::string(what) + " must be a number");
  }
  return info[0].As<Napi::Number>().DoubleValue();
}

[[noreturn]] void ThrowUnsupported(Napi::Env env, const char* entry) {
  throw MakeError(env, "UNSUPPORTED",
                  std::string("this Triton library lacks ") + entry + " (API " +
                      std::to_string(Api().api_major) + "." +
                      std::to_string(Api().api_minor) + ")");
}

}  // namespace

FamilyHandle::~FamilyHandle() {
  if (family != nullptr) {
    TRITONSERVER_Error* err = Api().TRITONSERVER_MetricFamilyDelete(family);
    DropError(err);
  }
}

// ---- family ----------------------------------------------------------------

Napi::Function MetricFamilyWrap::Init(Napi::Env env) {
  return DefineClass(env, "NativeMetricFamily",
                     {InstanceMethod<&MetricFamilyWrap::Metric>("metric"),
                      InstanceMethod<&MetricFamilyWrap::Dispose>("dispose")});
}

MetricFamilyWrap::MetricFamilyWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<MetricFamilyWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(), "use server.createMetricFamily()");
  }
  handle_ = info[0].As<Napi::External<FamilyInit>>().Data()->handle;
}

Napi::Value MetricFamilyWrap::Metric(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const TritonApi& api = Api();
  if (!handle_ || handle_->family == nullptr) {
    ThrowTypeError(env, "metric family was disposed");
  }
  std::vector<std::string> keys, values;
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    if (!info[0].IsArray()) {
      ThrowTypeError(env, "labels must be an array of [key, value]");
    }
    Napi::Array labels = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < labels.Length(); ++i) {
      Napi::Value pair = labels.Get(i);
      if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2 ||
          !pair.As<Napi::Array>().Get(0u).IsString() ||
          !pair.As<Napi::Array>().Get(1u).IsString()) {
        ThrowTypeError(env, "labels[" + std::to_string(i) +
                                "] must be [key, value] strings");
      }
      keys.push_back(pair.As<Napi::Array>().Get(0u).As<Napi::String>());
      values.push_back(pair.As<Napi::Array>().Get(1u).As<Napi::String>());
    }
  }
  std::vector<TRITONSERVER_Parameter*> params;
  for (size_t i = 0; i < keys.size(); ++i) {
    params.push_back(api.TRITONSERVER_ParameterNew(
        keys[i].c_str(), TRITONSERVER_PARAMETER_STRING, values[i].c_str()));
  }
  auto free_params = [&] {
    for (TRITONSERVER_Parameter* p : params) {
      if (p != nullptr) api.TRITONSERVER_ParameterDelete(p);
    }
  };
  TRITONSERVER_Metric* metric = nullptr;
  TRITONSERVER_Error* err = nullptr;
  bool has_buckets = info.Length() > 1 && !info[1].IsUndefined();
  if (has_buckets) {
    if (!info[1].IsArray()) {
      free_params();
      ThrowTypeError(env, "buckets must be an array of numbers");
    }
    if (api.TRITONSERVER_MetricArgsNew == nullptr ||
        api.TRITONSERVER_MetricArgsSetHistogram == nullptr ||
        api.TRITONSERVER_MetricNewWithArgs == nullptr ||
        api.TRITONSERVER_MetricArgsDelete == nullptr) {
      free_params();
      ThrowUnsupported(env,
                       "histogram metrics (TRITONSERVER_MetricNewWithArgs)");
    }
    Napi::Array arr = info[1].As<Napi::Array>();
    std::vector<double> buckets;
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      Napi::Value b = arr.Get(i);
      if (!b.IsNumber()) {
        free_params();
        ThrowTypeError(env,
                       "buckets[" + std::to_string(i) + "] must be a number");
      }
      buckets.push_back(b.As<Napi::Number>().DoubleValue());
    }
    TRITONSERVER_MetricArgs* args = nullptr;
    err = api.TRITONSERVER_MetricArgsNew(&args);
    if (err == nullptr) {
      err = api.TRITONSERVER_MetricArgsSetHistogram(args, buckets.data(),
                                                    buckets.size());
    }
    if (err == nullptr) {
      err = api.TRITONSERVER_MetricNewWithArgs(
          &metric, handle_->family,
          const_cast<const TRITONSERVER_Parameter**>(params.data()),
          params.size(), args);
    }
    if (args != nullptr) {
      TRITONSERVER_Error* e = api.TRITONSERVER_MetricArgsDelete(args);
      DropError(e);
    }
  } else {
    err = api.TRITONSERVER_MetricNew(
        &metric, handle_->family,
        const_cast<const TRITONSERVER_Parameter**>(params.data()),
        params.size());
  }
  free_params();
  ThrowIfError(env, err);
  MetricInit init{metric, handle_};
  return GetEnvData(env)->metric_ctor.New(
      {Napi::External<MetricInit>::New(env, &init)});
}

void MetricFamilyWrap::Dispose(const Napi::CallbackInfo& info) {
  if (!handle_ || handle_->family == nullptr) return;
  // Triton refuses while metrics of the family exist; say so.
  TRITONSERVER_Error* err =
      Api().TRITONSERVER_MetricFamilyDelete(handle_->family);
  ThrowIfError(info.Env(), err);
  handle_->family = nullptr;
  handle_.reset();
}

// ---- metric ----------------------------------------------------------------

Napi::Function MetricWrap::Init(Napi::Env env) {
  return DefineClass(env, "NativeMetric",
                     {InstanceMethod<&MetricWrap::Increment>("increment"),
                      InstanceMethod<&MetricWrap::Set>("set"),
                      InstanceMethod<&MetricWrap::Observe>("observe"),
                      InstanceMethod<&MetricWrap::Value>("value"),
                      InstanceMethod<&MetricWrap::Dispose>("dispose")});
}

MetricWrap::MetricWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<MetricWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(), "use family.metric()");
  }
  MetricInit* init = info[0].As<Napi::External<MetricInit>>().Data();
  metric_ = init->metric;
  family_ = init->family;
}

MetricWrap::~MetricWrap() {
  if (metric_ != nullptr) {
    TRITONSERVER_Error* err = Api().TRITONSERVER_MetricDelete(metric_);
    DropError(err);
    metric_ = nullptr;
  }
}

TRITONSERVER_Metric* MetricWrap::Live(Napi::Env env) {
  if (metric_ == nullptr) ThrowTypeError(env, "metric was disposed");
  return metric_;
}

void MetricWrap::Increment(const Napi::CallbackInfo& info) {
  double v = RequireNumber(info, "value");
  ThrowIfError(info.Env(),
               Api().TRITONSERVER_MetricIncrement(Live(info.Env()), v));
}

void MetricWrap::Set(const Napi::CallbackInfo& info) {
  double v = RequireNumber(info, "value");
  ThrowIfError(info.Env(), Api().TRITONSERVER_MetricSet(Live(info.Env()), v));
}

void MetricWrap::Observe(const Napi::CallbackInfo& info) {
  double v = RequireNumber(info, "value");
  TRITONSERVER_Metric* m = Live(info.Env());
  if (Api().TRITONSERVER_MetricObserve == nullptr) {
    ThrowUnsupported(info.Env(), "TRITONSERVER_MetricObserve");
  }
  ThrowIfError(info.Env(), Api().TRITONSERVER_MetricObserve(m, v));
}

Napi::Value MetricWrap::Value(const Napi::CallbackInfo& info) {
  double v = 0;
  ThrowIfError(info.Env(),
               Api().TRITONSERVER_MetricValue(Live(info.Env()), &v));
  return Napi::Number::New(info.Env(), v);
}

void MetricWrap::Dispose(const Napi::CallbackInfo& info) {
  if (metric_ == nullptr) return;
  TRITONSERVER_Error* err = Api().TRITONSERVER_MetricDelete(metric_);
  metric_ = nullptr;
  family_.reset();
  ThrowIfError(info.Env(), err);
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
      ThrowUnsupported(env,
                       "histogram metrics (TRITONSERVER_MetricNewWithArgs)");
    }
  } else {
    ThrowTypeError(env,
                   "kind must be 'counter', 'gauge' or 'histogram', got '" +
                       kind_name + "'");
  }
  std::string name = info[1].As<Napi::String>();
  std::string description = info[2].As<Napi::String>();
  auto handle = std::make_shared<FamilyHandle>();
  handle->kind = kind;
  ThrowIfError(env,
               Api().TRITONSERVER_MetricFamilyNew(
                   &handle->family, kind, name.c_str(), description.c_str()));
  FamilyInit init{handle};
  return GetEnvData(env)->metric_family_ctor.New(
      {Napi::External<FamilyInit>::New(env, &init)});
}

}  // namespace triton_node
