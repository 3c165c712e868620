// The engine's log: lines in Triton's shape ("I fake-engine] ...", or with
// the ISO8601 format a timestamp and the pid first), to stderr or the log
// file, as the logger's settings are when the line is written.
#ifndef TRITON_NODE_FAKE_SUPPORT_LOG_H_
#define TRITON_NODE_FAKE_SUPPORT_LOG_H_

#include <string>

namespace fake {

// Triton's process-wide logger, changed by the
// TRITONSERVER_ServerOptionsSetLog* setters when they are called (they never
// read their options object).
void SetLogInfo(bool on);
void SetLogWarn(bool on);
void SetLogError(bool on);
// A negative level is kept as 0, as Triton keeps it.
void SetLogVerbose(int level);
// "" logs to stderr. A file that cannot be opened for appending is refused
// (the reason returned) and the log stays where it was, as Triton's does.
std::string SetLogFile(const std::string& file);
// TRITONSERVER_LogFormat of every log line from now on.
void SetLogFormat(int format);

void LogInfo(const std::string& line);
void LogWarning(const std::string& line);
void LogError(const std::string& line);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_LOG_H_
