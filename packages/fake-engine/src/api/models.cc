// Model control and per-model queries: load (by name, with a config
// override or an in-memory model's files), unload, the model index,
// readiness, batch and transaction properties, metadata and config.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../config/model_config.h"
#include "../core/engine.h"
#include "../core/error.h"
#include "../core/handles.h"
#include "../repository/model_dir.h"
#include "../repository/repository.h"
#include "export.h"

using namespace fake;

static TRITONSERVER_Error* NotReadyAfterStop(TRITONSERVER_Server* server) {
  if (server->engine->stopping) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE, "Server not ready");
  }
  return nullptr;
}

static TRITONSERVER_Error* ModelControlAllowed(TRITONSERVER_Server* server) {
  if (server->engine->options.mode != TRITONSERVER_MODEL_CONTROL_EXPLICIT) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE,
               "explicit model load / unload is not allowed if polling is "
               "enabled");
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerLoadModel(
    TRITONSERVER_Server* server, const char* model_name) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  WaitWhileModelLoadsHeld();
  return LoadModel(server->engine.get(), model_name, nullptr);
}

namespace {

// An in-memory model's parameters: every "file:<path>" one must be BYTES
// (its path and bytes go to *files), and a STRING "config" must be among
// them.
TRITONSERVER_Error* CollectModelFiles(
    const std::string& name, const TRITONSERVER_Parameter** parameters,
    uint64_t parameter_count,
    std::vector<std::pair<std::string, std::string>>* files) {
  bool found_config = false;
  for (uint64_t i = 0; i < parameter_count; ++i) {
    const TRITONSERVER_Parameter* p = parameters[i];
    if (p->name == "config") {
      if (p->type != TRITONSERVER_PARAMETER_STRING) {
        return PollFailure(
            name,
            "Config parameter 'config' must have string type for its value");
      }
      found_config = true;
    } else if (p->name.rfind("file:", 0) == 0) {
      if (p->type != TRITONSERVER_PARAMETER_BYTES) {
        return PollFailure(name, "File parameter '" + p->name +
                                     "' must have bytes type for its value");
      }
      files->emplace_back(p->name.substr(5), p->str);
    }
  }
  if (!found_config) {
    return PollFailure(name,
                       "Load parameter 'config' must be specified for model "
                       "file override");
  }
  return nullptr;
}

// The first STRING "config" parameter (null when none); every parameter
// before it must be a "file:" one.
TRITONSERVER_Error* FindConfigOverride(
    const std::string& name, const TRITONSERVER_Parameter** parameters,
    uint64_t parameter_count, const std::string** config) {
  for (uint64_t i = 0; i < parameter_count; ++i) {
    const TRITONSERVER_Parameter* p = parameters[i];
    if (p->name == "config" && p->type == TRITONSERVER_PARAMETER_STRING) {
      *config = &p->str;
      return nullptr;
    }
    if (p->name.rfind("file:", 0) != 0) {
      static const char* kTypes[] = {"STRING", "INT", "BOOL", "DOUBLE",
                                     "BYTES"};
      return PollFailure(name, "Unrecognized load parameter '" + p->name +
                                   "' with type '" + kTypes[p->type % 5] + "'");
    }
  }
  return nullptr;
}

}  // namespace

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerLoadModelWithParameters(
    TRITONSERVER_Server* server, const char* model_name,
    const TRITONSERVER_Parameter** parameters, const uint64_t parameter_count) {
  // Checked before anything else, server included.
  if (parameters == nullptr && parameter_count != 0) {
    return ErrArg(
        "load parameters are not provided while parameter count is "
        "non-zero");
  }
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  for (uint64_t i = 0; i < parameter_count; ++i) {
    FAKE_LIVE(kParameter, parameters[i]);
  }
  FAKE_NOT_NULL(model_name);
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  WaitWhileModelLoadsHeld();
  // Triton's order: with any "file:" parameter (an in-memory model), the
  // files are checked and written first and a string "config" is required;
  // then the parameters up to the first string "config" must all be known.
  // Every failure is a poll failure (reason in the log only).
  std::vector<std::pair<std::string, std::string>> files;
  bool file_override = false;
  for (uint64_t i = 0; i < parameter_count; ++i) {
    if (parameters[i]->name.rfind("file:", 0) == 0) file_override = true;
  }
  const std::string name = model_name;
  if (file_override) {
    if (auto* e =
            CollectModelFiles(name, parameters, parameter_count, &files)) {
      return e;
    }
  }
  const std::string* config = nullptr;
  if (auto* e =
          FindConfigOverride(name, parameters, parameter_count, &config)) {
    return e;
  }
  return LoadModel(server->engine.get(), name, config,
                   file_override ? &files : nullptr);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerUnloadModel(
    TRITONSERVER_Server* server, const char* model_name) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  return UnloadModel(server->engine.get(), model_name, false);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerUnloadModelAndDependents(
    TRITONSERVER_Server* server, const char* model_name) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  // The ensembles that use the model go with it in both calls (seen on
  // real r25.07: a plain unload of a step's model unloads its ensembles);
  // this one also unloads what an ensemble's steps brought in.
  if (auto* e = NotReadyAfterStop(server)) return e;
  if (auto* e = ModelControlAllowed(server)) return e;
  return UnloadModel(server->engine.get(), model_name, true);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelIndex(
    TRITONSERVER_Server* server, uint32_t flags,
    TRITONSERVER_Message** model_index) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (auto* e = NotReadyAfterStop(server)) return e;
  FAKE_NOT_NULL(model_index);
  auto* m = new TRITONSERVER_Message();
  m->json =
      server->engine->IndexJson((flags & TRITONSERVER_INDEX_FLAG_READY) != 0);
  *model_index = m;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelIsReady(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, bool* ready) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  FAKE_NOT_NULL(ready);
  *ready = false;
  if (auto* e = NotReadyAfterStop(server)) return e;
  std::shared_ptr<Model> m;
  TRITONSERVER_Error* e =
      server->engine->FindReady(model_name, model_version, &m);
  *ready = e == nullptr;
  delete e;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelBatchProperties(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* flags, void** voidp) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (voidp != nullptr) *voidp = nullptr;
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->engine->FindReady(model_name, model_version, &m))
    return e;
  FAKE_NOT_NULL(flags);
  *flags = m->config.max_batch_size > 0 ? TRITONSERVER_BATCH_FIRST_DIM
                                        : TRITONSERVER_BATCH_UNKNOWN;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelTransactionProperties(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, uint32_t* txn_flags, void** voidp) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  if (voidp != nullptr) *voidp = nullptr;
  // Triton writes 0 to it before looking the model up.
  FAKE_NOT_NULL(txn_flags);
  *txn_flags = 0;
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->engine->FindReady(model_name, model_version, &m))
    return e;
  *txn_flags = m->config.decoupled ? TRITONSERVER_TXN_DECOUPLED
                                   : TRITONSERVER_TXN_ONE_TO_ONE;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelMetadata(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, TRITONSERVER_Message** model_metadata) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->engine->FindReady(model_name, model_version, &m))
    return e;
  if (auto* e = NotReadyAfterStop(server)) return e;
  std::vector<int64_t> ready;
  {
    std::lock_guard<std::mutex> lock(server->engine->mu);
    auto it = server->engine->models.find(model_name);
    if (it != server->engine->models.end()) {
      for (auto& kv : it->second.versions) {
        if (kv.second.state == VersionState::kReady) ready.push_back(kv.first);
      }
    }
  }
  FAKE_NOT_NULL(model_metadata);
  auto* msg = new TRITONSERVER_Message();
  msg->json = ModelMetadataJson(m->config, ready, m->stand_in);
  *model_metadata = msg;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_ServerModelConfig(
    TRITONSERVER_Server* server, const char* model_name,
    const int64_t model_version, const uint32_t config_version,
    TRITONSERVER_Message** model_config) {
  FAKE_LIVE(kServer, server);
  FAKE_INITIALIZED(server);
  FAKE_NOT_NULL(model_name);
  std::shared_ptr<Model> m;
  if (auto* e = server->engine->FindReady(model_name, model_version, &m))
    return e;
  if (config_version != 1) {
    return ErrArg("model configuration version " +
                  std::to_string(config_version) +
                  " not supported, supported versions are: 1");
  }
  FAKE_NOT_NULL(model_config);
  auto* msg = new TRITONSERVER_Message();
  msg->json = ModelConfigToJson(m->config);
  *model_config = msg;
  return nullptr;
}
