// Custom metrics: NativeMetricFamily / NativeMetric over Triton's metric API.
#ifndef TRITON_NODE_METRICS_H_
#define TRITON_NODE_METRICS_H_

#include <napi.h>

#include <memory>

#include "triton_capi.h"

namespace triton_node {

// Owns a TRITONSERVER_MetricFamily; deleted when the family is disposed
// (explicitly) or when the family wrapper and all its metrics are gone.
struct FamilyHandle {
  TRITONSERVER_MetricFamily* family = nullptr;
  TRITONSERVER_MetricKind kind = TRITONSERVER_METRIC_KIND_COUNTER;
  ~FamilyHandle();
};

class MetricFamilyWrap : public Napi::ObjectWrap<MetricFamilyWrap> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit MetricFamilyWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Metric(const Napi::CallbackInfo& info);
  void Dispose(const Napi::CallbackInfo& info);
  std::shared_ptr<FamilyHandle> handle_;
};

class MetricWrap : public Napi::ObjectWrap<MetricWrap> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit MetricWrap(const Napi::CallbackInfo& info);
  ~MetricWrap() override;

 private:
  void Increment(const Napi::CallbackInfo& info);
  void Set(const Napi::CallbackInfo& info);
  void Observe(const Napi::CallbackInfo& info);
  Napi::Value Value(const Napi::CallbackInfo& info);
  void Dispose(const Napi::CallbackInfo& info);
  TRITONSERVER_Metric* Live(Napi::Env env);

  TRITONSERVER_Metric* metric_ = nullptr;
  // Keeps the family alive while this metric exists.
  std::shared_ptr<FamilyHandle> family_;
};

// server.createMetricFamily(kind, name, description)
Napi::Value CreateMetricFamilyObject(const Napi::CallbackInfo& info);

}  // namespace triton_node

#endif  // TRITON_NODE_METRICS_H_
