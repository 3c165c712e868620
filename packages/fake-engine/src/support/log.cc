// The engine's log (log.h).
#include "log.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>

#include "../../include/triton_capi.h"

namespace fake {

namespace {
// Triton's logger: one per process, its defaults until a setter is called.
struct Logger {
  bool info = true, warn = true, error = true;
  int verbose = 0;
  std::string file;  // "" for stderr
};
std::mutex g_log_mu;
Logger g_log;  // guarded by g_log_mu
// Read without the lock by each line's prefix.
std::atomic<int> g_log_format{TRITONSERVER_LOG_DEFAULT};

// "<level> fake-engine] ", or with TRITONSERVER_LOG_ISO8601
// "<yyyy>-<mm>-<dd>T<hh>:<mm>:<ss>Z <level> <pid> fake-engine] ".
std::string LogPrefix(char level) {
  if (g_log_format.load() != TRITONSERVER_LOG_ISO8601) {
    return std::string(1, level) + " fake-engine] ";
  }
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(stamp) + " " + level + " " + std::to_string(getpid()) +
         " fake-engine] ";
}
}  // namespace

void SetLogInfo(bool on) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.info = on;
}
void SetLogWarn(bool on) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.warn = on;
}
void SetLogError(bool on) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.error = on;
}
void SetLogVerbose(int level) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.verbose = std::max(0, level);
}

std::string SetLogFile(const std::string& file) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (!file.empty()) {
    std::ofstream probe(file, std::ios::app);
    if (probe.fail()) {
      return std::string("Failed to open log file: ") + std::strerror(errno);
    }
  }
  g_log.file = file;
  return std::string();
}

void SetLogFormat(int format) { g_log_format.store(format); }

static void WriteLog(char level, const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (level == 'I' && !g_log.info) return;
  if (level == 'W' && !g_log.warn) return;
  if (level == 'E' && !g_log.error) return;
  const std::string text = LogPrefix(level) + line + "\n";
  if (!g_log.file.empty()) {
    std::ofstream f(g_log.file, std::ios::app);
    f << text;
    return;
  }
  std::fputs(text.c_str(), stderr);
}
void LogInfo(const std::string& line) { WriteLog('I', line); }
void LogWarning(const std::string& line) { WriteLog('W', line); }
void LogError(const std::string& line) { WriteLog('E', line); }

}  // namespace fake
