#include "request/kept_requests.h"

#include <cstring>

#include "triton/api.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

std::atomic<uint64_t> g_model_epoch{1};
std::atomic<int> g_model_changes{0};
std::atomic<int64_t> g_kept{0};

// How far back Take looks for a request of the model asked for: a server
// serving many models keeps requests of each, and the newest match is
// usually at the back.
constexpr size_t kTakeScan = 16;

bool SameModel(const KeptRequest* r, const char* model, size_t size,
               int64_t version) {
  return r->version == version && r->model.size() == size &&
         std::memcmp(r->model.data(), model, size) == 0;
}

void BumpModelEpoch() { g_model_epoch.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace

uint64_t ModelEpoch() { return g_model_epoch.load(std::memory_order_acquire); }

void ModelChangeBegins() {
  g_model_changes.fetch_add(1, std::memory_order_acq_rel);
  BumpModelEpoch();
}

void ModelChangeEnds() {
  BumpModelEpoch();  // first: a request made during the change is stale
  g_model_changes.fetch_sub(1, std::memory_order_acq_rel);
}

int64_t KeptRequests() { return g_kept.load(std::memory_order_relaxed); }

KeptRequestPool::~KeptRequestPool() {
  // Every stop path closes the pool while the server exists; a request
  // left here (none should be) is leaked rather than deleted after its
  // server.
  for (KeptRequest* r : kept_) delete r;
  for (KeptRequest* r : free_) delete r;
}

KeptRequest* KeptRequestPool::Take(const char* model, size_t model_size,
                                   int64_t version) {
  std::vector<KeptRequest*> stale;
  KeptRequest* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t epoch = ModelEpoch();
    size_t scanned = 0;
    for (size_t i = kept_.size(); i > 0 && scanned < kTakeScan; --i) {
      KeptRequest* r = kept_[i - 1];
      if (r->epoch != epoch) {
        stale.push_back(r);
        kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i - 1));
        continue;
      }
      ++scanned;
      if (SameModel(r, model, model_size, version)) {
        found = r;
        kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i - 1));
        g_kept.fetch_sub(1, std::memory_order_relaxed);
        break;
      }
    }
    DeleteLocked(&stale);
  }
  return found;
}

KeptRequest* KeptRequestPool::NewRecord() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      KeptRequest* r = free_.back();
      free_.pop_back();
      return r;
    }
  }
  return new KeptRequest();
}

void KeptRequestPool::Discard(KeptRequest* record) {
  std::lock_guard<std::mutex> lock(mu_);
  FreeLocked(record);
}

void KeptRequestPool::FreeLocked(KeptRequest* record) {
  record->request = nullptr;
  record->input_count = 0;
  record->output_count = 0;
  free_.push_back(record);
}

bool KeptRequestPool::Keep(KeptRequest* record) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || g_model_changes.load(std::memory_order_acquire) != 0 ||
      record->epoch != ModelEpoch()) {
    return false;
  }
  kept_.push_back(record);
  g_kept.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// Purge and Close delete under the lock: whoever closes a pool on the way
// to deleting the server must not pass while another thread still deletes
// requests it took out of it.
void KeptRequestPool::Purge() {
  std::lock_guard<std::mutex> lock(mu_);
  DeleteLocked(&kept_);
}

void KeptRequestPool::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  DeleteLocked(&kept_);
}

// `records` were kept (counted in g_kept) and are out of kept_ or are
// kept_ itself: their released requests deleted, the records freed.
void KeptRequestPool::DeleteLocked(std::vector<KeptRequest*>* records) {
  g_kept.fetch_sub(static_cast<int64_t>(records->size()),
                   std::memory_order_relaxed);
  for (KeptRequest* r : *records) {
    if (r->request != nullptr && LoadedApi() != nullptr) {
      DropError(Api().TRITONSERVER_InferenceRequestDelete(r->request));
    }
    FreeLocked(r);
  }
  records->clear();
}

size_t KeptRequestPool::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_.size();
}

}  // namespace triton_node
