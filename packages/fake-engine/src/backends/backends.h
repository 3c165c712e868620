// The fake's backends as the scheduler calls them: ExecuteBackend is every
// model's Model::execute (set when it loads); it hands the batch to the
// backend the model runs on.
//   own_backends.cc  identity, repeat and square (the backends of Triton's own
//   tests, run by the fake itself) text_stream.cc    fake_text_stream, the
//   fake's own text backend text_embedding.cc fake_text_embedding, the fake's
//   own embedding backend stand_ins.cc      stand-ins for backends the fake
//   does not have onnxruntime_*.cc  onnxruntime, real models through ONNX
//   Runtime
#ifndef TRITON_NODE_FAKE_BACKENDS_BACKENDS_H_
#define TRITON_NODE_FAKE_BACKENDS_BACKENDS_H_

#include <functional>
#include <vector>

#include "../../include/triton_capi.h"
#include "../core/engine.h"
#include "../core/model.h"

namespace fake {

// Runs one batch on the model's backend (execute.cc): identity, stand-in
// and onnxruntime models take the whole batch in one execution, the
// decoupled backends one request at a time.
void ExecuteBackend(Model* m, std::vector<TRITONSERVER_InferenceRequest*>& b,
                    bool inline_mode);

// The backends' own executions (own_backends.cc, text_stream.cc).
void IdentityExecute(Model* m, std::vector<TRITONSERVER_InferenceRequest*>& b,
                     bool inline_mode);
void RepeatExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                   bool inline_mode);
void SquareExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                   bool inline_mode);
void TextStreamExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                       bool inline_mode);
// One request of a fake_text_embedding batch (text_embedding.cc), answered
// inside IdentityExecute's execution of the batch.
void TextEmbeddingRespond(Model* m, TRITONSERVER_InferenceRequest* r,
                          TRITONSERVER_InferenceResponse* resp);

// Runs a decoupled request's responses (`run`, which ends with its FINAL)
// on a detached thread of its own, as the real backends do, counted as an
// active inference until then; inline when `inline_mode` (or when no thread
// can be started: then on the calling instance thread). own_backends.cc.
void RunStreamThread(Engine* engine, bool inline_mode,
                     std::function<void()> run);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_BACKENDS_BACKENDS_H_
