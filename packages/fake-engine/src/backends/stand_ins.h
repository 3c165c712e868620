// Stand-in backends (stand_ins.cc): opt-in answers for models whose backend
// the fake does not have (TRITONFAKE_SetStandIns, TRITONFAKE_STAND_INS).
#ifndef TRITON_NODE_FAKE_BACKENDS_STAND_INS_H_
#define TRITON_NODE_FAKE_BACKENDS_STAND_INS_H_

#include <string>

#include "../../include/triton_capi.h"
#include "../core/model.h"
#include "../core/response.h"

namespace fake {

// The stand-in configured for `backend` (its name, else "*"): true with
// *mode ("zeros" or "echo") when there is one.
bool StandInFor(const std::string& backend, std::string* mode);
// The configured stand-ins as a JSON object ({"onnxruntime":"zeros"}), or
// "" when none.
std::string StandInsJson();
// TRITONFAKE_STAND_INS, read when a server is created.
void ReadStandInsFromEnvironment();
// Answers one request of a stand-in model: each output of its configured
// data type and shape (zeros, or a compatible input's copy when it echoes),
// and the parameter triton_node_stand_in = "<backend>:<mode>".
void StandInRespond(Model* m, TRITONSERVER_InferenceRequest* r,
                    TRITONSERVER_InferenceResponse* resp);

// TRITONFAKE_SetStandIns: replaces the stand-ins with `spec`
// ("<backend>=<mode>[,...]"); false with the problem, changing nothing, when
// an item is malformed.
bool SetStandIns(const std::string& spec, std::string* error);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_BACKENDS_STAND_INS_H_
