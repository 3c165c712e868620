// Keeping JavaScript-owned memory alive and in place while Triton reads or
// writes it.
//
// A reference to a TypedArray keeps the object alive, not its memory: the
// caller can detach the ArrayBuffer (structuredClone or postMessage with
// `transfer`, ArrayBuffer.prototype.transfer()) and let the new owner be
// collected, or shrink a resizable ArrayBuffer, while a request still holds
// a pointer into it. Node-API has no way to hold the memory itself, so this
// holds V8's BackingStore: the memory then lives until the hold is dropped,
// whatever the caller does with its ArrayBuffer. (The one V8 call an addon
// built for Node needs; Node exports it. A runtime without V8's C++ API,
// such as Bun, cannot load the addon.)
#ifndef TRITON_NODE_MEMORY_JS_MEMORY_H_
#define TRITON_NODE_MEMORY_JS_MEMORY_H_

#include <node_api.h>

#include <memory>

namespace triton_node {

// What the ArrayBuffer's memory can do while a request holds it.
enum class JsMemoryKind {
  kFixed,      // fixed length: holding the backing store keeps it in place
  kResizable,  // resizable (or growable shared): its length can change under
               // a request, so it is copied (inputs) or refused (outputs)
};

// A hold on the memory of `array_buffer` (an ArrayBuffer or
// SharedArrayBuffer), or null when `array_buffer` is neither. JS thread only;
// the hold may be dropped on any thread.
std::shared_ptr<void> HoldJsMemory(napi_value array_buffer, JsMemoryKind* kind);

}  // namespace triton_node

#endif  // TRITON_NODE_MEMORY_JS_MEMORY_H_
