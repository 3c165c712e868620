// The engine behind one TRITONSERVER_Server: its options, the models of
// its repositories (each version's slot and state), the counters of what is
// in flight, and the lookups requests and queries make. Loading and
// unloading are the repository's (repository/); the models' ends are the
// reaper's (QueueFinalize).
//
// Lifetime: an Engine is shared: the TRITONSERVER_Server handle, every
// Model and the reaper hold it, so a request that outlives ServerDelete
// still has a valid engine to report to.
#ifndef TRITON_NODE_FAKE_CORE_ENGINE_H_
#define TRITON_NODE_FAKE_CORE_ENGINE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../../include/triton_capi.h"
#include "../support/leak_counters.h"
#include "../support/precondition.h"
#include "handles.h"
#include "model.h"

namespace fake {

enum class VersionState { kReady, kUnloading, kUnavailable };

struct VersionSlot {
  VersionState state = VersionState::kUnavailable;
  std::string reason;
  std::shared_ptr<Model> model;
};

struct ModelEntry {
  std::string dir;  // model directory in a repository
  // In-memory model ("file:" load parameters): the temporary directory its
  // files were written to. Owned by the entry: removed when the model is
  // unloaded, replaced by another load, or the server stops.
  std::string temp_dir;
  std::vector<int64_t> version_dirs;  // as found at the last load attempt
  std::map<int64_t, VersionSlot> versions;
  std::string config_json;  // of the loaded config, to detect reloads
  // An ensemble in Triton's dependency graph (from its first load until it
  // is unloaded itself): the models its steps name. Unloading one of them
  // unloads the ensemble; loading it again loads the ensemble again.
  std::set<std::string> composing;
  // Loaded by name (not only as an ensemble's step), since its last unload.
  bool explicitly_loaded = false;
  // The "config" an ensemble was loaded with, if any: it loads with it again.
  std::string override_config;
  bool has_override_config = false;
};

struct Engine {
  std::weak_ptr<Engine> self;
  TRITONSERVER_ServerOptions options;
  std::mutex mu;  // guards models, stopping
  std::condition_variable cv;
  std::map<std::string, ModelEntry> models;
  std::atomic<bool> stopping{false};
  // Inference Triton still works on: requests between ServerInferAsync and
  // their release, and decoupled streams until their FINAL. Deleting the
  // server while any exist crashes Triton's backend threads.
  std::atomic<int64_t> active_inferences{0};
  std::mutex load_mu;             // serializes loads and unloads
  std::set<std::string> loading;  // ensembles being loaded (load_mu)
  uint64_t created_ns = 0;
  // Set when the server failed before its model repository existed and
  // exit-on-error was off: Triton hands such a server back, not live.
  bool init_failed = false;

  // Model lookup for a request or a metadata query: NOT_FOUND in Triton's
  // words when no READY version matches.
  TRITONSERVER_Error* FindReady(const std::string& name, int64_t version,
                                std::shared_ptr<Model>* out);
  // FindReady that also takes a reference (Model::AddRef) on success, for
  // a request that will hold the model; Model::Release gives it back.
  TRITONSERVER_Error* FindReadyAndHold(const std::string& name, int64_t version,
                                       std::shared_ptr<Model>* out);
  // Caller holds mu.
  TRITONSERVER_Error* FindReadyLocked(const std::string& name, int64_t version,
                                      std::shared_ptr<Model>* out);
  // TRITONSERVER_ServerModelIndex: every model, or the READY versions.
  std::string IndexJson(bool ready_only);
  // Strict readiness: every model ever loaded has each version READY or
  // unloaded (a version that failed to load, or is loading, is not).
  bool AllModelsReady();
  void Finalized(Model* m);  // reaper: the model's threads are gone
  bool AllIdle();            // no model still referenced
};

// How long after a load returns its model must not be destroyed (Triton
// r25.07's instance thread may still be returning from the warm-up).
constexpr uint64_t kLoadTailNs = 50'000'000;
// Hands a model whose last reference went while it unloads to the reaper,
// which joins its instance threads and marks its version unloaded.
void QueueFinalize(std::shared_ptr<Model> m);
// Models whose destruction cannot race their load (Triton releases them
// itself, long after): a reload's previous versions, ServerNew's own stop.
void ForgetLoadTails(ModelEntry* entry);

}  // namespace fake

struct TRITONSERVER_Server : fake::Counted<fake::kLiveServer>,
                             fake::Tracked<fake::Handle::kServer> {
  std::shared_ptr<fake::Engine> engine;
};

#endif  // TRITON_NODE_FAKE_CORE_ENGINE_H_
