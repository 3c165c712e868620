// The fake's onnxruntime backend (onnxruntime_backend.cc): real ONNX models
// computed by ONNX Runtime, opened at run time.
#ifndef TRITON_NODE_FAKE_BACKENDS_ONNXRUNTIME_BACKEND_H_
#define TRITON_NODE_FAKE_BACKENDS_ONNXRUNTIME_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../../include/triton_capi.h"
#include "../config/model_config.h"
#include "../core/engine.h"
#include "../core/model.h"
#include "../core/response.h"

namespace fake {

namespace ort {
struct Library;
}
// Where ONNX Runtime is: the library triton-node's lib/ found (backend
// config onnxruntime / fake-onnxruntime-library) and what it searched
// (fake-onnxruntime-searched), both "" when not given;
// TRITON_NODE_ONNXRUNTIME_LIB wins over them.
struct OnnxRuntimeSource {
  std::string library;
  std::string searched;
};
// Opens ONNX Runtime for an onnxruntime model: "" with *lib set, else why
// it cannot (naming what was tried and how to install it).
std::string OnnxRuntimeLibraryProblem(const OnnxRuntimeSource& source,
                                      const ort::Library** lib);
struct OnnxLoadOptions {
  bool auto_complete = false;      // Triton's strict model config is off
  int default_max_batch_size = 4;  // backend config default-max-batch-size
};
// Loads version `version` of the model in `dir` as the real backend does:
// its session, the config auto-completed (options.auto_complete) and
// checked against the model. "" with *out set, else the error (*code;
// *session_leaked when the real backend would leak the failed instance's
// session, see OnnxBackendLoadFailed).
std::string OnnxRuntimeLoad(const ort::Library* lib, const std::string& dir,
                            int64_t version, const OnnxLoadOptions& options,
                            ModelConfig* cfg, std::shared_ptr<OnnxModel>* out,
                            TRITONSERVER_Error_Code* code,
                            bool* session_leaked);
// Real Triton r25.07's onnxruntime backend cannot stop its ONNX Runtime
// loader once a model instance failed its checks after making its session
// (the session is never released): every later server of the process fails
// to start the backend again ("OnnxLoader singleton already initialized";
// a missing model file or a failed auto-complete does not do it). The fake
// remembers the server where that happened (OnnxBackendLoadFailed) and
// refuses onnxruntime loads on servers after it (once it is stopped).
void OnnxBackendLoadFailed(Engine* engine);
std::string OnnxBackendRestartProblem(Engine* engine,
                                      TRITONSERVER_Error_Code* code);
// One run for the whole batch; each request's outputs (or the run's error)
// on its response.
void OnnxRuntimeRespond(Model* m,
                        const std::vector<TRITONSERVER_InferenceRequest*>& b,
                        TRITONSERVER_InferenceResponse** resps);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_BACKENDS_ONNXRUNTIME_BACKEND_H_
