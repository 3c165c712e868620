#include "memory/external_outputs.h"

#include <mutex>
#include <unordered_map>

namespace triton_node {
namespace {

// One hand-out of a pooled buffer as an external ArrayBuffer: the
// finalizer's hint. `returned` is set when releaseOutput() took the buffer
// from JS (the ArrayBuffer detached); the finalizer then gives nothing back.
// `uses` counts the in-flight requests that read (input) or write (`into`)
// the memory: a release that meets uses defers the pool return to the last
// of them (`deferred`), so that a disposed output is never handed to another
// response while a request still holds it. `uses`, `deferred` and
// `finalized` are guarded by g_external_mu.
struct ExternalHandle {
  OutputBuffer* buffer;
  bool returned;
  int uses = 0;
  bool deferred = false;
  bool finalized = false;  // the finalizer ran while uses were left
};

// Live hand-outs by data pointer, for releaseOutput(). Finalizers of several
// environments (threads) touch it: guarded by its mutex.
std::mutex g_external_mu;
std::unordered_map<const void*, ExternalHandle*>* g_external =
    new std::unordered_map<const void*, ExternalHandle*>();  // never freed

// Output memory held by JS objects is reported to V8 (so that a program
// that never disposes still gets it collected), but only beyond this
// allowance: V8 starts a full GC whenever reported memory grows by 64 MiB
// since the last one, which would mean one full GC (and its helper threads
// taking the CPU Triton needs) per 64 MiB response even when the program
// disposes every output.
constexpr int64_t kUnreportedBytes = int64_t{256} << 20;

// Per JS thread (one environment each): bytes of live hand-outs, and how
// much of them V8 was told about.
thread_local int64_t t_live_external = 0;
thread_local int64_t t_reported_external = 0;

void AccountExternal(napi_env env, int64_t delta) {
  t_live_external += delta;
  int64_t want = t_live_external > kUnreportedBytes
                     ? t_live_external - kUnreportedBytes
                     : 0;
  if (want == t_reported_external) return;
  int64_t adjusted = 0;
  napi_adjust_external_memory(env, want - t_reported_external, &adjusted);
  t_reported_external = want;
}

void GiveBack(OutputBuffer* buffer) {
  BufferPool::live_js_buffers.fetch_sub(1, std::memory_order_relaxed);
  BufferPool::Return(buffer);
}

// Finalizer of an external ArrayBuffer over a pooled buffer (JS thread).
// Node runs it once the backing store is freed, which a request's hold on
// that store (memory/js_memory.h) delays; the uses are checked all the same.
void FinalizeExternal(napi_env env, void*, void* hint) {
  auto* handle = static_cast<ExternalHandle*>(hint);
  bool taken_now = false;  // not released by releaseOutput() before
  bool give_back = false;
  bool keep_handle = false;
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = g_external->find(handle->buffer->ptr);
    if (it != g_external->end() && it->second == handle) g_external->erase(it);
    if (!handle->returned) {
      taken_now = true;
      handle->returned = true;
      if (handle->uses > 0) {
        handle->deferred = true;
      } else {
        give_back = true;
      }
    }
    keep_handle = handle->uses > 0;
    handle->finalized = keep_handle;
  }
  if (taken_now) {
    AccountExternal(env, -static_cast<int64_t>(handle->buffer->capacity));
  }
  if (give_back) GiveBack(handle->buffer);
  if (!keep_handle) delete handle;
}

// Ends one in-flight use (any thread): the last one gives back a buffer
// whose release was deferred, and frees a finalized handle.
void EndUse(ExternalHandle* handle) {
  bool give_back = false;
  bool free_handle = false;
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    if (--handle->uses > 0) return;
    give_back = handle->deferred;
    handle->deferred = false;
    free_handle = handle->finalized;
  }
  if (give_back) GiveBack(handle->buffer);
  if (free_handle) delete handle;
}

}  // namespace

// Gives a pooled buffer to a JS object; returns the function that gives it
// back (dispose or GC).
std::function<void()> HandOver(OutputBuffer* buffer) {
  buffer->js_owned.store(true, std::memory_order_release);
  BufferPool::live_js_buffers.fetch_add(1, std::memory_order_relaxed);
  return [buffer] {
    BufferPool::live_js_buffers.fetch_sub(1, std::memory_order_relaxed);
    BufferPool::Return(buffer);
  };
}

napi_value ShareAsArrayBuffer(napi_env env, OutputBuffer* buffer,
                              const void* base, size_t size, bool* refused) {
  *refused = false;
  napi_value ab = nullptr;
  auto* handle = new ExternalHandle{buffer, false};
  napi_status status = napi_create_external_arraybuffer(
      env, const_cast<void*>(base), size, FinalizeExternal, handle, &ab);
  if (status != napi_ok) {
    delete handle;
    if (status != napi_no_external_buffers_allowed) throw Napi::Error::New(env);
    *refused = true;
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    (*g_external)[buffer->ptr] = handle;
  }
  // Set before the response is deleted: the release function then leaves
  // the buffer to the finalizer.
  buffer->js_owned.store(true, std::memory_order_release);
  BufferPool::live_js_buffers.fetch_add(1, std::memory_order_relaxed);
  AccountExternal(env, static_cast<int64_t>(buffer->capacity));
  return ab;
}

bool ReleaseSharedArrayBuffer(napi_env env, napi_value ab) {
  void* data = nullptr;
  size_t length = 0;
  napi_get_arraybuffer_info(env, ab, &data, &length);
  ExternalHandle* handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = data != nullptr ? g_external->find(data) : g_external->end();
    if (it == g_external->end() || it->second->returned) return false;
    handle = it->second;
  }
  // Detached first: once no JS object can reach the memory, it may go back.
  if (napi_detach_arraybuffer(env, ab) != napi_ok) return false;
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = g_external->find(data);
    if (it != g_external->end() && it->second == handle) g_external->erase(it);
  }
  // The JS side let go of it at once; the pool gets it back now, or from
  // the last request that still reads or writes it.
  AccountExternal(env, -static_cast<int64_t>(handle->buffer->capacity));
  bool give_back = false;
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    handle->returned = true;
    if (handle->uses > 0) {
      handle->deferred = true;
    } else {
      give_back = true;
    }
  }
  if (give_back) GiveBack(handle->buffer);
  return true;
}

std::shared_ptr<void> UseExternalOutput(napi_env env, napi_value ab) {
  void* data = nullptr;
  size_t length = 0;
  if (napi_get_arraybuffer_info(env, ab, &data, &length) != napi_ok ||
      data == nullptr) {
    return nullptr;
  }
  ExternalHandle* handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = g_external->find(data);
    if (it == g_external->end() || it->second->returned) return nullptr;
    handle = it->second;
    ++handle->uses;
  }
  return std::shared_ptr<void>(
      handle, [](void* h) { EndUse(static_cast<ExternalHandle*>(h)); });
}

}  // namespace triton_node
