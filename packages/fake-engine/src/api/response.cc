// Inference responses: what a caller reads from them (error, model, id,
// parameters, outputs) and their deletion.
#include <cstdint>
#include <string>

#include "../core/error.h"
#include "../core/model.h"
#include "../core/response.h"
#include "export.h"

namespace fake {
namespace {

// The identity backend's four response parameters.
const char* kParamString = "an example string parameter";
const int64_t kParamInt = 42;
const bool kParamBool = false;
const double kParamDouble = 123.123;

}  // namespace
}  // namespace fake

using namespace fake;

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseDelete(
    TRITONSERVER_InferenceResponse* inference_response) {
  FAKE_DELETABLE(kResponse, inference_response);
  delete inference_response;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseError(
    TRITONSERVER_InferenceResponse* inference_response) {
  FAKE_LIVE(kResponse, inference_response);
  // Triton returns a new error object on every call (its header says the
  // response owns it, but the implementation makes a fresh copy): the
  // caller must delete it, or it leaks.
  const TRITONSERVER_Error* e = inference_response->error;
  return e == nullptr ? nullptr : Err(e->code, e->msg);
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseModel(
    TRITONSERVER_InferenceResponse* inference_response, const char** model_name,
    int64_t* model_version) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(model_name);
  FAKE_NOT_NULL(model_version);
  *model_name = inference_response->model->name.c_str();
  *model_version = inference_response->model->version;
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseId(
    TRITONSERVER_InferenceResponse* inference_response,
    const char** request_id) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(request_id);
  *request_id = inference_response->id.c_str();
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseParameterCount(
    TRITONSERVER_InferenceResponse* inference_response, uint32_t* count) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(count);
  *count = (inference_response->identity_params ? 4 : 0) +
           static_cast<uint32_t>(inference_response->extra_params.size());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseParameter(
    TRITONSERVER_InferenceResponse* inference_response, const uint32_t index,
    const char** name, TRITONSERVER_ParameterType* type, const void** vvalue) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(type);
  FAKE_NOT_NULL(vvalue);
  TRITONSERVER_InferenceResponse* resp = inference_response;
  const uint32_t fixed = resp->identity_params ? 4 : 0;
  if (index >= fixed) {
    if (index - fixed >= resp->extra_params.size()) {
      return ErrArg(
          "out of bounds index " + std::to_string(index) + ": response has " +
          std::to_string(fixed + resp->extra_params.size()) + " parameters");
    }
    const TRITONSERVER_Parameter& p = *resp->extra_params[index - fixed];
    *name = p.name.c_str();
    *type = p.type;
    *vvalue = p.ValuePtr();
    return nullptr;
  }
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(type);
  FAKE_NOT_NULL(vvalue);
  switch (index) {
    case 0:
      *name = "param0";
      *type = TRITONSERVER_PARAMETER_STRING;
      *vvalue = kParamString;
      break;
    case 1:
      *name = "param1";
      *type = TRITONSERVER_PARAMETER_INT;
      *vvalue = &kParamInt;
      break;
    case 2:
      *name = "param2";
      *type = TRITONSERVER_PARAMETER_BOOL;
      *vvalue = &kParamBool;
      break;
    default:
      *name = "param3";
      *type = TRITONSERVER_PARAMETER_DOUBLE;
      *vvalue = &kParamDouble;
      break;
  }
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseOutputCount(
    TRITONSERVER_InferenceResponse* inference_response, uint32_t* count) {
  FAKE_LIVE(kResponse, inference_response);
  FAKE_NOT_NULL(count);
  *count = static_cast<uint32_t>(inference_response->outputs.size());
  return nullptr;
}

FAKE_EXPORT TRITONSERVER_Error* TRITONSERVER_InferenceResponseOutput(
    TRITONSERVER_InferenceResponse* inference_response, const uint32_t index,
    const char** name, TRITONSERVER_DataType* datatype, const int64_t** shape,
    uint64_t* dim_count, const void** base, size_t* byte_size,
    TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id,
    void** userp) {
  FAKE_LIVE(kResponse, inference_response);
  TRITONSERVER_InferenceResponse* resp = inference_response;
  if (index >= resp->outputs.size()) {
    return ErrArg("out of bounds index " + std::to_string(index) +
                  ": response has " + std::to_string(resp->outputs.size()) +
                  " outputs");
  }
  // Triton writes every one of them.
  FAKE_NOT_NULL(name);
  FAKE_NOT_NULL(datatype);
  FAKE_NOT_NULL(shape);
  FAKE_NOT_NULL(dim_count);
  FAKE_NOT_NULL(base);
  FAKE_NOT_NULL(byte_size);
  FAKE_NOT_NULL(memory_type);
  FAKE_NOT_NULL(memory_type_id);
  FAKE_NOT_NULL(userp);
  const ResponseOutput& o = resp->outputs[index];
  *name = o.config->name.c_str();
  *datatype = o.config->datatype;
  *shape = o.shape.data();
  *dim_count = o.shape.size();
  *base = o.buffer;
  *byte_size = o.byte_size;
  *memory_type = o.memory_type;
  *memory_type_id = o.memory_type_id;
  *userp = o.buffer_userp;
  return nullptr;
}
