// Sharing one Triton server between environments (the main thread and
// worker threads): share() hands out an id, Attach() makes a core of the
// attaching environment over the owner's server, and the owner's stop
// sequence ends every attachment before it stops and deletes the server.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "env/env_data.h"
#include "server/core.h"
#include "server/exit_registry.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

std::mutex g_shares_mu;
// Never freed: attaching can race with process exit.
auto* g_shares =
    new std::unordered_map<std::string, std::weak_ptr<ServerCore>>();

std::string NewShareId() {
  std::random_device random;
  char id[33];
  std::snprintf(id, sizeof id, "%08x%08x%08x%08x", random(), random(), random(),
                random());
  return id;
}

}  // namespace

std::string ServerCore::Share(Napi::Env env) {
  if (owner_) return owner_->Share(env);
  std::lock_guard<std::mutex> lock(state_mu_);
  if (phase_ != Phase::kRunning) {
    throw MakeError(env, "UNAVAILABLE",
                    std::string(stopped_message_.load()) +
                        ": a stopping or stopped server cannot be shared");
  }
  if (share_id_.empty()) {
    share_id_ = NewShareId();
    std::lock_guard<std::mutex> shares(g_shares_mu);
    // Ids of owners that are gone are dropped as new ones come.
    for (auto it = g_shares->begin(); it != g_shares->end();) {
      it = it->second.expired() ? g_shares->erase(it) : std::next(it);
    }
    (*g_shares)[share_id_] = shared_from_this();
  }
  return share_id_;
}

std::shared_ptr<ServerCore> ServerCore::Attach(Napi::Env env,
                                               const std::string& id,
                                               Napi::Function on_events) {
  std::shared_ptr<ServerCore> owner;
  {
    std::lock_guard<std::mutex> shares(g_shares_mu);
    auto it = g_shares->find(id);
    if (it != g_shares->end()) owner = it->second.lock();
  }
  if (!owner) {
    throw MakeError(env, "NOT_FOUND",
                    "no shared server has this id in this process (its "
                    "owner is gone, or the value did not come from "
                    "share())");
  }
  auto core = std::make_shared<ServerCore>(env, on_events);
  ThrowIfError(env, core->allocator().Create(), "response allocator");
  core->Init(env);
  core->owner_ = owner;
  core->kept_requests_.set_enabled(owner->kept_requests_.enabled());
  bool running;
  {
    // The owner's lock orders this against its stop sequence: either the
    // attachment is listed before the owner stops it, or it is refused.
    std::lock_guard<std::mutex> lock(owner->state_mu_);
    running = owner->phase_ == Phase::kRunning;
    if (running) {
      owner->attachments_.push_back(core);
      std::lock_guard<std::mutex> own(core->state_mu_);
      core->server_ = owner->server_;
      core->phase_ = Phase::kRunning;
    }
  }
  if (!running) {
    core->MarkCreated(nullptr);  // stopped, its allocator deleted
    core->js_stop_done_ = true;
    core->waker_.Release(env);
    core->on_events_.Reset();
    core->encoder_.Release(env);
    throw MakeError(
        env, "UNAVAILABLE",
        std::string(kOwnerStoppedMessage) + ": cannot attach to it");
  }
  GetEnvData(env)->servers.push_back(core);
  RegisterCore(core);
  return core;
}

uint64_t ServerCore::SetPins(Napi::Env env, std::string pins) {
  if (owner_) {
    ThrowTypeError(env,
                   "setPins: an attached server cannot pin versions (only "
                   "the thread that created the server deploys and rolls "
                   "back)");
  }
  std::lock_guard<std::mutex> lock(pins_mu_);
  pins_ = std::move(pins);
  return ++pins_generation_;
}

std::pair<uint64_t, std::string> ServerCore::Pins() {
  ServerCore* root = owner_ ? owner_.get() : this;
  std::lock_guard<std::mutex> lock(root->pins_mu_);
  return {root->pins_generation_, root->pins_};
}

void ServerCore::RemoveAttachment(const ServerCore* core) {
  std::lock_guard<std::mutex> lock(state_mu_);
  attachments_.erase(std::remove_if(attachments_.begin(), attachments_.end(),
                                    [core](const std::weak_ptr<ServerCore>& w) {
                                      auto p = w.lock();
                                      return !p || p.get() == core;
                                    }),
                     attachments_.end());
}

void ServerCore::PurgeSharedKeptRequests() {
  ServerCore* root = owner_ ? owner_.get() : this;
  root->kept_requests_.Purge();
  for (auto& a : root->LiveAttachments()) a->kept_requests_.Purge();
}

void ServerCore::CloseSharedKeptRequests() {
  kept_requests_.Close();
  for (auto& a : LiveAttachments()) a->kept_requests_.Close();
}

// ---- the owner's stop sequence -------------------------------------------

std::vector<std::shared_ptr<ServerCore>> ServerCore::LiveAttachments() {
  std::lock_guard<std::mutex> lock(state_mu_);
  std::vector<std::shared_ptr<ServerCore>> live;
  for (const auto& w : attachments_) {
    if (auto p = w.lock()) live.push_back(std::move(p));
  }
  return live;
}

void ServerCore::StopAttachments() {
  for (auto& a : LiveAttachments()) a->OwnerStopping();
}

bool ServerCore::AttachmentsInflight() {
  for (auto& a : LiveAttachments()) {
    if (a->ledger_.Inflight() > 0) return true;
  }
  return false;
}

void ServerCore::CancelAttachments() {
  // Their pools no longer grow: OwnerStopping waited out their submits.
  for (auto& a : LiveAttachments()) a->CancelInflight();
}

void ServerCore::WaitAttachmentsSettled() {
  for (auto& a : LiveAttachments()) a->ledger_.WaitSettled();
}

void ServerCore::AttachmentsStopped() {
  for (auto& a : LiveAttachments()) a->OwnerStopped();
}

// ---- the attached side -----------------------------------------------------

void ServerCore::OwnerStopping() {
  {
    std::unique_lock<std::mutex> lock(state_mu_);
    if (phase_ <= Phase::kRunning) {
      phase_ = Phase::kStopping;
      stopped_message_ = kOwnerStoppedMessage;
    }
    // Submits and op threads already inside Triton finish first.
    state_cv_.wait(lock, [this] { return active_threads_ == 0; });
  }
  queue_.Poke();  // its JS thread sees the stop (keep-alive, refusals)
}

void ServerCore::OwnerStopped() {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    // Not while its own detach (or teardown) decides the phase.
    if (phase_ == Phase::kStopping) {
      phase_ = ledger_.Inflight() > 0 ? Phase::kDeletePending : Phase::kStopped;
    }
    state_cv_.notify_all();
  }
  queue_.Poke();  // its JS thread settles what is left and lets go
}

void ServerCore::DetachOnce() {
  // stop() on an attached server: its requests settle (an owner's stop
  // meanwhile cancels them), then it leaves the owner, whose server runs on.
  ledger_.WaitSettled();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (stopped_message_.load() == kStoppedMessage) {
      stopped_message_ = kDetachedMessage;
    }
    phase_ = Phase::kStopped;
    state_cv_.notify_all();
  }
  kept_requests_.Close();  // while the owner's server exists
  owner_->RemoveAttachment(this);
}

}  // namespace triton_node
