// Triton's rate limiter as far as loading goes (rate_limiter.cc).
#ifndef TRITON_NODE_FAKE_SCHEDULING_RATE_LIMITER_H_
#define TRITON_NODE_FAKE_SCHEDULING_RATE_LIMITER_H_

#include <string>

#include "../config/model_config.h"
#include "../core/engine.h"

namespace fake {

// Why `cfg` cannot load under the server's rate limiter ("" when it can).
// Caller holds engine.mu.
std::string RateLimiterProblem(const Engine& engine, const std::string& name,
                               const ModelConfig& cfg);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_RATE_LIMITER_H_
