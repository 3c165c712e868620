#include "memory/js_memory.h"

#include <v8.h>

#include <cstring>

namespace triton_node {

std::shared_ptr<void> HoldJsMemory(napi_value array_buffer,
                                   JsMemoryKind* kind) {
  // A napi_value is a v8::Local<v8::Value> in Node's implementation of
  // Node-API (v8impl::V8LocalValueFromJsValue does the same conversion).
  static_assert(sizeof(v8::Local<v8::Value>) == sizeof(napi_value),
                "napi_value is not a v8::Local");
  v8::Local<v8::Value> value;
  std::memcpy(static_cast<void*>(&value), &array_buffer, sizeof(value));
  std::shared_ptr<v8::BackingStore> store;
  if (value.IsEmpty()) return nullptr;
  if (value->IsArrayBuffer()) {
    store = value.As<v8::ArrayBuffer>()->GetBackingStore();
  } else if (value->IsSharedArrayBuffer()) {
    store = value.As<v8::SharedArrayBuffer>()->GetBackingStore();
  } else {
    return nullptr;
  }
  *kind = store->IsResizableByUserJavaScript() ? JsMemoryKind::kResizable
                                               : JsMemoryKind::kFixed;
  return store;
}

}  // namespace triton_node
