#include "objects/metric.h"

#include <string>
#include <utility>

#include "env/env_data.h"
#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

struct MetricInit {
  MetricOwner metric;
  std::shared_ptr<MetricFamily> family;
};

double RequireNumber(const Napi::CallbackInfo& info, const char* what) {
  if (info.Length() < 1 || !info[0].IsNumber()) {
    ThrowTypeError(info.Env(), std::string(what) + " must be a number");
  }
  return info[0].As<Napi::Number>().DoubleValue();
}

}  // namespace

Napi::Function MetricWrap::Init(Napi::Env env) {
  Napi::Function ctor =
      DefineClass(env, "NativeMetric",
                  {InstanceMethod<&MetricWrap::Increment>("increment"),
                   InstanceMethod<&MetricWrap::Set>("set"),
                   InstanceMethod<&MetricWrap::Observe>("observe"),
                   InstanceMethod<&MetricWrap::Value>("value"),
                   InstanceMethod<&MetricWrap::Dispose>("dispose")});
  GetEnvData(env)->metric_ctor = Napi::Persistent(ctor);
  return ctor;
}

Napi::Object MetricWrap::New(Napi::Env env, MetricOwner metric,
                             std::shared_ptr<MetricFamily> family) {
  MetricInit init{std::move(metric), std::move(family)};
  return GetEnvData(env)->metric_ctor.New(
      {Napi::External<MetricInit>::New(env, &init)});
}

MetricWrap::MetricWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<MetricWrap>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    ThrowTypeError(info.Env(), "use family.metric()");
  }
  MetricInit* init = info[0].As<Napi::External<MetricInit>>().Data();
  metric_ = std::move(init->metric);
  family_ = std::move(init->family);
}

TRITONSERVER_Metric* MetricWrap::Live(Napi::Env env) {
  if (!metric_) ThrowTypeError(env, "metric was disposed");
  return metric_.get();
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
    ThrowLibraryLacks(info.Env(), "TRITONSERVER_MetricObserve");
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
  if (!metric_) return;
  TRITONSERVER_Error* err = Api().TRITONSERVER_MetricDelete(metric_.release());
  family_.reset();
  ThrowIfError(info.Env(), err);
}

}  // namespace triton_node
