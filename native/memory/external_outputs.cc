#include "memory/external_outputs.h"

#include <mutex>
#include <unordered_map>

namespace triton_node {
namespace {

// One hand-out of a pooled buffer as an external ArrayBuffer: the
// finalizer's hint. `returned` is set when releaseOutput() gave the buffer
// back early (the ArrayBuffer detached); the finalizer then only frees this.
struct ExternalHandle {
  OutputBuffer* buffer;
  bool returned;
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

// Gives the buffer of a hand-out back to the pool (JS thread).
void ReturnExternal(napi_env env, ExternalHandle* handle) {
  OutputBuffer* buffer = handle->buffer;
  handle->returned = true;
  AccountExternal(env, -static_cast<int64_t>(buffer->capacity));
  BufferPool::live_js_buffers.fetch_sub(1, std::memory_order_relaxed);
  BufferPool::Return(buffer);
}

// Finalizer of an external ArrayBuffer over a pooled buffer (JS thread).
void FinalizeExternal(napi_env env, void*, void* hint) {
  auto* handle = static_cast<ExternalHandle*>(hint);
  {
    std::lock_guard<std::mutex> lock(g_external_mu);
    auto it = g_external->find(handle->buffer->ptr);
    if (it != g_external->end() && it->second == handle) g_external->erase(it);
  }
  if (!handle->returned) ReturnExternal(env, handle);
  delete handle;
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
  ReturnExternal(env, handle);
  return true;
}

}  // namespace triton_node
