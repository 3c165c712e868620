// TRITONSERVER_ServerModelStatistics in Triton's JSON shape (key order and
// all), from the counters the scheduler and backends keep per version.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../core/engine.h"
#include "../core/error.h"
#include "../core/handles.h"
#include "../core/model_stats.h"
#include "../support/json.h"
#include "export.h"

namespace fake {
namespace {

void Dur(std::string* out, const char* key, const Duration& d) {
  *out += "\"";
  *out += key;
  *out += "\":{\"count\":" + std::to_string(d.count) +
          ",\"ns\":" + std::to_string(d.ns) + "}";
}

// One version's entry of model_stats (`s` null: every counter 0).
std::string StatsEntryJson(const std::string& name, int64_t version,
                           ModelStats* s) {
  std::string o = "{\"name\":";
  JsonEscape(name, &o);
  o += ",\"version\":\"" + std::to_string(version) + "\"";
  ModelStats empty;
  if (s == nullptr) s = &empty;
  std::lock_guard<std::mutex> lock(s->mu);
  o += ",\"last_inference\":" + std::to_string(s->last_inference_ms);
  o += ",\"inference_count\":" + std::to_string(s->inference_count);
  o += ",\"execution_count\":" + std::to_string(s->execution_count);
  o += ",\"inference_stats\":{";
  Dur(&o, "success", s->success);
  o += ",";
  Dur(&o, "fail", s->fail);
  o += ",";
  Dur(&o, "queue", s->queue);
  o += ",";
  Dur(&o, "compute_input", s->compute_input);
  o += ",";
  Dur(&o, "compute_infer", s->compute_infer);
  o += ",";
  Dur(&o, "compute_output", s->compute_output);
  o += ",";
  Dur(&o, "cache_hit", Duration());
  o += ",";
  Dur(&o, "cache_miss", Duration());
  o += "},\"response_stats\":{";
  bool first = true;
  for (auto& kv : s->response) {
    if (!first) o += ",";
    first = false;
    o += "\"" + std::to_string(kv.first) + "\":{";
    Dur(&o, "compute_infer", kv.second.compute_infer);
    o += ",";
    Dur(&o, "compute_output", kv.second.compute_output);
    o += ",";
    Dur(&o, "success", kv.second.success);
    o += ",";
    Dur(&o, "fail", kv.second.fail);
    o += ",";
    Dur(&o, "empty_response", kv.second.empty_response);
    o += ",";
    Dur(&o, "cancel", kv.second.cancel);
    o += "}";
  }
  o += "},\"batch_stats\":[";
  first = true;
  for (auto& kv : s->batch) {
    if (!first) o += ",";
    first = false;
    o += "{\"batch_size\":" + std::to_string(kv.first) + ",";
    Dur(&o, "compute_input", kv.second.input);
    o += ",";
    Dur(&o, "compute_infer", kv.second.infer);
    o += ",";
    Dur(&o, "compute_output", kv.second.output);
    o += "}";
  }
  o += "],\"memory_usage\":[]}";
  return o;
}

}  // namespace

}  // namespace fake

using namespace fake;

namespace {

using StatsRows = std::vector<
    std::pair<std::string, std::pair<int64_t, std::shared_ptr<Model>>>>;

// Every READY version of every model.
void AllReadyVersions(Engine* engine, StatsRows* rows) {
  for (auto& kv : engine->models) {
    for (auto& v : kv.second.versions) {
      if (v.second.state == VersionState::kReady) {
        rows->push_back({kv.first, {v.first, v.second.model}});
      }
    }
  }
}

// One model's READY versions (version -1), or the one version asked for:
// a version folder that is not READY is listed without statistics.
// Caller holds engine->mu.
TRITONSERVER_Error* ModelVersions(Engine* engine, const std::string& name,
                                  int64_t model_version, StatsRows* rows) {
  auto it = engine->models.find(name);
  bool any_ready = false;
  if (it != engine->models.end()) {
    for (auto& v : it->second.versions) {
      any_ready |= v.second.state == VersionState::kReady;
    }
  }
  if (!any_ready) {
    return ErrArg("requested model '" + name + "' is not available");
  }
  if (model_version == -1) {
    for (auto& v : it->second.versions) {
      if (v.second.state == VersionState::kReady) {
        rows->push_back({name, {v.first, v.second.model}});
      }
    }
    return nullptr;
  }
  auto vit = it->second.versions.find(model_version);
  if (vit != it->second.versions.end() &&
      vit->second.state == VersionState::kReady) {
    rows->push_back({name, {model_version, vit->second.model}});
    return nullptr;
  }
  const auto& dirs = it->second.version_dirs;
  if (std::find(dirs.begin(), dirs.end(), model_version) == dirs.end()) {
    return ErrArg("requested model version is not available for model '" +
                  name + "'");
  }
  rows->push_back({name, {model_version, nullptr}});
  return nullptr;
}

}  // namespace

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelStatistics(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, TRITONSERVER_Message** model_stats) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  FAKE_NOT_NULL(model_stats);
  Engine* engine = server->engine.get();
  std::string name = model_name;
  // Collect the models under the lock, render outside it.
  StatsRows rows;
  {
    std::lock_guard<std::mutex> lock(engine->mu);
    if (name.empty()) {
      AllReadyVersions(engine, &rows);
    } else if (auto* e = ModelVersions(engine, name, model_version, &rows)) {
      return e;
    }
  }
  auto* msg = new TRITONSERVER_Message();
  msg->json = "{\"model_stats\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) msg->json += ",";
    Model* m = rows[i].second.second.get();
    msg->json += StatsEntryJson(rows[i].first, rows[i].second.first,
                                m == nullptr ? nullptr : &m->stats);
  }
  msg->json += "]}";
  *model_stats = msg;
  return nullptr;
}
