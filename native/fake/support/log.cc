// The engine's log (log.h).
#include "log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>

#include "../../include/triton_capi.h"

namespace fake {

namespace {
std::mutex g_log_mu;
LogOptions g_log_options;  // of the last server created
}  // namespace

void SetLogOptions(const LogOptions& o) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log_options = o;
}

namespace {
// Process-wide, set when the option is set (as Triton's logger is).
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

void SetLogFormat(int format) { g_log_format.store(format); }

static void WriteLog(char level, const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (level == 'I' && !g_log_options.info) return;
  if (level == 'W' && !g_log_options.warn) return;
  if (level == 'E' && !g_log_options.error) return;
  const std::string text = LogPrefix(level) + line + "\n";
  if (!g_log_options.file.empty()) {
    std::ofstream f(g_log_options.file, std::ios::app);
    f << text;
    return;
  }
  std::fputs(text.c_str(), stderr);
}
void LogInfo(const std::string& line) { WriteLog('I', line); }
void LogWarning(const std::string& line) { WriteLog('W', line); }
void LogError(const std::string& line) { WriteLog('E', line); }

}  // namespace fake
