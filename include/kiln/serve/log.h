// Structured logs: one JSON object per line on stderr ({"ts": ..., "level": ..., "event": ...,
// plus fields}), so a log shipper can index them without parsing prose.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::serve {

using LogField = std::pair<std::string_view, std::string>;
void LogEvent(std::string_view level, std::string_view event,
              std::initializer_list<LogField> fields = {});
// Drops "debug" events unless enabled (the default is off).
void SetDebugLogging(bool on);

}  // namespace kiln::serve
