// NativeServer: the JS object of one server (lib/abi/binding.ts). Its methods
// read their arguments and hand the work to the server core.
#ifndef TRITON_NODE_OBJECTS_SERVER_OBJECT_H_
#define TRITON_NODE_OBJECTS_SERVER_OBJECT_H_

#include <napi.h>

#include <memory>

#include "server/core.h"

namespace triton_node {

class ServerWrap : public Napi::ObjectWrap<ServerWrap> {
 public:
  // Defines the class and registers it in the environment's data.
  static Napi::Function Init(Napi::Env env);
  explicit ServerWrap(const Napi::CallbackInfo& info);
  ~ServerWrap() override;

  // addon.setEventDecoder(create): the factory of each server's event
  // decoder, kept for this environment.
  static Napi::Value SetEventDecoder(const Napi::CallbackInfo& info);
  // addon.createServer(options, onEvents)
  static Napi::Value CreateServer(const Napi::CallbackInfo& info);
  // addon.attachServer(id, onEvents): a NativeServer of this environment
  // over the server another environment shared (server/share.cc).
  static Napi::Value AttachServer(const Napi::CallbackInfo& info);

 private:
  Napi::Value IsLive(const Napi::CallbackInfo& info);
  Napi::Value IsReady(const Napi::CallbackInfo& info);
  Napi::Value Metadata(const Napi::CallbackInfo& info);
  Napi::Value LoadModel(const Napi::CallbackInfo& info);
  Napi::Value UnloadModel(const Napi::CallbackInfo& info);
  Napi::Value ModelIndex(const Napi::CallbackInfo& info);
  Napi::Value ModelIsReady(const Napi::CallbackInfo& info);
  Napi::Value ModelProperties(const Napi::CallbackInfo& info);
  Napi::Value ModelMetadata(const Napi::CallbackInfo& info);
  Napi::Value ModelConfig(const Napi::CallbackInfo& info);
  Napi::Value ModelStatistics(const Napi::CallbackInfo& info);
  Napi::Value Metrics(const Napi::CallbackInfo& info);
  Napi::Value Submit(const Napi::CallbackInfo& info);
  // The per-server submit() (its data: the core's shared_ptr).
  static Napi::Value SubmitDirect(const Napi::CallbackInfo& info);
  void Cancel(const Napi::CallbackInfo& info);
  Napi::Value Inflight(const Napi::CallbackInfo& info);
  Napi::Value Stop(const Napi::CallbackInfo& info);
  Napi::Value Share(const Napi::CallbackInfo& info);
  Napi::Value Attached(const Napi::CallbackInfo& info);
  Napi::Value SetPins(const Napi::CallbackInfo& info);
  Napi::Value Pins(const Napi::CallbackInfo& info);
  Napi::Value CreateMetricFamily(const Napi::CallbackInfo& info);

  std::shared_ptr<ServerCore> core_;
};

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_SERVER_OBJECT_H_
