#include "request/completion_queue.h"

#include "request/ledger.h"
#include "triton/api.h"

namespace triton_node {

CompletionQueue::~CompletionQueue() {
  for (Completion* c : free_) delete c;
  for (Completion* c : queue_) delete c;  // responses already disposed
}

Completion* CompletionQueue::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      Completion* c = free_.back();
      free_.pop_back();
      return c;
    }
  }
  return new Completion();
}

void CompletionQueue::Push(Completion* c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      queue_.push_back(c);
      // Woken under the lock: the JS thread closes the queue before it
      // releases the thread-safe function, so the function still exists
      // here. (Once queued, the item is the JS thread's, or Close()'s.)
      if (!wake_pending_) {
        wake_pending_ = true;
        wake_(wake_arg_);
      }
      return;
    }
  }
  // Closed: no JS thread to hand it to; dispose of it here.
  DisposeCompletion(c);
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(c);
}

bool CompletionQueue::Poke() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  if (!wake_pending_) {
    wake_pending_ = true;
    wake_(wake_arg_);  // under the lock, as in Push
  }
  return true;
}

void CompletionQueue::BeginWake() {
  std::lock_guard<std::mutex> lock(mu_);
  wake_pending_ = false;
}

void CompletionQueue::TakeAll(std::vector<Completion*>* out) {
  out->clear();
  std::lock_guard<std::mutex> lock(mu_);
  out->swap(queue_);
  wake_pending_ = false;
}

void CompletionQueue::Recycle(std::vector<Completion*>* items) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Completion* c : *items) {
    c->response = nullptr;
    c->ctx = nullptr;
    free_.push_back(c);
  }
  items->clear();
}

void CompletionQueue::Close(std::vector<Completion*>* leftover) {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  leftover->insert(leftover->end(), queue_.begin(), queue_.end());
  queue_.clear();
}

bool CompletionQueue::closed() {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

void DisposeCompletion(Completion* c) {
  SettleScope scope;  // the delete may release a trace (and settle)
  if (c->type == Completion::kResponse && c->response != nullptr) {
    TRITONSERVER_Error* err =
        Api().TRITONSERVER_InferenceResponseDelete(c->response);
    DropError(err);
    c->response = nullptr;
  }
}

}  // namespace triton_node
