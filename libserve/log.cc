#include "kiln/serve/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "json_util.h"

namespace kiln::serve {
namespace {
std::atomic<bool> g_debug{false};
std::mutex g_mu;
}  // namespace

void SetDebugLogging(bool on) { g_debug = on; }

void LogEvent(std::string_view level, std::string_view event,
              std::initializer_list<LogField> fields) {
  if (level == "debug" && !g_debug) return;
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[96];
  std::snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  std::string line = "{\"ts\":\"";
  line += ts;
  line += "\",\"level\":";
  json_util::AppendString(&line, level);
  line += ",\"event\":";
  json_util::AppendString(&line, event);
  for (const auto& [k, v] : fields) {
    line += ",";
    json_util::AppendString(&line, k);
    line += ":";
    json_util::AppendString(&line, v);
  }
  line += "}\n";
  std::lock_guard<std::mutex> lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace kiln::serve
