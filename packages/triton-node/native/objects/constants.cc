#include "objects/constants.h"

#include <initializer_list>
#include <utility>

#include "memory/mem_kind.h"
#include "objects/fake_functions.h"
#include "request/event_encoder.h"
#include "request/submit_layout.h"
#include "triton/datatypes.h"
#include "triton/errors.h"
#include "triton_capi.h"

namespace triton_node {
namespace {

Napi::Object NumberTable(
    Napi::Env env, std::initializer_list<std::pair<const char*, int>> kv) {
  Napi::Object o = Napi::Object::New(env);
  for (const auto& e : kv) o.Set(e.first, Napi::Number::New(env, e.second));
  return o;
}

}  // namespace

Napi::Object ConstantsObject(Napi::Env env) {
  Napi::Object c = Napi::Object::New(env);
  c.Set("submitSlots",
        NumberTable(env, {{"version", kSlotVersion},
                          {"priority", kSlotPriority},
                          {"timeoutMicroseconds", kSlotTimeout},
                          {"flags", kSlotFlags},
                          {"outputMemory", kSlotOutputMemory},
                          {"outputDevice", kSlotOutputDevice},
                          {"timing", kSlotTiming},
                          {"inputCount", kSlotInputCount},
                          {"outputCount", kSlotOutputCount},
                          {"parameterCount", kSlotParameterCount},
                          {"header", kSubmitHeader}}));
  Napi::Object memory = Napi::Object::New(env);
  for (int k = 0; k < kMemKindCount; ++k) {
    memory.Set(MemKindName(k), Napi::Number::New(env, k));
  }
  c.Set("memoryCodes", memory);
  c.Set("parameterCodes", NumberTable(env, {{"string", kParamString},
                                            {"int", kParamInt},
                                            {"double", kParamDouble},
                                            {"bool", kParamBool}}));
  Napi::Object datatypes = Napi::Object::New(env);
  for (int t = 1; t <= kLastDataType; ++t) {
    datatypes.Set(DataTypeName(static_cast<TRITONSERVER_DataType>(t)),
                  Napi::Number::New(env, t));
  }
  c.Set("datatypeCodes", datatypes);
  Napi::Object errors = Napi::Object::New(env);
  for (int code = 0; code < ErrorCodeCount(); ++code) {
    errors.Set(ErrorCodeName(code), Napi::Number::New(env, code));
  }
  c.Set("errorCodes", errors);
  Napi::Array kinds = Napi::Array::New(env, TRITONFAKE_LIVE_OBJECT_KINDS);
  for (uint32_t i = 0; i < TRITONFAKE_LIVE_OBJECT_KINDS; ++i) {
    kinds.Set(i, Napi::String::New(env, LiveObjectKindName(i)));
  }
  c.Set("liveObjectKinds", kinds);
  // The Triton C API the loader accepts (major, oldest minor) and the minor
  // the declarations were written against.
  c.Set("tritonApi", NumberTable(env, {{"major", TRITON_NODE_API_MAJOR},
                                       {"minMinor", TRITON_NODE_API_MIN_MINOR},
                                       {"minor", TRITON_NODE_API_MINOR}}));
  Napi::Object encoding = Napi::Object::New(env);
  encoding.Set("flags",
               NumberTable(env, {{"outputs", EventEncoder::kHasOutputs},
                                 {"error", EventEncoder::kHasError},
                                 {"parameters", EventEncoder::kHasParameters},
                                 {"model", EventEncoder::kHasModel},
                                 {"id", EventEncoder::kHasId}}));
  encoding.Set("parameterTypes",
               NumberTable(env, {{"string", TRITONSERVER_PARAMETER_STRING},
                                 {"int", TRITONSERVER_PARAMETER_INT},
                                 {"bool", TRITONSERVER_PARAMETER_BOOL},
                                 {"double", TRITONSERVER_PARAMETER_DOUBLE}}));
  c.Set("eventEncoding", encoding);
  // The Node-API version the addon was compiled against (binding.gyp).
  c.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  return c;
}

}  // namespace triton_node
