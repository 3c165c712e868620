// Triton's rate limiter as far as loading goes: with the EXEC_COUNT mode,
// each model instance registers the resources its instance group's
// rate_limiter names, and a load fails when the server was given explicit
// resource counts that cannot cover what some instance needs. The fake runs
// instances without waiting for resources; only this check is modelled.
#include "rate_limiter.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fake {
namespace {

// Triton's keys in its resource maps: a global resource, and counts the
// server options give for every device.
constexpr int kGlobal = -2;
constexpr int kEveryDevice = -1;

using ResourceMap = std::map<int, std::map<std::string, size_t>>;

// The devices an instance group's instances run on (CPU instances are
// device 0 to the rate limiter).
std::vector<int> GroupDevices(const InstanceGroupConfig& g) {
  if (g.kind == "KIND_GPU" && !g.gpus.empty()) return g.gpus;
  return {0};
}

// Adds what each instance of `cfg` needs into `max` (the largest count per
// device and resource).
void AddNeeds(const ModelConfig& cfg, ResourceMap* max) {
  for (const auto& g : cfg.instance_group) {
    if (g.count <= 0) continue;
    for (const auto& r : g.rate_limiter_resources) {
      for (int device :
           r.global ? std::vector<int>{kGlobal} : GroupDevices(g)) {
        size_t& have = (*max)[device][r.name];
        have = std::max<size_t>(have, r.count);
      }
    }
  }
}

size_t ExplicitCount(const ResourceMap& given, int device,
                     const std::string& name) {
  size_t count = 0;
  for (const auto& d : given) {
    // A global resource takes the largest count given for any device.
    if (device != kGlobal && d.first != device && d.first != kEveryDevice) {
      continue;
    }
    auto it = d.second.find(name);
    if (it != d.second.end()) count = std::max(count, it->second);
  }
  return count;
}

}  // namespace

std::string RateLimiterProblem(const Engine& engine, const std::string& name,
                               const ModelConfig& cfg) {
  if (engine.options.rate_limit_mode != TRITONSERVER_RATE_LIMIT_EXEC_COUNT) {
    return "";
  }
  ResourceMap max;
  for (const auto& kv : engine.models) {
    if (kv.first == name) continue;
    for (const auto& v : kv.second.versions) {
      if (v.second.state == VersionState::kReady && v.second.model) {
        AddNeeds(v.second.model->config, &max);
      }
    }
  }
  AddNeeds(cfg, &max);
  const ResourceMap& given = engine.options.rate_limit_resources;
  if (!given.empty()) {
    for (const auto& d : max) {
      for (const auto& r : d.second) {
        const size_t count = ExplicitCount(given, d.first, r.first);
        if (count < r.second) {
          return "Resource count for \"" + r.first + "\" is limited to " +
                 std::to_string(count) +
                 " which will prevent scheduling of one or more model "
                 "instances, the minimum required count is " +
                 std::to_string(r.second);
        }
      }
    }
  }
  auto global = max.find(kGlobal);
  if (global != max.end()) {
    for (const auto& r : global->second) {
      for (const auto& d : max) {
        if (d.first != kGlobal && d.second.count(r.first) != 0) {
          return "Resource \"" + r.first +
                 "\" is present as both global and device-specific resource "
                 "in the model configuration.";
        }
      }
    }
  }
  return "";
}

}  // namespace fake
