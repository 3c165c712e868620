// Owners for Triton handles: each deletes its handle when it goes out of
// scope, dropping the error a failed delete returns (nobody could act on it).
#ifndef TRITON_NODE_TRITON_OWNERS_H_
#define TRITON_NODE_TRITON_OWNERS_H_

#include <memory>

#include "triton/api.h"
#include "triton/errors.h"
#include "triton_capi.h"

namespace triton_node {

// Calls the API's delete function for T (a member of TritonApi).
template <typename T, TRITONSERVER_Error* (*TritonApi::*Delete)(T*)>
struct TritonDeleter {
  void operator()(T* handle) const {
    if (handle != nullptr) DropError((Api().*Delete)(handle));
  }
};

using MessageOwner =
    std::unique_ptr<TRITONSERVER_Message,
                    TritonDeleter<TRITONSERVER_Message,
                                  &TritonApi::TRITONSERVER_MessageDelete>>;
using MetricsOwner =
    std::unique_ptr<TRITONSERVER_Metrics,
                    TritonDeleter<TRITONSERVER_Metrics,
                                  &TritonApi::TRITONSERVER_MetricsDelete>>;
using ServerOptionsOwner = std::unique_ptr<
    TRITONSERVER_ServerOptions,
    TritonDeleter<TRITONSERVER_ServerOptions,
                  &TritonApi::TRITONSERVER_ServerOptionsDelete>>;
using MetricOwner = std::unique_ptr<
    TRITONSERVER_Metric,
    TritonDeleter<TRITONSERVER_Metric, &TritonApi::TRITONSERVER_MetricDelete>>;

// TRITONSERVER_ParameterDelete returns nothing.
struct ParameterDeleter {
  void operator()(TRITONSERVER_Parameter* p) const {
    if (p != nullptr) Api().TRITONSERVER_ParameterDelete(p);
  }
};
using ParameterOwner =
    std::unique_ptr<TRITONSERVER_Parameter, ParameterDeleter>;

// A metric family, shared by its JS wrapper and every metric made from it:
// deleted when the last of them goes, or at dispose().
struct MetricFamily {
  TRITONSERVER_MetricFamily* family = nullptr;
  TRITONSERVER_MetricKind kind = TRITONSERVER_METRIC_KIND_COUNTER;
  MetricFamily() = default;
  MetricFamily(const MetricFamily&) = delete;
  MetricFamily& operator=(const MetricFamily&) = delete;
  ~MetricFamily() { Delete(); }
  void Delete() {
    if (family != nullptr) {
      DropError(Api().TRITONSERVER_MetricFamilyDelete(family));
    }
    family = nullptr;
  }
};

}  // namespace triton_node

#endif  // TRITON_NODE_TRITON_OWNERS_H_
