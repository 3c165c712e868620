// Released Triton requests kept for the next request of the same shape.
//
// Triton lets a request that came back through its release callback be
// submitted again (InferenceRequest::SetState: RELEASED -> INITIALIZED).
// Doing so skips InferenceRequestNew, AddInput, AddRequestedOutput and, when
// neither changed, Triton's normalization of the request; only the input
// data is swapped. A kept request holds its model version, so every
// change to the loaded models (a load or unload by any thread sharing the
// server) makes the kept ones stale: they are deleted, and one still in
// flight is deleted at its release instead of being kept.
#ifndef TRITON_NODE_REQUEST_KEPT_REQUESTS_H_
#define TRITON_NODE_REQUEST_KEPT_REQUESTS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "triton_capi.h"

namespace triton_node {

// What a kept request was built with: the part of a plain request (no id,
// options, parameters or trace) that Triton stores on the request object.
struct KeptInput {
  std::string name;
  int datatype = 0;
  std::vector<int64_t> dims;
};

struct KeptRequest {
  TRITONSERVER_InferenceRequest* request = nullptr;
  uint64_t epoch = 0;  // the model epoch it was built in
  std::string model;
  int64_t version = -1;
  std::vector<KeptInput> inputs;
  uint32_t input_count = 0;
  std::vector<std::string> outputs;
  uint32_t output_count = 0;
};

// Moved at both ends of anything that loads or unloads models, in any
// server of the process: a request built before may hold a version that is
// going.
uint64_t ModelEpoch();
// A load or unload runs (any server of the process): from its start to its
// end no request is kept, and the epoch moves at both ends, so a request
// made meanwhile (maybe on the version going away) is deleted at release.
void ModelChangeBegins();
void ModelChangeEnds();
// Requests kept now, in every pool of the process (leak tests).
int64_t KeptRequests();

// One server's kept requests: kept at their release on Triton's threads, taken
// on the server's JS thread, purged or closed from whichever thread changes the
// models or stops the server.
class KeptRequestPool {
 public:
  KeptRequestPool() = default;
  ~KeptRequestPool();
  KeptRequestPool(const KeptRequestPool&) = delete;
  KeptRequestPool& operator=(const KeptRequestPool&) = delete;

  // Whether plain requests are built to be kept (false in POLL mode, where
  // Triton loads and unloads models on its own).
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void set_enabled(bool on) { enabled_.store(on, std::memory_order_relaxed); }

  // JS thread: a kept request of `model`/`version`, or null. Stale ones met
  // on the way are deleted.
  KeptRequest* Take(const char* model, size_t model_size, int64_t version);
  // JS thread: a blank record for a new request (its fields to be filled).
  KeptRequest* NewRecord();
  // The record of a request that was deleted (or never submitted): back to
  // the free records.
  void Discard(KeptRequest* record);
  // Triton thread, at the release of `record`'s request: keeps it unless the
  // pool is closed or the models changed since it was built. False: the
  // caller deletes the request (the record is then the caller's).
  bool Keep(KeptRequest* record);
  // Deletes every kept request (the models change).
  void Purge();
  // Deletes every kept request and keeps no more (the server stops, or this
  // thread lets go of it). Idempotent.
  void Close();
  // Requests kept now (tests and statistics).
  size_t size();

 private:
  void FreeLocked(KeptRequest* record);
  void DeleteLocked(std::vector<KeptRequest*>* records);

  std::mutex mu_;
  std::vector<KeptRequest*> kept_;
  std::vector<KeptRequest*> free_;
  bool closed_ = false;
  std::atomic<bool> enabled_{true};
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_KEPT_REQUESTS_H_
