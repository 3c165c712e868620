// NativeMetric: one labelled metric of a family.
#ifndef TRITON_NODE_OBJECTS_METRIC_H_
#define TRITON_NODE_OBJECTS_METRIC_H_

#include <napi.h>

#include <memory>

#include "triton/owners.h"

namespace triton_node {

class MetricWrap : public Napi::ObjectWrap<MetricWrap> {
 public:
  // Defines the class and registers it in the environment's data.
  static Napi::Function Init(Napi::Env env);
  explicit MetricWrap(const Napi::CallbackInfo& info);
  // A NativeMetric over `metric` (taken over), keeping `family` alive.
  static Napi::Object New(Napi::Env env, MetricOwner metric,
                          std::shared_ptr<MetricFamily> family);

 private:
  void Increment(const Napi::CallbackInfo& info);
  void Set(const Napi::CallbackInfo& info);
  void Observe(const Napi::CallbackInfo& info);
  Napi::Value Value(const Napi::CallbackInfo& info);
  void Dispose(const Napi::CallbackInfo& info);
  TRITONSERVER_Metric* Live(Napi::Env env);

  MetricOwner metric_;
  // Keeps the family alive while this metric exists.
  std::shared_ptr<MetricFamily> family_;
};

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_METRIC_H_
