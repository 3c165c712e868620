// A model version's own lifetime: its references, and the instance
// threads it stops and joins (the scheduler starts them).
#include "model.h"

#include <utility>

#include "engine.h"

namespace fake {

Model::~Model() {
  // Normally joined by the reaper; this is the fallback for a model that
  // never reached it (its last owner is never one of its own threads).
  JoinThreads();
}

void Model::JoinThreads() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stop_threads = true;
  }
  cv.notify_all();
  for (auto& t : threads) {
    if (!t.joinable()) continue;
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();
    } else {
      t.join();
    }
  }
  threads.clear();
}

void Model::Release() {
  // Sequentially consistent against UnloadEntry, which stores `unloading`
  // and then reads `refs`: one of the two sees the other and finalizes.
  if (refs.fetch_sub(1, std::memory_order_seq_cst) == 1 && unloading.load()) {
    if (auto me = self.lock()) QueueFinalize(std::move(me));
  }
}

}  // namespace fake
