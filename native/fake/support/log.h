// The engine's log: lines in Triton's shape ("I fake-engine] ...", or with
// the ISO8601 format a timestamp and the pid first), to stderr or the log
// file, honouring the log options of the last server created.
#ifndef TRITON_NODE_FAKE_SUPPORT_LOG_H_
#define TRITON_NODE_FAKE_SUPPORT_LOG_H_

#include <string>

namespace fake {

// The server options' logging settings (TRITONSERVER_ServerOptionsSetLog*).
struct LogOptions {
  bool info = true, warn = true, error = true;
  std::string file;  // "" for stderr
};
void SetLogOptions(const LogOptions& options);
// TRITONSERVER_LogFormat of every log line from now on (process-wide).
void SetLogFormat(int format);

void LogInfo(const std::string& line);
void LogWarning(const std::string& line);
void LogError(const std::string& line);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_LOG_H_
