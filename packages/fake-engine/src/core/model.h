// One loaded version of a model: its config, which backend runs it, its
// statistics, its sequences, and the queue its instance threads take
// requests from (the scheduler, scheduling/scheduler.h, runs them; the
// backend, backends/, answers them through `execute`).
//
// Lifetime: a Model is shared by its version slot, by every request object
// created for it, by every response, and by stream jobs of decoupled
// backends. Its instance threads are joined by the reaper (engine.h) once
// the model is unloading and no request object, response object or stream
// job refers to it (as in Triton, where each holds the model).
#ifndef TRITON_NODE_FAKE_CORE_MODEL_H_
#define TRITON_NODE_FAKE_CORE_MODEL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../include/triton_capi.h"
#include "../config/model_config.h"
#include "model_stats.h"
#include "request.h"

namespace fake {

struct Engine;  // engine.h: every model holds its engine
// Opaque here; what the rooms above keep for a model.
struct EnsemblePlan;  // scheduling/ensemble_plan.h
struct OnnxModel;     // backends/onnxruntime_backend.cc

enum class BackendKind {
  kIdentity,
  kRepeat,
  kSquare,
  kTextStream,
  kTextEmbedding,
  kEnsemble,
  kStandIn,
  kOnnxRuntime
};

// One sequence of a sequence-batching model (scheduling/sequence_batcher.cc).
struct Sequence {
  bool running = false;  // a request of it is queued or executing
  std::deque<TRITONSERVER_InferenceRequest*> waiting;  // behind that one
  uint64_t last_us = 0;                                // its last request
  // Its END request was admitted: as in Triton, which forgets a sequence's
  // id when it enqueues the END, a later request of the id needs START.
  bool ended = false;
  // Implicit state, one per sequence_batching.state: its current value.
  std::vector<std::vector<char>> states;
};
struct SequenceStore {
  std::mutex mu;
  std::map<std::string, Sequence> by_key;  // SequenceKey()
};

// How the scheduler hands a batch to the model's backend (Triton calls the
// backend library's TRITONBACKEND_ModelInstanceExecute): set when the model
// is loaded; `inline_mode` when it runs on the submitting thread.
struct Model;
using ExecuteFn = void (*)(Model* m,
                           std::vector<TRITONSERVER_InferenceRequest*>& batch,
                           bool inline_mode);

struct Model {
  std::shared_ptr<Engine> engine;
  std::weak_ptr<Model> self;
  std::string name;
  int64_t version = 0;
  ModelConfig config;
  BackendKind backend = BackendKind::kIdentity;
  uint64_t execute_delay_ms = 0;  // identity
  // identity, config parameter echo_request "true": the fake's own test
  // aid (no Triton backend does this) answering with what the request
  // carried: its parameters as "request.<name>", its correlation id,
  // priority and timeout.
  bool echo_request = false;
  uint64_t square_delay_ns = 0;  // square CUSTOM_INFER_DELAY_NS
  uint64_t word_delay_ns = 0;    // fake_text_stream word_delay_ms
  // Ensembles: the steps (scheduling/ensemble_plan.h). An ensemble has no
  // instance threads; busy_instances counts its requests in flight.
  std::shared_ptr<const EnsemblePlan> ensemble;
  // Stand-ins (backends/stand_ins.cc): "<backend>:<mode>", and whether it
  // echoes.
  std::string stand_in;
  bool stand_in_echoes = false;
  // onnxruntime models (backends/onnxruntime_backend.cc): the version's
  // session.
  std::shared_ptr<OnnxModel> onnx;
  // Sequence batching: the sequences in flight.
  SequenceStore sequences;
  double load_seconds = 0;
  ModelStats stats;

  // References that keep the version UNLOADING (and ServerStop waiting):
  // request objects, response objects not yet deleted, and decoupled
  // stream jobs.
  std::atomic<int64_t> refs{0};
  std::atomic<bool> unloading{false};
  std::atomic<bool> finalize_queued{false};
  // Until then its instance threads count as still returning from the
  // load's warm-up (engine.cc, QueueFinalize); 0 once that cannot matter.
  std::atomic<uint64_t> load_tail_until_ns{0};

  // Scheduler queue (instance threads wait on cv; scheduling/scheduler.cc).
  std::mutex mu;
  std::condition_variable cv;
  std::deque<TRITONSERVER_InferenceRequest*> queue;
  bool stop_threads = false;
  std::vector<std::thread> threads;  // one per instance
  int busy_instances = 0;            // guarded by mu
  // Requests in batches still forming (waiting out max_queue_delay): still
  // queued as Triton counts them for max_queue_size. Guarded by mu.
  size_t forming = 0;
  ExecuteFn execute = nullptr;  // the backend (backends/backends.h)

  ~Model();
  // Stops and joins the instance threads: by the reaper, else when the
  // model is destroyed.
  void JoinThreads();
  void AddRef() { refs.fetch_add(1, std::memory_order_relaxed); }
  void Release();  // may queue finalization
  bool queue_policy_active() const {
    const auto& qp = config.dynamic_batching.default_queue_policy;
    return config.dynamic_batching.present && qp.present &&
           (qp.default_timeout_microseconds > 0 || qp.allow_timeout_override);
  }
};

}  // namespace fake

#endif  // TRITON_NODE_FAKE_CORE_MODEL_H_
