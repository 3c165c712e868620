// Triton's process-wide logger (log_settings.h).
#include "triton/log_settings.h"

#include <algorithm>
#include <mutex>

#include "triton/api.h"

namespace triton_node {
namespace {

std::mutex g_log_mu;
LogSettings g_log;  // guarded by g_log_mu

// Keeps the first error and deletes the later ones.
void KeepFirst(TRITONSERVER_Error** first, TRITONSERVER_Error* err) {
  if (err == nullptr) return;
  if (*first == nullptr) {
    *first = err;
    return;
  }
  Api().TRITONSERVER_ErrorDelete(err);
}

}  // namespace

TRITONSERVER_Error* ApplyLogUpdate(TRITONSERVER_ServerOptions* options,
                                   const LogUpdate& u) {
  const TritonApi& api = Api();
  std::lock_guard<std::mutex> lock(g_log_mu);
  TRITONSERVER_Error* first = nullptr;
  if (u.file) {
    TRITONSERVER_Error* err =
        api.TRITONSERVER_ServerOptionsSetLogFile(options, u.file->c_str());
    // A file that cannot be opened leaves the logger on its previous one.
    if (err == nullptr) g_log.file = *u.file;
    KeepFirst(&first, err);
  }
  if (u.verbose) {
    KeepFirst(&first,
              api.TRITONSERVER_ServerOptionsSetLogVerbose(options, *u.verbose));
    // Triton keeps a negative level as 0.
    g_log.verbose = std::max(0, *u.verbose);
  }
  if (u.format) {
    KeepFirst(&first,
              api.TRITONSERVER_ServerOptionsSetLogFormat(
                  options, static_cast<TRITONSERVER_LogFormat>(*u.format)));
    if (*u.format == TRITONSERVER_LOG_DEFAULT ||
        *u.format == TRITONSERVER_LOG_ISO8601) {
      g_log.format = *u.format;
    }
  }
  if (u.info) {
    KeepFirst(&first,
              api.TRITONSERVER_ServerOptionsSetLogInfo(options, *u.info));
    g_log.info = *u.info;
  }
  if (u.warn) {
    KeepFirst(&first,
              api.TRITONSERVER_ServerOptionsSetLogWarn(options, *u.warn));
    g_log.warn = *u.warn;
  }
  if (u.error) {
    KeepFirst(&first,
              api.TRITONSERVER_ServerOptionsSetLogError(options, *u.error));
    g_log.error = *u.error;
  }
  return first;
}

LogSettings CurrentLogSettings() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  return g_log;
}

}  // namespace triton_node
