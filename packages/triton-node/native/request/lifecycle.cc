#include "request/lifecycle.h"

#include <cstdio>
#include <cstdlib>

namespace triton_node {
namespace {

const char* StageName(RequestLifecycle::Stage stage) {
  switch (stage) {
    case RequestLifecycle::Stage::kFree:
      return "free";
    case RequestLifecycle::Stage::kBuilding:
      return "building";
    case RequestLifecycle::Stage::kActive:
      return "active";
  }
  return "?";
}

const char* HoldName(RequestLifecycle::Hold hold) {
  switch (hold) {
    case RequestLifecycle::Hold::kNone:
      return "none";
    case RequestLifecycle::Hold::kInFlight:
      return "in flight";
    case RequestLifecycle::Hold::kCancelDeletes:
      return "deleted by a cancel";
    case RequestLifecycle::Hold::kDeleted:
      return "deleted";
  }
  return "?";
}

}  // namespace

void RequestLifecycle::Impossible(const char* transition) const {
  std::fprintf(stderr,
               "triton-node: internal error: a request's lifecycle cannot "
               "go through '%s' from stage '%s', Triton holding '%s' (%d "
               "cancels)\n",
               transition, StageName(stage_), HoldName(hold_), cancels_);
  std::abort();
}

// ---- Triton's half --------------------------------------------------------

void RequestLifecycle::Submitted(bool traced) {
  // A context is submitted again only once Triton is done with its last
  // request, and no cancel still uses that one.
  if (!TritonDone() || hold_ == Hold::kCancelDeletes || cancels_ != 0) {
    Impossible("submitted");
  }
  hold_ = Hold::kInFlight;
  triton_awaits_ = Endings::Of(traced);
}

void RequestLifecycle::Aborted() {
  if (hold_ != Hold::kInFlight) Impossible("aborted");
  hold_ = Hold::kNone;
  triton_awaits_ = Endings();
}

RequestLifecycle::Ended RequestLifecycle::End(Ending e) {
  // Triton calls back only for a request it holds.
  if (hold_ == Hold::kNone) Impossible("ended");
  Ended out;
  if (!triton_awaits_.Remove(e)) return out;  // seen already
  if (hold_ == Hold::kInFlight && !triton_awaits_.Has(Ending::kFinal) &&
      !triton_awaits_.Has(Ending::kRelease)) {
    // Released and final: the request may go, unless a cancel uses it.
    if (cancels_ == 0) {
      hold_ = Hold::kDeleted;
      out.delete_request = true;
    } else {
      hold_ = Hold::kCancelDeletes;
    }
  }
  out.settled = TritonDone();
  return out;
}

bool RequestLifecycle::CancelBegins() {
  // Once released and final, the request is deleted (or about to be).
  if (hold_ != Hold::kInFlight) return false;
  ++cancels_;
  return true;
}

bool RequestLifecycle::CancelEnds() {
  if (cancels_ <= 0) Impossible("cancel ended");
  if (--cancels_ != 0 || hold_ != Hold::kCancelDeletes) return false;
  hold_ = Hold::kDeleted;
  return true;
}

// ---- The JS half ----------------------------------------------------------

void RequestLifecycle::Acquired() {
  if (stage_ != Stage::kFree) Impossible("acquired");
  stage_ = Stage::kBuilding;
  traced_ = false;
}

void RequestLifecycle::Traced() {
  if (stage_ != Stage::kBuilding) Impossible("traced");
  traced_ = true;
}

void RequestLifecycle::Activated() {
  if (stage_ != Stage::kBuilding) Impossible("activated");
  stage_ = Stage::kActive;
  js_awaits_ = Endings::Of(traced_);
}

bool RequestLifecycle::Recycled(napi_env env) {
  // An active context goes back only once every ending reached JS.
  if (stage_ == Stage::kFree || (stage_ == Stage::kActive && !JsDone())) {
    Impossible("recycled");
  }
  const bool was_active = stage_ == Stage::kActive;
  stage_ = Stage::kFree;
  if (held_final_ != nullptr) {
    napi_delete_reference(env, held_final_);
    held_final_ = nullptr;
  }
  return was_active;
}

void RequestLifecycle::JsSaw(Ending e) {
  if (stage_ == Stage::kActive) js_awaits_.Remove(e);
}

void RequestLifecycle::HoldFinal(napi_env env, napi_value event) {
  if (stage_ != Stage::kActive) Impossible("held its FINAL");
  // A second FINAL (a backend's duplicate) replaces the first.
  if (held_final_ != nullptr) napi_delete_reference(env, held_final_);
  held_final_ = nullptr;
  napi_create_reference(env, event, 1, &held_final_);
}

napi_value RequestLifecycle::TakeHeldFinal(napi_env env) {
  if (held_final_ == nullptr) return nullptr;
  napi_value event = nullptr;
  napi_get_reference_value(env, held_final_, &event);
  napi_delete_reference(env, held_final_);
  held_final_ = nullptr;
  return event;
}

}  // namespace triton_node
