// One request's lifecycle: where its pooled context is, what Triton has
// still to do for it, and what the JS thread has still to see of it.
#ifndef TRITON_NODE_REQUEST_LIFECYCLE_H_
#define TRITON_NODE_REQUEST_LIFECYCLE_H_

#include <napi.h>

#include <cstdint>

namespace triton_node {

// What ends a request, in whatever order Triton does it: the FINAL
// response, the release (RELEASE_ALL) and, for a traced request, the
// trace's release.
enum class Ending : uint8_t { kFinal = 1, kRelease = 2, kTrace = 4 };

// A set of endings.
class Endings {
 public:
  constexpr Endings() = default;
  // FINAL and the release, and the trace's release when `traced`.
  static constexpr Endings Of(bool traced) {
    return Endings(Bit(Ending::kFinal) | Bit(Ending::kRelease) |
                   (traced ? Bit(Ending::kTrace) : 0));
  }
  bool Has(Ending e) const { return (bits_ & Bit(e)) != 0; }
  // Takes `e` out; false when it was not in (a duplicate).
  bool Remove(Ending e) {
    if (!Has(e)) return false;
    bits_ = static_cast<uint8_t>(bits_ & ~Bit(e));
    return true;
  }
  bool empty() const { return bits_ == 0; }

 private:
  constexpr explicit Endings(uint8_t bits) : bits_(bits) {}
  static constexpr uint8_t Bit(Ending e) { return static_cast<uint8_t>(e); }
  uint8_t bits_ = 0;
};

// The lifecycle has two halves, each with its own threads, and named
// transitions on each. A transition that cannot happen from the current
// state (a context submitted while Triton holds its last request, recycled
// before every ending reached JS, a callback for a request whose submit
// failed) ends the process with a message: going on would delete a request
// twice or free JS memory that Triton still reads.
//
// Triton's half changes under the ledger's lock (request/ledger.h), on
// whichever thread a callback or a cancel runs: which endings Triton has
// still to send, and who deletes the request object. The JS half changes
// on the JS thread only: the context's place in its pool, the endings the
// JS thread has still to see, and a FINAL held back for its trace.
class RequestLifecycle {
 public:
  // The JS half: the context's place in its pool.
  enum class Stage : uint8_t {
    kFree,      // in the pool's free list
    kBuilding,  // acquired: its Triton request is built and submitted; ours
                // until ServerInferAsync succeeds
    kActive,    // submitted: its events reach JS until it is recycled
  };
  // Triton's half: what Triton holds, and who deletes the request.
  enum class Hold : uint8_t {
    kNone,           // nothing: not submitted, or the submit failed
    kInFlight,       // Triton's: FINAL or the release is still to come
    kCancelDeletes,  // FINAL and the release came while a cancel used the
                     // request: the last cancel deletes it
    kDeleted,        // FINAL and the release came: the request is deleted (the
                     // trace's release may still be to come)
  };

  // What one ending did on Triton's side.
  struct Ended {
    bool delete_request = false;  // the caller deletes the request now
    bool settled = false;         // the last ending: Triton is done with it now
  };

  // ---- Triton's half, under the ledger's lock.
  // Before ServerInferAsync.
  void Submitted(bool traced);
  // ServerInferAsync failed: no callback will come.
  void Aborted();
  // A callback's ending; a duplicate changes nothing.
  Ended End(Ending e);
  // A cancel starts using the request: false (nothing to cancel) unless it
  // is in flight.
  bool CancelBegins();
  // That cancel is done: true when it must delete the request now.
  bool CancelEnds();
  // No callback can come: never submitted, submit failed, or every ending
  // came. (Also read, without the lock, once no Triton thread is left.)
  bool TritonDone() const {
    return hold_ == Hold::kNone ||
           (hold_ != Hold::kInFlight && triton_awaits_.empty());
  }

  // ---- The JS half, on the JS thread.
  void Acquired();
  // The request is traced (its FINAL carries timing): while building.
  void Traced();
  // Submitted: events for it reach JS from now on.
  void Activated();
  // Back to the free list; true when it had been active (submitted).
  // Deletes a FINAL still held.
  bool Recycled(napi_env env);
  // The JS thread saw `e`. One that is not awaited any more (a duplicate
  // a backend sent, maybe after the context was recycled) changes nothing.
  void JsSaw(Ending e);
  bool JsAwaits(Ending e) const {
    return stage_ == Stage::kActive && js_awaits_.Has(e);
  }
  // Active, and every ending reached JS: the context may be recycled.
  bool JsDone() const { return stage_ == Stage::kActive && js_awaits_.empty(); }
  bool active() const { return stage_ == Stage::kActive; }
  bool traced() const { return traced_; }
  // A decoded FINAL waits for the trace's timestamps (JsSaw(kFinal) has
  // been called for it); the FINAL taken back, or null when none is held.
  void HoldFinal(napi_env env, napi_value event);
  napi_value TakeHeldFinal(napi_env env);

 private:
  [[noreturn]] void Impossible(const char* transition) const;

  // Triton's half.
  Hold hold_ = Hold::kNone;
  Endings triton_awaits_;
  int cancels_ = 0;  // cancels using the request outside the lock
  // The JS half.
  Stage stage_ = Stage::kFree;
  bool traced_ = false;
  Endings js_awaits_;
  napi_ref held_final_ = nullptr;
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_LIFECYCLE_H_
