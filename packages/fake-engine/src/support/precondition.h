// The fake is as strict as the real library: where real Triton dereferences a
// pointer, copies a fixed size from it, needs calls in an order or takes
// ownership, the fake checks the same precondition and, when it does not
// hold, aborts with a message naming the entry point and the argument. A
// test that passes on the fake then cannot crash the real library in the
// same place. The table of every check is native/fake/PRECONDITIONS.md; it
// says where in Triton's core each one was read.
//
// Use inside an exported entry point (the name comes from __func__):
//   FAKE_NOT_NULL(options);                      // the real one dereferences
//   FAKE_EXPECT(handle != nullptr, "why ...");   // any other precondition
//   FAKE_LIVE(kRequest, inference_request);      // not null, not deleted
#ifndef TRITON_NODE_FAKE_SUPPORT_PRECONDITION_H_
#define TRITON_NODE_FAKE_SUPPORT_PRECONDITION_H_

#include <string>

namespace fake {

// Prints "triton fake: <entry_point>: <what>" to stderr and aborts.
[[noreturn]] void Violation(const char* entry_point, const std::string& what);

// The kinds of handle whose lifetime the fake follows, so that a use after
// delete or a second delete is caught instead of corrupting the heap.
enum class Handle {
  kServer = 0,
  kServerOptions,
  kRequest,
  kResponse,
  kAllocator,
  kTrace,
  kError,
  kMessage,
  kMetrics,
  kParameter,
  kBufferAttributes,
  kMetricFamily,
  kMetric,
  kMetricArgs,
  kCount
};
const char* HandleName(Handle kind);

// The registry of live handles (process-wide, thread-safe).
void HandleAdd(Handle kind, const void* p);
// False when `p` was not live (a second delete).
bool HandleRemove(Handle kind, const void* p);
bool HandleLive(Handle kind, const void* p);

// Base of every C API handle the fake follows: registers the object for
// its lifetime. The registry holds the address of this base subobject;
// Tracked<K>::Of converts a handle pointer to it.
template <Handle K>
struct Tracked {
  Tracked() { HandleAdd(K, this); }
  Tracked(const Tracked&) { HandleAdd(K, this); }
  Tracked& operator=(const Tracked&) = default;
  ~Tracked() { HandleRemove(K, this); }
  static const void* Of(const Tracked* p) { return p; }
};

// A handle is null, deleted or never made by this library: the real one
// would use freed or foreign memory. `what` names the argument.
std::string NotLiveMessage(Handle kind, const char* what, bool is_null);

}  // namespace fake

#define FAKE_EXPECT(cond, what)                                  \
  do {                                                           \
    if (!(cond)) ::fake::Violation(__func__, std::string(what)); \
  } while (0)

#define FAKE_NOT_NULL(arg)      \
  FAKE_EXPECT((arg) != nullptr, \
              #arg " is null; the real library dereferences it (crash)")

// `arg` must be a live handle of kind `kind` (a fake::Handle enumerator).
#define FAKE_LIVE(kind, arg)                                                 \
  do {                                                                       \
    if ((arg) == nullptr ||                                                  \
        !::fake::HandleLive(::fake::Handle::kind,                            \
                            ::fake::Tracked<::fake::Handle::kind>::Of(arg))) \
      ::fake::Violation(__func__,                                            \
                        ::fake::NotLiveMessage(::fake::Handle::kind, #arg,   \
                                               (arg) == nullptr));           \
  } while (0)

// Deletes of handles the real library frees with `delete`: null is allowed
// (delete of null does nothing), a second delete is not.
#define FAKE_DELETABLE(kind, arg)               \
  do {                                          \
    if ((arg) != nullptr) FAKE_LIVE(kind, arg); \
  } while (0)

#endif  // TRITON_NODE_FAKE_SUPPORT_PRECONDITION_H_
