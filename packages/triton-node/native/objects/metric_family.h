// NativeMetricFamily: a family of custom metrics in Triton's registry.
#ifndef TRITON_NODE_OBJECTS_METRIC_FAMILY_H_
#define TRITON_NODE_OBJECTS_METRIC_FAMILY_H_

#include <napi.h>

#include <memory>

#include "triton/owners.h"

namespace triton_node {

class MetricFamilyWrap : public Napi::ObjectWrap<MetricFamilyWrap> {
 public:
  // Defines the class and registers it in the environment's data.
  static Napi::Function Init(Napi::Env env);
  explicit MetricFamilyWrap(const Napi::CallbackInfo& info);

 private:
  Napi::Value Metric(const Napi::CallbackInfo& info);
  void Dispose(const Napi::CallbackInfo& info);
  // Deleted when the family is disposed, or when this wrapper and all its
  // metrics are gone.
  std::shared_ptr<MetricFamily> family_;
};

// server.createMetricFamily(kind, name, description)
Napi::Value CreateMetricFamilyObject(const Napi::CallbackInfo& info);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_METRIC_FAMILY_H_
