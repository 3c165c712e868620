// The custom metric API (custom_metrics.cc): metric families, metrics and
// histogram args in a process-wide registry, as prometheus-cpp keeps them.
#ifndef TRITON_NODE_FAKE_API_CUSTOM_METRICS_H_
#define TRITON_NODE_FAKE_API_CUSTOM_METRICS_H_

#include <string>

namespace fake {

// Every custom family with a series, in Prometheus text.
std::string CustomMetricsText();
// A number as prometheus-cpp writes it (16 significant digits).
std::string FormatNumber(double v);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_API_CUSTOM_METRICS_H_
