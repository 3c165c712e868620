// The engine's lookups and index, and the reaper that ends the models that
// finished unloading.
#include "engine.h"

#include <deque>
#include <string>
#include <thread>
#include <utility>

#include "../support/clock.h"
#include "../support/json.h"
#include "error.h"

namespace fake {

namespace {

const char* StateName(VersionState s) {
  switch (s) {
    case VersionState::kReady:
      return "READY";
    case VersionState::kUnloading:
      return "UNLOADING";
    default:
      return "UNAVAILABLE";
  }
}

}  // namespace

TRITONSERVER_Error* Engine::FindReady(const std::string& name, int64_t version,
                                      std::shared_ptr<Model>* out) {
  std::lock_guard<std::mutex> lock(mu);
  return FindReadyLocked(name, version, out);
}

// The reference is taken under the repository lock: an unload marks a
// version UNLOADING and finalizes it when no reference is left, under
// that same lock. Taken after it, a request could be made on a model
// whose instance threads the reaper is already joining (it would never
// run: a hung request, which real Triton, holding the model by a shared
// pointer from the lookup on, never has).
TRITONSERVER_Error* Engine::FindReadyAndHold(const std::string& name,
                                             int64_t version,
                                             std::shared_ptr<Model>* out) {
  std::lock_guard<std::mutex> lock(mu);
  TRITONSERVER_Error* e = FindReadyLocked(name, version, out);
  if (e == nullptr) (*out)->AddRef();
  return e;
}

TRITONSERVER_Error* Engine::FindReadyLocked(const std::string& name,
                                            int64_t version,
                                            std::shared_ptr<Model>* out) {
  auto it = models.find(name);
  if (it == models.end() || it->second.versions.empty()) {
    return Err(TRITONSERVER_ERROR_NOT_FOUND,
               "Request for unknown model: '" + name + "' is not found");
  }
  auto& versions = it->second.versions;
  if (version == -1) {
    for (auto vit = versions.rbegin(); vit != versions.rend(); ++vit) {
      if (vit->second.state == VersionState::kReady) {
        *out = vit->second.model;
        return nullptr;
      }
    }
    return Err(
        TRITONSERVER_ERROR_NOT_FOUND,
        "Request for unknown model: '" + name + "' has no available versions");
  }
  auto vit = versions.find(version);
  if (vit == versions.end()) {
    return Err(TRITONSERVER_ERROR_NOT_FOUND,
               "Request for unknown model: '" + name + "' version " +
                   std::to_string(version) + " is not found");
  }
  // A version that was served once and is now unloaded (or still loading)
  // is known to Triton: it answers UNAVAILABLE, not NOT_FOUND.
  if (vit->second.state != VersionState::kReady) {
    return Err(TRITONSERVER_ERROR_UNAVAILABLE,
               "Request for unknown model: '" + name + "' version " +
                   std::to_string(version) + " is not at ready state");
  }
  *out = vit->second.model;
  return nullptr;
}

std::string Engine::IndexJson(bool ready_only) {
  std::lock_guard<std::mutex> lock(mu);
  std::string out = "[";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",";
    first = false;
  };
  for (auto& kv : models) {
    if (kv.second.versions.empty()) {
      if (ready_only) continue;
      sep();
      out += "{\"name\":";
      JsonEscape(kv.first, &out);
      out += "}";
      continue;
    }
    for (auto& v : kv.second.versions) {
      if (ready_only && v.second.state != VersionState::kReady) continue;
      sep();
      out += "{\"name\":";
      JsonEscape(kv.first, &out);
      out += ",\"version\":\"" + std::to_string(v.first) + "\",\"state\":\"" +
             StateName(v.second.state) + "\"";
      if (v.second.state == VersionState::kUnavailable) {
        out += ",\"reason\":";
        JsonEscape(v.second.reason, &out);
      }
      out += "}";
    }
  }
  return out + "]";
}

bool Engine::AllModelsReady() {
  std::lock_guard<std::mutex> lock(mu);
  for (auto& kv : models) {
    // Scanned but never loaded: not in Triton's lifecycle map, not counted.
    for (auto& v : kv.second.versions) {
      if (v.second.state != VersionState::kReady &&
          v.second.reason != "unloaded") {
        return false;
      }
    }
  }
  return true;
}

// ---- the reaper: joins the threads of models that finished unloading ------
// One process-wide thread, never joined: a model's last request may be
// deleted on that model's own thread (inside a callback), which cannot join
// itself. Its state is heap-allocated and never freed so process exit does
// not destroy a mutex it may be waiting on.
namespace {
struct Reaper {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Model>> queue;
};
Reaper* GetReaper() {
  static Reaper* reaper = [] {
    auto* r = new Reaper();
    std::thread([r] {
      std::unique_lock<std::mutex> lock(r->mu);
      while (true) {
        r->cv.wait(lock, [r] { return !r->queue.empty(); });
        std::shared_ptr<Model> m = std::move(r->queue.front());
        r->queue.pop_front();
        lock.unlock();
        m->JoinThreads();
        std::shared_ptr<Engine> engine = m->engine;
        engine->Finalized(m.get());
        m.reset();
        lock.lock();
      }
    }).detach();
    return r;
  }();
  return reaper;
}
}  // namespace

// Triton destroys a model on a thread of its own as soon as its last
// reference goes, and r25.07's instance thread may then still be returning
// from the payload that finished the load (its warm-up: the load returns as
// soon as that payload's result is set). The destruction reads the
// thread's list of instances without a lock while the thread has that
// instance taken out (TritonBackendThread::StopBackendThread against
// BackendThread and RateLimiter::DequeuePayload): SIGSEGV in
// InstanceQueue::DecrementConsumerCount or StopBackendThread. The window
// is short but real on a busy machine; the fake makes it kLoadTailNs long.
void QueueFinalize(std::shared_ptr<Model> m) {
  const uint64_t tail = m->load_tail_until_ns.load();
  const uint64_t now = SteadyNs();
  if (tail != 0 && now < tail) {
    Violation("model unload",
              "'" + m->name + "' version " + std::to_string(m->version) +
                  " is destroyed " +
                  std::to_string((now + kLoadTailNs - tail) / 1000000) +
                  " ms after its load returned; the real library's model "
                  "deleter then races the instance thread still returning "
                  "from the load's warm-up (crash)");
  }
  if (m->finalize_queued.exchange(true)) return;
  Reaper* r = GetReaper();
  {
    std::lock_guard<std::mutex> lock(r->mu);
    r->queue.push_back(std::move(m));
  }
  r->cv.notify_one();
}

void Engine::Finalized(Model* m) {
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = models.find(m->name);
    if (it != models.end()) {
      auto vit = it->second.versions.find(m->version);
      if (vit != it->second.versions.end() && vit->second.model.get() == m) {
        vit->second.state = VersionState::kUnavailable;
        vit->second.reason = "unloaded";
        vit->second.model.reset();
      }
    }
  }
  cv.notify_all();
}

void ForgetLoadTails(ModelEntry* entry) {
  for (auto& kv : entry->versions) {
    if (kv.second.model != nullptr) kv.second.model->load_tail_until_ns = 0;
  }
}

bool Engine::AllIdle() {
  for (auto& kv : models) {
    for (auto& v : kv.second.versions) {
      if (v.second.model != nullptr) return false;
    }
  }
  return true;
}
}  // namespace fake
