// Triton's logger, one per process: its settings as this process last set
// them. Triton's TRITONSERVER_ServerOptionsSetLog* setters change the
// process-wide logger when called and never read the options object (real
// r25.07 and the fake alike), and the C API has no getter: so every change
// goes through here, which calls the setter and records what it set.
#ifndef TRITON_NODE_TRITON_LOG_SETTINGS_H_
#define TRITON_NODE_TRITON_LOG_SETTINGS_H_

#include <optional>
#include <string>

#include "triton_capi.h"

namespace triton_node {

// The logger's settings (Triton's own defaults until a server sets them).
struct LogSettings {
  std::string file;  // "" for stderr
  bool info = true, warn = true, error = true;
  int verbose = 0;
  int format = TRITONSERVER_LOG_DEFAULT;
};

// What to change; an empty field keeps the setting.
struct LogUpdate {
  std::optional<std::string> file;
  std::optional<bool> info, warn, error;
  std::optional<int> verbose;
  std::optional<int> format;  // a TRITONSERVER_LogFormat
};

// Calls the setter of each field of `update` (with `options`, which Triton
// ignores: null at run time) and records what took effect. Returns the first
// error (the caller's to delete); the fields after it are still applied, as
// each setter stands alone. Any thread.
TRITONSERVER_Error* ApplyLogUpdate(TRITONSERVER_ServerOptions* options,
                                   const LogUpdate& update);

// The settings as last set by this process. Any thread.
LogSettings CurrentLogSettings();

}  // namespace triton_node

#endif  // TRITON_NODE_TRITON_LOG_SETTINGS_H_
