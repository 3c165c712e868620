// How the library exports the C API (api/*.cc define every TRITONSERVER_*
// and TRITONFAKE_* function of native/include/triton_capi.h), and the one
// precondition only exported functions check.
#ifndef TRITON_NODE_FAKE_API_EXPORT_H_
#define TRITON_NODE_FAKE_API_EXPORT_H_

#include "../core/engine.h"
#include "../support/precondition.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

// A model call on a server that failed to initialize: Triton has no model
// repository manager then and dereferences a null one.
#define FAKE_INITIALIZED(server)                                           \
  FAKE_EXPECT(!(server)->engine->init_failed,                              \
              "this server failed to initialize (exit-on-error was off); " \
              "the real library has no model repository then and crashes " \
              "on a null pointer")

#endif  // TRITON_NODE_FAKE_API_EXPORT_H_
