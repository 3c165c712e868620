// Which backend runs a batch (backends.h).
#include "backends.h"

namespace fake {

void ExecuteBackend(Model* m, std::vector<TRITONSERVER_InferenceRequest*>& b,
                    bool inline_mode) {
  switch (m->backend) {
    case BackendKind::kIdentity:
    case BackendKind::kStandIn:  // one execution per batch, as identity
    case BackendKind::kOnnxRuntime:
    case BackendKind::kTextEmbedding:
      IdentityExecute(m, b, inline_mode);
      break;
    case BackendKind::kRepeat:
      for (auto* r : b) RepeatExecute(m, r, inline_mode);
      break;
    case BackendKind::kSquare:
      for (auto* r : b) SquareExecute(m, r, inline_mode);
      break;
    case BackendKind::kTextStream:
      for (auto* r : b) TextStreamExecute(m, r, inline_mode);
      break;
    case BackendKind::kEnsemble:  // never queued (scheduler.cc, Enqueue)
      break;
  }
}

}  // namespace fake
