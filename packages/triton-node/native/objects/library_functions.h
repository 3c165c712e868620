// The addon's functions for the Triton library and the process's exit.
#ifndef TRITON_NODE_OBJECTS_LIBRARY_FUNCTIONS_H_
#define TRITON_NODE_OBJECTS_LIBRARY_FUNCTIONS_H_

#include <napi.h>

namespace triton_node {

// loadLibrary(candidates): opens libtritonserver.so once per process.
Napi::Value LoadLibrary(const Napi::CallbackInfo& info);
Napi::Value LibraryInfo(const Napi::CallbackInfo& info);
// logSettings(): Triton's process-wide logger as this process last set it;
// updateLogSettings({info?, warn?, error?, verbose?, format?}): changes it
// now (TRITONSERVER_ServerOptionsSetLog* on no options object, as tritonserver
// does at run time) and returns the new settings. Validated in TS.
Napi::Value LogSettingsOf(const Napi::CallbackInfo& info);
Napi::Value UpdateLogSettings(const Napi::CallbackInfo& info);
// Called from the 'exit' event of the main thread (lib/addon/load.ts).
Napi::Value NoteExitCode(const Napi::CallbackInfo& info);

}  // namespace triton_node

#endif  // TRITON_NODE_OBJECTS_LIBRARY_FUNCTIONS_H_
